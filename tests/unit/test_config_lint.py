"""The permission-safety lint: which valid configurations it warns about, where, and in what order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from svcconf.config import LINT_RULES, LintWarning, ServerConfig, lint_config

MODS = {"name": "Mods", "permissions": ["KICK_MEMBERS", "MANAGE_MESSAGES"]}
MEMBERS = {"name": "Members", "permissions": ["SEND_MESSAGES"]}
PRIVATE = [{"role": "@everyone", "deny": ["VIEW_CHANNEL"]}, {"role": "Mods", "allow": ["VIEW_CHANNEL"]}]
OPEN = [{"role": "@everyone", "allow": ["VIEW_CHANNEL"]}]


def server(
    roles: list[dict[str, Any]] | None = None,
    categories: list[dict[str, Any]] | None = None,
    channels: list[dict[str, Any]] | None = None,
    **v2: Any,
) -> dict[str, Any]:
    """A configuration body; two ordinary roles unless others are given; version 2's fields as keywords."""
    return {
        "name": "Test Server",
        "roles": [MODS, MEMBERS] if roles is None else roles,
        "categories": categories or [],
        "channels": channels or [],
        **v2,
    }


def forum(**fields: Any) -> dict[str, Any]:
    return {"name": "Ideas", "type": "forum", **fields}


def staff_category(*channel_overwrites: dict[str, Any], category_overwrites: list[Any] = PRIVATE) -> dict[str, Any]:
    """A 'Staff' category (private by default) holding one channel 'mod-chat' with the given overwrites."""
    return {
        "name": "Staff",
        "overwrites": category_overwrites,
        "channels": [{"name": "mod-chat", "overwrites": list(channel_overwrites)}],
    }


def chat_category(*general_overwrites: dict[str, Any]) -> dict[str, Any]:
    """A public 'Chat' category holding 'rules' and 'general', the latter with the given overwrites."""
    return {
        "name": "Chat",
        "channels": [{"name": "rules"}, {"name": "general", "overwrites": list(general_overwrites)}],
    }


def lint(body: dict[str, Any]) -> list[LintWarning]:
    return lint_config(ServerConfig.model_validate(body))


@dataclass(frozen=True)
class Case:
    """A configuration that triggers `rule` once at `field` with `message`, and a close one that triggers nothing."""

    id: str
    rule: str
    unsafe: dict[str, Any]
    field: str
    message: str  # what the deploy and the AI chat show: the object named, what it does, what to change
    safe: dict[str, Any]


