"""What a caller may do to a server, checked per plan item: every kind and action, deletes included, for the owner,
an administrator, a MANAGE_GUILD-only manager and a manager with MANAGE_ROLES and MANAGE_CHANNELS but a low role."""

from __future__ import annotations

from typing import Any

import pytest

from svcconf.caller_rights import (
    CallerMayNot,
    caller_problems,
    caller_view,
    check_plan,
    plan_refusals,
    require_acknowledged,
    standing_of,
    within_reach,
)
from svcconf.caller_rights.grants import GrantNotAcknowledged, dangerous_grants
from svcconf.config import ServerConfig, to_bitfield
from svcconf.config.lint import DANGEROUS_PERMISSIONS
from svcconf.deploy_engine.export import export_config
from svcconf.deploy_engine.plan import plan_deployment
from svcconf.deploy_engine.steps import DeleteStep, DeploymentPlan, PlanItem, channel_key, role_key
from tests.helpers.live_guilds import GUILD_ID, GuildBuilder, overwrite

OWNER, ADMIN, MANAGER, HELPER = (
    "1191000000000008001",
    "1191000000000008002",
    "1191000000000008003",
    "1191000000000008004",
)


class Lab:
    """A guild where each kind of caller holds one role: Helpers (MANAGE_ROLES, MANAGE_CHANNELS) lowest, then
    Members, Managers (MANAGE_GUILD), Admins (ADMINISTRATOR); a staff channel hidden from all but Admins."""

    def __init__(self) -> None:
        guild = GuildBuilder()
        self.helpers = guild.role("Helpers", "MANAGE_ROLES", "MANAGE_CHANNELS", "VIEW_CHANNEL", "SEND_MESSAGES")
        self.members = guild.role("Members", "SEND_MESSAGES")
        self.managers = guild.role("Managers", "MANAGE_GUILD")
        self.admins = guild.role("Admins", "ADMINISTRATOR")
        self.general = guild.channel("general")
        self.staff = guild.channel(
            "staff-secrets", topic="the raise list", overwrites=[overwrite(GUILD_ID, deny=("VIEW_CHANNEL",))]
        )
        self.live = guild.build().model_copy(update={"owner_id": OWNER})
        self.roles_of = {OWNER: [], ADMIN: [self.admins], MANAGER: [self.managers], HELPER: [self.helpers]}

    def refusals(self, caller: str, config: dict[str, Any]) -> dict[str, str]:
        standing = standing_of(self.live, caller, self.roles_of[caller])
        view = caller_view(self.live, standing).live
        plan = plan_deployment(view, ServerConfig.model_validate({"name": self.live.name, **config}))
        return {refusal.field: refusal.message for refusal in plan_refusals(standing, view, plan)}

    def hand_built(self, caller: str, *items: PlanItem, ids: dict[str, str]) -> dict[str, str]:
        standing = standing_of(self.live, caller, self.roles_of[caller])
        plan = DeploymentPlan(items=list(items), steps=[], ids=ids)
        view = caller_view(self.live, standing).live
        return {refusal.field: refusal.message for refusal in plan_refusals(standing, view, plan)}


def role(name: str, *permissions: str) -> dict[str, Any]:
    return {"name": name, "permissions": list(permissions)}


LAB_ROLES = [role("Admins", "ADMINISTRATOR"), role("Managers", "MANAGE_GUILD"), role("Members", "SEND_MESSAGES")]


def test_the_owner_may_do_everything() -> None:
    lab = Lab()
    config = {
        "everyone_permissions": ["VIEW_CHANNEL", "BAN_MEMBERS"],
        "roles": [role("Admins", "ADMINISTRATOR", "BAN_MEMBERS"), role("Wardens", "BAN_MEMBERS")],
        "settings": {"verification_level": "high"},
    }
    assert lab.refusals(OWNER, config) == {}


