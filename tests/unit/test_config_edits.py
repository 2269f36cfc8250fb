"""The edit function: each edit kind applied by name, the changes it reports, and edits that do not apply."""

from __future__ import annotations

import pytest

from local.samples import large_community
from svcconf.config import ServerConfig
from svcconf.config.access import VIEW_CHANNEL_BIT, config_access
from svcconf.config.apply_edits import apply_edits, apply_prefix
from svcconf.config.edits import NO_ID_EDITS, Edit, EditsRejected
from svcconf.errors import FieldError

START = ServerConfig.model_validate(
    {
        "name": "Night Owls",
        "roles": [
            {"name": "Admin", "permissions": ["ADMINISTRATOR"]},
            {"name": "Mods", "permissions": ["KICK_MEMBERS"]},
        ],
        "categories": [
            {
                "name": "Community",
                "channels": [
                    {"name": "general"},
                    {"name": "memes", "overwrites": [{"role": "Mods", "allow": ["MANAGE_MESSAGES"]}]},
                ],
            },
            {
                "name": "Staff",
                "overwrites": [
                    {"role": "@everyone", "deny": ["VIEW_CHANNEL"]},
                    {"role": "Mods", "allow": ["VIEW_CHANNEL"]},
                ],
                "channels": [{"name": "mod-chat"}],
            },
        ],
        "channels": [{"name": "welcome"}],
    }
)


def edit(**fields) -> Edit:
    return Edit.model_validate(fields)


def apply(*edits: Edit):
    return apply_edits(START, edits)


def channels_of(config: ServerConfig, category: int) -> list[str]:
    return [channel.name for channel in config.categories[category].channels]


def refused(config: ServerConfig, *edits: Edit) -> list[tuple[str, str]]:
    """The problems of edits that must not apply, as (field, message); none of them applied."""
    with pytest.raises(EditsRejected) as raised:
        apply_edits(config, edits)
    assert raised.value.applied == 0
    return [(p.field, p.message) for p in raised.value.problems]


def test_adding_a_channel_to_a_category_by_name_reports_its_path() -> None:
    result = apply(edit(op="add", kind="channel", name="memes-corner", cat="Community", set={"topic": "lol"}))

    assert channels_of(result.config, 0) == ["general", "memes", "memes-corner"]
    [change] = result.changes
    assert (change.op, change.path, change.old) == ("add", "categories[0].channels[2]", None)
    assert change.new["name"] == "memes-corner"
    assert change.new["topic"] == "lol"


def test_adding_a_role_at_a_position_and_a_channel_outside_the_categories() -> None:
    result = apply(
        edit(op="add", kind="role", name="VIP", at=1, set={"color": "#F1C40F"}),
        edit(op="add", kind="channel", name="Lounge", set={"type": "voice", "user_limit": 5}),
    )

    assert result.config.role_names() == ["Admin", "VIP", "Mods"]
    assert result.config.roles[1].color == 0xF1C40F
    assert [(c.name, c.type, c.user_limit) for c in result.config.channels][-1] == ("Lounge", "voice", 5)
    assert [c.path for c in result.changes] == ["roles[1]", "channels[1]"]


def test_updating_sets_only_the_fields_given_and_reports_each() -> None:
    result = apply(edit(op="update", kind="role", name="mods", set={"permissions": ["BAN_MEMBERS"], "hoist": True}))

    mods = result.config.roles[1]
    assert (mods.name, mods.permissions, mods.hoist, mods.color) == ("Mods", ["BAN_MEMBERS"], True, 0)
    assert [(c.path, c.old, c.new) for c in result.changes] == [
        ("roles[1].permissions", ["KICK_MEMBERS"], ["BAN_MEMBERS"]),
        ("roles[1].hoist", False, True),
    ]


def test_the_server_settings_are_an_update_of_kind_server() -> None:
    result = apply(edit(op="update", kind="server", set={"name": "Early Birds", "description": "Mornings"}))

    assert (result.config.name, result.config.description) == ("Early Birds", "Mornings")
    assert [c.path for c in result.changes] == ["name", "description"]


def test_removing_a_role_removes_the_overwrites_that_name_it() -> None:
    result = apply(edit(op="remove", kind="role", name="Mods"))

    assert result.config.role_names() == ["Admin"]
    assert [o.role for o in result.config.categories[1].overwrites] == ["@everyone"]
    assert result.config.categories[0].channels[1].overwrites == []
    assert [(c.op, c.path) for c in result.changes] == [
        ("remove", "roles[1]"),
        ("remove", "categories[0].channels[1].overwrites[0]"),
        ("remove", "categories[1].overwrites[1]"),
    ]


