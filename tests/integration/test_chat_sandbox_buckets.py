"""The sandbox's rate-limit buckets against the platform's documented model (docs/04-chat-platform.md, "Rate
limits"), over HTTP with raw requests and with the project's ChatClient:

- a bucket is named by `X-RateLimit-Bucket`, a hash that leaves out the top-level resource; its state is kept per
  bucket, major parameter (guild_id, channel_id) and caller;
- several routes may share one bucket: the member-role grant and removal count once, under one hash;
- past the global limit the answer is a 429 with `global: true`, `X-RateLimit-Global: true` and scope `global`;
- every answer carries the bucket's limits, so a client that reads them never needs a 429.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
import requests

from local.chat_sandbox import SandboxServer, SandboxState
from local.chat_sandbox.config import MEMBER_ROLE_GRANT, MEMBER_ROLE_REMOVAL
from svcconf.chat import ChatClient
from svcconf.chat.ratelimit import RouteKey
from tests.helpers.chat_sandbox import ALICE_ID, BOB_GUILD, BOT_TOKEN, CAROL_ID, DEMO_GUILD

REGULAR = "1191000000000002022"  # BOB_GUILD's plain role, below the bot's
MODERATOR = "1191000000000002012"  # DEMO_GUILD's, below the bot's
BOB_GENERAL, BOB_VOICE = "1191000000000003021", "1191000000000003022"
MEMBER_ROLE = "/guilds/{guild_id}/members/{user_id}/roles/{role_id}"
LIMIT_HEADERS = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Reset-After")


class Bot:
    """Raw bot-token requests to the sandbox's API root."""

    def __init__(self, base_url: str):
        self.base_url = base_url
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bot {BOT_TOKEN}"

    def __call__(self, method: str, path: str, body: object = None) -> requests.Response:
        return self.session.request(method, self.base_url + path, json=body, timeout=5)

    def member_role(self, method: str, guild_id: str, user_id: str, role_id: str) -> requests.Response:
        return self(method, f"/guilds/{guild_id}/members/{user_id}/roles/{role_id}")


@pytest.fixture
def bot(chat_sandbox: SandboxServer, chat_state: SandboxState) -> Iterator[Bot]:
    caller = Bot(chat_sandbox.base_url)
    yield caller
    caller.session.close()


def limited_429s(state: SandboxState) -> list[dict[str, object]]:
    return [entry for entry in state.request_log if entry["status"] == 429]


# -- (a) shared buckets ---------------------------------------------------------------------------------------------


def test_a_grant_and_a_removal_count_in_one_bucket_under_one_hash(bot: Bot, chat_state: SandboxState):
    # Given the member-role bucket at 10 per 30 s (the grant's limit is the bucket's: the removal's follows)
    settings = chat_state.configure(route_limits={MEMBER_ROLE_GRANT: [10, 30]})
    assert settings["route_limits"][MEMBER_ROLE_REMOVAL] == (10, 30)
    # When alice is granted and loses the plain role, turn by turn, eleven times
    answers = [
        bot.member_role("PUT" if turn % 2 == 0 else "DELETE", BOB_GUILD, ALICE_ID, REGULAR) for turn in range(11)
    ]
    # Then both routes answer one bucket hash and one count: 9 left after the first, 0 after the tenth
    *allowed, refused = answers
    assert [answer.status_code for answer in allowed] == [204] * 10
    assert len({answer.headers["X-RateLimit-Bucket"] for answer in answers}) == 1
    assert [answer.headers["X-RateLimit-Remaining"] for answer in allowed] == [str(left) for left in range(9, -1, -1)]
    assert {answer.headers["X-RateLimit-Limit"] for answer in answers} == {"10"}
    # And the eleventh (a grant) is refused in that bucket, not globally
    assert refused.status_code == 429
    assert refused.headers["X-RateLimit-Scope"] == "user"
    assert "X-RateLimit-Global" not in refused.headers
    assert refused.json()["global"] is False
    assert 0 < refused.json()["retry_after"] <= 30
    assert chat_state.guild(BOB_GUILD)["members"][ALICE_ID]["roles"] == []  # the refused grant changed nothing
    # And another route of the guild has a bucket (and a count) of its own
    roles = bot("GET", f"/guilds/{BOB_GUILD}/roles")
    assert roles.status_code == 200
    assert roles.headers["X-RateLimit-Bucket"] != refused.headers["X-RateLimit-Bucket"]
    assert roles.headers["X-RateLimit-Remaining"] == "49"