def test_bobs_escalations_are_refused_to_a_manage_guild_only_manager_naming_each_field() -> None:
    # Given a manager holding only MANAGE_GUILD, When they give @everyone and their own role MANAGE_CHANNELS and
    # MANAGE_ROLES, Then both objects are refused: MANAGE_ROLES missing, the grants named, their role not below them.
    lab = Lab()
    refusals = lab.refusals(
        MANAGER,
        {
            "everyone_permissions": ["VIEW_CHANNEL", "MANAGE_CHANNELS", "MANAGE_ROLES"],
            "roles": [role("Managers", "MANAGE_GUILD", "MANAGE_CHANNELS", "MANAGE_ROLES")],
        },
    )
    assert set(refusals) == {"everyone_permissions", "roles[0]"}
    assert "you need MANAGE_ROLES" in refusals["everyone_permissions"]
    assert "you do not hold MANAGE_CHANNELS, MANAGE_ROLES" in refusals["everyone_permissions"]
    assert refusals["roles[0]"] == (
        "you need MANAGE_ROLES to create, change, reorder or delete roles; "
        "you do not hold MANAGE_CHANNELS, MANAGE_ROLES"
    )


def test_an_administrator_may_not_raise_their_own_role_but_may_change_those_below() -> None:
    lab = Lab()
    refusals = lab.refusals(ADMIN, {"roles": [role("Admins", "ADMINISTRATOR", "BAN_MEMBERS"), LAB_ROLES[1]]})
    assert refusals == {"roles[0]": "role 'Admins' is not below your highest role"}
    assert lab.refusals(ADMIN, {"roles": [role("Managers", "MANAGE_GUILD", "BAN_MEMBERS")]}) == {}


def test_a_low_manager_creates_what_they_hold_and_nothing_above_them() -> None:
    lab = Lab()
    assert lab.refusals(HELPER, {"roles": [role("Greeters", "SEND_MESSAGES")]}) == {}
    assert lab.refusals(HELPER, {"roles": [role("Wardens", "BAN_MEMBERS", "KICK_MEMBERS")]}) == {
        "roles[0].permissions": "you do not hold KICK_MEMBERS, BAN_MEMBERS"
    }
    assert lab.refusals(HELPER, {"roles": [role("Members", "SEND_MESSAGES", "READ_MESSAGE_HISTORY")]}) == {
        "roles[0]": "role 'Members' is not below your highest role"
    }


def test_settings_and_the_servers_name_need_manage_guild() -> None:
    lab = Lab()
    config = {"settings": {"verification_level": "high"}}
    assert lab.refusals(HELPER, config) == {
        "settings": "you need MANAGE_GUILD to change the server's settings and name"
    }
    assert lab.refusals(MANAGER, config) == {}


def test_channels_need_manage_channels_and_overwrites_manage_roles_with_only_held_bits() -> None:
    lab = Lab()
    channel = {"name": "general", "topic": "hello"}
    assert lab.refusals(MANAGER, {"channels": [channel]}) == {
        "channels[0]": "you need MANAGE_CHANNELS to update this channel"
    }
    assert lab.refusals(HELPER, {"channels": [channel, {"name": "new-room"}]}) == {}
    granting = {"name": "general", "overwrites": [{"role": "@everyone", "allow": ["BAN_MEMBERS"]}]}
    assert lab.refusals(HELPER, {"channels": [granting]}) == {
        "channels[0].overwrites[0]": "you do not hold BAN_MEMBERS there"
    }


def test_a_role_reorder_moves_only_roles_below_the_caller() -> None:
    # Given the configuration's order puts Members below Helpers, When the low manager deploys it, Then the move
    # of Members (above them) is refused; the administrator may make it.
    lab = Lab()
    order = {
        "roles": [
            role("Helpers", "MANAGE_ROLES", "MANAGE_CHANNELS", "VIEW_CHANNEL", "SEND_MESSAGES"),
            role("Members", "SEND_MESSAGES"),
        ]
    }
    refusals = lab.refusals(HELPER, order)
    assert "only roles below your highest role move" in " ".join(refusals.values())
    assert lab.refusals(ADMIN, order) == {}