def test_renaming_a_role_renames_it_in_every_overwrite() -> None:
    result = apply(edit(op="rename", kind="role", name="Mods", to="Moderators"))

    assert result.config.role_names() == ["Admin", "Moderators"]
    assert result.config.categories[1].overwrites[1].role == "Moderators"
    assert result.config.categories[0].channels[1].overwrites[0].role == "Moderators"
    assert (result.changes[0].op, result.changes[0].old, result.changes[0].new) == ("rename", "Mods", "Moderators")


def test_removing_renaming_and_moving_channels_and_categories() -> None:
    result = apply(
        edit(op="remove", kind="channel", name="general", cat="Community"),
        edit(op="rename", kind="category", name="Staff", to="Team"),
        edit(op="move", kind="channel", name="welcome", to="Team", at=0),
        edit(op="move", kind="category", name="Team", at=0),
    )

    assert [c.name for c in result.config.categories] == ["Team", "Community"]
    assert channels_of(result.config, 0) == ["welcome", "mod-chat"]
    assert channels_of(result.config, 1) == ["memes"]
    assert result.config.channels == []
    assert [c.op for c in result.changes] == ["remove", "rename", "move", "move"]


def test_overwrites_are_added_updated_and_removed_on_categories_and_channels() -> None:
    result = apply(
        edit(
            op="add", kind="overwrite", name="@everyone", cat="Community", ch="general", set={"deny": ["SEND_MESSAGES"]}
        ),
        edit(
            op="update", kind="overwrite", name="Mods", cat="Staff", set={"allow": ["VIEW_CHANNEL", "MANAGE_MESSAGES"]}
        ),
        edit(op="remove", kind="overwrite", name="Mods", cat="Community", ch="memes"),
    )

    general = result.config.categories[0].channels[0]
    assert [(o.role, o.deny) for o in general.overwrites] == [("@everyone", ["SEND_MESSAGES"])]
    assert result.config.categories[1].overwrites[1].allow == ["VIEW_CHANNEL", "MANAGE_MESSAGES"]
    assert result.config.categories[0].channels[1].overwrites == []
    assert [c.path for c in result.changes] == [
        "categories[0].channels[0].overwrites[0]",
        "categories[1].overwrites[1].allow",
        "categories[0].channels[1].overwrites[0]",
    ]


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (edit(op="remove", kind="channel", name="ghost", cat="Community"), "no channel named 'ghost' in category"),
        (edit(op="add", kind="channel", name="x", cat="Nowhere"), "no category named 'Nowhere'"),
        (edit(op="add", kind="role", name="mods"), "already exists"),
        (edit(op="rename", kind="role", name="Admin", to="MODS"), "already exists"),
        (edit(op="update", kind="role", name="Mods", set={"colour": 1}), "no field 'colour'"),
        (edit(op="update", kind="channel", name="general", cat="Community", set={"slowmode_seconds": -1}), "slowmode"),
        (edit(op="add", kind="overwrite", name="Ghosts", cat="Staff", set={}), "no role named 'Ghosts'"),
        (edit(op="add", kind="overwrite", name="Mods", cat="Staff", set={}), "already exists"),
        (edit(op="update", kind="role", name="Mods"), "needs `set`"),
    ],
)
def test_an_edit_that_does_not_apply_names_its_index_and_reason(bad, reason) -> None:
    with pytest.raises(EditsRejected) as raised:
        apply(edit(op="add", kind="role", name="Fine"), bad)

    [problem] = raised.value.problems
    assert problem.field == "edits[1]"
    assert reason in problem.message
    assert raised.value.applied == 1


def test_a_rule_across_fields_is_checked_on_the_result() -> None:
    broken = edit(op="add", kind="channel", name="c", set={"overwrites": [{"role": "Nobody", "allow": ["SPEAK"]}]})

    with pytest.raises(EditsRejected) as raised:
        apply(broken)

    assert raised.value.problems[0].field == "channels[1].overwrites[0].role"
    assert "after the edits" in raised.value.problems[0].message


def test_the_longest_prefix_that_applies_is_kept_for_a_cut_off_answer() -> None:
    edits = [
        edit(op="add", kind="role", name="A"),
        edit(op="add", kind="role", name="B"),
        edit(op="remove", kind="role", name="Z"),
    ]

    result, count, refused = apply_prefix(START, edits)

    assert (count, refused) == (2, "no role named 'Z'")
    assert result.config.role_names() == ["Admin", "Mods", "A", "B"]


def test_an_edit_at_the_platforms_caps_keeps_every_role_and_channel() -> None:
    big = ServerConfig.model_validate(large_community(250, 10, 480))

    result = apply_edits(big, [edit(op="add", kind="channel", name="memes-corner", cat="Area 3")])

    assert result.config.role_names() == big.role_names()
    assert result.config.channel_count() == big.channel_count() + 1
    with pytest.raises(EditsRejected, match="250 roles"):
        apply_edits(big, [edit(op="add", kind="role", name="One Too Many")])