def test_shared_buckets_are_set_like_route_limits_and_refused_by_field(
    chat_sandbox: SandboxServer, chat_state: SandboxState, bot: Bot
):
    control = chat_sandbox.base_url.removesuffix("/api/v10") + "/_sandbox/config"
    # When the role creation and the role reorder are made one bucket through the control API
    together = {"roles": ["POST /guilds/{guild_id}/roles", "PATCH /guilds/{guild_id}/roles"]}
    answer = requests.post(
        control,
        json={"route_limits": {"PATCH /guilds/{guild_id}/roles": [5, 30]}, "shared_buckets": together},
        timeout=5,
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["shared_buckets"] == {"member roles": [MEMBER_ROLE_GRANT, MEMBER_ROLE_REMOVAL], **together}
    # Then a creation and a reorder count once, under one hash
    created = bot("POST", f"/guilds/{BOB_GUILD}/roles", {"name": "Crew"})
    reordered = bot("PATCH", f"/guilds/{BOB_GUILD}/roles", [{"id": created.json()["id"], "position": 1}])
    assert (created.status_code, reordered.status_code) == (200, 200)
    assert created.headers["X-RateLimit-Bucket"] == reordered.headers["X-RateLimit-Bucket"]
    assert [created.headers["X-RateLimit-Remaining"], reordered.headers["X-RateLimit-Remaining"]] == ["4", "3"]
    # And null removes a shared bucket: the member-role routes count apart again
    assert requests.post(control, json={"shared_buckets": {"member roles": None}}, timeout=5).status_code == 200
    grant = bot.member_role("PUT", BOB_GUILD, ALICE_ID, REGULAR)
    removal = bot.member_role("DELETE", BOB_GUILD, ALICE_ID, REGULAR)
    assert grant.headers["X-RateLimit-Bucket"] != removal.headers["X-RateLimit-Bucket"]
    assert [grant.headers["X-RateLimit-Remaining"], removal.headers["X-RateLimit-Remaining"]] == ["9", "9"]
    # And a bucket naming a route the sandbox does not answer, a route twice or routes of two limits is refused,
    # naming the field, with nothing changed
    before = chat_state.config.model_dump()
    for refused in (
        {"shared_buckets": {"typo": ["PUT /guilds/{guild_id}/member/{user_id}", MEMBER_ROLE_GRANT]}},
        {"shared_buckets": {"alone": [MEMBER_ROLE_GRANT, MEMBER_ROLE_GRANT]}},
        {"shared_buckets": {"mixed": ["GET /guilds/{guild_id}", "POST /guilds/{guild_id}/channels"]}},
        {"shared_buckets": {"Not A Name!": ["GET /guilds/{guild_id}", "GET /guilds/{guild_id}/roles"]}},
        {"shared_buckets": ["GET /guilds/{guild_id}"]},
    ):
        answer = requests.post(control, json=refused, timeout=5)
        assert answer.status_code == 400, refused
        assert answer.json()["details"][0]["field"].startswith("shared_buckets"), answer.json()
    assert chat_state.config.model_dump() == before


# -- (b) one route, two major parameters ----------------------------------------------------------------------------


def test_one_route_on_two_guilds_or_two_channels_has_two_buckets_of_one_hash(bot: Bot, chat_state: SandboxState):
    chat_state.configure(route_limits={MEMBER_ROLE_GRANT: [10, 30], "PATCH /channels/{channel_id}": [2, 30]})
    # Given BOB_GUILD's member-role bucket spent
    spent = [bot.member_role("PUT", BOB_GUILD, ALICE_ID, REGULAR) for _ in range(11)]
    assert [answer.status_code for answer in spent] == [204] * 10 + [429]
    # When the same route is called on another guild
    elsewhere = bot.member_role("PUT", DEMO_GUILD, CAROL_ID, MODERATOR)
    # Then it has a fresh bucket of its own, named with the same hash
    assert elsewhere.status_code == 204
    assert elsewhere.headers["X-RateLimit-Remaining"] == "9"
    assert elsewhere.headers["X-RateLimit-Bucket"] == spent[0].headers["X-RateLimit-Bucket"]
    # And the same holds for a channel's route, by channel
    general = [bot("PATCH", f"/channels/{BOB_GENERAL}", {"name": f"general-{turn}"}) for turn in range(3)]
    voice = bot("PATCH", f"/channels/{BOB_VOICE}", {"name": "Voice"})
    assert [answer.status_code for answer in general] == [200, 200, 429]
    assert (voice.status_code, voice.headers["X-RateLimit-Remaining"]) == (200, "1")
    assert voice.headers["X-RateLimit-Bucket"] == general[0].headers["X-RateLimit-Bucket"]
    assert voice.headers["X-RateLimit-Bucket"] != spent[0].headers["X-RateLimit-Bucket"]


# -- (c) the global limit ------------------------------------------------------------------------------------------


def test_past_the_global_limit_the_answer_is_a_global_429(bot: Bot, chat_state: SandboxState):
    # Given a global limit of 5 requests a second for the bot (50 on the platform; lowered so a loaded machine
    # still sends past it within one second), buckets far from theirs
    chat_state.configure(global_limit_per_second=5)
    # When the bot sends requests on five different routes as fast as it can
    paths = [f"/guilds/{BOB_GUILD}", f"/guilds/{BOB_GUILD}/roles", f"/guilds/{BOB_GUILD}/channels"]
    paths += [f"/guilds/{DEMO_GUILD}", f"/guilds/{DEMO_GUILD}/roles", f"/guilds/{DEMO_GUILD}/channels"]
    answers = [bot("GET", path) for path in paths * 2]
    # Then the first five pass and the first one past them is refused globally, whatever its bucket
    statuses = [answer.status_code for answer in answers]
    assert statuses[:5] == [200] * 5
    refused = answers[statuses.index(429)]
    assert refused.headers["X-RateLimit-Global"] == "true"
    assert refused.headers["X-RateLimit-Scope"] == "global"
    assert int(refused.headers["Retry-After"]) >= 1
    body = refused.json()
    assert body["global"] is True
    assert 0 < body["retry_after"] <= 1.0
    assert set(body) == {"message", "retry_after", "global"}
    # And after the wait it names, the bot may send again
    time.sleep(body["retry_after"])
    assert bot("GET", f"/guilds/{BOB_GUILD}").status_code == 200
    assert chat_state.stats()["faults"]["global_limit"] >= 1


# -- (d) the first answer already says the limit --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "body", "limit"),
    [
        ("GET", f"/guilds/{BOB_GUILD}", None, 50),
        ("POST", f"/guilds/{BOB_GUILD}/roles", {"name": "Crew"}, 5),
        ("PUT", f"/guilds/{BOB_GUILD}/members/{ALICE_ID}/roles/{REGULAR}", None, 10),
        ("DELETE", f"/guilds/{BOB_GUILD}/members/{ALICE_ID}/roles/{REGULAR}", None, 10),
        ("PATCH", f"/channels/{BOB_GENERAL}", {"name": "general"}, 50),
    ],
)
def test_a_buckets_first_answer_carries_its_limit_remaining_reset_and_hash(
    bot: Bot, chat_state: SandboxState, method: str, path: str, body: object, limit: int
):
    before = time.time()
    answer = bot(method, path, body)
    assert answer.status_code < 300, answer.text
    for name in (*LIMIT_HEADERS, "X-RateLimit-Bucket"):
        assert answer.headers.get(name), f"{method} {path}: no {name} on the bucket's first answer"
    assert int(answer.headers["X-RateLimit-Limit"]) == limit
    assert int(answer.headers["X-RateLimit-Remaining"]) == limit - 1
    reset_after = float(answer.headers["X-RateLimit-Reset-After"])
    assert 0 < reset_after <= 1.0  # the sandbox's windows are a second long by default
    assert before < float(answer.headers["X-RateLimit-Reset"]) <= time.time() + reset_after + 0.01
    assert len(answer.headers["X-RateLimit-Bucket"]) == 32


