"""The sandbox talks like the chat platform: real exchanges, checked against the platform's OpenAPI description.

The client makes its ordinary calls to the sandbox; a session hook records each exchange; the
request's URL is moved from the sandbox's API root onto the spec's server URL, and openapi-core
validates the request and the response (status, headers, body).

The description is a preview that the platform says may be wrong where its docs differ. Three
such differences are handled here, each narrowly (the failure must be exactly that difference, and
the exchange must validate once that one difference is undone), never by skipping a check:

- BITFIELDS_AS_STRINGS: the spec types permission bitfields in request bodies as integers; the
  docs send them as strings and the API accepts int-parseable strings (docs/04-chat-platform.md).
- STRING_LEAF_ERROR_CODES: in a 50035 body the leaf `_errors[].code` are strings like
  "BASE_TYPE_BAD_LENGTH"; the spec reuses its integer `Error.code` there (docs/04-chat-platform.md).
- OPTIONAL_429_CODE: the docs' 429 body has `code` only sometimes (`"code"?`); the spec's
  RatelimitedResponse requires it (docs/04-chat-platform.md).

The description is vendored (tests/data/, with its source, commit, checksum and licence), so a fresh clone
runs this test alone. Where it types a request body as a union of open objects (`PATCH /channels/{id}`:
`anyOf` DM, group DM, guild channel, thread), any object meets the first branch; such bodies are also
checked against the branch they mean, with the same narrow handling of BITFIELDS_AS_STRINGS.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from openapi_core import OpenAPI
from openapi_core.contrib.requests import RequestsOpenAPIRequest, RequestsOpenAPIResponse
from openapi_core.exceptions import OpenAPIError
from openapi_schema_validator import OAS31Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from local.chat_sandbox import SandboxServer, SandboxState
from local.chat_sandbox.actors import add_members
from local.chat_sandbox.routes.templates import templates as sandbox_templates
from svcconf.chat import (
    ChatApiError,
    ChatClient,
    ChatInvalidRequest,
    ChatRateLimited,
    InvalidUserToken,
    MissingAccess,
    MissingPermissions,
    UnknownGuild,
    UnknownInvite,
    UnknownMember,
    UnknownOverwrite,
    UnknownRole,
    UnknownTemplate,
)
from svcconf.settings import Settings
from tests.helpers.chat_sandbox import (
    ALICE_ID,
    ALICE_TOKEN,
    BOB_EXPIRED_TOKEN,
    BOB_GUILD,
    BOB_ID,
    BUILD_GUILD,
    CAROL_ID,
    DEMO_GUILD,
    INFO_CATEGORY,
    LOCKED_GUILD,
    QUIET_GUILD,
    new_chat_client,
)

SPEC_PATH = Path(__file__).resolve().parents[1] / "data" / "chat-platform-openapi.json"
SPEC_URI = "urn:chat-platform-openapi"
BITFIELD_KEYS = {"permissions", "allow", "deny"}
VIEW_CHANNEL = 1 << 10


@pytest.fixture(scope="module")
def spec_document() -> dict[str, Any]:
    assert SPEC_PATH.is_file(), f"the platform's OpenAPI description is missing at {SPEC_PATH}"
    return json.loads(SPEC_PATH.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def openapi(spec_document: dict[str, Any]) -> OpenAPI:
    # Loading validates the 1.2 MB description itself (a few seconds): once per module.
    return OpenAPI.from_file_path(str(SPEC_PATH))


@pytest.fixture(scope="module")
def spec_server(spec_document: dict[str, Any]) -> str:
    return spec_document["servers"][0]["url"].rstrip("/")


@pytest.fixture(scope="module")
def spec_schemas(spec_document: dict[str, Any]) -> Callable[[str], OAS31Validator]:
    """A validator for one of the description's component schemas, its references resolved in the description."""
    registry = Registry().with_resource(SPEC_URI, Resource.from_contents(spec_document, DRAFT202012))
    return lambda name: OAS31Validator({"$ref": f"{SPEC_URI}#/components/schemas/{name}"}, registry=registry)


