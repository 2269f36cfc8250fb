"""manageBackup `diff` against another backup of the same guild (issue 30, item 7): the same answer as against the
live guild, by the same path. A backup taken before a second actor's changes, compared with one the service made
after them, names exactly those changes and the members' lost roles, as the comparison with the live server does;
the other way round, what only the older backup holds is a `delete`. The other backup unknown: 404 naming
`against`; of another server: 400 naming `against`; not restorable: 409 with its problems."""

from __future__ import annotations

from tests.helpers.chat_sandbox import BUILD_GUILD, RIGHTS_LAB
from tests.helpers.deploy_worker import ALICE, writes
from tests.integration.test_restore import GONE_MEMBER, MEMBERS, backed_up, bot, nuke

__all__ = ["backed_up"]  # the fixture, shared with test_restore.py


def diff(invoke, backup_id: str, **extra: str):
    return bot(invoke, {"action": "diff", "backup_id": backup_id, **extra})


def made_now(invoke) -> str:
    """A backup the service makes from the live guild now (ids, members' roles)."""
    created = bot(invoke, {"action": "create", "guild_id": BUILD_GUILD, "user_id": ALICE, "label": "after"})
    assert created.status == 201, created.body
    return created.body["data"]["backup_id"]


def summary(answer: dict) -> list[tuple[str, str, str]]:
    return sorted((c["kind"], c["name"], c["action"]) for c in answer["changes"] if c["kind"] != "overwrite")


def test_a_backup_compared_with_a_later_one_names_what_changed_as_against_the_live_server(invoke, platform, backed_up):
    # Given the nightly backup, a second actor's changes (Guests and memes deleted, general renamed, members' roles
    # stripped), and a backup the service made after them
    before, _ = backed_up
    nuke(platform)
    after = made_now(invoke)
    platform.clear_log()

    against_backup = diff(invoke, before, against=after)
    against_live = diff(invoke, before, against="live")

    assert against_backup.status == 200, against_backup.body
    assert summary(against_backup.body) == [
        ("channel", "Lobby / general", "update"),
        ("channel", "Lobby / memes", "create"),
        ("role", "Guests", "create"),
    ]
    renamed = next(c for c in against_backup.body["changes"] if c["name"] == "Lobby / general")
    assert {"field": "name", "old": "general-renamed", "new": "general"} in renamed["changes"]
    # each member lost their role; against a backup, a member it does not list held none of its roles (a backup
    # lists the members holding one), so the member who left is listed too, where the live server knows they left
    members = sorted((m["user_id"], m["missing"], m["extra"]) for m in against_backup.body["members"])
    assert members == sorted(
        [*((user_id, [role], []) for user_id, role in MEMBERS.items()), (GONE_MEMBER, ["Crew"], [])]
    )
    creates = sum(1 for c in against_backup.body["changes"] if c["action"] == "create")  # Guests' overwrite too
    assert against_backup.body["counts"] == {"create": creates, "update": 1, "delete": 0, "members": len(MEMBERS) + 1}
    # the same answer, item for item, as the comparison with the server the later backup was made from
    assert against_backup.body["changes"] == against_live.body["changes"]
    assert against_live.body["members"] == [m for m in against_backup.body["members"] if m["user_id"] != GONE_MEMBER]
    assert against_live.body["counts"] == {**against_backup.body["counts"], "members": len(MEMBERS)}
    # a comparison of two backups reads nothing of the server (the live one reads it, and writes nothing)
    assert writes(platform) == []


def test_the_other_way_round_what_only_the_older_backup_holds_is_a_delete(invoke, platform, backed_up):
    before, _ = backed_up
    nuke(platform)
    after = made_now(invoke)
    platform.clear_log()

    answer = diff(invoke, after, against=before)

    assert answer.status == 200, answer.body
    assert summary(answer.body) == [
        ("channel", "Lobby / general-renamed", "update"),
        ("channel", "Lobby / memes", "delete"),
        ("role", "Guests", "delete"),
    ]
    renamed = next(c for c in answer.body["changes"] if c["name"] == "Lobby / general-renamed")
    assert {"field": "name", "old": "general", "new": "general-renamed"} in renamed["changes"]
    assert answer.body["members"] == []  # the later backup gives no one a role: nothing is missing
    assert answer.body["counts"]["delete"] == sum(1 for c in answer.body["changes"] if c["action"] == "delete")
    assert platform.request_log == []


def test_a_backup_compared_with_itself_has_no_difference(invoke, platform, backed_up):
    before, _ = backed_up

    answer = diff(invoke, before, against=before)

    assert answer.status == 200, answer.body
    assert (answer.body["changes"], answer.body["members"]) == ([], [])
    assert answer.body["counts"] == {"create": 0, "update": 0, "delete": 0, "members": 0}


def test_the_other_backup_unknown_of_another_server_or_not_restorable_is_refused_naming_it(invoke, platform, backed_up):
    before, exported = backed_up
    elsewhere = bot(invoke, {"action": "create", "guild_id": RIGHTS_LAB, "backup_data": exported})
    unknown_shape = bot(invoke, {"action": "create", "guild_id": BUILD_GUILD, "backup_data": {"hello": "world"}})
    assert (elsewhere.status, unknown_shape.status) == (201, 201)

    unknown = diff(invoke, before, against="bk_0000000000000000000000")
    other_server = diff(invoke, before, against=elsewhere.body["data"]["backup_id"])
    not_restorable = diff(invoke, before, against=unknown_shape.body["data"]["backup_id"])
    reversed_side = diff(invoke, unknown_shape.body["data"]["backup_id"], against=before)

    assert unknown.status == 404, unknown.body
    assert [d["field"] for d in unknown.body["details"]] == ["against"]
    assert "bk_0000000000000000000000" in unknown.body["message"]
    assert other_server.status == 400, other_server.body
    assert [d["field"] for d in other_server.body["details"]] == ["against"]
    assert BUILD_GUILD in other_server.body["details"][0]["message"]
    for refused in (not_restorable, reversed_side):
        assert refused.status == 409, refused.body
        assert [d["field"] for d in refused.body["details"]] == ["roles", "categories", "name"]
    assert "`against`" in not_restorable.body["message"]
    assert "`backup_id`" in reversed_side.body["message"]