CASES = (
    Case(
        "everyone-allowed-webhooks-on-a-category",
        "everyone-dangerous-permission",
        server(categories=[{"name": "Chat", "overwrites": [{"role": "@everyone", "allow": ["MANAGE_WEBHOOKS"]}]}]),
        "categories[0].overwrites[0].allow",
        "On category 'Chat', @everyone is allowed MANAGE_WEBHOOKS, so every member gets it: remove it from this "
        "allow list and allow a staff role instead.",
        server(categories=[{"name": "Chat", "overwrites": [{"role": "Mods", "allow": ["MANAGE_WEBHOOKS"]}]}]),
    ),
    Case(
        "everyone-allowed-mentions-on-a-channel-in-a-category",
        "everyone-dangerous-permission",
        server(
            categories=[
                chat_category(
                    {"role": "Mods", "allow": ["MANAGE_MESSAGES"]},
                    {"role": "@everyone", "allow": ["SEND_MESSAGES", "MENTION_EVERYONE", "MANAGE_ROLES"]},
                )
            ]
        ),
        "categories[0].channels[1].overwrites[1].allow",
        "On channel 'general' in category 'Chat', @everyone is allowed MANAGE_ROLES and MENTION_EVERYONE, so every "
        "member gets them: remove them from this allow list and allow a staff role instead.",
        server(
            categories=[
                chat_category(
                    {"role": "Mods", "allow": ["MANAGE_MESSAGES", "MENTION_EVERYONE", "MANAGE_ROLES"]},
                    {"role": "@everyone", "allow": ["SEND_MESSAGES"], "deny": ["MENTION_EVERYONE"]},
                )
            ]
        ),
    ),
    Case(
        "everyone-allowed-administrator-on-a-loose-channel",
        "everyone-dangerous-permission",
        server(channels=[{"name": "lobby", "overwrites": [{"role": "@everyone", "allow": ["ADMINISTRATOR"]}]}]),
        "channels[0].overwrites[0].allow",
        "On channel 'lobby', @everyone is allowed ADMINISTRATOR, so every member gets it: remove it from this allow "
        "list and allow a staff role instead.",
        server(channels=[{"name": "lobby", "overwrites": [{"role": "@everyone", "allow": ["VIEW_CHANNEL"]}]}]),
    ),
    Case(
        "every-role-manages-roles",
        "every-role-dangerous-permission",
        server(
            roles=[
                {**MODS, "permissions": ["MANAGE_ROLES", "KICK_MEMBERS"]},
                {**MEMBERS, "permissions": ["MANAGE_ROLES"]},
            ]
        ),
        "roles",
        "All 2 roles of this configuration grant MANAGE_ROLES, so every member with any role holds it: keep it to "
        "the roles of trusted staff.",
        server(roles=[{**MODS, "permissions": ["MANAGE_ROLES", "KICK_MEMBERS"]}, MEMBERS]),
    ),
    Case(
        "administrator-counts-as-every-dangerous-permission",
        "every-role-dangerous-permission",
        server(
            roles=[{"name": "Admin", "permissions": ["ADMINISTRATOR"]}, {**MEMBERS, "permissions": ["MANAGE_GUILD"]}]
        ),
        "roles",
        "All 2 roles of this configuration, ADMINISTRATOR included, grant MANAGE_GUILD, so every member with any "
        "role holds it: keep it to the roles of trusted staff.",
        # A single role is not "every role": it is the server's only staff role.
        server(roles=[{**MEMBERS, "permissions": ["MANAGE_GUILD"]}]),
    ),
    Case(
        "every-role-is-administrator",
        "every-role-dangerous-permission",
        server(roles=[{"name": "Admin", "permissions": ["ADMINISTRATOR"]}, {**MODS, "permissions": ["ADMINISTRATOR"]}]),
        "roles",
        # ADMINISTRATOR is named alone: it holds all the others.
        "All 2 roles of this configuration grant ADMINISTRATOR, so every member with any role holds it: keep it to "
        "the roles of trusted staff.",
        server(roles=[{"name": "Admin", "permissions": ["ADMINISTRATOR"]}, MEMBERS]),
    ),
    Case(
        "private-category-channel-allows-everyone-to-view",
        "private-category-channel-reopened",
        # After a public category, which the rule passes over.
        server(categories=[chat_category(), staff_category({"role": "@everyone", "allow": ["VIEW_CHANNEL"]})]),
        "categories[1].channels[0].overwrites[0].allow",
        "In private category 'Staff', channel 'mod-chat' allows @everyone VIEW_CHANNEL again, so every member can "
        "see it: remove VIEW_CHANNEL from its @everyone overwrite's allow list.",
        # The same channel in a public category is simply public.
        server(categories=[staff_category({"role": "@everyone", "allow": ["VIEW_CHANNEL"]}, category_overwrites=[])]),
    ),
    Case(
        "channel-everyone-overwrite-drops-the-private-deny",
        "category-view-dropped",
        server(categories=[staff_category({"role": "@everyone", "deny": ["SEND_MESSAGES"]})]),
        "categories[0].channels[0].overwrites[0].deny",
        "In category 'Staff', channel 'mod-chat' has its own overwrite for @everyone, which replaces the category's "
        "and no longer denies VIEW_CHANNEL, so every member can see the channel: add VIEW_CHANNEL to its deny list.",
        server(categories=[staff_category({"role": "@everyone", "deny": ["VIEW_CHANNEL", "SEND_MESSAGES"]})]),
    ),
    Case(
        # @everyone cannot view by its own permissions here, so the category's allow is what shows it the channels.
        "channel-everyone-overwrite-drops-the-category-allow",
        "category-view-dropped",
        server(
            roles=[{**MODS, "permissions": ["KICK_MEMBERS", "VIEW_CHANNEL"]}, MEMBERS],
            categories=[staff_category({"role": "@everyone", "deny": ["ATTACH_FILES"]}, category_overwrites=OPEN)],
            everyone_permissions=["SEND_MESSAGES"],
        ),
        "categories[0].channels[0].overwrites[0].allow",
        "In category 'Staff', channel 'mod-chat' has its own overwrite for @everyone, which replaces the category's "
        "and no longer allows VIEW_CHANNEL, so a member without a role that can view it no longer sees the channel: "
        "add VIEW_CHANNEL to its allow list.",
        server(
            roles=[{**MODS, "permissions": ["KICK_MEMBERS", "VIEW_CHANNEL"]}, MEMBERS],
            categories=[
                staff_category(
                    {"role": "@everyone", "allow": ["VIEW_CHANNEL"], "deny": ["ATTACH_FILES"]}, category_overwrites=OPEN
                )
            ],
            everyone_permissions=["SEND_MESSAGES"],
        ),
    ),
    Case(
        "channel-role-overwrite-drops-the-category-allow",
        "category-view-dropped",
        server(
            roles=[{"name": "Admin", "permissions": ["ADMINISTRATOR"]}, MODS, MEMBERS],
            categories=[staff_category({"role": "Mods", "deny": ["SEND_MESSAGES"]})],
        ),
        "categories[0].channels[0].overwrites[0].allow",
        "In category 'Staff', channel 'mod-chat' has its own overwrite for role 'Mods', which replaces the "
        "category's and no longer allows VIEW_CHANNEL: add VIEW_CHANNEL to its allow list.",
        server(
            roles=[{"name": "Admin", "permissions": ["ADMINISTRATOR"]}, MODS, MEMBERS],
            categories=[staff_category({"role": "Mods", "allow": ["VIEW_CHANNEL"], "deny": ["SEND_MESSAGES"]})],
        ),
    ),
    Case(
        "private-category-channel-no-role-may-view",
        "channel-nobody-can-view",
        server(categories=[staff_category(category_overwrites=[{"role": "@everyone", "deny": ["VIEW_CHANNEL"]}])]),
        "categories[0].channels[0].overwrites",
        "No one but the server owner can see channel 'mod-chat' in category 'Staff': @everyone cannot view it and "
        "no role is allowed VIEW_CHANNEL; allow VIEW_CHANNEL to a role in its overwrites.",
        server(categories=[staff_category(category_overwrites=PRIVATE)]),
    ),
    Case(
        "loose-channel-no-role-may-view",
        "channel-nobody-can-view",
        server(channels=[{"name": "vault", "overwrites": [{"role": "@everyone", "deny": ["VIEW_CHANNEL"]}]}]),
        "channels[0].overwrites",
        "No one but the server owner can see channel 'vault': @everyone cannot view it and no role is allowed "
        "VIEW_CHANNEL; allow VIEW_CHANNEL to a role in its overwrites.",
        # Administrators see every channel.
        server(
            roles=[{"name": "Admin", "permissions": ["ADMINISTRATOR"]}, MEMBERS],
            channels=[{"name": "vault", "overwrites": [{"role": "@everyone", "deny": ["VIEW_CHANNEL"]}]}],
        ),
    ),
    Case(
        "everyone-base-without-view-and-no-role-with-it",
        "channel-nobody-can-view",
        server(channels=[{"name": "lobby"}], everyone_permissions=["SEND_MESSAGES"]),
        "channels[0].overwrites",
        "No one but the server owner can see channel 'lobby': @everyone cannot view it and no role is allowed "
        "VIEW_CHANNEL; allow VIEW_CHANNEL to a role in its overwrites.",
        # A role that views by its own permissions is enough.
        server(
            roles=[MODS, {**MEMBERS, "permissions": ["VIEW_CHANNEL"]}],
            channels=[{"name": "lobby"}],
            everyone_permissions=["SEND_MESSAGES"],
        ),
    ),
    Case(
        "everyone-permissions-grant-three-dangerous-ones",
        "everyone-permissions-dangerous",
        server(everyone_permissions=["VIEW_CHANNEL", "BAN_MEMBERS", "MANAGE_CHANNELS", "MENTION_EVERYONE"]),
        "everyone_permissions",
        # Named in the order of the dangerous permissions' list, whatever the configuration's.
        "@everyone's server-wide permissions include MANAGE_CHANNELS, MENTION_EVERYONE and BAN_MEMBERS, so every "
        "member holds them: remove them from everyone_permissions and grant a staff role instead.",
        server(everyone_permissions=["VIEW_CHANNEL", "SEND_MESSAGES", "ATTACH_FILES"]),
    ),
    Case(
        "system-channel-in-a-private-category",
        "system-channel-hidden",
        # After other text channels, which are not the system channel.
        server(
            categories=[chat_category(), staff_category(category_overwrites=PRIVATE)],
            settings={"system_channel": "mod-chat"},
        ),
        "settings.system_channel",
        "The system channel, channel 'mod-chat' in category 'Staff', is hidden from @everyone, so new members never "
        "see its welcome messages: choose a channel everyone can view, or allow @everyone VIEW_CHANNEL on it.",
        server(
            categories=[staff_category({"role": "@everyone", "allow": ["VIEW_CHANNEL"]}, category_overwrites=[])],
            settings={"system_channel": "mod-chat"},
        ),
    ),
    Case(
        "forum-requires-a-tag-it-does-not-have",
        "forum-tags-unusable",
        # After a channel that requires no tag, which the rule passes over.
        server(channels=[{"name": "general"}, forum(require_tag=True)]),
        "channels[1].require_tag",
        "Forum 'Ideas' requires a tag on every post but has no tags, so no one can post: add tags or set "
        "require_tag to false.",
        server(channels=[{"name": "general"}, forum(require_tag=True, tags=[{"name": "Bug"}])]),
    ),
    Case(
        "forum-requires-a-tag-but-all-are-moderated",
        "forum-tags-unusable",
        server(
            categories=[
                {"name": "Talk", "channels": [forum(require_tag=True, tags=[{"name": "Pick", "moderated": True}])]}
            ]
        ),
        "categories[0].channels[0].tags",
        "Forum 'Ideas' in category 'Talk' requires a tag on every post but all its tags are moderated, so only "
        "members who can manage threads can post: make at least one tag unmoderated.",
        server(
            categories=[
                {
                    "name": "Talk",
                    "channels": [forum(require_tag=False, tags=[{"name": "Pick", "moderated": True}])],
                }
            ]
        ),
    ),
    Case(
        "administrator-with-other-permissions",
        "administrator-redundant-permissions",
        server(roles=[MEMBERS, {"name": "Admin", "permissions": ["KICK_MEMBERS", "ADMINISTRATOR", "BAN_MEMBERS"]}]),
        "roles[1].permissions",
        "Role 'Admin' has ADMINISTRATOR, which already grants every permission, so KICK_MEMBERS and BAN_MEMBERS are "
        "redundant: list ADMINISTRATOR alone.",
        server(roles=[MEMBERS, {"name": "Admin", "permissions": ["ADMINISTRATOR", "ADMINISTRATOR"]}]),
    ),
    Case(
        "administrator-with-one-other-permission",
        "administrator-redundant-permissions",
        server(roles=[MEMBERS, {"name": "Admin", "permissions": ["ADMINISTRATOR", "VIEW_AUDIT_LOG"]}]),
        "roles[1].permissions",
        "Role 'Admin' has ADMINISTRATOR, which already grants every permission, so VIEW_AUDIT_LOG is redundant: "
        "list ADMINISTRATOR alone.",
        server(roles=[MEMBERS, {"name": "Admin", "permissions": ["ADMINISTRATOR"]}]),
    ),
    # v4 (lint_community.py)
    Case(
        "automod-alert-to-a-channel-staff-cannot-view",
        "automod-alert-hidden",
        server(
            channels=[
                {
                    "name": "mod-log",
                    "overwrites": [
                        {"role": "@everyone", "deny": ["VIEW_CHANNEL"]},
                        {"role": "Members", "allow": ["VIEW_CHANNEL"]},
                    ],
                }
            ],
            automod=[
                {
                    "name": "Links",
                    "trigger": "keyword",
                    "keywords": ["x"],
                    "actions": [{"type": "alert", "channel": "mod-log"}],
                }
            ],
        ),
        "automod[0].actions[0].channel",
        "AutoMod rule 'Links' alerts channel 'mod-log', which no staff role can view: allow VIEW_CHANNEL there to the "
        "roles that moderate.",
        server(
            channels=[
                {
                    "name": "mod-log",
                    "overwrites": [
                        {"role": "@everyone", "deny": ["VIEW_CHANNEL"]},
                        {"role": "Mods", "allow": ["VIEW_CHANNEL"]},
                    ],
                }
            ],
            automod=[
                {
                    "name": "Links",
                    "trigger": "keyword",
                    "keywords": ["x"],
                    "actions": [{"type": "alert", "channel": "mod-log"}],
                }
            ],
        ),
    ),
    Case(
        "automod-rule-exempting-everyone",
        "automod-exempts-everyone",
        server(
            automod=[
                {"name": "Links", "trigger": "spam", "actions": [{"type": "block"}], "exempt_roles": ["@everyone"]}
            ]
        ),
        "automod[0].exempt_roles[0]",
        "AutoMod rule 'Links' exempts @everyone, so it applies to no one: exempt staff roles instead.",
        server(
            automod=[{"name": "Links", "trigger": "spam", "actions": [{"type": "block"}], "exempt_roles": ["Mods"]}]
        ),
    ),
    Case(
        "onboarding-handing-out-a-moderator-role",
        "onboarding-dangerous-role",
        server(onboarding={"prompts": [{"title": "Role?", "options": [{"title": "Mod", "roles": ["Mods"]}]}]}),
        "onboarding.prompts[0].options[0].roles[0]",
        "Onboarding hands out role 'Mods', which grants KICK_MEMBERS, MANAGE_MESSAGES: anyone who joins may pick it, "
        "as if @everyone held it; hand out a role without them.",
        server(onboarding={"prompts": [{"title": "Role?", "options": [{"title": "Member", "roles": ["Members"]}]}]}),
    ),
)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_rule_warns_once_at_the_offending_field_with_a_message_naming_the_object_and_the_fix(case: Case) -> None:
    # Given a configuration with one unsafe detail, When linted
    warnings = lint(case.unsafe)

    # Then exactly that rule warns, at that field, with the sentence a person reads
    assert [(warning.rule, warning.field, warning.message) for warning in warnings] == [
        (case.rule, case.field, case.message)
    ]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_close_but_safe_configuration_gets_no_warning(case: Case) -> None:
    # Given the same configuration without the unsafe detail, When linted, Then nothing is reported
    assert lint(case.safe) == []


