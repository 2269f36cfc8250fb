"""What a caller may do, object by object, where the answer turns on more than one permission: each refused object
its own detail, a channel's overwrites giving or taking the caller's rights there, what a role or an overwrite
already held, and the role order around the caller's highest role (with the plan's creations below it)."""

from __future__ import annotations

from typing import Any

from svcconf.caller_rights import (
    CallerStanding,
    CallerView,
    caller_view,
    plan_refusals,
    standing_of,
    within_reach,
)
from svcconf.config import Role as ConfigRole
from svcconf.config import ServerConfig, to_bitfield
from svcconf.deploy_engine.export import export_config
from svcconf.deploy_engine.plan import plan_deployment
from svcconf.deploy_engine.steps import ChannelStep, DeploymentPlan, PlanItem, ReorderRoles, RolePosition, channel_key
from tests.helpers.live_guilds import GUILD_ID, GuildBuilder, overwrite

OWNER, ADMIN, MANAGER, HELPER = (
    "1191000000000008101",
    "1191000000000008102",
    "1191000000000008103",
    "1191000000000008104",
)


class Desk:
    """Roles from the bottom: Wardens (BAN_MEMBERS), Greeters, Helpers (MANAGE_ROLES, MANAGE_CHANNELS), Members,
    Managers (MANAGE_GUILD), Admins (ADMINISTRATOR). Channels: general; lounge, whose overwrite gives Members
    MANAGE_MESSAGES; workshop, where Helpers are denied their MANAGE_CHANNELS and MANAGE_ROLES; studio, where
    Managers are given MANAGE_CHANNELS, MANAGE_ROLES and MANAGE_MESSAGES; staff and vault, hidden from all."""

    def __init__(self) -> None:
        guild = GuildBuilder()
        self.wardens = guild.role("Wardens", "BAN_MEMBERS")
        self.greeters = guild.role("Greeters", "SEND_MESSAGES")
        self.helpers = guild.role("Helpers", "MANAGE_ROLES", "MANAGE_CHANNELS")
        self.members = guild.role("Members", "SEND_MESSAGES")
        self.managers = guild.role("Managers", "MANAGE_GUILD")
        self.admins = guild.role("Admins", "ADMINISTRATOR")
        self.general = guild.channel("general")
        self.lounge = guild.channel("lounge", overwrites=[overwrite(self.members, allow=("MANAGE_MESSAGES",))])
        self.workshop = guild.channel(
            "workshop", overwrites=[overwrite(self.helpers, deny=("MANAGE_CHANNELS", "MANAGE_ROLES"))]
        )
        self.studio = guild.channel(
            "studio",
            overwrites=[overwrite(self.managers, allow=("MANAGE_CHANNELS", "MANAGE_ROLES", "MANAGE_MESSAGES"))],
        )
        hidden = [overwrite(GUILD_ID, deny=("VIEW_CHANNEL",))]
        self.staff = guild.channel("staff", overwrites=hidden)
        self.vault = guild.channel("vault", overwrites=hidden)
        self.live = guild.build().model_copy(update={"owner_id": OWNER})
        self.roles_of = {ADMIN: [self.admins], MANAGER: [self.managers], HELPER: [self.helpers]}

    def refusals(self, caller: str, config: dict[str, Any]) -> dict[str, str]:
        """What the caller is refused deploying `config`, by field, as the 403's details say it."""
        standing = standing_of(self.live, caller, self.roles_of[caller])
        view = caller_view(self.live, standing).live
        plan = plan_deployment(view, ServerConfig.model_validate({"name": self.live.name, **config}))
        return {refusal.field: refusal.message for refusal in plan_refusals(standing, view, plan)}

    def exported(self, caller: str) -> tuple[CallerStanding, CallerView, ServerConfig]:
        """The caller's standing, the server as they see it, and its export: what they start a change from."""
        standing = standing_of(self.live, caller, self.roles_of[caller])
        view = caller_view(self.live, standing)
        return standing, view, export_config(view.live, view.live.settings).config

    def hand_built(self, caller: str, items: list[PlanItem], ids: dict[str, str]) -> dict[str, str]:
        standing = standing_of(self.live, caller, self.roles_of[caller])
        view = caller_view(self.live, standing).live
        plan = DeploymentPlan(items=items, steps=[], ids=ids)
        return {refusal.field: refusal.message for refusal in plan_refusals(standing, view, plan)}


