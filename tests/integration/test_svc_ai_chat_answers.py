"""svcAiChat's answers that do not apply, through its handler against the fake Messages API: malformed answers
repaired once or rejected (never an invalid configuration), edits naming what does not exist, answers cut off
at max_tokens (their complete edits kept), what does not fit the output budget, and max_tokens itself."""

from __future__ import annotations

import json
from typing import Any

import pytest

from local.ai_model import Step
from svcconf.conversation.turn import GO_ON, KEPT_REPLY, NOT_BUILT_REPLY, REFUSED_REPLY, UNUSABLE_REPLY
from svcconf.settings import get_settings
from tests.helpers.ai_chat import (
    CURRENT,
    CURRENT_NORMALISED,
    TIMEOUT_SECONDS,
    ask,
    assert_valid_or_none,
    turn,
    user,
)

# ---------------------------------------------------------------- malformed output: repaired or rejected

BAD_CONFIGS: list[Any] = [
    {"name": ""},
    {"name": "x" * 101},
    {"name": "A", "roles": [{"name": "Boss", "permissions": ["SUPERUSER"]}]},
    {"name": "A", "roles": [{"name": "Mods"}, {"name": "mods"}]},
    {"name": "A", "channels": [{"name": "c", "overwrites": [{"role": "Ghosts", "allow": ["VIEW_CHANNEL"]}]}]},
    {"name": "A", "roles": [{"name": "@everyone"}]},
    {"name": "A", "roles": [{"name": "Red", "color": "red"}]},
    {"name": "A", "roles": [{"name": "Big", "color": 0x1000000}]},
    {"name": "A", "channels": [{"name": "c", "type": "video"}]},
    {"name": "A", "channels": [{"name": "c", "slowmode_seconds": 99999}]},
    {"name": "A", "channels": [{"name": "c", "type": "text", "user_limit": 5}]},
    {"name": "A", "channels": [{"name": "c", "type": "text", "topic": "t" * 2000}]},
    {"name": "A", "categories": [{"name": "Big", "channels": [{"name": f"c{i}"} for i in range(51)]}]},
    {"name": "A", "channels": [{"name": f"c{i}"} for i in range(501)]},
    {
        "name": "A",
        "channels": [{"name": "c", "overwrites": [{"role": "@everyone", "allow": ["SPEAK"], "deny": ["SPEAK"]}]}],
    },
    {"name": "A", "channels": [{"name": "c", "overwrites": [{"role": "@everyone"}, {"role": "@everyone"}]}]},
    "my server",
    {"name": "A", "roles": "Admin"},
    {"name": "A", "roles": [{"name": "Admin", "permissions": 8}]},
    {"name": "A", "channels": [{"name": ""}]},
    {"roles": []},
]
# Answers with no readable reply (not JSON, not an object, a reply that is not a string) ...
UNREADABLE_ENVELOPES = [
    "not json at all",
    "",
    "[]",
    "null",
    '{"reply": 5, "config": null, "quick_replies": [], "is_complete": false}',
]
# ... and answers whose reply reads, whatever else is wrong with them: the reply the model gave.
READABLE_ENVELOPES = [
    ('{"reply": "hi"}', "hi"),
    ('{"reply": "ok", "config": {"name": "A"', "ok"),
    ('{"reply": "ok", "config": null, "quick_replies": "Yes", "is_complete": false}', "ok"),
    ('{"reply": "ok", "config": null, "quick_replies": [], "is_complete": "maybe"}', "ok"),
]
GENERAL = {"name": "general"}
MODS = {"kind": "role", "name": "Mods"}
BAD_EDITS: list[Any] = [
    [{"op": "remove", "kind": "channel", "name": "ghost-town"}],
    [{"op": "add", "kind": "role", "name": "mods"}],
    [{"op": "add", "kind": "role", "name": "@everyone"}],
    [{"op": "update", **MODS, "set": {"color": "red"}}],
    [{"op": "update", **MODS, "set": {"color": 0x1000000}}],
    [{"op": "update", **MODS, "set": {"permissions": ["SUPERUSER"]}}],
    [{"op": "add", "kind": "channel", "name": "c", "set": {"type": "video"}}],
    [{"op": "update", "kind": "channel", **GENERAL, "set": {"slowmode_seconds": 99999}}],
    [{"op": "add", "kind": "channel", "name": "c", "set": {"user_limit": 5}}],
    [{"op": "add", "kind": "channel", "name": "c", "set": {"topic": "t" * 2000}}],
    [{"op": "add", "kind": "overwrite", "name": "Ghosts", "ch": "general", "set": {"allow": ["VIEW_CHANNEL"]}}],
    [
        {
            "op": "add",
            "kind": "overwrite",
            "name": "@everyone",
            "ch": "general",
            "set": {"allow": ["SPEAK"], "deny": ["SPEAK"]},
        }
    ],
    [{"op": "add", "kind": "overwrite", "name": "@everyone", "cat": "Staff", "set": {"deny": ["SPEAK"]}}],
    [{"op": "rename", **MODS, "to": "@everyone"}],
    [{"op": "rename", "kind": "channel", **GENERAL, "to": ""}],
    [{"op": "move", "kind": "channel", **GENERAL, "to": "Nowhere"}],
    [{"op": "add", "kind": "channel", "name": "c", "cat": "Nowhere"}],
    [{"op": "update", "kind": "server", "set": {"name": ""}}],
    [{"op": "update", "kind": "server", "set": {"name": "x" * 101}}],
    [{"op": "add", "kind": "category", "name": "Staff"}],
    [{"op": "add", "kind": "channel", "name": f"c{i}", "cat": "Staff"} for i in range(50)],
    [{"op": "explode", **MODS}],
    [{"op": "add", "kind": "emoji", "name": "party"}],
    [{"op": "update", **MODS, "set": {"flavour": "vanilla"}}],
    "Mods",
    [{"op": "update", "kind": "overwrite", "name": "Mods", "cat": "Staff", "set": {"allow": ["NOPE"]}}],
]
# Malformed answers whose reply reads, with that reply: the service adds why nothing was applied.
MALFORMED_EDITS = [(json.dumps(turn("Here it is.", edits=edits)), "Here it is.") for edits in BAD_EDITS]
MALFORMED_BUILDS = [(json.dumps(turn("Here it is.", config)), "Here it is.") for config in BAD_CONFIGS]
SHAPELESS = {"error": "Error", "message": "The AI's answer did not have the requested shape.", "code": 502}