def test_every_rule_has_a_triggering_case() -> None:
    # Given the rules table, Then each id appears in the cases above (a new rule cannot land untested)
    assert {case.rule for case in CASES} == {rule.id for rule in LINT_RULES}
    assert len({rule.id for rule in LINT_RULES}) == len(LINT_RULES)


@pytest.mark.parametrize(
    ("roles", "category_overwrites", "channel_overwrites", "visible"),
    [
        ([MODS], PRIVATE, [], True),
        # The channel's own overwrite for Mods replaces the category's, dropping its VIEW_CHANNEL allow.
        ([MODS], PRIVATE, [{"role": "Mods", "deny": ["SEND_MESSAGES"]}], False),
        ([MODS], PRIVATE, [{"role": "Mods", "allow": ["VIEW_CHANNEL"], "deny": ["SEND_MESSAGES"]}], True),
        # A role's own VIEW_CHANNEL does not undo the @everyone overwrite's deny.
        ([{"name": "Viewers", "permissions": ["VIEW_CHANNEL"]}], [PRIVATE[0]], [], False),
        ([MODS], [PRIVATE[0]], [{"role": "Mods", "allow": ["VIEW_CHANNEL"]}], True),
        ([MODS], [PRIVATE[0]], [{"role": "@everyone", "allow": ["VIEW_CHANNEL"]}], True),
        ([MODS], [], [], True),
        ([], [PRIVATE[0]], [], False),
        ([{"name": "Owners", "permissions": ["ADMINISTRATOR"]}], [PRIVATE[0]], [], True),
        # A neutral overwrite keeps the category's allow off the channel: only the owner sees it.
        ([MODS], PRIVATE, [{"role": "Mods"}], False),
        ([MODS, MEMBERS], PRIVATE, [{"role": "Mods"}, {"role": "Members", "allow": ["VIEW_CHANNEL"]}], True),
    ],
    ids=[
        "role-allowed-by-its-category",
        "role-allow-replaced-by-channel-overwrite",
        "role-allow-repeated-on-channel",
        "role-permission-cannot-beat-everyone-deny",
        "role-allowed-by-the-channel",
        "everyone-allowed-again-by-the-channel",
        "no-overwrites",
        "no-roles-and-everyone-denied",
        "administrator-sees-everything",
        "role-allow-kept-off-by-a-neutral-overwrite",
        "another-role-allowed-beside-a-neutral-overwrite",
    ],
)
def test_channel_visibility_follows_the_platform_permission_order(
    roles: list[dict[str, Any]], category_overwrites: list[Any], channel_overwrites: list[Any], visible: bool
) -> None:
    # Given a channel in a category, with overwrites on either
    body = server(
        roles=roles, categories=[staff_category(*channel_overwrites, category_overwrites=category_overwrites)]
    )

    # When linted
    rules = {warning.rule for warning in lint(body)}

    # Then "nobody can view" is reported exactly when no role (nor @everyone) can view it
    assert ("channel-nobody-can-view" in rules) is not visible