def role(name: str, *permissions: str, **attributes: Any) -> dict[str, Any]:
    return {"name": name, "permissions": list(permissions), **attributes}


def granting(channel: str, role_name: str, allow: tuple[str, ...] = (), deny: tuple[str, ...] = ()) -> dict[str, Any]:
    """A configuration with one overwrite for Greeters or Members, the role stated as it stands (SEND_MESSAGES)."""
    overwrites = [{"role": role_name, "allow": list(allow), "deny": list(deny)}]
    return {"roles": [role(role_name, "SEND_MESSAGES")], "channels": [{"name": channel, "overwrites": overwrites}]}


CANNOT_VIEW = "names a channel you cannot view in this server"
NOT_BELOW = "is not below your highest role"
ONLY_BELOW_MOVE = "only roles below your highest role move"


# ---------------------------------------------------------------- one detail per object


def test_each_refused_object_is_its_own_detail_even_when_two_share_a_reason() -> None:
    # Given a manager without MANAGE_CHANNELS or MANAGE_ROLES, When a plan updates two channels, two hidden ones and
    # an overwrite in each visible one, Then each of the six objects is its own detail, with its own reason
    desk = Desk()
    keys = {name: channel_key(None, 0, name) for name in ("general", "lounge", "staff", "vault")}
    channels = [
        PlanItem(kind="channel", name=name, action="update", field=f"channels[{n}]", key=keys[name])
        for n, name in enumerate(keys)
    ]
    overwrites = [
        PlanItem(
            kind="overwrite",
            name=f"{name} → @everyone",
            action="update",
            field=f"channels[{n}].overwrites[0]",
            key=f"overwrite:{keys[name]}:@everyone",
            owner=keys[name],
        )
        for n, name in enumerate(("general", "lounge"))
    ]
    ids = {keys["general"]: desk.general, keys["lounge"]: desk.lounge, keys["staff"]: desk.staff}
    ids[keys["vault"]] = desk.vault

    refusals = desk.hand_built(MANAGER, [*channels, *overwrites], ids)

    overwrites_need = "you need MANAGE_ROLES (Manage Permissions) to change overwrites there"
    assert refusals == {
        "channels[0]": "you need MANAGE_CHANNELS to update this channel",
        "channels[1]": "you need MANAGE_CHANNELS to update this channel",
        "channels[2]": CANNOT_VIEW,
        "channels[3]": CANNOT_VIEW,
        "channels[0].overwrites[0]": overwrites_need,
        "channels[1].overwrites[0]": overwrites_need,
    }


def test_two_roles_above_a_helper_are_refused_one_detail_each() -> None:
    desk = Desk()
    refusals = desk.refusals(HELPER, {"roles": [role("Managers", "MANAGE_GUILD", "SEND_MESSAGES"), role("Members")]})
    assert refusals == {"roles[0]": f"role 'Managers' {NOT_BELOW}", "roles[1]": f"role 'Members' {NOT_BELOW}"}


def test_a_category_needs_manage_channels_as_a_channel_does() -> None:
    desk = Desk()
    config = {"categories": [{"name": "Events"}]}
    assert desk.refusals(MANAGER, config) == {"categories[0]": "you need MANAGE_CHANNELS to create this category"}
    assert desk.refusals(HELPER, config) == {}


# ---------------------------------------------------------------- a channel's overwrites, the caller's rights there


def test_a_channels_overwrite_gives_or_takes_the_callers_right_to_change_it() -> None:
    # Given Helpers denied MANAGE_CHANNELS in workshop and Managers given it in studio, When each renames a topic,
    # Then the helper is refused in workshop only and the manager everywhere but studio
    desk = Desk()

    def topic(name: str) -> dict[str, Any]:
        return {"channels": [{"name": name, "topic": "new"}]}

    needs = {"channels[0]": "you need MANAGE_CHANNELS to update this channel"}
    assert (desk.refusals(HELPER, topic("workshop")), desk.refusals(HELPER, topic("general"))) == (needs, {})
    assert (desk.refusals(MANAGER, topic("studio")), desk.refusals(MANAGER, topic("general"))) == ({}, needs)