ADMINISTRATION = ServerConfig.model_validate(
    {
        "name": "Alliance",
        "roles": [{"name": "Moderator"}, {"name": "Manager"}, {"name": "Muted"}],
        "categories": [
            {
                "name": "Administration",
                "overwrites": [{"role": "@everyone", "deny": ["VIEW_CHANNEL"]}],
                "channels": [
                    {"name": "mod-chat"},
                    {"name": "admin", "overwrites": [{"role": "Manager", "allow": ["VIEW_CHANNEL"]}]},
                ],
            }
        ],
    }
)
ADMIN, MOD_CHAT = "text 'admin' in category 'Administration'", "text 'mod-chat' in category 'Administration'"


def test_a_category_overwrite_that_grants_does_not_open_its_channels_with_overwrites_of_their_own() -> None:
    grant = edit(op="add", kind="overwrite", name="Moderator", cat="Administration", set={"allow": ["VIEW_CHANNEL"]})

    result = apply_edits(ADMINISTRATION, [grant])

    access = config_access(result.config)
    assert access[MOD_CHAT, "Moderator"] & VIEW_CHANNEL_BIT  # it follows its category
    assert not access[ADMIN, "Moderator"] & VIEW_CHANNEL_BIT  # it keeps what it had: a neutral overwrite
    admin = result.config.categories[0].channels[1]
    assert [(o.role, o.allow, o.deny) for o in admin.overwrites] == [
        ("Manager", ["VIEW_CHANNEL"], []),
        ("Moderator", [], []),
    ]
    assert [(c.op, c.path) for c in result.changes] == [
        ("add", "categories[0].overwrites[1]"),
        ("add", "categories[0].channels[1].overwrites[1]"),
    ]


def test_a_category_overwrite_that_only_takes_away_reaches_every_channel() -> None:
    mute = edit(op="add", kind="overwrite", name="Muted", cat="Administration", set={"deny": ["SEND_MESSAGES"]})

    result = apply_edits(ADMINISTRATION, [mute])

    assert [c.path for c in result.changes] == ["categories[0].overwrites[1]"]
    assert result.config.categories[0].channels[1].overwrites == ADMINISTRATION.categories[0].channels[1].overwrites


def test_lifting_a_categorys_deny_keeps_it_on_channels_with_overwrites_of_their_own() -> None:
    lift = edit(op="update", kind="overwrite", name="@everyone", cat="Administration", set={"deny": []})

    result = apply_edits(ADMINISTRATION, [lift])

    admin = result.config.categories[0].channels[1]
    assert [(o.role, o.deny) for o in admin.overwrites] == [("Manager", []), ("@everyone", ["VIEW_CHANNEL"])]
    assert not config_access(result.config)[ADMIN, "Moderator"] & VIEW_CHANNEL_BIT


def test_an_add_past_the_channel_cap_is_refused_as_that_edit_naming_the_cap() -> None:
    # 10 categories of 49 channels: 500 channels, categories included, the platform's cap exactly.
    full = ServerConfig.model_validate(large_community(250, 10, 490))
    assert full.channel_count() == 500

    with pytest.raises(EditsRejected) as raised:
        apply_edits(full, [edit(op="add", kind="channel", name="one-too-many", cat="Area 3")])

    [problem] = raised.value.problems
    assert (problem.field, problem.message) == (
        "edits[0]",
        "the configuration already has 500 channels (categories included)",
    )
    assert raised.value.applied == 0


@pytest.mark.parametrize(
    ("rename", "path", "old_name", "new_name"),
    [
        (edit(op="rename", kind="role", name="Mods", to="mods"), "roles[1].name", "Mods", "mods"),
        (
            edit(op="rename", kind="channel", name="general", cat="Community", to="General"),
            "categories[0].channels[0].name",
            "general",
            "General",
        ),
        (edit(op="rename", kind="category", name="Staff", to="STAFF"), "categories[1].name", "Staff", "STAFF"),
    ],
)
def test_a_rename_that_changes_only_the_case_is_made(rename: Edit, path: str, old_name: str, new_name: str) -> None:
    result = apply(rename)

    [change, *_retargeted] = result.changes
    assert (change.op, change.path, change.old, change.new) == ("rename", path, old_name, new_name)


def test_a_case_only_role_rename_follows_into_every_overwrite() -> None:
    result = apply(edit(op="rename", kind="role", name="Mods", to="mods"))

    assert result.config.role_names() == ["Admin", "mods"]
    assert [o.role for o in result.config.categories[1].overwrites] == ["@everyone", "mods"]
    assert [o.role for o in result.config.categories[0].channels[1].overwrites] == ["mods"]