@pytest.mark.parametrize("action", ["update", "delete"])
def test_every_kind_and_action_of_a_hand_built_plan_needs_its_permission(action: str) -> None:
    lab = Lab()
    general_key = channel_key(None, 0, "general")
    items = [
        PlanItem(kind="role", name="Members", action=action, field="roles[0]", key=role_key("Members")),
        PlanItem(kind="channel", name="general", action=action, field="channels[0]", key=general_key),
        PlanItem(
            kind="overwrite",
            name="general → @everyone",
            action=action,
            field="channels[0].overwrites[0]",
            key=f"overwrite:{general_key}:@everyone",
            owner=general_key,
        ),
        PlanItem(kind="settings", name="server settings", action="update", field="settings", key="settings"),
    ]
    ids = {role_key("Members"): lab.members, general_key: lab.general}
    assert set(lab.hand_built(MANAGER, *items, ids=ids)) == {"roles[0]", "channels[0]", "channels[0].overwrites[0]"}
    assert set(lab.hand_built(HELPER, *items, ids=ids)) == {"roles[0]", "settings"}
    assert lab.hand_built(ADMIN, *items, ids=ids) == {}
    assert lab.hand_built(OWNER, *items, ids=ids) == {}


def test_a_hidden_channel_is_never_updated_moved_or_deleted() -> None:
    lab = Lab()
    key = channel_key(None, 0, "staff-secrets")
    for action in ("update", "delete"):
        item = PlanItem(kind="channel", name="staff-secrets", action=action, field="channels[0]", key=key)
        assert lab.hand_built(HELPER, item, ids={key: lab.staff}) == {
            "channels[0]": "names a channel you cannot view in this server"
        }


def test_a_channel_the_caller_cannot_view_is_left_out_of_their_view_and_export() -> None:
    lab = Lab()
    view = caller_view(lab.live, standing_of(lab.live, MANAGER, [lab.managers]))
    assert [c.name for c in view.hidden] == ["staff-secrets"]
    exported = export_config(view.live, view.live.settings).config.model_dump_json()
    assert "staff-secrets" not in exported
    assert "raise list" not in exported
    [warning] = view.hidden_warnings()
    assert (warning.rule, warning.field) == ("hidden-channels", "channels")
    assert "staff-secrets" not in warning.message
    admin_view = caller_view(lab.live, standing_of(lab.live, ADMIN, [lab.admins]))
    assert admin_view.hidden == []
    assert admin_view.hidden_warnings() == []


def test_a_configuration_naming_a_hidden_channel_is_treated_as_naming_one_the_server_does_not_have() -> None:
    # v4: never refused (a refusal would tell the caller it exists): by name it matches only what they can see, so a
    # channel of that name is created beside it; by id the id is unknown to them, ignored, and the name matches.
    lab = Lab()
    standing = standing_of(lab.live, HELPER, [lab.helpers])  # MANAGE_CHANNELS, staff-secrets hidden from them
    view = caller_view(lab.live, standing)
    assert [c.name for c in view.hidden] == ["staff-secrets"]
    by_name = ServerConfig.model_validate({"name": lab.live.name, "channels": [{"name": "Staff-Secrets"}]})
    plan = plan_deployment(view.live, by_name)
    [item] = [item for item in plan.items if item.kind == "channel"]
    assert (item.action, item.id, item.field) == ("create", None, "channels[0]")
    assert caller_problems(standing, view, plan, by_name) == []
    by_id = ServerConfig.model_validate(
        {"name": lab.live.name, "channels": [{"name": "general", "id": lab.general}, {"name": "x", "id": lab.staff}]}
    )
    plan = plan_deployment(view.live, by_id)
    actions = {item.field: (item.action, item.id) for item in plan.items if item.kind == "channel"}
    assert actions == {"channels[0]": ("keep", lab.general), "channels[1]": ("create", None)}
    assert lab.staff not in plan.ids.values()
    assert caller_problems(standing, view, plan, by_id) == []


def test_a_hidden_category_is_kept_in_view_while_it_holds_a_visible_channel() -> None:
    guild = GuildBuilder()
    private = guild.category("Back Office", overwrites=[overwrite(GUILD_ID, deny=("VIEW_CHANNEL",))])
    guild.channel("front-desk", parent=private, overwrites=[overwrite(GUILD_ID, allow=("VIEW_CHANNEL",))])
    live = guild.build().model_copy(update={"owner_id": OWNER})
    view = caller_view(live, standing_of(live, MANAGER, []))
    assert {c.name for c in view.live.channels} == {"Back Office", "front-desk"}
    assert view.hidden == []


