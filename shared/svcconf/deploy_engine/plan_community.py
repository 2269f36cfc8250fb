"""The deploy plan's v4 objects: role colours (in the roles' own requests), AutoMod rules, onboarding and the welcome
screen (after the channels and the settings, so the roles and channels they name exist).

- Colours: `colors` as the configuration says them where the guild has ENHANCED_ROLE_COLORS; elsewhere the primary
  colour alone, said in `warnings`, and compared alone (a re-deploy writes nothing).
- AutoMod rules by name: created, updated field by field, or (a changed trigger, which the platform cannot change)
  deleted and created; a rule the configuration leaves out is deleted only with `prune` (and, for a confirmed plan,
  only if that plan listed it). Deletions go first, so the per-trigger maxima have room.
- Onboarding and the welcome screen are one object each: an `update` with the fields that differ.
What the configuration leaves out (`automod`, `onboarding` or `welcome_screen` absent) is left as the server has it,
and so is what the bot could not read (`LiveGuild` holds None), and every reference of these objects to a channel the
caller cannot view (`hidden_refs.py`): they could not name it, so leaving it out removes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from svcconf.chat.community import GuildOnboarding
from svcconf.config import EVERYONE
from svcconf.config.lint import LintWarning
from svcconf.deploy_engine.community import (
    REF,
    field_of,
    onboarding_body,
    onboarding_config,
    onboarding_differences,
    rule_body,
    rule_config,
    rule_differences,
    welcome_body,
    welcome_config,
    welcome_differences,
)
from svcconf.deploy_engine.hidden_refs import onboarding_keeping_hidden, rule_keeping_hidden, welcome_keeping_hidden
from svcconf.deploy_engine.matching import config_channel_key, placed_channels
from svcconf.deploy_engine.plan_state import PlanState
from svcconf.deploy_engine.steps import Change, CommunityStep, PlanItem, role_key

if TYPE_CHECKING:
    from collections.abc import Collection

    from svcconf.config import Role as ConfigRole
    from svcconf.deploy_engine.live import LiveGuild

ENHANCED_ROLE_COLORS = "ENHANCED_ROLE_COLORS"
ONBOARDING_KEY = "onboarding"
WELCOME_KEY = "welcome_screen"


def role_colours(live: LiveGuild, warnings: list[LintWarning], field: str, role: ConfigRole) -> dict[str, Any]:
    """What a role's request says of its colours (`colors`; its primary is `color`, stated by the schema)."""
    if role.colors is None:
        return {}
    wanted = role.colors.platform()
    if not role.colors.is_plain() and ENHANCED_ROLE_COLORS not in live.features:
        message = (
            f"role '{role.name}': this server lacks the feature {ENHANCED_ROLE_COLORS}, so it gets its primary colour"
            " only"
        )
        warnings.append(LintWarning(field=f"{field}.colors", rule="gradient-unavailable", message=message))
        wanted = {"primary_color": role.colors.primary, "secondary_color": None, "tertiary_color": None}
    return {"colors": wanted}


def automod_key(name: str) -> str:
    return f"automod:{name.casefold()}"