def test_a_channel_with_overwrites_of_its_own_keeps_who_can_do_what_when_it_moves() -> None:
    data = ADMINISTRATION.model_dump(mode="json")
    lounge = {"name": "Lounge", "overwrites": [{"role": "Muted", "deny": ["SEND_MESSAGES"]}], "channels": []}
    config = ServerConfig.model_validate({**data, "categories": [*data["categories"], lounge]})
    moves = [
        edit(op="move", kind="channel", name="admin", cat="Administration", to="Lounge"),
        edit(op="move", kind="channel", name="mod-chat", cat="Administration", to="Lounge"),
    ]

    result = apply_edits(config, moves)

    def by_role(config: ServerConfig, place: str) -> dict[str, int]:
        return {role: bits for (where, role), bits in config_access(config).items() if where == place}

    moved = "text '{}' in category 'Lounge'"
    assert by_role(result.config, moved.format("admin")) == by_role(config, ADMIN)  # kept: it has its own
    assert by_role(result.config, moved.format("mod-chat"))["@everyone"] & VIEW_CHANNEL_BIT  # follows Lounge
    assert [(c.op, c.path) for c in result.changes] == [
        ("move", "categories[1].channels[0]"),
        ("update", "categories[1].channels[0].overwrites"),
        ("move", "categories[1].channels[1]"),
    ]


# The platform's ids of START's objects, as an export of the server would give them.
IDS = {
    ("roles", "Admin"): "1191000000000009001",
    ("roles", "Mods"): "1191000000000009002",
    ("categories", "Community"): "1191000000000009011",
    ("categories", "Staff"): "1191000000000009012",
    ("channels", "general"): "1191000000000009021",
    ("channels", "memes"): "1191000000000009022",
    ("channels", "mod-chat"): "1191000000000009023",
    ("channels", "welcome"): "1191000000000009024",
}


def with_ids(config: ServerConfig) -> ServerConfig:
    data = config.model_dump(mode="json")
    for key in ("roles", "categories"):
        for item in data[key]:
            item["id"] = IDS[(key, item["name"])]
    for channel in [*(c for category in data["categories"] for c in category["channels"]), *data["channels"]]:
        channel["id"] = IDS[("channels", channel["name"])]
    return ServerConfig.model_validate(data)


def ids_by_name(config: ServerConfig) -> dict[str, str | None]:
    objects = [*config.roles, *config.categories, *config.all_channels()]
    return {item.name: item.id for item in objects}


def test_renamed_and_moved_objects_keep_their_ids_and_an_added_one_has_none() -> None:
    result = apply_edits(
        with_ids(START),
        [
            edit(op="rename", kind="role", name="Mods", to="Moderators"),
            edit(op="rename", kind="category", name="Community", to="Hangout"),
            edit(op="update", kind="channel", name="general", cat="Hangout", set={"name": "lobby", "topic": "Hi"}),
            edit(op="move", kind="channel", name="memes", cat="Hangout", to="Staff", at=0),
            edit(op="move", kind="channel", name="welcome", to="Hangout"),
            edit(op="move", kind="category", name="Staff", at=0),
            edit(op="add", kind="channel", name="clips", cat="Staff"),
        ],
    )

    assert ids_by_name(result.config) == {
        "Admin": IDS[("roles", "Admin")],
        "Moderators": IDS[("roles", "Mods")],
        "Staff": IDS[("categories", "Staff")],
        "Hangout": IDS[("categories", "Community")],
        "memes": IDS[("channels", "memes")],
        "mod-chat": IDS[("channels", "mod-chat")],
        "clips": None,
        "lobby": IDS[("channels", "general")],
        "welcome": IDS[("channels", "welcome")],
    }
    assert [channel.name for channel in result.config.categories[1].channels] == ["lobby", "welcome"]


def test_removing_an_object_keeps_nothing_of_it_and_adding_one_of_that_name_has_no_id() -> None:
    result = apply_edits(
        with_ids(START),
        [
            edit(op="remove", kind="channel", name="memes", cat="Community"),
            edit(op="remove", kind="role", name="Mods"),
            edit(op="add", kind="channel", name="memes", cat="Community"),
        ],
    )

    dumped = result.config.model_dump_json()
    assert IDS[("channels", "memes")] not in dumped
    assert IDS[("roles", "Mods")] not in dumped
    assert ids_by_name(result.config)["memes"] is None