def test_check_plan_refuses_with_403_and_one_detail_per_object() -> None:
    lab = Lab()
    standing = standing_of(lab.live, MANAGER, [lab.managers])
    view = caller_view(lab.live, standing)
    config = ServerConfig.model_validate({"name": "Lab", "everyone_permissions": ["VIEW_CHANNEL", "BAN_MEMBERS"]})
    with pytest.raises(CallerMayNot) as refused:
        check_plan(standing, view, plan_deployment(view.live, config))
    assert refused.value.status == 403
    assert [(d.field, d.message) for d in refused.value.details or []] == [
        (
            "everyone_permissions",
            "you need MANAGE_ROLES to create, change, reorder or delete roles; you do not hold BAN_MEMBERS",
        )
    ]


@pytest.mark.parametrize("permission", DANGEROUS_PERMISSIONS)
def test_each_dangerous_permission_given_to_everyone_needs_an_acknowledgement(permission: str) -> None:
    config = ServerConfig.model_validate({"name": "x", "everyone_permissions": ["VIEW_CHANNEL", permission]})
    with pytest.raises(GrantNotAcknowledged) as refused:
        require_acknowledged(config, [])
    [detail] = refused.value.details or []
    assert (refused.value.status, detail.field, detail.rule) == (
        409,
        "everyone_permissions",
        "everyone-permissions-dangerous",
    )
    assert permission in detail.message
    require_acknowledged(config, ["everyone-permissions-dangerous"])  # acknowledged: no refusal


def test_dangerous_grants_to_every_role_and_in_overwrites_name_their_rules() -> None:
    config = ServerConfig.model_validate(
        {
            "name": "x",
            "roles": [role("A", "KICK_MEMBERS"), role("B", "KICK_MEMBERS", "SEND_MESSAGES")],
            "channels": [{"name": "c", "overwrites": [{"role": "@everyone", "allow": ["MODERATE_MEMBERS"]}]}],
        }
    )
    assert {w.rule for w in dangerous_grants(config)} == {
        "every-role-dangerous-permission",
        "everyone-dangerous-permission",
    }
    with pytest.raises(GrantNotAcknowledged) as refused:
        require_acknowledged(config, ["every-role-dangerous-permission"])
    assert [d.rule for d in refused.value.details or []] == ["everyone-dangerous-permission"]


def test_a_live_guild_standing_counts_everyones_and_the_members_roles() -> None:
    lab = Lab()
    helper = standing_of(lab.live, HELPER, [lab.helpers])
    assert helper.holds(int(to_bitfield(["MANAGE_ROLES", "MANAGE_CHANNELS"])))
    assert not helper.holds(int(to_bitfield(["MANAGE_GUILD"])))
    assert not standing_of(lab.live, MANAGER, [lab.managers]).owner
    assert standing_of(lab.live, OWNER, []).owner


def test_what_the_server_already_grants_every_member_needs_no_acknowledgement() -> None:
    # Given a server whose @everyone already mentions everyone (the platform's default), When a configuration keeps
    # it, Then no acknowledgement is needed; When it adds BAN_MEMBERS, Then it is, naming that one alone.
    guild = GuildBuilder()
    guild.roles[0] = guild.roles[0].model_copy(
        update={"permissions": to_bitfield(["VIEW_CHANNEL", "MENTION_EVERYONE"])}
    )
    live = guild.build()
    keeping = ServerConfig.model_validate({"name": "x", "everyone_permissions": ["VIEW_CHANNEL", "MENTION_EVERYONE"]})
    require_acknowledged(keeping, [], live)
    adding = ServerConfig.model_validate(
        {"name": "x", "everyone_permissions": ["VIEW_CHANNEL", "MENTION_EVERYONE", "BAN_MEMBERS"]}
    )
    with pytest.raises(GrantNotAcknowledged) as refused:
        require_acknowledged(adding, [], live)
    [detail] = refused.value.details or []
    assert "gain BAN_MEMBERS," in detail.message
    assert "MENTION_EVERYONE" not in detail.message