def test_there_are_thirty_malformed_answers_of_each_kind() -> None:
    assert len(MALFORMED_EDITS + READABLE_ENVELOPES + UNREADABLE_ENVELOPES) >= 30
    assert len(MALFORMED_BUILDS + READABLE_ENVELOPES + UNREADABLE_ENVELOPES) >= 30


@pytest.mark.parametrize(("bad", "reply"), MALFORMED_EDITS + READABLE_ENVELOPES, ids=range(30))
def test_malformed_edits_twice_keep_the_configuration_and_give_the_models_reply_with_why(
    invoke, chat, bad, reply
) -> None:
    chat.script(Step(text=bad), Step(text=bad))  # the answer and its repair round are both unusable

    response = ask(invoke, {"messages": [user("Build it")], "currentConfig": CURRENT})

    assert response.status == 200
    assert response.body["config"] == CURRENT_NORMALISED  # the previous configuration, never the invalid one
    assert response.body["reply"] == f"{reply} {KEPT_REPLY}"
    assert response.body["is_complete"] is False
    assert len(chat.requests) == 2  # one repair round, no more


@pytest.mark.parametrize("bad", UNREADABLE_ENVELOPES, ids=range(5))
def test_unreadable_answers_twice_keep_the_configuration_and_say_none_could_be_made(invoke, chat, bad) -> None:
    chat.script(Step(text=bad), Step(text=bad))

    response = ask(invoke, {"messages": [user("Build it")], "currentConfig": CURRENT})

    assert response.status == 200
    assert response.body["config"] == CURRENT_NORMALISED
    assert response.body["reply"] == UNUSABLE_REPLY
    assert response.body["is_complete"] is False
    assert len(chat.requests) == 2