@pytest.mark.parametrize(
    "setting_an_id",
    [
        edit(op="add", kind="channel", name="lobby", set={"id": "1191000000000009021"}),
        edit(op="update", kind="role", name="Mods", set={"id": "1191000000000009001"}),
        edit(op="update", kind="category", name="Staff", set={"id": None}),
        edit(op="add", kind="category", name="Events", set={"channels": [{"name": "x", "id": "1191000000000009021"}]}),
    ],
)
def test_an_edit_that_sets_an_id_is_refused_with_the_reason(setting_an_id) -> None:
    with pytest.raises(EditsRejected) as raised:
        apply_edits(with_ids(START), [setting_an_id])

    [problem] = raised.value.problems
    assert (problem.field, problem.message) == ("edits[0]", NO_ID_EDITS)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (edit(op="remove", kind="server"), "the server takes only update (name, description, settings ...) and rename"),
        (edit(op="update", kind="server", set={"roles": []}), "ServerConfig has no field 'roles' to set"),
        (
            edit(op="update", kind="role", name="Mods", set={"colour": 1, "hue": 2}),
            "Role has no field 'colour', 'hue' to set",
        ),
        (
            edit(op="update", kind="role", name="Mods", set={"color": "red"}),
            "color: a color is an integer 0-16777215 or '#RRGGBB', not 'red'",
        ),
        (edit(op="rename", kind="role", name="Mods"), "rename needs `to`, the new name"),
        (edit(op="rename", kind="category", name="Staff", to=""), "rename needs `to`, the new name"),
        (edit(op="rename", kind="role", name="Mods", to="@everyone"), "'@everyone' is the platform's built-in role"),
        (edit(op="remove", kind="role"), "remove role needs `name`"),
        (edit(op="remove", kind="category", name="Ghosts"), "no category named 'Ghosts'"),
        (edit(op="remove", kind="role", name="Ghosts", cat="Staff"), "no role named 'Ghosts'"),
        (edit(op="remove", kind="channel", name="ghost"), "no channel named 'ghost' outside the categories"),
        (
            edit(op="add", kind="overwrite", name="Mods"),
            "an overwrite is addressed by `cat` (a category) and/or `ch` (a channel in `cat`)",
        ),
        (edit(op="add", kind="overwrite", cat="Staff", set={}), "an overwrite edit names its role in `name`"),
        (edit(op="add", kind="overwrite", name="Mods", cat="Nowhere"), "no category named 'Nowhere'"),
        (
            edit(op="add", kind="overwrite", name="Mods", cat="Community", ch="ghost"),
            "no channel named 'ghost' in category 'Community'",
        ),
        (edit(op="add", kind="overwrite", name="Mods", ch="ghost"), "no channel named 'ghost' outside the categories"),
        (edit(op="remove", kind="overwrite", name="Admin", cat="Staff"), "no overwrite for 'Admin' there"),
        (edit(op="move", kind="overwrite", name="Mods", cat="Staff"), "an overwrite takes add, update or remove"),
        (
            edit(op="move", kind="channel", name="welcome", to="Community", at=0),
            "category 'Community' already has a channel named 'welcome'",
        ),
    ],
)
def test_an_edit_that_does_not_apply_is_refused_with_a_reason_a_person_can_act_on(bad: Edit, message: str) -> None:
    # Community also holds 'Welcome', where the channel 'welcome' cannot move.
    start = apply_edits(START, [edit(op="add", kind="channel", name="Welcome", cat="Community")]).config

    assert refused(start, bad) == [("edits[0]", message)]


def test_each_change_says_what_was_there_and_what_is_there_now() -> None:
    result = apply(
        edit(op="remove", kind="channel", name="welcome"),
        edit(op="add", kind="overwrite", name="Mods", cat="Community", ch="general", set={"deny": ["SEND_MESSAGES"]}),
        edit(op="remove", kind="overwrite", name="Mods", cat="Community", ch="memes"),
        edit(op="rename", kind="role", name="Mods", to="Moderators"),
        edit(op="move", kind="channel", name="general", cat="Community", to="Staff"),
    )

    mods_mute = {"role": "Moderators", "allow": [], "deny": ["SEND_MESSAGES"]}
    assert [change.model_dump(exclude_none=True) for change in result.changes] == [
        {
            "op": "remove",
            "path": "channels[0]",
            "old": {"name": "welcome", "type": "text", "nsfw": False, "overwrites": []},
        },
        {"op": "add", "path": "categories[0].channels[0].overwrites[0]", "new": {**mods_mute, "role": "Mods"}},
        {
            "op": "remove",
            "path": "categories[0].channels[1].overwrites[0]",
            "old": {"role": "Mods", "allow": ["MANAGE_MESSAGES"], "deny": []},
        },
        {"op": "rename", "path": "roles[1].name", "old": "Mods", "new": "Moderators"},
        {"op": "update", "path": "categories[0].channels[0].overwrites[0].role", "old": "Mods", "new": "Moderators"},
        {"op": "update", "path": "categories[1].overwrites[1].role", "old": "Mods", "new": "Moderators"},
        {"op": "move", "path": "categories[1].channels[1]", "old": "categories[0].channels[0]", "new": "general"},
        # general was public: in private Staff it keeps a neutral @everyone overwrite, so it stays so.
        {
            "op": "update",
            "path": "categories[1].channels[1].overwrites",
            "old": [mods_mute],
            "new": [{"role": "@everyone", "allow": [], "deny": []}, mods_mute],
        },
    ]