def test_a_channels_overwrite_gives_or_takes_the_callers_right_to_change_its_overwrites() -> None:
    # Given the same channels, When each lets Greeters send messages there, Then the helper (who holds
    # SEND_MESSAGES) is refused in workshop, where their MANAGE_ROLES is denied, and the manager may in studio
    desk = Desk()
    workshop = granting("workshop", "Greeters", allow=("SEND_MESSAGES",))
    assert desk.refusals(HELPER, workshop) == {
        "channels[0].overwrites[0]": "you need MANAGE_ROLES (Manage Permissions) to change overwrites there"
    }
    assert desk.refusals(HELPER, granting("general", "Greeters", allow=("SEND_MESSAGES",))) == {}
    assert desk.refusals(MANAGER, granting("studio", "Greeters", allow=("SEND_MESSAGES",))) == {}


def test_an_overwrite_refused_for_the_right_and_for_a_grant_is_one_detail_with_both_reasons() -> None:
    desk = Desk()
    workshop = granting("workshop", "Greeters", allow=("SEND_MESSAGES", "BAN_MEMBERS"))
    assert desk.refusals(HELPER, workshop) == {
        "channels[0].overwrites[0]": "you need MANAGE_ROLES (Manage Permissions) to change overwrites there; "
        "you do not hold BAN_MEMBERS there"
    }


def test_an_overwrite_may_grant_what_the_caller_holds_in_that_channel_only() -> None:
    # Given Managers given MANAGE_MESSAGES in studio alone, When the manager lets Members manage messages, Then
    # studio allows it and general (where they lack MANAGE_ROLES too) names the missing permission
    desk = Desk()
    assert desk.refusals(MANAGER, granting("studio", "Members", allow=("MANAGE_MESSAGES",))) == {}
    helper_general = granting("general", "Members", allow=("MANAGE_MESSAGES",))
    assert desk.refusals(HELPER, helper_general) == {
        "channels[0].overwrites[0]": "you do not hold MANAGE_MESSAGES there"
    }


def test_an_overwrite_denies_only_what_the_caller_holds_naming_each_missing_permission() -> None:
    desk = Desk()
    denying = granting("general", "Greeters", deny=("BAN_MEMBERS", "MANAGE_MESSAGES", "SEND_MESSAGES"))
    assert desk.refusals(HELPER, denying) == {
        "channels[0].overwrites[0]": "you do not hold BAN_MEMBERS, MANAGE_MESSAGES there"
    }


def test_an_overwrite_keeps_what_it_already_grants_beyond_the_caller() -> None:
    # Given lounge's overwrite giving Members MANAGE_MESSAGES, which the helper lacks, When the helper adds
    # SEND_MESSAGES to it, Then only the change is checked; When they add BAN_MEMBERS, Then only that is named
    desk = Desk()
    adding = granting("lounge", "Members", allow=("MANAGE_MESSAGES", "SEND_MESSAGES"))
    assert desk.refusals(HELPER, adding) == {}
    banning = granting("lounge", "Members", allow=("MANAGE_MESSAGES", "BAN_MEMBERS"))
    assert desk.refusals(HELPER, banning) == {"channels[0].overwrites[0]": "you do not hold BAN_MEMBERS there"}


# ---------------------------------------------------------------- what a role grants


def test_a_helper_recolours_a_role_below_them_without_a_permission_check() -> None:
    desk = Desk()
    assert desk.refusals(HELPER, {"roles": [{"name": "Greeters", "color": "#3498DB"}]}) == {}


def test_a_role_keeps_what_it_already_grants_beyond_the_caller() -> None:
    # Given Wardens holding BAN_MEMBERS, which the helper lacks, When the helper adds SEND_MESSAGES, Then it is not
    # refused; When they add KICK_MEMBERS, Then only that is named
    desk = Desk()
    assert desk.refusals(HELPER, {"roles": [role("Wardens", "BAN_MEMBERS", "SEND_MESSAGES")]}) == {}
    assert desk.refusals(HELPER, {"roles": [role("Wardens", "BAN_MEMBERS", "KICK_MEMBERS")]}) == {
        "roles[0].permissions": "you do not hold KICK_MEMBERS"
    }


def test_a_new_role_grants_only_what_the_caller_holds_even_the_first_permission() -> None:
    desk = Desk()
    assert desk.refusals(HELPER, {"roles": [role("Inviters", "CREATE_INSTANT_INVITE")]}) == {
        "roles[0].permissions": "you do not hold CREATE_INSTANT_INVITE"
    }