def test_the_ai_chats_problems_gather_refusals_hidden_channels_and_dangerous_grants() -> None:
    lab = Lab()
    standing = standing_of(lab.live, MANAGER, [lab.managers])
    view = caller_view(lab.live, standing)
    config = ServerConfig.model_validate(
        {
            "name": "Lab",
            "everyone_permissions": ["VIEW_CHANNEL", "KICK_MEMBERS"],
            "channels": [{"name": "general"}, {"name": "staff-secrets"}],
        }
    )
    problems = caller_problems(standing, view, plan_deployment(view.live, config), config)
    # bob may not create a channel at all; the one hidden from him is, for him, a channel the server does not have
    assert [(p.field, p.rule) for p in problems] == [
        ("everyone_permissions", None),
        ("channels[1]", None),
        ("everyone_permissions", "everyone-permissions-dangerous"),
    ]
    assert not any("cannot view" in p.message for p in problems)


def test_a_prune_plan_deletes_only_what_the_caller_sees_and_may_delete() -> None:
    # Given a configuration naming neither channel, When pruned as each caller sees the guild, Then the hidden one
    # is in no plan, and deleting the visible one needs MANAGE_CHANNELS (named by the channel's name: it has no path)
    lab = Lab()
    config = ServerConfig.model_validate({"name": lab.live.name, "roles": LAB_ROLES})
    for caller, sees_hidden, refused in ((MANAGER, False, True), (HELPER, False, False), (ADMIN, True, False)):
        standing = standing_of(lab.live, caller, lab.roles_of[caller])
        view = caller_view(lab.live, standing)
        plan = plan_deployment(view.live, config, prune=True)
        deleted = {item.name for item in plan.deletes() if item.kind == "channel"}
        assert deleted == ({"general", "staff-secrets"} if sees_hidden else {"general"})
        refusals = {r.field: r.message for r in plan_refusals(standing, view.live, plan)}
        assert ("you need MANAGE_CHANNELS to delete channel 'general'" in refusals.get("channels", "")) == refused


def test_a_prune_keeps_roles_at_or_above_the_callers_highest_with_a_warning() -> None:
    # Given a configuration naming only Helpers, When the low manager prunes, Then the roles above them are kept
    # (warned), not refused; the administrator's prune deletes those below Admins and keeps Admins
    lab = Lab()
    config = ServerConfig.model_validate(
        {"name": lab.live.name, "roles": [role("Helpers", "MANAGE_ROLES", "MANAGE_CHANNELS", "VIEW_CHANNEL")]}
    )
    for caller, deleted in ((HELPER, set()), (ADMIN, {"Managers", "Members"})):
        standing = standing_of(lab.live, caller, lab.roles_of[caller])
        view = caller_view(lab.live, standing)
        plan = within_reach(standing, view, plan_deployment(view.live, config, prune=True))
        assert {item.name for item in plan.deletes() if item.kind == "role"} == deleted
        assert {s.name for s in plan.steps if isinstance(s, DeleteStep) and s.kind == "role"} == deleted
        kept = {w.message for w in plan.warnings if w.rule == "kept"}
        assert "role 'Admins' is kept: it is not below your highest role" in kept  # the top of both callers
        assert [r for r in plan_refusals(standing, view.live, plan) if r.field == "roles"] == []


def test_a_member_overwrite_lets_one_caller_see_a_channel_hidden_from_their_roles() -> None:
    guild = GuildBuilder()
    hidden_from_all = [overwrite(GUILD_ID, deny=("VIEW_CHANNEL",))]
    member = {"id": MANAGER, "type": 1, "allow": to_bitfield(["VIEW_CHANNEL"]), "deny": "0"}
    guild.channel("desk", overwrites=[*hidden_from_all, member])
    live = guild.build().model_copy(update={"owner_id": OWNER})
    assert caller_view(live, standing_of(live, MANAGER, [])).hidden == []
    assert [c.name for c in caller_view(live, standing_of(live, HELPER, [])).hidden] == ["desk"]