def test_the_client_learns_a_shared_bucket_from_two_answers_without_a_429(
    chat_client: ChatClient, chat_state: SandboxState
):
    # When the client grants a role once and takes it back once
    chat_client.add_member_role(BOB_GUILD, ALICE_ID, REGULAR)
    chat_client.remove_member_role(BOB_GUILD, ALICE_ID, REGULAR)
    # Then its limiter holds one state for both routes, as the answers described it: 10, of which 8 are left
    grant = RouteKey("PUT", MEMBER_ROLE, BOB_GUILD, "bot")
    removal = RouteKey("DELETE", MEMBER_ROLE, BOB_GUILD, "bot")
    assert chat_client.limiter.bucket_of(grant) == chat_client.limiter.bucket_of(removal) is not None
    seen = chat_client.limiter.observed(removal)
    assert seen is not None
    assert (seen.limit, seen.remaining) == (10, 8)
    assert chat_client.limiter.state_of(grant) == chat_client.limiter.state_of(removal)
    assert limited_429s(chat_state) == []


# -- (e) the client at full speed on a shared bucket ----------------------------------------------------------------


def test_grants_and_removals_from_several_threads_meet_no_429(chat_client: ChatClient, chat_state: SandboxState):
    # Given the member-role bucket at its observed 10 per 1-second window
    rounds, threads = 12, 4
    errors: list[BaseException] = []

    def churn(first: int) -> None:
        try:
            for turn in range(first, first + rounds):
                if turn % 2 == 0:
                    chat_client.add_member_role(BOB_GUILD, ALICE_ID, REGULAR)
                else:
                    chat_client.remove_member_role(BOB_GUILD, ALICE_ID, REGULAR)
        except BaseException as failure:  # reported by the test below
            errors.append(failure)

    # When four threads alternate grants and removals on one member as fast as the client lets them
    started = time.monotonic()
    workers = [threading.Thread(target=churn, args=(index,)) for index in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    elapsed = time.monotonic() - started
    # Then every request was answered 204, none 429: the client waited on one state for both routes
    assert errors == []
    log = chat_state.request_log
    assert sorted((entry["method"], entry["status"]) for entry in log) == sorted(
        [("PUT", 204)] * (rounds * threads // 2) + [("DELETE", 204)] * (rounds * threads // 2)
    )
    assert "bucket_limit" not in chat_state.stats()["faults"]
    # And the 48 requests took at least four windows past the first: one bucket of 10, not two
    assert elapsed >= (rounds * threads) / 10 - 1