def test_warnings_come_in_the_rules_order_then_the_configurations_order() -> None:
    # Given problems of two rules, the later rule's in the configuration's first field
    body = server(
        roles=[{"name": "Admin", "permissions": ["ADMINISTRATOR", "KICK_MEMBERS"]}, MEMBERS],
        categories=[{"name": "Chat", "overwrites": [{"role": "@everyone", "allow": ["MENTION_EVERYONE"]}]}],
        channels=[{"name": "lobby", "overwrites": [{"role": "@everyone", "allow": ["MANAGE_CHANNELS"]}]}],
    )

    # When linted twice
    first, second = lint(body), lint(body)

    # Then the order is the rules' order, then the configuration's, every time
    assert [(warning.rule, warning.field) for warning in first] == [
        ("everyone-dangerous-permission", "categories[0].overwrites[0].allow"),
        ("everyone-dangerous-permission", "channels[0].overwrites[0].allow"),
        ("administrator-redundant-permissions", "roles[0].permissions"),
    ]
    assert first == second


def test_warning_serialises_as_field_rule_and_message() -> None:
    # Given a warning, When dumped as the deploy and the AI chat return it, Then it has exactly the contract's keys
    [warning] = lint(CASES[0].unsafe)
    assert warning.model_dump() == {
        "field": "categories[0].overwrites[0].allow",
        "rule": "everyone-dangerous-permission",
        "message": "On category 'Chat', @everyone is allowed MANAGE_WEBHOOKS, so every member gets it: "
        "remove it from this allow list and allow a staff role instead.",
    }