@pytest.mark.parametrize(("bad", "reply"), MALFORMED_BUILDS + READABLE_ENVELOPES, ids=range(25))
def test_a_malformed_first_build_twice_returns_no_configuration_and_the_models_reply_with_why(
    invoke, chat, bad, reply
) -> None:
    chat.script(Step(text=bad), Step(text=bad))

    response = ask(invoke, {"messages": [user("Build it")]})

    assert response.status == 200
    assert response.body["config"] is None
    assert response.body["reply"] == f"{reply} {NOT_BUILT_REPLY}"
    assert len(chat.requests) == 2


@pytest.mark.parametrize("bad", UNREADABLE_ENVELOPES, ids=range(5))
def test_an_unreadable_first_build_twice_is_a_502_saying_the_answer_had_no_shape(invoke, chat, bad) -> None:
    chat.script(Step(text=bad), Step(text=bad))

    response = ask(invoke, {"messages": [user("Build it")]})

    assert response.status == 502
    assert {key: response.body[key] for key in SHAPELESS} == SHAPELESS
    assert len(chat.requests) == 2


@pytest.mark.parametrize("bad", BAD_EDITS[:8], ids=range(8))
def test_edits_that_do_not_apply_are_repaired_in_one_round_with_the_reasons(invoke, chat, bad) -> None:
    chat.script(Step(text=json.dumps(turn("Here it is.", edits=bad))))  # then the local model answers the repair

    response = ask(invoke, {"messages": [user("Add a role named VIP")], "currentConfig": CURRENT})

    assert response.status == 200
    assert_valid_or_none(response.body["config"])
    assert [role["name"] for role in response.body["config"]["roles"]] == ["Mods", "VIP"]  # repaired, not kept
    assert response.body["reply"].startswith("Added the role VIP.")
    first, repair = (request.body["messages"] for request in chat.requests)
    assert repair[: len(first)] == first  # the same conversation, then the failed answer and the problems
    assert repair[-2] == {"role": "assistant", "content": json.dumps(turn("Here it is.", edits=bad))}
    assert repair[-1]["content"].startswith("Your previous answer is not valid:\n- ")
    assert "the edits (or the build) again" in repair[-1]["content"]  # never the whole configuration


def test_an_edit_naming_what_does_not_exist_gets_one_repair_then_the_previous_configuration(invoke, chat) -> None:
    response = ask(invoke, {"messages": [user("Remove the channel ghost-town")], "currentConfig": CURRENT})

    assert response.status == 200
    body = response.body
    assert body["config"] == CURRENT_NORMALISED
    assert body["changes"] == []
    assert body["reply"].endswith(KEPT_REPLY)
    _first, repair = (request.body["messages"] for request in chat.requests)  # one repair round, no more
    assert "edits[0]: no channel named 'ghost-town' outside the categories" in repair[-1]["content"]


def test_a_cut_off_answer_keeps_its_complete_edits_and_offers_to_go_on(invoke, chat) -> None:
    edits = [{"op": "add", "kind": "role", "name": f"Crew {n}"} for n in range(3)]
    whole = json.dumps(turn("Adding three crews.", edits=edits))
    chat.script(Step(text=whole[: whole.index("Crew 2") + 3], stop_reason="max_tokens"))

    response = ask(invoke, {"messages": [user("Add three crews")], "currentConfig": CURRENT})

    body = response.body
    assert response.status == 200
    assert [role["name"] for role in body["config"]["roles"]] == ["Mods", "Crew 0", "Crew 1"]
    assert [(c["op"], c["path"]) for c in body["changes"]] == [("add", "roles[1]"), ("add", "roles[2]")]
    assert body["reply"].startswith("Adding three crews. (I ran out of time for this turn after 2 change(s)")
    assert (body["is_complete"], body["quick_replies"]) == (False, [GO_ON])
    assert len(chat.requests) == 1  # no repair round: what was complete is kept