def test_a_rename_of_kind_server_renames_the_server() -> None:
    result = apply(edit(op="rename", kind="server", to="Early Birds"))

    assert result.config.name == "Early Birds"
    assert [change.model_dump() for change in result.changes] == [
        {"op": "update", "path": "name", "old": "Night Owls", "new": "Early Birds"}
    ]


def test_a_channel_or_category_is_found_ignoring_case_unless_a_name_matches_exactly() -> None:
    twins = ServerConfig.model_validate(
        {"name": "Twins", "roles": [], "categories": [{"name": "Staff"}, {"name": "staff"}]}
    )

    loose = apply(edit(op="update", kind="channel", name="GENERAL", cat="community", set={"topic": "Hi"}))
    exact = apply_edits(twins, [edit(op="rename", kind="category", name="staff", to="Lounge")])

    assert [(c.path, c.new) for c in loose.changes] == [("categories[0].channels[0].topic", "Hi")]
    assert [c.name for c in exact.config.categories] == ["Staff", "Lounge"]


def test_a_cut_off_answer_whose_last_edit_breaks_a_rule_across_fields_keeps_the_edits_before_it() -> None:
    broken = edit(op="add", kind="channel", name="c", set={"overwrites": [{"role": "Nobody", "allow": ["SPEAK"]}]})

    result, count, refused = apply_prefix(START, [edit(op="add", kind="role", name="A"), broken])

    assert (count, refused) == (
        1,
        "after the edits: overwrite names role 'Nobody', which this configuration does not define",
    )
    assert result.config.role_names() == ["Admin", "Mods", "A"]


FULL_CATEGORY = ServerConfig.model_validate(
    {
        "name": "Packed",
        "roles": [],
        "categories": [{"name": "Full", "channels": [{"name": f"room-{n}"} for n in range(50)]}],
        "channels": [{"name": "lobby"}],
    }
)


@pytest.mark.parametrize(
    "into_the_full_category",
    [
        edit(op="add", kind="channel", name="room-50", cat="Full"),
        edit(op="move", kind="channel", name="lobby", to="Full"),
    ],
    ids=["add", "move"],
)
def test_a_category_at_the_platforms_50_channels_takes_no_other(into_the_full_category: Edit) -> None:
    assert refused(FULL_CATEGORY, into_the_full_category) == [("edits[0]", "category 'Full' already holds 50 channels")]


def test_a_channel_outside_the_categories_is_added_beside_a_full_category() -> None:
    result = apply_edits(FULL_CATEGORY, [edit(op="add", kind="channel", name="hall")])

    assert [c.name for c in result.config.channels] == ["lobby", "hall"]
    assert [(c.op, c.path) for c in result.changes] == [("add", "channels[1]")]


def administration_with(*overwrites: dict) -> ServerConfig:
    """ADMINISTRATION with more overwrites on its category."""
    data = ADMINISTRATION.model_dump(mode="json")
    data["categories"][0]["overwrites"] += overwrites
    return ServerConfig.model_validate(data)


@pytest.mark.parametrize(
    ("takes_away", "change"),
    [
        (
            edit(
                op="update", kind="overwrite", name="Moderator", cat="Administration", set={"deny": ["SEND_MESSAGES"]}
            ),
            {"op": "update", "path": "categories[0].overwrites[1].deny", "old": [], "new": ["SEND_MESSAGES"]},
        ),
        (
            edit(
                op="update",
                kind="overwrite",
                name="@everyone",
                cat="Administration",
                set={"deny": ["VIEW_CHANNEL", "SEND_MESSAGES"]},
            ),
            {
                "op": "update",
                "path": "categories[0].overwrites[0].deny",
                "old": ["VIEW_CHANNEL"],
                "new": ["VIEW_CHANNEL", "SEND_MESSAGES"],
            },
        ),
    ],
    ids=["a-role-denied-more-keeps-its-allow", "everyone-denied-more"],
)
def test_a_category_overwrite_edit_that_grants_nothing_new_leaves_its_channels_as_they_are(
    takes_away: Edit, change: dict
) -> None:
    config = administration_with({"role": "Moderator", "allow": ["VIEW_CHANNEL"]})

    result = apply_edits(config, [takes_away])

    assert [c.model_dump(exclude_none=True) for c in result.changes] == [change]
    assert result.config.categories[0].channels == config.categories[0].channels


def test_a_category_overwrite_that_names_its_role_in_set_keeps_its_channels_closed_too() -> None:
    grant = edit(op="add", kind="overwrite", cat="Administration", set={"role": "Moderator", "allow": ["VIEW_CHANNEL"]})

    result = apply_edits(ADMINISTRATION, [grant])

    assert [c.model_dump(exclude_none=True) for c in result.changes] == [
        {
            "op": "add",
            "path": "categories[0].overwrites[1]",
            "new": {"role": "Moderator", "allow": ["VIEW_CHANNEL"], "deny": []},
        },
        {
            "op": "add",
            "path": "categories[0].channels[1].overwrites[1]",
            "new": {"role": "Moderator", "allow": [], "deny": []},
        },
    ]