def test_community_server_with_a_private_staff_category_is_clean() -> None:
    # Given a realistic community server: read-only announcements, open chat, a private staff area
    body = {
        "name": "Makers Guild",
        "roles": [
            {"name": "Admin", "color": "#E74C3C", "hoist": True, "permissions": ["ADMINISTRATOR"]},
            {
                "name": "Moderators",
                "color": "#3498DB",
                "hoist": True,
                "mentionable": True,
                "permissions": ["KICK_MEMBERS", "BAN_MEMBERS", "MANAGE_MESSAGES", "MODERATE_MEMBERS", "MUTE_MEMBERS"],
            },
            {"name": "Members", "permissions": ["SEND_MESSAGES", "ADD_REACTIONS", "CONNECT", "SPEAK"]},
        ],
        "categories": [
            {
                "name": "Welcome",
                "overwrites": [{"role": "@everyone", "deny": ["SEND_MESSAGES"]}],
                "channels": [
                    {"name": "rules", "topic": "Read before posting"},
                    {
                        "name": "announcements",
                        "type": "announcement",
                        "overwrites": [{"role": "Moderators", "allow": ["SEND_MESSAGES", "MENTION_EVERYONE"]}],
                    },
                ],
            },
            {
                "name": "Community",
                "channels": [
                    {"name": "general", "slowmode_seconds": 5},
                    {"name": "show-and-tell", "type": "forum"},
                    {"name": "Workshop", "type": "voice", "user_limit": 10},
                ],
            },
            {
                "name": "Staff",
                "overwrites": [
                    {"role": "@everyone", "deny": ["VIEW_CHANNEL"]},
                    {"role": "Moderators", "allow": ["VIEW_CHANNEL"]},
                ],
                "channels": [
                    {"name": "mod-chat"},
                    {
                        "name": "mod-log",
                        "overwrites": [{"role": "Moderators", "allow": ["VIEW_CHANNEL"], "deny": ["SEND_MESSAGES"]}],
                    },
                    {"name": "Staff Room", "type": "voice"},
                ],
            },
        ],
        "channels": [{"name": "Town Hall", "type": "stage"}],
    }

    # When linted, Then there is nothing to warn about
    assert lint(body) == []