def test_everyones_grants_are_named_at_everyone_permissions() -> None:
    desk = Desk()
    assert desk.refusals(HELPER, {"everyone_permissions": ["VIEW_CHANNEL", "SEND_MESSAGES", "BAN_MEMBERS"]}) == {
        "everyone_permissions": "you do not hold BAN_MEMBERS"
    }


class Commons:
    """A server whose @everyone holds MANAGE_ROLES, Readers and Writers above it, and a member with no role."""

    def __init__(self) -> None:
        guild = GuildBuilder()
        everyone = guild.roles[0]
        granted = int(everyone.permissions) | int(to_bitfield(["MANAGE_ROLES"]))
        guild.roles[0] = everyone.model_copy(update={"permissions": str(granted)})
        guild.role("Readers")
        guild.role("Writers")
        self.live = guild.build().model_copy(update={"owner_id": OWNER})
        self.standing = standing_of(self.live, HELPER, [])

    def refusals(self, config: dict[str, Any]) -> dict[str, str]:
        plan = plan_deployment(self.live, ServerConfig.model_validate({"name": self.live.name, **config}))
        return {refusal.field: refusal.message for refusal in plan_refusals(self.standing, self.live, plan)}


def test_a_member_whose_manage_roles_is_everyones_may_change_everyone_below_every_role() -> None:
    assert Commons().refusals({"everyone_permissions": ["VIEW_CHANNEL", "MANAGE_ROLES"]}) == {}


def test_a_member_whose_manage_roles_is_everyones_moves_no_role_not_even_one_they_create() -> None:
    # Given a member whose highest role is @everyone, When their configuration swaps Readers and Writers and creates
    # Hosts at the bottom, Then every role of the reorder is above them: Hosts too, at position 1
    config = {"roles": [{"name": "Readers"}, {"name": "Writers"}, {"name": "Hosts"}]}
    assert Commons().refusals(config) == {
        "roles[0].position": f"cannot move Readers: {ONLY_BELOW_MOVE}",
        "roles[1].position": f"cannot move Writers: {ONLY_BELOW_MOVE}",
        "roles[2].position": f"cannot move a new role: {ONLY_BELOW_MOVE}",
    }


# ---------------------------------------------------------------- the role order


def test_without_manage_roles_a_reorder_is_refused_at_roles() -> None:
    desk = Desk()
    refusals = desk.refusals(MANAGER, {"roles": [role("Wardens", "BAN_MEMBERS"), role("Greeters", "SEND_MESSAGES")]})
    needs = "you need MANAGE_ROLES to create, change, reorder or delete roles"
    assert refusals == {"roles[0]": needs, "roles[1]": needs, "roles": needs}


def test_a_helper_reorders_the_roles_below_them_but_not_their_own_or_one_above() -> None:
    desk = Desk()
    below = {"roles": [role("Wardens", "BAN_MEMBERS"), role("Greeters", "SEND_MESSAGES")]}
    assert desk.refusals(HELPER, below) == {}
    # Members put below Helpers: both move at or above the helper's highest role (the roles below stand still)
    above = {"roles": [role("Helpers", "MANAGE_ROLES", "MANAGE_CHANNELS"), role("Members", "SEND_MESSAGES")]}
    assert desk.refusals(HELPER, above) == {
        "roles[0].position": f"cannot move Helpers: {ONLY_BELOW_MOVE}",
        "roles[1].position": f"cannot move Members: {ONLY_BELOW_MOVE}",
    }


def test_a_role_above_the_caller_both_changed_and_moved_is_one_detail_with_both_reasons() -> None:
    desk = Desk()
    config = {"roles": [role("Helpers", "MANAGE_ROLES", "MANAGE_CHANNELS"), role("Members", "SEND_MESSAGES", "SPEAK")]}
    assert desk.refusals(HELPER, config) == {
        "roles[0].position": f"cannot move Helpers: {ONLY_BELOW_MOVE}",
        "roles[1]": f"role 'Members' {NOT_BELOW}; cannot move Members: {ONLY_BELOW_MOVE}",
    }