def test_a_cut_off_answer_whose_first_edit_cannot_be_made_says_why_without_a_repair_round(invoke, chat) -> None:
    edits = [{"op": "remove", "kind": "role", "name": "Ghosts"}, {"op": "add", "kind": "role", "name": "Crew"}]
    whole = json.dumps(turn("Done.", edits=edits))
    chat.script(Step(text=whole[: whole.index("Crew") + 4], stop_reason="max_tokens"))

    body = ask(invoke, {"messages": [user("Replace Ghosts by Crew")], "currentConfig": CURRENT}).body

    assert body["config"] == CURRENT_NORMALISED
    assert body["changes"] == []
    assert body["reply"].startswith("None of the changes I started could be made: ")
    assert "Ghosts" in body["reply"]
    assert (body["is_complete"], body["quick_replies"]) == (False, [])
    assert len(chat.requests) == 1


def test_what_does_not_fit_the_output_budget_is_left_for_the_next_turn(invoke, chat) -> None:
    edits = [{"op": "add", "kind": "category", "name": "Events"}]
    chat.script(
        Step(json=turn("Added Events; its channels come next.", edits=edits, rest="the channels", complete=True))
    )

    body = ask(invoke, {"messages": [user("Add an Events area")], "currentConfig": CURRENT}).body

    assert "Events" in [category["name"] for category in body["config"]["categories"]]
    assert (body["is_complete"], body["quick_replies"][0]) == (False, GO_ON)


def test_max_tokens_is_what_the_model_writes_in_the_time_left_less_a_repair(invoke, chat) -> None:
    ask(invoke, {"messages": [user("Add a role named VIP")], "currentConfig": CURRENT})

    [request] = chat.requests
    # The call's cap (25 s, within the function's 26): 1.5 s to answer, a repair round of 400 tokens
    # (1.8 s + 400/63 s), the first token (1.8 s), at 63 tokens/s
    seconds = min(TIMEOUT_SECONDS, get_settings().ai_timeout_seconds)
    expected = int((seconds - 1.5 - (1.8 + 400 / 63) - 1.8) * 63)
    assert expected - 20 <= request.body["max_tokens"] <= expected
    assert f'"output_budget_tokens":{request.body["max_tokens"]}' in request.body["messages"][-1]["content"][-1]["text"]


def test_a_truncated_answer_is_asked_again_more_briefly(invoke, chat) -> None:
    chat.script(Step(text='{"reply": "Here', stop_reason="max_tokens"))

    response = ask(invoke, {"messages": [user("A music server")]})

    assert response.status == 200
    assert response.body["config"]["name"] == "Music Lounge"
    repair = chat.requests[1].body["messages"]
    assert repair[-1]["role"] == "user"
    assert "cut off" in repair[-1]["content"]


def test_a_refusal_keeps_the_configuration(invoke, chat) -> None:
    chat.script(Step(text="", stop_reason="refusal"))

    body = ask(invoke, {"messages": [user("something harmful")], "currentConfig": CURRENT}).body

    assert body["reply"] == REFUSED_REPLY
    assert body["config"] == CURRENT_NORMALISED
    assert body["is_complete"] is False


def test_an_invalid_current_configuration_is_never_returned(invoke, chat) -> None:
    invalid = {"name": "Broken", "roles": [{"name": "A", "permissions": ["NOPE"]}]}
    bad = json.dumps(turn("Kept.", {"name": ""}))
    chat.script(Step(text=bad), Step(text=bad))

    body = ask(invoke, {"messages": [user("fix it")], "currentConfig": invalid}).body

    assert body["config"] is None