def test_500_channel_configuration_lints_with_one_warning_per_reopened_channel() -> None:
    # Given 10 private categories of 49 channels each (500 channels, categories included), all but the
    # last channel of the last category reopened to @everyone, and no role able to view that last one
    reopened = {"role": "@everyone", "allow": ["VIEW_CHANNEL"]}
    categories = [
        {
            "name": f"Area {c}",
            "overwrites": [{"role": "@everyone", "deny": ["VIEW_CHANNEL"]}],
            "channels": [{"name": f"room-{c}-{n}", "overwrites": [reopened]} for n in range(49)],
        }
        for c in range(10)
    ]
    categories[-1]["channels"][-1]["overwrites"] = []
    config = ServerConfig.model_validate(server(roles=[MEMBERS], categories=categories))
    assert config.channel_count() == 500

    # When linted
    warnings = lint_config(config)

    # Then each reopened channel is reported in order, then the one nobody can view
    assert [(warning.rule, warning.field) for warning in warnings] == [
        *(
            ("private-category-channel-reopened", f"categories[{c}].channels[{n}].overwrites[0].allow")
            for c in range(10)
            for n in range(49)
            if (c, n) != (9, 48)
        ),
        ("channel-nobody-can-view", "categories[9].channels[48].overwrites"),
    ]