def test_a_role_moved_to_the_callers_own_position_is_refused() -> None:
    # Given the administrator's highest role at 6, When Members goes to the top of the configuration, Then its move
    # to 6 is refused as the move of Admins down is
    desk = Desk()
    config = {"roles": [role("Members", "SEND_MESSAGES"), role("Admins", "ADMINISTRATOR"), role("Managers")]}
    assert desk.refusals(ADMIN, config) == {
        "roles[0].position": f"cannot move Members: {ONLY_BELOW_MOVE}",
        "roles[1].position": f"cannot move Admins: {ONLY_BELOW_MOVE}",
    }


def test_a_role_inserted_below_the_caller_lifts_their_own_role_without_refusing_it() -> None:
    # Given the administrator's exported configuration, When they insert Hosts between Managers and Members, Then
    # nothing is refused: the creation lifts Managers and Admins one place each, which moves neither
    standing, view, config = Desk().exported(ADMIN)
    assert [r.name for r in config.roles[:3]] == ["Admins", "Managers", "Members"]
    inserted = config.model_copy(update={"roles": [*config.roles[:2], ConfigRole(name="Hosts"), *config.roles[2:]]})
    plan = plan_deployment(view.live, inserted)
    assert [i.name for i in plan.items if i.kind == "role" and i.action != "keep"] == ["Admins", "Managers", "Hosts"]
    assert plan_refusals(standing, view.live, plan) == []


def test_a_new_role_put_above_the_caller_is_refused_by_its_position() -> None:
    desk = Desk()
    config = {"roles": [role("Hosts"), role("Members", "SEND_MESSAGES")]}
    assert desk.refusals(HELPER, config) == {
        "roles[0].position": f"cannot move a new role: {ONLY_BELOW_MOVE}",
        "roles[1].position": f"cannot move Members: {ONLY_BELOW_MOVE}",
    }


def test_a_prune_that_deletes_a_role_below_the_caller_lowers_their_own_without_moving_it() -> None:
    # Given the administrator's exported roles without Wardens (pruned) and with Helpers above Members, When they
    # deploy it, Then nothing is refused: the deletion lowers every role above Wardens one place, Admins too
    standing, view, config = Desk().exported(ADMIN)
    by_name = {r.name: r for r in config.roles}
    order = ["Admins", "Managers", "Helpers", "Members", "Greeters"]
    pruned = config.model_copy(update={"roles": [by_name[name] for name in order]})
    plan = within_reach(standing, view, plan_deployment(view.live, pruned, prune=True))
    assert [i.name for i in plan.items if i.kind == "role" and i.action == "delete"] == ["Wardens"]
    assert plan_refusals(standing, view.live, plan) == []


def test_a_prune_below_a_helper_still_refuses_a_move_to_their_own_place() -> None:
    desk = Desk()
    standing = standing_of(desk.live, HELPER, [desk.helpers])
    view = caller_view(desk.live, standing)
    config = ServerConfig.model_validate(
        {
            "name": desk.live.name,
            "roles": [role("Greeters", "SEND_MESSAGES"), role("Helpers", "MANAGE_ROLES", "MANAGE_CHANNELS")],
        }
    )
    plan = within_reach(standing, view, plan_deployment(view.live, config, prune=True))
    assert [i.name for i in plan.items if i.kind == "role" and i.action == "delete"] == ["Wardens"]
    refusals = {r.field: r.message for r in plan_refusals(standing, view.live, plan)}
    refusals.pop("channels")  # the prune deletes the channels too: workshop's delete is refused them
    assert refusals == {
        "roles[0].position": f"cannot move Greeters: {ONLY_BELOW_MOVE}",
        "roles[1].position": f"cannot move Helpers: {ONLY_BELOW_MOVE}",
    }


def test_a_reorder_of_roles_the_plan_does_not_name_refuses_each_at_roles_position() -> None:
    # Given a reorder without the roles' items (as a rollback restores an order), When it swaps Greeters and
    # Members across the helper's highest role, Then each is its own detail at the order's field
    desk = Desk()
    standing = standing_of(desk.live, HELPER, [desk.helpers])
    view = caller_view(desk.live, standing).live
    swap = ReorderRoles(
        positions=[RolePosition(ref=desk.greeters, position=4), RolePosition(ref=desk.members, position=2)]
    )
    plan = DeploymentPlan(items=[], steps=[swap], ids={})
    assert [(r.field, r.message) for r in plan_refusals(standing, view, plan)] == [
        ("roles.position", f"cannot move Greeters: {ONLY_BELOW_MOVE}"),
        ("roles.position", f"cannot move Members: {ONLY_BELOW_MOVE}"),
    ]