class Recorder:
    """Records every exchange the client makes and checks it against the description."""

    def __init__(
        self,
        client: ChatClient,
        sandbox_root: str,
        spec_server: str,
        openapi: OpenAPI,
        spec_schemas: Callable[[str], OAS31Validator],
    ):
        self.client = client
        self.sandbox_root = sandbox_root
        self.spec_server = spec_server
        self.openapi = openapi
        self.spec_schemas = spec_schemas
        self.exchanges: list[requests.Response] = []
        client.session.hooks["response"].append(self._record)

    def _record(self, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        self.exchanges.append(response)

    def take(self) -> list[requests.Response]:
        taken, self.exchanges = self.exchanges, []
        return taken

    def spec_request(self, response: requests.Response, body: Any = None) -> RequestsOpenAPIRequest:
        prepared = response.request.copy()
        assert prepared.url is not None
        assert prepared.url.startswith(self.sandbox_root), prepared.url
        prepared.url = self.spec_server + prepared.url[len(self.sandbox_root) :]
        if body is not None:
            prepared.body = json.dumps(body).encode()
        return RequestsOpenAPIRequest(prepared)

    def check(self, response: requests.Response) -> None:
        """The exchange conforms as it is."""
        request = self.spec_request(response)
        self.openapi.validate_request(request)
        self.openapi.validate_response(request, RequestsOpenAPIResponse(response))

    def check_request_with_string_bitfields(self, response: requests.Response) -> None:
        """BITFIELDS_AS_STRINGS: only the string bitfields may fail, and the request conforms without them."""
        body = json.loads(response.request.body)
        assert _string_bitfields(body), "the client sends bitfields as decimal strings"
        problems: list[Any] = []
        try:
            self.openapi.validate_request(self.spec_request(response))
        except OpenAPIError as error:
            problems = _schema_errors(error) or [error]
        _assert_only_string_bitfields(problems)
        request = self.spec_request(response, body=_with_integer_bitfields(body))
        self.openapi.validate_request(request)
        self.openapi.validate_response(request, RequestsOpenAPIResponse(response))

    def check_body_branch(self, response: requests.Response, schema: str) -> None:
        """The request body meets the union branch it means (`schema`), but for BITFIELDS_AS_STRINGS."""
        body = json.loads(response.request.body)
        validator = self.spec_schemas(schema)
        _assert_only_string_bitfields(list(validator.iter_errors(body)))
        assert list(validator.iter_errors(_with_integer_bitfields(body))) == []

    def check_response_with_fix(
        self,
        response: requests.Response,
        fix: Callable[[dict[str, Any]], dict[str, Any]],
        invalid_request_field: str | None = None,
    ) -> None:
        """A documented response difference: it conforms once `fix` undoes exactly that difference.

        `invalid_request_field`: the request was invalid on purpose; the spec must reject it for that field.
        """
        request = self.spec_request(response)
        if invalid_request_field is None:
            self.openapi.validate_request(request)
        else:
            with pytest.raises(OpenAPIError) as rejected:
                self.openapi.validate_request(request)
            problems = _schema_errors(rejected.value)
            assert problems
            assert all(list(problem.path) == [invalid_request_field] for problem in problems), problems
        fixed = copy.copy(response)
        fixed._content = json.dumps(fix(response.json())).encode()
        self.openapi.validate_response(request, RequestsOpenAPIResponse(fixed))


def _assert_only_string_bitfields(problems: list[Any]) -> None:
    """BITFIELDS_AS_STRINGS: every problem is a decimal string where the description wants an integer bitfield."""
    for problem in problems:
        assert getattr(problem, "validator", None) == "type", problem
        assert problem.path, problem
        assert problem.path[-1] in BITFIELD_KEYS, problem
        assert isinstance(problem.instance, str), problem
        assert problem.instance.isdigit(), problem


def _schema_errors(error: BaseException) -> list[Any]:
    found: list[Any] = []
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        found.extend(getattr(current, "schema_errors", []) or [])
        current = current.__cause__ or current.__context__
    return found


def _string_bitfields(value: Any) -> bool:
    if isinstance(value, dict):
        return any(
            (key in BITFIELD_KEYS and isinstance(item, str)) or _string_bitfields(item) for key, item in value.items()
        )
    if isinstance(value, list):
        return any(_string_bitfields(item) for item in value)
    return False


def _with_integer_bitfields(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: int(item) if key in BITFIELD_KEYS and isinstance(item, str) else _with_integer_bitfields(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_with_integer_bitfields(item) for item in value]
    return value


def _integer_leaf_codes(body: dict[str, Any]) -> dict[str, Any]:
    """STRING_LEAF_ERROR_CODES undone: each `_errors[].code` string becomes an integer."""
    found: list[str] = []

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if isinstance(node.get("_errors"), list):
                for leaf in node["_errors"]:
                    found.append(leaf["code"])
                return {"_errors": [{**leaf, "code": 0} for leaf in node["_errors"]]}
            return {key: walk(item) for key, item in node.items()}
        return node

    fixed = {**body, "errors": walk(body["errors"])}
    assert found, "a 50035 body carries leaf errors"
    assert all(isinstance(code, str) for code in found), "leaf codes are strings, as the docs say"
    return fixed


def _with_429_code(body: dict[str, Any]) -> dict[str, Any]:
    """OPTIONAL_429_CODE undone: the body gets the `code` the spec requires."""
    assert "code" not in body
    return {**body, "code": 0}


@pytest.fixture
def recorder(
    chat_sandbox: SandboxServer,
    chat_settings: Settings,
    openapi: OpenAPI,
    spec_server: str,
    spec_schemas: Callable[[str], OAS31Validator],
) -> Iterator[Recorder]:
    client = new_chat_client(chat_settings)
    yield Recorder(client, chat_sandbox.base_url, spec_server, openapi, spec_schemas)
    client.session.close()


# -- the tests --------------------------------------------------------------------------------


def test_invite_and_unknown_invite_conform(recorder: Recorder):
    # When a permanent invite, a dated invite and an unknown code are resolved
    recorder.client.get_invite("svcDemo")
    recorder.client.get_invite("Temp2026x", with_counts=False)
    with pytest.raises(UnknownInvite):
        recorder.client.get_invite("doesNotExist")
    found, dated, unknown = recorder.take()
    # Then each exchange, the 404 error body included, matches the description
    for exchange in (found, dated, unknown):
        recorder.check(exchange)
    assert found.json()["expires_at"] is None
    assert dated.json()["expires_at"].endswith("+00:00")
    assert unknown.status_code == 404
    assert unknown.json() == {"message": "Unknown Invite", "code": 10006}


def test_each_template_and_an_unknown_template_conform(recorder: Recorder):
    # When every template of the sandbox's fixture and an unknown code are read (with the bot token)
    codes = list(sandbox_templates())
    for code in codes:
        recorder.client.get_template(code)
    with pytest.raises(UnknownTemplate):
        recorder.client.get_template("noSuchTemplate")
    *found, unknown = recorder.take()
    # Then each exchange, the 404 included, matches the description
    for exchange in (*found, unknown):
        recorder.check(exchange)
    assert [exchange.json()["code"] for exchange in found] == codes
    assert unknown.status_code == 404
    assert unknown.json() == {"message": "Unknown Guild Template", "code": 10057}


def test_current_user_as_user_and_as_bot_conforms(recorder: Recorder):
    recorder.client.get_current_user(ALICE_TOKEN)
    recorder.client.get_bot_user()
    with pytest.raises(InvalidUserToken):
        recorder.client.get_current_user(BOB_EXPIRED_TOKEN)
    as_user, as_bot, refused = recorder.take()
    for exchange in (as_user, as_bot, refused):
        recorder.check(exchange)
    assert as_user.json()["email"] == "alice@example.com"
    assert as_bot.json()["bot"] is True
    assert refused.json() == {"message": "401: Unauthorized", "code": 0}


def test_guild_lists_conform(recorder: Recorder):
    recorder.client.get_current_user_guilds(ALICE_TOKEN, with_counts=True)
    recorder.client.get_bot_guilds()
    user_list, bot_list = recorder.take()
    recorder.check(user_list)
    recorder.check(bot_list)
    assert all(isinstance(item["permissions"], str) for item in user_list.json())


def test_guild_member_and_unknown_guild_conform(recorder: Recorder):
    recorder.client.get_guild(DEMO_GUILD, with_counts=True)
    recorder.client.get_guild_member(DEMO_GUILD, BOB_ID)
    with pytest.raises(UnknownGuild):
        recorder.client.get_guild(QUIET_GUILD)
    guild, member, unknown = recorder.take()
    for exchange in (guild, member, unknown):
        recorder.check(exchange)
    assert unknown.json() == {"message": "Unknown Guild", "code": 10004}


def test_roles_list_create_and_reorder_conform(recorder: Recorder):
    # When roles are listed, one created with a bitfield and moved
    recorder.client.list_roles(DEMO_GUILD)
    role = recorder.client.create_role(DEMO_GUILD, {"name": "Conformance", "permissions": VIEW_CHANNEL})
    recorder.client.reorder_roles(DEMO_GUILD, {role.id: 2})
    listed, created, reordered = recorder.take()
    # Then the list and the reorder match as they are
    recorder.check(listed)
    recorder.check(reordered)
    # And the creation matches once the spec's integer typing of bitfields is accounted for
    recorder.check_request_with_string_bitfields(created)
    assert created.status_code == 200


def test_channels_list_create_reorder_and_overwrite_conform(recorder: Recorder):
    recorder.client.list_channels(DEMO_GUILD)
    category = recorder.client.create_channel(DEMO_GUILD, {"name": "Spec", "type": 4})
    channel = recorder.client.create_channel(
        DEMO_GUILD,
        {
            "name": "spec-talk",
            "type": 0,
            "parent_id": category.id,
            "permission_overwrites": [{"id": DEMO_GUILD, "type": 0, "deny": VIEW_CHANNEL}],
        },
    )
    recorder.client.create_channel(DEMO_GUILD, {"name": "Spec Voice", "type": 2, "user_limit": 5})
    recorder.client.reorder_channels(DEMO_GUILD, [{"id": channel.id, "position": 3}])
    recorder.client.set_channel_overwrite(channel.id, "1191000000000002013", 0, allow=VIEW_CHANNEL)
    listed, new_category, new_channel, new_voice, reordered, overwrite = recorder.take()
    for exchange in (listed, new_category, new_voice, reordered):
        recorder.check(exchange)
    recorder.check_request_with_string_bitfields(new_channel)
    recorder.check_request_with_string_bitfields(overwrite)
    assert [new_category.status_code, new_channel.status_code, reordered.status_code, overwrite.status_code] == [
        201,
        201,
        204,
        204,
    ]
    assert reordered.content == overwrite.content == b""


def test_invalid_form_body_conforms_but_for_its_string_leaf_codes(recorder: Recorder):
    with pytest.raises(ChatInvalidRequest):
        recorder.client.create_channel(DEMO_GUILD, {"name": ""})
    [invalid] = recorder.take()
    assert invalid.json() == {
        "message": "Invalid Form Body",
        "code": 50035,
        "errors": {
            "name": {"_errors": [{"code": "BASE_TYPE_BAD_LENGTH", "message": "Must be between 1 and 100 in length."}]}
        },
    }
    # The request broke the spec's own minLength for `name`, which is why the platform refused it
    recorder.check_response_with_fix(invalid, _integer_leaf_codes, invalid_request_field="name")


def test_rate_limited_answer_conforms_but_for_its_optional_code(recorder: Recorder, chat_state: SandboxState):
    # Given every request is answered 429, and a client that does not retry
    chat_state.configure(rate_limit_probability=1.0)
    recorder.client.max_rate_limit_retries = 0
    with pytest.raises(ChatRateLimited):
        recorder.client.get_guild(DEMO_GUILD)
    [limited] = recorder.take()
    # Then the headers match the description and the body is the docs' shape
    assert limited.status_code == 429
    assert set(limited.json()) == {"message", "retry_after", "global"}
    assert limited.headers["X-RateLimit-Remaining"] == "0"
    recorder.check_response_with_fix(limited, _with_429_code)


def test_role_modify_and_delete_conform(recorder: Recorder, chat_state: SandboxState):
    # When a role is modified with a bitfield, deleted, deleted again, and the bot's managed role deleted
    role = recorder.client.create_role(DEMO_GUILD, {"name": "Short-lived"})
    recorder.take()
    recorder.client.modify_role(DEMO_GUILD, role.id, {"name": "Renamed", "permissions": VIEW_CHANNEL, "hoist": True})
    recorder.client.delete_role(DEMO_GUILD, role.id)
    with pytest.raises(UnknownRole):
        recorder.client.delete_role(DEMO_GUILD, role.id)
    with chat_state.lock:  # a managed role below the bot: only its deletion is refused, not its position
        chat_state.guilds[BOB_GUILD]["roles"]["1191000000000002022"]["managed"] = True
    with pytest.raises(ChatApiError):
        recorder.client.delete_role(BOB_GUILD, "1191000000000002022")
    modified, deleted, unknown, managed = recorder.take()
    # Then each exchange matches the description, the modification once bitfields are integers
    recorder.check_request_with_string_bitfields(modified)
    for exchange in (deleted, unknown, managed):
        recorder.check(exchange)
    assert (modified.status_code, modified.json()["name"], modified.json()["permissions"]) == (200, "Renamed", "1024")
    assert (deleted.status_code, deleted.content) == (204, b"")
    assert unknown.json() == {"message": "Unknown Role", "code": 10011}
    assert managed.json() == {"message": "Invalid Role", "code": 50028}


def test_channel_modify_delete_and_overwrite_delete_conform(recorder: Recorder):
    # When a text channel gets new overwrites, a voice channel new limits, an overwrite and a category are deleted
    recorder.client.modify_channel(
        "1191000000000003014",
        {"name": "General Chat", "topic": "hi", "permission_overwrites": [{"id": DEMO_GUILD, "type": 0, "deny": 2048}]},
    )
    recorder.client.modify_channel("1191000000000003015", {"user_limit": 8, "bitrate": 64000})
    recorder.client.delete_overwrite("1191000000000003014", DEMO_GUILD)
    with pytest.raises(UnknownOverwrite):
        recorder.client.delete_overwrite("1191000000000003014", DEMO_GUILD)
    recorder.client.delete_channel(INFO_CATEGORY)
    text, voice, overwrite, no_overwrite, category = recorder.take()
    # Then each matches the description, and the modifications also meet its guild-channel branch
    recorder.check_request_with_string_bitfields(text)
    recorder.check_body_branch(text, "UpdateGuildChannelRequestPartial")
    recorder.check(voice)
    recorder.check_body_branch(voice, "UpdateGuildChannelRequestPartial")
    for exchange in (overwrite, no_overwrite, category):
        recorder.check(exchange)
    assert (text.json()["name"], voice.json()["user_limit"]) == ("general-chat", 8)
    assert (overwrite.status_code, no_overwrite.json()["code"]) == (204, 10009)
    assert (category.status_code, category.json()["type"]) == (200, 4)


def test_an_invalid_role_modification_conforms_but_for_its_string_leaf_codes(recorder: Recorder):
    with pytest.raises(ChatInvalidRequest):
        recorder.client.modify_role(DEMO_GUILD, "1191000000000002013", {"name": ""})
    [invalid] = recorder.take()
    assert invalid.json()["errors"] == {
        "name": {"_errors": [{"code": "BASE_TYPE_BAD_LENGTH", "message": "Must be between 1 and 100 in length."}]}
    }
    recorder.check_response_with_fix(invalid, _integer_leaf_codes, invalid_request_field="name")


def test_guild_settings_modify_and_its_refusals_conform(recorder: Recorder):
    # When the demo guild's settings change, then an AFK channel that is a text channel and a guild without
    # MANAGE_GUILD (the locked room) are refused
    lounge, general = "1191000000000003015", "1191000000000003014"
    settings = {
        "verification_level": 3,
        "default_message_notifications": 0,
        "explicit_content_filter": 1,
        "afk_channel_id": lounge,
        "afk_timeout": 1800,
        "system_channel_id": general,
        "system_channel_flags": 5,
        "preferred_locale": "fr",
        "description": "Conformance",
    }
    recorder.client.modify_guild(DEMO_GUILD, settings)
    with pytest.raises(ChatInvalidRequest):
        recorder.client.modify_guild(DEMO_GUILD, {"afk_channel_id": general})
    with pytest.raises(MissingPermissions):
        recorder.client.modify_guild("1191000000000001004", {"verification_level": 1})
    modified, wrong_type, forbidden = recorder.take()
    # Then each exchange matches the description (the refusal once its leaf codes are integers)
    recorder.check(modified)
    recorder.check(forbidden)
    recorder.check_response_with_fix(wrong_type, _integer_leaf_codes)
    assert {key: modified.json()[key] for key in settings} == settings
    assert wrong_type.json()["errors"] == {
        "afk_channel_id": {"_errors": [{"code": "BASE_TYPE_INVALID", "message": "Invalid channel type."}]}
    }
    assert forbidden.json() == {"message": "Missing Permissions", "code": 50013}


def test_an_afk_timeout_the_platform_does_not_offer_is_refused_by_the_description_too(recorder: Recorder):
    with pytest.raises(ChatInvalidRequest):
        recorder.client.modify_guild(DEMO_GUILD, {"afk_timeout": 120})
    [invalid] = recorder.take()
    assert invalid.json()["errors"]["afk_timeout"]["_errors"][0]["code"] == "BASE_TYPE_CHOICES"
    recorder.check_response_with_fix(invalid, _integer_leaf_codes, invalid_request_field="afk_timeout")


def test_forum_and_voice_fields_and_role_emoji_conform(recorder: Recorder):
    # When a forum is created with tags and its defaults, then modified (tags, the require-tag flag), a voice
    # channel gets its video quality, and a role its emoji in a guild with ROLE_ICONS and in one without
    forum_body = {
        "name": "spec-forum",
        "type": 15,
        "available_tags": [{"name": "Bug", "emoji_name": "🐛"}, {"name": "Pick", "moderated": True}],
        "default_reaction_emoji": {"emoji_name": "👍"},
        "default_thread_rate_limit_per_user": 30,
        "default_sort_order": 1,
        "default_forum_layout": 2,
    }
    forum = recorder.client.create_channel(BUILD_GUILD, forum_body)
    bug = forum.available_tags[0]
    recorder.client.modify_channel(
        forum.id, {"available_tags": [{"id": bug.id, "name": "Bug", "emoji_name": "🐞"}], "flags": 16}
    )
    recorder.client.create_channel(BUILD_GUILD, {"name": "Spec Stage", "type": 2, "video_quality_mode": 2})
    recorder.client.create_role(BUILD_GUILD, {"name": "Iconic", "unicode_emoji": "🧭"})
    with pytest.raises(ChatApiError):
        recorder.client.create_role(DEMO_GUILD, {"name": "Iconic", "unicode_emoji": "🧭"})
    created, modified, voice, role, no_icons = recorder.take()
    # Then each exchange matches the description; the modification also meets its guild-channel branch
    for exchange in (created, modified, voice, role, no_icons):
        recorder.check(exchange)
    recorder.check_body_branch(modified, "UpdateGuildChannelRequestPartial")
    tags = created.json()["available_tags"]
    assert [(t["name"], t["emoji_name"], t["moderated"]) for t in tags] == [("Bug", "🐛", False), ("Pick", None, True)]
    assert {key: created.json()[key] for key in ("default_sort_order", "default_forum_layout")} == {
        "default_sort_order": 1,
        "default_forum_layout": 2,
    }
    assert modified.json()["available_tags"] == [
        {"id": bug.id, "name": "Bug", "moderated": False, "emoji_id": None, "emoji_name": "🐞"}
    ]
    assert modified.json()["flags"] == 16
    assert voice.json()["video_quality_mode"] == 2
    assert role.json()["unicode_emoji"] == "🧭"
    assert no_icons.json() == {"message": "This server needs more boosts to perform this action", "code": 50101}


def test_the_vendored_description_is_the_one_its_readme_pins():
    readme = (SPEC_PATH.parent / "README.md").read_text(encoding="utf-8")
    pinned = re.search(r"sha256 \| `([0-9a-f]{64})`", readme)
    assert pinned, "tests/data/README.md names the description's sha256"
    assert hashlib.sha256(SPEC_PATH.read_bytes()).hexdigest() == pinned.group(1)


def test_the_token_endpoint_is_not_in_the_description(spec_document: dict[str, Any]):
    # The OAuth2 token endpoint answers in RFC 6749's shape and the description leaves it out,
    # so its exchanges are checked in test_chat_client_identity.py (form body, Basic auth, error codes).
    assert "/oauth2/token" not in spec_document["paths"]


def test_role_member_counts_bulk_moves_and_community_channel_deletion_conform(
    recorder: Recorder, chat_state: SandboxState
):
    # Given a Community server whose updates channel is "announcements"
    announcements = "1191000000000003013"
    with chat_state.lock:
        chat_state.guilds[DEMO_GUILD]["public_updates_channel_id"] = announcements
    # When the role member counts are read, two channels change parent in one bulk request, the updates channel
    # is deleted, and one channel moves alone
    counts = recorder.client.role_member_counts(DEMO_GUILD)
    with pytest.raises(ChatApiError):
        recorder.client.reorder_channels(
            DEMO_GUILD,
            [
                {"id": "1191000000000003014", "parent_id": INFO_CATEGORY},
                {"id": "1191000000000003015", "parent_id": INFO_CATEGORY},
            ],
        )
    with pytest.raises(ChatApiError):
        recorder.client.delete_channel(announcements)
    recorder.client.reorder_channels(DEMO_GUILD, [{"id": "1191000000000003014", "parent_id": INFO_CATEGORY}])
    counted, two_parents, community, one_parent = recorder.take()
    # Then each exchange matches the description, with the platform's codes
    for exchange in (counted, two_parents, community, one_parent):
        recorder.check(exchange)
    assert counts == {"1191000000000002011": 1, "1191000000000002012": 1, "1191000000000002013": 1}
    assert (two_parents.status_code, two_parents.json()["code"]) == (400, 40009)
    assert (community.status_code, community.json()["code"]) == (400, 50074)
    assert one_parent.status_code == 204
    assert chat_state.guilds[DEMO_GUILD]["channels"]["1191000000000003014"]["parent_id"] == INFO_CATEGORY


def test_member_role_grant_removal_and_their_refusals_conform(recorder: Recorder, chat_state: SandboxState):
    # When Carol is granted Moderator (below the bot), granted it again, has it taken back, Bob is granted the bot's
    # own role (at its highest: 50013), someone not in the guild is granted one (10007), and an unknown role (10011)
    moderator, member, bot_role = "1191000000000002012", "1191000000000002013", "1191000000000002011"
    recorder.client.add_member_role(DEMO_GUILD, CAROL_ID, moderator)
    recorder.client.add_member_role(DEMO_GUILD, CAROL_ID, moderator)
    holds_after_grants = list(chat_state.guilds[DEMO_GUILD]["members"][CAROL_ID]["roles"])
    recorder.client.remove_member_role(DEMO_GUILD, CAROL_ID, moderator)
    with pytest.raises(MissingPermissions):
        recorder.client.add_member_role(DEMO_GUILD, BOB_ID, bot_role)
    with pytest.raises(UnknownMember):
        recorder.client.add_member_role(DEMO_GUILD, "1191000000000000999", member)
    with pytest.raises(UnknownRole):
        recorder.client.add_member_role(DEMO_GUILD, BOB_ID, "1191000000000009999")
    exchanges = recorder.take()
    # Then each exchange matches the description, and the member holds the role once, then not at all
    for exchange in exchanges:
        recorder.check(exchange)
    assert [e.status_code for e in exchanges] == [204, 204, 204, 403, 404, 404]
    assert holds_after_grants == [member, moderator]
    assert chat_state.guilds[DEMO_GUILD]["members"][CAROL_ID]["roles"] == [member]
    assert [e.json()["code"] for e in exchanges[3:]] == [50013, 10007, 10011]
    assert exchanges[0].headers["X-RateLimit-Limit"] == "10"
    assert exchanges[0].headers["X-RateLimit-Bucket"] != recorder_bucket_of_roles(recorder)


def recorder_bucket_of_roles(recorder: Recorder) -> str:
    """The bucket the role list answers in: the member-role routes have a bucket of their own."""
    recorder.client.list_roles(DEMO_GUILD)
    (listed,) = recorder.take()
    return str(listed.headers["X-RateLimit-Bucket"])


def test_member_list_pages_and_its_refusals_conform(recorder: Recorder, chat_state: SandboxState):
    # Given BOB_GUILD with 12 more members and a page of 5
    add_members(chat_state, BOB_GUILD, 12, ["1191000000000002022"])
    recorder.client.member_page_size = 5
    # When the member list is read, then asked with a limit past 1,000, then without the privileged intent
    members = recorder.client.list_members(BOB_GUILD)
    recorder.client.member_page_size = 1001
    with pytest.raises(ChatInvalidRequest):
        recorder.client.list_members(BOB_GUILD)
    recorder.client.member_page_size = 1000
    chat_state.configure(guild_members_intent=False)
    with pytest.raises(MissingAccess):
        recorder.client.list_members(BOB_GUILD)
    *pages, too_many, no_intent = recorder.take()
    # Then each page and the 403 match the description; the 400 does but for its string leaf codes
    for exchange in (*pages, no_intent):
        recorder.check(exchange)
    assert [len(page.json()) for page in pages] == [5, 5, 5, 0]  # a full last page asks once more
    assert len(members) == 15
    # The description refuses the limit too (a query parameter: its error has no body path), and the answer conforms
    # once its string leaf codes are undone
    request = recorder.spec_request(too_many)
    with pytest.raises(OpenAPIError) as rejected:
        recorder.openapi.validate_request(request)
    assert [str(problem.message) for problem in _schema_errors(rejected.value)] == [
        "1001 is greater than the maximum of 1000"
    ]
    fixed = copy.copy(too_many)
    fixed._content = json.dumps(_integer_leaf_codes(too_many.json())).encode()
    recorder.openapi.validate_response(request, RequestsOpenAPIResponse(fixed))
    assert list(too_many.json()["errors"]) == ["limit"]
    assert no_intent.json() == {"message": "Missing Access", "code": 50001}


def test_member_role_grant_removal_and_refusal_conform(recorder: Recorder, chat_state: SandboxState):
    recorder.client.add_member_role(BOB_GUILD, ALICE_ID, "1191000000000002022", reason="restore")
    recorder.client.remove_member_role(BOB_GUILD, ALICE_ID, "1191000000000002022")
    with pytest.raises(MissingPermissions):
        recorder.client.add_member_role("1191000000000001004", ALICE_ID, "1191000000000002042")
    granted, removed, refused = recorder.take()
    for exchange in (granted, removed, refused):
        recorder.check(exchange)
    assert (granted.status_code, removed.status_code) == (204, 204)
    assert granted.headers["X-RateLimit-Limit"] == "10"  # a bucket of its own (docs/04-chat-platform.md)
    assert refused.json() == {"message": "Missing Permissions", "code": 50013}


def test_audit_log_entries_conform(recorder: Recorder, chat_state: SandboxState):
    # Given a role, a channel, an overwrite and a member's role changed through the API
    role = recorder.client.create_role(BOB_GUILD, {"name": "Audited"}, reason="deploy")
    channel = recorder.client.create_channel(BOB_GUILD, {"name": "audited"})
    recorder.client.modify_channel(channel.id, {"name": "audited-2", "topic": "t"})
    recorder.client.set_channel_overwrite(channel.id, role.id, 0, allow=VIEW_CHANNEL)
    recorder.client.add_member_role(BOB_GUILD, ALICE_ID, role.id)
    recorder.client.delete_channel(channel.id)
    recorder.take()
    # When the audit log is read in full, then by action type
    log = recorder.client.audit_log(BOB_GUILD)
    recorder.client.audit_log(BOB_GUILD, action_type=13, limit=1)
    everything, overwrites = recorder.take()
    # Then both match the description, newest first
    recorder.check(everything)
    recorder.check(overwrites)
    assert [entry.action_type for entry in log.audit_log_entries] == [12, 25, 13, 11, 10, 30]
    [overwrite] = overwrites.json()["audit_log_entries"]
    assert overwrite["options"] == {"id": role.id, "type": "0", "role_name": "Audited"}


def test_the_authorize_route_and_the_token_endpoint_honour_pkce_as_the_platform_does(
    chat_sandbox: SandboxServer, chat_state: SandboxState
):
    # The platform (observed; chat-platform facts, "OAuth2 PKCE"): the authorize URL takes an S256 code_challenge
    # and the code's exchange then needs its code_verifier; `state` comes back unchanged on the redirect.
    from urllib.parse import parse_qs, urlsplit

    from tests.helpers.chat_sandbox import CLIENT_ID, CLIENT_SECRET, REDIRECT_URI

    root = chat_sandbox.base_url.split("/api/", 1)[0]
    verifier = "v" * 20 + "-._~" + "0123456789" * 3  # 54 unreserved characters
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    query = {
        "client_id": CLIENT_ID,
        "response_type": "code",
        "redirect_uri": REDIRECT_URI,
        "scope": "identify",
        "state": "st-123",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }

    def authorize(**changes: str) -> requests.Response:
        params = {key: value for key, value in {**query, **changes}.items() if value}
        headers = {"Authorization": f"Bearer {ALICE_TOKEN}"}
        url = f"{root}/oauth2/authorize"
        return requests.get(url, params=params, headers=headers, allow_redirects=False, timeout=5)

    def exchange(code: str, code_verifier: str | None) -> requests.Response:
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT_URI}
        if code_verifier is not None:
            form["code_verifier"] = code_verifier
        url = f"{chat_sandbox.base_url}/oauth2/token"
        return requests.post(url, data=form, auth=(CLIENT_ID, CLIENT_SECRET), timeout=5)

    approved = authorize()
    assert approved.status_code == 302
    back = parse_qs(urlsplit(approved.headers["Location"]).query)
    assert back["state"] == ["st-123"]
    code = back["code"][0]
    # No verifier, a malformed one, or the wrong one: refused, and the code stays unused
    assert (exchange(code, None).status_code, exchange(code, None).json()["error"]) == (400, "invalid_request")
    assert exchange(code, "short").json()["error"] == "invalid_request"
    wrong = exchange(code, "w" * 54).json()
    assert wrong == {"error": "invalid_grant", "error_description": 'Invalid "code_verifier" in request.'}
    granted = exchange(code, verifier)
    assert granted.status_code == 200
    assert granted.json()["token_type"] == "Bearer"
    assert exchange(code, verifier).json()["error"] == "invalid_grant"  # single use
    # Only S256, a challenge of 43 characters, a registered redirect URI, a user's session
    assert authorize(code_challenge_method="plain").status_code == 400
    assert authorize(code_challenge="x" * 42).status_code == 400
    assert authorize(redirect_uri="https://evil.example/cb").status_code == 400
    anonymous = requests.get(f"{root}/oauth2/authorize", params=query, allow_redirects=False, timeout=5)
    assert anonymous.status_code == 401
    # A code issued without a challenge is exchanged as before (the service's anonymous sign-in)
    assert exchange(chat_state.mint_code(BOB_ID), None).status_code == 200


# -- v4: onboarding, AutoMod, the welcome screen, role colours ---------------------------------------------------------

SEND_MESSAGES = 1 << 11
MODERATE_MEMBERS = 1 << 40


def _text_channels(recorder: Recorder, guild_id: str, count: int, **extra: Any) -> list[str]:
    ids = [recorder.client.create_channel(guild_id, {"name": f"room-{n}", **extra}).id for n in range(count)]
    recorder.take()  # the set-up's exchanges are checked elsewhere
    return ids


def test_onboarding_put_get_and_the_platforms_minimum_conform(recorder: Recorder, chat_state: SandboxState):
    # Given 7 text channels @everyone may post in and a role, in a guild where the bot holds MANAGE_GUILD and
    # MANAGE_ROLES
    channels = _text_channels(recorder, BUILD_GUILD, 7)
    role = recorder.client.create_role(BUILD_GUILD, {"name": "EU"})
    recorder.take()
    prompt = {
        "id": "1",
        "title": "Region?",
        "options": [{"title": "EU", "role_ids": [role.id], "channel_ids": [channels[0]], "emoji_name": "🇪🇺"}],
        "single_select": True,
    }
    # When onboarding is enabled with 6 default channels (below the platform's 7), then with 7, read back, and
    # updated below the minimum while enabled
    with pytest.raises(ChatApiError):
        recorder.client.put_onboarding(BUILD_GUILD, {"enabled": True, "default_channel_ids": channels[:6]})
    recorder.client.put_onboarding(BUILD_GUILD, {"enabled": True, "default_channel_ids": channels, "prompts": [prompt]})
    read = recorder.client.get_onboarding(BUILD_GUILD)
    with pytest.raises(ChatApiError):
        recorder.client.put_onboarding(BUILD_GUILD, {"default_channel_ids": channels[:1]})
    too_few, enabled, got, below = recorder.take()
    # Then each exchange matches the description, with the platform's codes
    for exchange in (too_few, enabled, got, below):
        recorder.check(exchange)
    assert too_few.json()["code"] == 350000
    assert below.json()["code"] == 350001
    option = read.prompts[0].options[0]
    assert (read.enabled, read.default_channel_ids, option.role_ids, option.emoji) == (
        True,
        channels,
        [role.id],
        option.emoji,
    )
    assert got.json()["prompts"][0]["options"][0]["emoji"] == {"id": None, "name": "🇪🇺", "animated": False}
    assert chat_state.guilds[BUILD_GUILD]["onboarding"]["default_channel_ids"] == channels  # the refusal wrote nothing


def test_onboarding_counts_only_channels_everyone_may_post_in_and_needs_manage_roles(
    recorder: Recorder, chat_state: SandboxState
):
    # Given 7 channels of which 3 deny @everyone SEND_MESSAGES
    deny = [{"id": BUILD_GUILD, "type": 0, "allow": "0", "deny": str(SEND_MESSAGES)}]
    channels = _text_channels(recorder, BUILD_GUILD, 4) + _text_channels(
        recorder, BUILD_GUILD, 3, permission_overwrites=deny
    )
    # When onboarding is enabled with them, and a bot without MANAGE_ROLES puts onboarding in another guild
    with pytest.raises(ChatApiError):
        recorder.client.put_onboarding(BUILD_GUILD, {"enabled": True, "default_channel_ids": channels})
    with pytest.raises(MissingPermissions):
        recorder.client.put_onboarding(LOCKED_GUILD, {"enabled": False})
    refused, forbidden = recorder.take()
    for exchange in (refused, forbidden):
        recorder.check(exchange)
    # Then only 4 count: refused with 350000; the other is a 50013
    assert refused.json()["code"] == 350000
    assert (forbidden.status_code, forbidden.json()["code"]) == (403, 50013)
    assert "onboarding" not in chat_state.guilds[LOCKED_GUILD]


def test_automod_rules_create_list_modify_delete_and_their_limits_conform(recorder: Recorder, chat_state: SandboxState):
    # Given a text channel for alerts
    (alerts,) = _text_channels(recorder, BUILD_GUILD, 1)
    keyword = {
        "name": "Invites",
        "event_type": 1,
        "trigger_type": 1,
        "trigger_metadata": {"keyword_filter": ["discord.gg*"], "regex_patterns": [], "allow_list": []},
        "actions": [
            {"type": 1, "metadata": {"custom_message": "No invites"}},
            {"type": 2, "metadata": {"channel_id": alerts}},
            {"type": 3, "metadata": {"duration_seconds": 60}},
        ],
        "enabled": True,
    }
    # When a keyword rule is created, listed, modified; six more keyword rules are tried; a timeout on a spam rule;
    # then the rule is deleted
    rule = recorder.client.create_automod_rule(BUILD_GUILD, keyword)
    recorder.client.list_automod_rules(BUILD_GUILD)
    recorder.client.modify_automod_rule(BUILD_GUILD, rule.id, {"name": "No invites", "trigger_type": 1})
    for n in range(5):
        recorder.client.create_automod_rule(BUILD_GUILD, {**keyword, "name": f"k{n}"})
    with pytest.raises(ChatInvalidRequest):
        recorder.client.create_automod_rule(BUILD_GUILD, {**keyword, "name": "seventh"})
    spam = {
        "name": "Spam",
        "event_type": 1,
        "trigger_type": 3,
        "actions": [{"type": 3, "metadata": {"duration_seconds": 5}}],
    }
    with pytest.raises(ChatInvalidRequest):
        recorder.client.create_automod_rule(BUILD_GUILD, spam)
    recorder.client.delete_automod_rule(BUILD_GUILD, rule.id)
    created, listed, modified, *more, seventh, timeout_on_spam, deleted = recorder.take()
    # Then each exchange matches the description, with the platform's codes
    for exchange in (created, listed, modified, *more, deleted):
        recorder.check(exchange)
    for refused in (seventh, timeout_on_spam):  # but for their string leaf codes
        recorder.check_response_with_fix(refused, _integer_leaf_codes)
    assert created.json()["enabled"] is True
    assert created.json()["actions"][1] == {"type": 2, "metadata": {"channel_id": alerts}}
    assert modified.json()["name"] == "No invites"
    assert seventh.json()["errors"]["trigger_type"]["_errors"][0] == {
        "code": "AUTO_MODERATION_MAX_RULES_OF_TYPE_EXCEEDED",
        "message": "Maximum number of rules with trigger type 1 is 6",
    }
    assert "actions" in timeout_on_spam.json()["errors"]
    assert deleted.status_code == 204
    assert sorted(r["name"] for r in chat_state.guilds[BUILD_GUILD]["automod_rules"].values()) == [
        f"k{n}" for n in range(5)
    ]


def test_an_automod_timeout_needs_moderate_members_and_a_rule_its_trigger(recorder: Recorder, chat_state: SandboxState):
    # Given a bot without MODERATE_MEMBERS
    with chat_state.lock:
        bot_role = chat_state.guilds[BUILD_GUILD]["roles"]["1191000000000002051"]
        bot_role["permissions"] = str(int(bot_role["permissions"]) & ~MODERATE_MEMBERS)
    body = {
        "name": "Mentions",
        "event_type": 1,
        "trigger_type": 5,
        "trigger_metadata": {"mention_total_limit": 10},
        "actions": [{"type": 3, "metadata": {"duration_seconds": 60}}],
    }
    # When a timeout rule is created, then one without the timeout whose trigger later changes
    with pytest.raises(MissingPermissions):
        recorder.client.create_automod_rule(BUILD_GUILD, body)
    rule = recorder.client.create_automod_rule(BUILD_GUILD, {**body, "actions": [{"type": 1}]})
    with pytest.raises(ChatInvalidRequest):
        recorder.client.modify_automod_rule(BUILD_GUILD, rule.id, {"trigger_type": 1})
    forbidden, created, changed = recorder.take()
    for exchange in (forbidden, created):
        recorder.check(exchange)
    recorder.check_response_with_fix(changed, _integer_leaf_codes)
    # Then 50013, a rule off by default with its metadata, and the trigger stays
    assert forbidden.json()["code"] == 50013
    assert (created.json()["enabled"], created.json()["trigger_metadata"]) == (
        False,
        {"mention_total_limit": 10, "mention_raid_protection_enabled": False},
    )
    assert changed.status_code == 400
    assert chat_state.guilds[BUILD_GUILD]["automod_rules"][rule.id]["trigger_type"] == 5


def test_the_welcome_screen_modify_get_and_a_non_community_guild_conform(recorder: Recorder, chat_state: SandboxState):
    (general,) = _text_channels(recorder, BUILD_GUILD, 1)
    # When a Community guild's welcome screen is set and read, and a non-Community guild's is asked for
    body = {
        "enabled": True,
        "description": "Welcome!",
        "welcome_channels": [{"channel_id": general, "description": "Say hi", "emoji_name": "👋"}],
    }
    recorder.client.modify_welcome_screen(BUILD_GUILD, body)
    recorder.client.get_welcome_screen(BUILD_GUILD)
    with pytest.raises(ChatApiError):
        recorder.client.modify_welcome_screen(BOB_GUILD, body)
    modified, read, not_community = recorder.take()
    for exchange in (modified, read, not_community):
        recorder.check(exchange)
    # Then the screen is the one sent, the guild has WELCOME_SCREEN_ENABLED, and the other answers 10069
    assert read.json() == {
        "description": "Welcome!",
        "welcome_channels": [{"channel_id": general, "description": "Say hi", "emoji_id": None, "emoji_name": "👋"}],
    }
    assert "WELCOME_SCREEN_ENABLED" in chat_state.guilds[BUILD_GUILD]["features"]
    assert not_community.json() == {"message": "Unknown Guild Welcome Screen", "code": 10069}


def test_role_colours_gradient_holographic_and_without_the_feature_conform(
    recorder: Recorder, chat_state: SandboxState
):
    # Given one guild with ENHANCED_ROLE_COLORS and one without
    with chat_state.lock:
        chat_state.guilds[BUILD_GUILD]["features"].append("ENHANCED_ROLE_COLORS")
    gradient = {"primary_color": 0xFF0000, "secondary_color": 0x0000FF, "tertiary_color": None}
    holographic = {"primary_color": 11127295, "secondary_color": 16759788, "tertiary_color": 16761760}
    # When a gradient role and a holographic one are created there, a wrong holographic set is sent, and a gradient
    # goes to the other guild
    role = recorder.client.create_role(BUILD_GUILD, {"name": "Gradient", "colors": gradient})
    recorder.client.modify_role(BUILD_GUILD, role.id, {"colors": holographic})
    with pytest.raises(ChatInvalidRequest):
        recorder.client.modify_role(BUILD_GUILD, role.id, {"colors": {**holographic, "primary_color": 1}})
    with pytest.raises(ChatInvalidRequest):
        recorder.client.create_role(DEMO_GUILD, {"name": "Gradient", "colors": gradient})
    created, modified, wrong, no_feature = recorder.take()
    # Then each exchange matches the description (the refusals but for their string leaf codes)
    for exchange in (created, modified):
        recorder.check(exchange)
    for refused in (wrong, no_feature):
        recorder.check_response_with_fix(refused, _integer_leaf_codes)
    assert created.json()["colors"] == gradient
    assert created.json()["color"] == 0xFF0000
    assert modified.json()["colors"] == holographic
    assert "colors" in no_feature.json()["errors"]
    assert [r["name"] for r in chat_state.guilds[DEMO_GUILD]["roles"].values()].count("Gradient") == 0