def test_a_neutral_overwrite_is_not_taken_for_a_dropped_view_channel() -> None:
    # Given a private category whose channels keep Mods out: one by a neutral overwrite, one by an overwrite that
    # only denies sending (which drops the category's VIEW_CHANNEL allow, probably by mistake)
    neutral = staff_category({"role": "Mods"}, {"role": "Members", "allow": ["VIEW_CHANNEL"]})
    careless = staff_category(
        {"role": "Mods", "deny": ["SEND_MESSAGES"]}, {"role": "Members", "allow": ["VIEW_CHANNEL"]}
    )
    careless["name"] = "Staff Too"

    # When linted
    warnings = lint(server(roles=[MODS, MEMBERS], categories=[neutral, careless]))

    # Then only the second is named
    assert [(w.field, w.rule) for w in warnings if w.rule == "category-view-dropped"] == [
        ("categories[1].channels[0].overwrites[0].allow", "category-view-dropped")
    ]


def test_a_channel_overwrite_for_everyone_under_a_category_that_allows_everyone_to_view_is_no_warning() -> None:
    # Given a category whose @everyone overwrite allows VIEW_CHANNEL (what @everyone has anyway) and a channel
    # whose own @everyone overwrite replaces it without saying anything about VIEW_CHANNEL
    opened = staff_category(
        {"role": "@everyone", "deny": ["SEND_MESSAGES"]},
        category_overwrites=[{"role": "@everyone", "allow": ["VIEW_CHANNEL"]}],
    )

    # When linted, Then nothing is reported: every member still sees the channel, as the category meant
    assert lint(server(categories=[opened])) == []