# ---------------------------------------------------------------- a move is an access change (v4)


class Vault:
    """Category Vault closed to @everyone and open to Keepers (MANAGE_CHANNELS, no MANAGE_ROLES) and Stewards
    (MANAGE_CHANNELS and MANAGE_ROLES), whose overwrite also gives Keepers MANAGE_MESSAGES there; `plans` in it
    carries the same overwrites, `notes` in it has its own."""

    def __init__(self) -> None:
        guild = GuildBuilder()
        self.keepers = guild.role("Keepers", "MANAGE_CHANNELS", "MANAGE_GUILD", "VIEW_CHANNEL")
        self.stewards = guild.role("Stewards", "MANAGE_CHANNELS", "MANAGE_ROLES", "MANAGE_GUILD", "VIEW_CHANNEL")
        private = [
            overwrite(GUILD_ID, deny=("VIEW_CHANNEL",)),
            overwrite(self.keepers, allow=("VIEW_CHANNEL", "MANAGE_MESSAGES")),
            overwrite(self.stewards, allow=("VIEW_CHANNEL",)),
        ]
        self.vault = guild.category("Vault", overwrites=private)
        self.plans = guild.channel("plans", parent=self.vault, overwrites=private)
        own = [overwrite(self.stewards, allow=("VIEW_CHANNEL", "SEND_MESSAGES"))]
        self.notes = guild.channel("notes", parent=self.vault, overwrites=own)
        self.live = guild.build().model_copy(update={"owner_id": OWNER})

    def refusals(self, role_id: str, *moved: str) -> dict[str, list[str]]:
        standing = standing_of(self.live, MANAGER, [role_id])
        view = caller_view(self.live, standing).live
        ids = {"plans": self.plans, "notes": self.notes}
        kept = [{"name": name, "id": ids[name]} for name in ids if name not in moved]
        config = ServerConfig.model_validate(
            {
                "name": self.live.name,
                "categories": [{"name": "Vault", "id": self.vault, "channels": kept}],
                "channels": [{"name": name, "id": ids[name]} for name in moved],
            }
        )
        plan = plan_deployment(view, config)
        found: dict[str, list[str]] = {}
        for refusal in plan_refusals(standing, view, plan):
            found.setdefault(refusal.field, []).append(refusal.message)
        return found


def test_moving_a_channel_out_of_its_private_category_is_checked_as_the_overwrite_changes_it_makes() -> None:
    vault = Vault()
    need = "you need MANAGE_ROLES (Manage Permissions) to change overwrites there"
    # Keepers lack MANAGE_ROLES: each of the three overwrites `plans` would leave behind is refused, one per object
    assert vault.refusals(vault.keepers, "plans") == {"channels[0].overwrites": [need, need, need]}
    # Stewards hold MANAGE_ROLES but not the MANAGE_MESSAGES the Keepers' overwrite allows: that one is refused
    assert vault.refusals(vault.stewards, "plans") == {
        "channels[0].overwrites": ["you do not hold MANAGE_MESSAGES there"]
    }


def test_a_channel_that_keeps_its_overwrites_on_a_move_says_nothing() -> None:
    vault = Vault()
    assert vault.refusals(vault.keepers, "notes") == {}
    standing = standing_of(vault.live, MANAGER, [vault.keepers])
    view = caller_view(vault.live, standing).live
    config = ServerConfig.model_validate(
        {
            "name": vault.live.name,
            "categories": [{"name": "Vault", "id": vault.vault, "channels": [{"name": "plans", "id": vault.plans}]}],
            "channels": [{"name": "notes", "id": vault.notes}],
        }
    )
    plan = plan_deployment(view, config)
    assert [i for i in plan.items if i.kind == "overwrite" and i.action != "keep"] == []