class CommunityPlanner(PlanState):
    """The planner's v4 phase (and the roles' colours)."""

    prune: bool = False
    confirmed_deletes: Collection[str] | None = None

    # -- references --------------------------------------------------------------------------------------------------

    def _role_ref(self, name: str) -> str:
        if name == EVERYONE:
            return self.live.everyone.id
        key = role_key(name)
        return self.ids.get(key, REF + key)

    def _channel_ref(self, name: str) -> str:
        found = self.config.find_channels(name)
        for _field, category, channel in placed_channels(self.config):
            if found and channel is found[0]:
                key = config_channel_key(category.name if category else None, channel)
                return self.ids.get(key, REF + key)
        return REF + name  # the schema makes every name one of the configuration's

    def _names(self) -> tuple[dict[str, str], dict[str, str]]:
        """Live ids -> names, to show live values in the configuration's words."""
        roles = {role.id: role.name for role in self.live.roles}
        roles[self.live.everyone.id] = EVERYONE
        return roles, {channel.id: channel.name or "" for channel in self.live.channels}

    # -- the objects -------------------------------------------------------------------------------------------------

    def _community(self) -> None:
        self._automod()
        self._onboarding()
        self._welcome_screen()

    def _automod(self) -> None:
        rules = self.config.automod
        if rules is None:
            return
        live_rules = self.live.automod_rules or []  # unread: the bot lacks MANAGE_GUILD, which the preflight says
        role_names, channel_names = self._names()
        by_name = {rule.name.casefold(): rule for rule in live_rules}
        wanted_names = {rule.name.casefold() for rule in rules}
        deletes: list[CommunityStep] = []
        writes: list[CommunityStep] = []
        for live in live_rules:
            if live.name.casefold() in wanted_names:
                continue
            key = automod_key(live.name)
            confirmed = self.confirmed_deletes is None or live.id in self.confirmed_deletes
            if self.prune and confirmed:
                note = "AutoMod stops applying this rule"
                self.items.append(
                    PlanItem(
                        kind="automod_rule", name=live.name, action="delete", id=live.id, field="", key=key, note=note
                    )
                )
                deletes.append(
                    CommunityStep(
                        op="delete_automod_rule", kind="automod_rule", key=key, name=live.name, object_id=live.id
                    )
                )
        for index, rule in enumerate(rules):
            key, field = automod_key(rule.name), f"automod[{index}]"
            body = rule_body(rule, self._role_ref, self._channel_ref)
            found = by_name.get(rule.name.casefold())
            if found is not None:  # what the caller cannot see of it stays as the server has it
                body = rule_keeping_hidden(body, found, self.live.hidden_channel_ids)
            if found is not None and found.trigger_type != body["trigger_type"]:
                # The platform cannot change a rule's trigger: the old rule goes, a new one comes.
                note = "its trigger changes: the rule is deleted and created again"
                self.items.append(
                    PlanItem(
                        kind="automod_rule",
                        name=found.name,
                        action="delete",
                        id=found.id,
                        field=field,
                        key=f"{key}:old",
                        note=note,
                    )
                )
                deletes.append(
                    CommunityStep(
                        op="delete_automod_rule",
                        kind="automod_rule",
                        key=f"{key}:old",
                        name=found.name,
                        object_id=found.id,
                    )
                )
                found = None
            if found is None:
                self.items.append(PlanItem(kind="automod_rule", name=rule.name, action="create", field=field, key=key))
                writes.append(
                    CommunityStep(
                        op="create_automod_rule",
                        kind="automod_rule",
                        key=key,
                        name=rule.name,
                        field=field,
                        payload=body,
                    )
                )
                continue
            self.ids[key] = found.id
            differ = rule_differences(body, found)
            old = rule_config(found, role_names, channel_names)
            new = rule.model_dump(mode="json", exclude_none=True)
            shown = dict.fromkeys(field_of(k) for k in differ)
            changes = [Change(field=name, old=old.get(name), new=new.get(name)) for name in shown]
            action = "update" if changes else "keep"
            self.items.append(
                PlanItem(
                    kind="automod_rule",
                    name=rule.name,
                    action=action,
                    id=found.id,
                    changes=changes,
                    field=field,
                    key=key,
                )
            )
            if differ:
                payload = {k: body[k] for k in differ if k in body}
                metadata = {k: body["trigger_metadata"][k] for k in differ if k in body["trigger_metadata"]}
                if metadata:
                    payload["trigger_metadata"] = {**found.trigger_metadata, **metadata}
                previous = found.model_dump(include={*payload})
                writes.append(
                    CommunityStep(
                        op="update_automod_rule",
                        kind="automod_rule",
                        key=key,
                        name=rule.name,
                        field=field,
                        object_id=found.id,
                        payload=payload,
                        previous=previous,
                    )
                )
        self.steps += [*deletes, *writes]

    def _onboarding(self) -> None:
        onboarding = self.config.onboarding
        if onboarding is None:
            return
        live = self.live.onboarding or GuildOnboarding(guild_id=self.live.id)  # unread: as the preflight says
        body = onboarding_body(onboarding, live, self._role_ref, self._channel_ref)
        body = onboarding_keeping_hidden(body, live, self.live.hidden_channel_ids)
        differ = onboarding_differences(body, live)
        role_names, channel_names = self._names()
        old = onboarding_config(live, role_names, channel_names)
        new = onboarding.model_dump(mode="json", exclude_none=True)
        names = {"default_channel_ids": "default_channels"}
        changes = [Change(field=names.get(k, k), old=old[names.get(k, k)], new=new[names.get(k, k)]) for k in differ]
        action = "update" if changes else "keep"
        field = ONBOARDING_KEY
        self.items.append(
            PlanItem(
                kind="onboarding", name="onboarding", action=action, changes=changes, field=field, key=ONBOARDING_KEY
            )
        )
        if differ:
            previous = live.model_dump(exclude={"guild_id"})
            self.steps.append(
                CommunityStep(
                    op="put_onboarding",
                    kind="onboarding",
                    key=ONBOARDING_KEY,
                    name="onboarding",
                    field=field,
                    payload=body,
                    previous=previous,
                )
            )

    def _welcome_screen(self) -> None:
        screen, live = self.config.welcome_screen, self.live.welcome_screen
        if screen is None:
            return
        if live is None:  # not a Community server (the preflight says so), or not readable
            self.items.append(
                PlanItem(
                    kind="welcome_screen", name="welcome screen", action="create", field=WELCOME_KEY, key=WELCOME_KEY
                )
            )
            self.steps.append(
                CommunityStep(
                    op="modify_welcome_screen",
                    kind="welcome_screen",
                    key=WELCOME_KEY,
                    name="welcome screen",
                    field=WELCOME_KEY,
                    payload=welcome_body(screen, self._channel_ref),
                )
            )
            return
        enabled = "WELCOME_SCREEN_ENABLED" in self.live.features
        body = welcome_keeping_hidden(welcome_body(screen, self._channel_ref), live, self.live.hidden_channel_ids)
        differ = welcome_differences(body, live, enabled)
        _, channel_names = self._names()
        old = welcome_config(live, enabled, channel_names)
        new = screen.model_dump(mode="json", exclude_none=True)
        names = {"welcome_channels": "channels"}
        changes = [
            Change(field=names.get(k, k), old=old.get(names.get(k, k)), new=new.get(names.get(k, k))) for k in differ
        ]
        action = "update" if changes else "keep"
        self.items.append(
            PlanItem(
                kind="welcome_screen",
                name="welcome screen",
                action=action,
                changes=changes,
                field=WELCOME_KEY,
                key=WELCOME_KEY,
            )
        )
        if differ:
            previous = {"enabled": enabled, **live.model_dump()}
            payload = {k: body[k] for k in differ}
            self.steps.append(
                CommunityStep(
                    op="modify_welcome_screen",
                    kind="welcome_screen",
                    key=WELCOME_KEY,
                    name="welcome screen",
                    field=WELCOME_KEY,
                    payload=payload,
                    previous=previous,
                )
            )