def test_a_dropped_view_channel_that_changes_nothing_is_no_warning() -> None:
    # Given a category that denies Members VIEW_CHANNEL and a channel whose own Members overwrite drops that deny,
    # while the channel hides itself from @everyone anyway
    hidden = staff_category(
        {"role": "@everyone", "deny": ["VIEW_CHANNEL"]},
        {"role": "Members", "deny": ["SEND_MESSAGES"]},
        {"role": "Mods", "allow": ["VIEW_CHANNEL"]},
        category_overwrites=[{"role": "Members", "deny": ["VIEW_CHANNEL"]}],
    )

    # When linted, Then the drop is not named: Members cannot view the channel either way
    assert [w.rule for w in lint(server(roles=[MODS, MEMBERS], categories=[hidden]))] == []


@pytest.mark.parametrize(
    ("channel", "system_channel"),
    [("Mod Chat", "mod-chat"), ("mod-chat", "Mod Chat")],
    ids=["configuration-spells-it-with-a-space", "settings-spell-it-with-a-space"],
)
def test_the_system_channel_is_found_by_the_name_the_platform_stores(channel: str, system_channel: str) -> None:
    # Given a private text channel named one way and the settings naming it the other (both store as 'mod-chat')
    body = server(
        categories=[{"name": "Staff", "overwrites": PRIVATE, "channels": [{"name": channel}]}],
        settings={"system_channel": system_channel},
    )

    # When linted, Then the hidden system channel is named
    assert [(w.rule, w.field) for w in lint(body)] == [("system-channel-hidden", "settings.system_channel")]


def test_a_dropped_view_channel_is_named_whatever_the_rule_passed_over_before_it() -> None:
    # Given a public category, then a private one whose channel has three overwrites of its own: for a role the
    # category says nothing of, for Members (whose dropped deny changes nothing: @everyone's deny hides the channel
    # from them anyway), and for Mods, whose dropped allow shuts them out
    staff = staff_category(
        {"role": "Helpers", "allow": ["VIEW_CHANNEL", "SEND_MESSAGES"]},
        {"role": "Members", "deny": ["SEND_MESSAGES"]},
        {"role": "Mods", "deny": ["SEND_MESSAGES"]},
        category_overwrites=[*PRIVATE, {"role": "Members", "deny": ["VIEW_CHANNEL"]}],
    )
    body = server(roles=[MODS, MEMBERS, {"name": "Helpers"}], categories=[chat_category(), staff])

    # When linted, Then the Mods overwrite is named, and only it
    assert [(w.rule, w.field) for w in lint(body)] == [
        ("category-view-dropped", "categories[1].channels[0].overwrites[2].allow")
    ]


@pytest.mark.parametrize(
    ("category_overwrites", "channel_overwrites"),
    [
        # The category's overwrite for Mods says nothing of VIEW_CHANNEL: there is nothing to drop.
        ([{"role": "Mods", "allow": ["SEND_MESSAGES"]}], [{"role": "Mods", "deny": ["ATTACH_FILES"]}]),
        # The channel hides itself from Mods, whom its category shows it: a choice, said in so many words.
        (PRIVATE, [{"role": "Mods", "deny": ["VIEW_CHANNEL"]}, {"role": "Members", "allow": ["VIEW_CHANNEL"]}]),
    ],
    ids=["category-says-nothing-of-view-channel", "channel-denies-the-view-its-category-allows"],
)
def test_a_channel_overwrite_that_drops_no_view_channel_is_no_warning(
    category_overwrites: list[Any], channel_overwrites: list[Any]
) -> None:
    # Given a channel whose own overwrite for Mods replaces its category's, When linted, Then nothing is reported
    body = server(categories=[staff_category(*channel_overwrites, category_overwrites=category_overwrites)])
    assert lint(body) == []