@pytest.mark.parametrize(
    ("own", "staffs", "kept"),
    [
        ({"role": "Mods", "allow": ["SEND_MESSAGES"]}, {"role": "Mods", "allow": ["VIEW_CHANNEL"]}, True),
        ({"role": "Mods", "deny": ["SEND_MESSAGES"]}, {"role": "Mods", "deny": ["VIEW_CHANNEL"]}, True),
        # The same as its new category's: left to the category.
        ({"role": "Mods", "allow": ["VIEW_CHANNEL"]}, {"role": "Mods", "allow": ["VIEW_CHANNEL"]}, False),
    ],
    ids=["allows-otherwise", "denies-otherwise", "says-the-same"],
)
def test_a_moved_channel_keeps_its_own_overwrite_where_it_differs_from_its_new_categorys(
    own: dict, staffs: dict, kept: bool
) -> None:
    config = ServerConfig.model_validate(
        {
            "name": "Moves",
            "roles": [{"name": "Mods"}],
            "categories": [
                {"name": "Lounge", "channels": [{"name": "den", "overwrites": [own]}]},
                {"name": "Staff", "overwrites": [staffs]},
            ],
        }
    )

    result = apply_edits(config, [edit(op="move", kind="channel", name="den", cat="Lounge", to="Staff")])

    den = result.config.categories[1].channels[0]
    assert den.overwrites == (config.categories[0].channels[0].overwrites if kept else [])
    moved = {"op": "move", "path": "categories[1].channels[0]", "old": "categories[0].channels[0]", "new": "den"}
    own_dropped = {
        "op": "update",
        "path": "categories[1].channels[0].overwrites",
        "old": [{"allow": [], "deny": [], **own}],
        "new": [],
    }
    assert [c.model_dump(exclude_none=True) for c in result.changes] == ([moved] if kept else [moved, own_dropped])


def test_a_category_moves_among_the_categories_whatever_its_to_says() -> None:
    result = apply(edit(op="move", kind="category", name="Staff", to="", at=0))

    assert [c.name for c in result.config.categories] == ["Staff", "Community"]
    assert [c.name for c in result.config.channels] == ["welcome"]


# 9 categories of 50 channels and 41 channels outside them: 500 channels, categories included, the platform's cap.
AT_THE_CHANNEL_CAP = ServerConfig.model_validate(
    {
        "name": "Capped",
        "roles": [{"name": "Mods"}],
        "categories": [{"name": f"Area {c}", "channels": [{"name": f"room-{n}"} for n in range(50)]} for c in range(9)],
        "channels": [{"name": f"hall-{n}"} for n in range(41)],
    }
)


@pytest.mark.parametrize(
    "one_more",
    [edit(op="add", kind="channel", name="hall-41"), edit(op="add", kind="category", name="Area 9")],
    ids=["channel", "category"],
)
def test_at_500_channels_neither_a_channel_nor_a_category_is_added(one_more: Edit) -> None:
    assert AT_THE_CHANNEL_CAP.channel_count() == 500

    assert refused(AT_THE_CHANNEL_CAP, one_more) == [
        ("edits[0]", "the configuration already has 500 channels (categories included)")
    ]


def test_at_500_channels_a_role_is_still_added() -> None:
    result = apply_edits(AT_THE_CHANNEL_CAP, [edit(op="add", kind="role", name="Helpers")])

    assert result.config.role_names() == ["Mods", "Helpers"]


def test_a_category_is_added_with_its_channels_after_the_others() -> None:
    result = apply(edit(op="add", kind="category", name="Events", set={"channels": [{"name": "stage-talk"}]}))

    assert [c.name for c in result.config.categories] == ["Community", "Staff", "Events"]
    assert channels_of(result.config, 2) == ["stage-talk"]
    assert [(c.op, c.path) for c in result.changes] == [("add", "categories[2]")]


def test_an_update_of_a_channel_changes_that_channel_and_no_other() -> None:
    result = apply(edit(op="update", kind="channel", name="memes", cat="Community", set={"topic": "Only the best"}))

    assert [c.topic for c in result.config.categories[0].channels] == [None, "Only the best"]
    assert [(c.path, c.new) for c in result.changes] == [("categories[0].channels[1].topic", "Only the best")]