def test_a_whole_overwrite_list_a_step_writes_is_checked_per_overwrite_and_an_unnamed_object_is_named() -> None:
    # A rollback writes a channel's overwrites back whole: each one it adds, changes or removes is checked, and its
    # item (named by the rollback, not by a configuration path) leads the message
    desk = Desk()
    standing = standing_of(desk.live, MANAGER, [desk.managers])
    view = caller_view(desk.live, standing).live
    key = "channel:-:0:general"
    written = [overwrite(desk.wardens, allow=("BAN_MEMBERS",))]
    overwrite_item = PlanItem(
        kind="overwrite",
        name="general → Wardens",
        action="create",
        id=desk.general,
        field="",
        key=f"overwrite:{key}:{desk.wardens}",
        owner=key,
    )
    step = ChannelStep(
        op="update_channel",
        kind="channel",
        key=key,
        name="general",
        field="",
        channel_id=desk.general,
        payload={"permission_overwrites": written},
    )
    item = PlanItem(kind="channel", name="general", action="update", id=desk.general, field="", key=key)
    plan = DeploymentPlan(items=[item, overwrite_item], steps=[step], ids={})
    channel_refusal, refusal = plan_refusals(standing, view, plan)
    assert channel_refusal.message == "channel 'general': you need MANAGE_CHANNELS to update channel 'general'"
    assert (refusal.field, refusal.message) == (
        "overwrites",
        "overwrite 'general → Wardens': you need MANAGE_ROLES (Manage Permissions) to change overwrites there; "
        "you do not hold BAN_MEMBERS there",
    )
    # in studio, where Managers are given MANAGE_ROLES, only the bit they lack is refused
    studio_step = step.model_copy(update={"channel_id": desk.studio})
    studio_item = overwrite_item.model_copy(update={"id": desk.studio})
    plan = DeploymentPlan(items=[item.model_copy(update={"id": desk.studio}), studio_item], steps=[studio_step], ids={})
    assert [r.message for r in plan_refusals(standing, view, plan)] == [
        "overwrite 'general → Wardens': you do not hold BAN_MEMBERS there"
    ]


def test_a_step_without_items_is_checked_all_the_same_and_named_by_its_groups_path() -> None:
    # A step's overwrite writes are checked whatever items the plan shows: MANAGE_ROLES there, and each bit
    desk = Desk()
    standing = standing_of(desk.live, MANAGER, [desk.managers])
    view = caller_view(desk.live, standing).live
    step = ChannelStep(
        op="update_channel",
        kind="channel",
        key="overwrites:restore:general",
        name="general",
        field="",
        channel_id=desk.general,
        payload={"permission_overwrites": [overwrite(desk.wardens, allow=("BAN_MEMBERS",))]},
    )
    [refusal] = plan_refusals(standing, view, DeploymentPlan(items=[], steps=[step], ids={}))
    assert (refusal.field, refusal.message) == (
        "channels.overwrites",
        "you need MANAGE_ROLES (Manage Permissions) to change overwrites there; you do not hold BAN_MEMBERS there",
    )


def test_overwrites_for_two_new_roles_are_two_objects_each_with_the_bit_it_lacks() -> None:
    # Helpers hold MANAGE_ROLES and MANAGE_CHANNELS: a new channel's overwrites for two new roles are each refused
    # for the bit it allows that they lack, at its own path
    desk = Desk()
    config = {
        "roles": [role("Bans"), role("Kicks")],
        "channels": [
            {
                "name": "court",
                "overwrites": [
                    {"role": "Bans", "allow": ["BAN_MEMBERS"], "deny": []},
                    {"role": "Kicks", "allow": ["KICK_MEMBERS"], "deny": []},
                ],
            }
        ],
    }
    assert desk.refusals(HELPER, config) == {
        "channels[0].overwrites[0]": "you do not hold BAN_MEMBERS there",
        "channels[0].overwrites[1]": "you do not hold KICK_MEMBERS there",
    }


def test_an_overwrite_refused_for_its_permission_and_for_its_bits_is_one_object() -> None:
    desk = Desk()
    standing = standing_of(desk.live, MANAGER, [desk.managers])
    view = caller_view(desk.live, standing).live
    config = ServerConfig.model_validate(
        {"name": desk.live.name, **granting("lounge", "Members", allow=("MANAGE_MESSAGES", "BAN_MEMBERS"))}
    )
    refusals = [(r.field, r.message) for r in plan_refusals(standing, view, plan_deployment(view, config))]
    assert refusals == [
        (
            "channels[0].overwrites[0]",
            "you need MANAGE_ROLES (Manage Permissions) to change overwrites there; you do not hold BAN_MEMBERS there",
        )
    ]