def test_an_update_that_renames_also_sets_the_other_fields() -> None:
    result = apply(
        edit(op="update", kind="channel", name="general", cat="Community", set={"name": "lobby", "topic": "Hi"})
    )

    assert [(c.op, c.path, c.old, c.new) for c in result.changes] == [
        ("rename", "categories[0].channels[0].name", "general", "lobby"),
        ("update", "categories[0].channels[0].topic", None, "Hi"),
    ]


def test_renaming_a_role_renames_every_overwrite_of_a_channel_outside_the_categories() -> None:
    config = ServerConfig.model_validate(
        {
            "name": "Loose",
            "roles": [{"name": "Mods"}],
            "channels": [
                {
                    "name": "desk",
                    "overwrites": [
                        {"role": "Mods", "allow": ["VIEW_CHANNEL"]},
                        {"role": "@everyone", "deny": ["VIEW_CHANNEL"]},
                    ],
                }
            ],
        }
    )

    result = apply_edits(config, [edit(op="rename", kind="role", name="Mods", to="Moderators")])

    assert [o.role for o in result.config.channels[0].overwrites] == ["Moderators", "@everyone"]
    assert [(c.path, c.old, c.new) for c in result.changes[1:]] == [
        ("channels[0].overwrites[0].role", "Mods", "Moderators")
    ]


def test_a_result_broken_in_many_places_names_its_first_20_problems() -> None:
    nobody = {"overwrites": [{"role": "Nobody", "allow": ["SPEAK"]}]}
    broken = [edit(op="add", kind="channel", name=f"c-{n}", set=nobody) for n in range(21)]

    with pytest.raises(EditsRejected) as raised:
        apply(*broken)

    assert [p.field for p in raised.value.problems] == [f"channels[{n + 1}].overwrites[0].role" for n in range(20)]
    assert raised.value.applied == 21


def test_a_refusal_reads_as_each_problem_by_its_field_and_none_applied_unless_said() -> None:
    refused = EditsRejected(
        [FieldError(field="edits[0]", message="no role named 'A'"), FieldError(field="edits", message="b")]
    )

    assert (str(refused), refused.applied) == ("edits[0]: no role named 'A'; edits: b", 0)


def test_an_update_reports_only_the_fields_it_changes() -> None:
    result = apply(edit(op="update", kind="role", name="Mods", set={"permissions": ["KICK_MEMBERS"], "hoist": True}))

    assert [(c.path, c.old, c.new) for c in result.changes] == [("roles[1].hoist", False, True)]


def test_an_overwrite_update_keeps_the_role_it_is_addressed_by() -> None:
    moved_to_admin = {"role": "Admin", "allow": ["VIEW_CHANNEL", "MANAGE_MESSAGES"]}

    result = apply(edit(op="update", kind="overwrite", name="Mods", cat="Staff", set=moved_to_admin))

    staff = result.config.categories[1]
    assert [(o.role, o.allow) for o in staff.overwrites] == [
        ("@everyone", []),
        ("Mods", ["VIEW_CHANNEL", "MANAGE_MESSAGES"]),
    ]


def test_an_update_of_an_overwrite_that_does_not_exist_adds_it() -> None:
    result = apply(edit(op="update", kind="overwrite", name="Admin", cat="Staff", set={"deny": ["SEND_MESSAGES"]}))

    assert [c.model_dump(exclude_none=True) for c in result.changes] == [
        {
            "op": "add",
            "path": "categories[1].overwrites[2]",
            "new": {"role": "Admin", "allow": [], "deny": ["SEND_MESSAGES"]},
        }
    ]


def test_a_channel_moved_within_its_category_keeps_its_overwrites_even_those_that_repeat_the_categorys() -> None:
    data = ADMINISTRATION.model_dump(mode="json")
    data["categories"][0]["channels"][1]["overwrites"].append({"role": "@everyone", "deny": ["VIEW_CHANNEL"]})
    config = ServerConfig.model_validate(data)

    result = apply_edits(config, [edit(op="move", kind="channel", name="admin", cat="Administration", at=0)])

    assert result.config.categories[0].channels[0] == config.categories[0].channels[1]
    assert [(c.op, c.path) for c in result.changes] == [("move", "categories[0].channels[0]")]


# More than 50 channels outside the categories: the 50-channel cap is a category's.
SPRAWL = ServerConfig.model_validate(
    {
        "name": "Sprawl",
        "roles": [],
        "categories": [{"name": "Area", "channels": [{"name": "nook"}]}],
        "channels": [{"name": f"hall-{n}"} for n in range(60)],
    }
)


@pytest.mark.parametrize(
    "outside",
    [edit(op="add", kind="channel", name="nook"), edit(op="move", kind="channel", name="nook", cat="Area", to="")],
    ids=["add", "move"],
)
def test_outside_the_categories_a_61st_channel_is_welcome(outside: Edit) -> None:
    result = apply_edits(SPRAWL, [outside])

    assert [c.name for c in result.config.channels][-2:] == ["hall-59", "nook"]
