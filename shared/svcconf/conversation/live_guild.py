"""svcAiChat on a live guild (`guild_id`, docs/06-ai.md): the guild read once per turn as the caller sees it, the
configuration the conversation starts from, what the bot and the caller may grant there (told to the model), and
for each answer what a deploy with `prune` would do with it: the plan, its `plan_id`, and the problems the deploy
would refuse (its preflight, and what the platform would refuse the caller: docs/05-deploy-engine.md).

Loaded for turns on a live guild only (the deploy engine is not every svcAiChat cold start's to pay).
"""

from __future__ import annotations

from typing import Any

from svcconf import caller_rights
from svcconf.api.auth import BearerUser
from svcconf.caller_rights import CallerStanding, CallerView
from svcconf.caller_rights.grants import GrantNotAcknowledged
from svcconf.config import ALL_PERMISSIONS, LintWarning, ServerConfig, from_bitfield
from svcconf.conversation.models import GuildReview
from svcconf.deploy_engine.export import export_config
from svcconf.deploy_engine.plan import plan_deployment
from svcconf.deploy_engine.preflight import preflight_problems
from svcconf.deploy_engine.steps import DeploymentPlan
from svcconf.deployments.export_import import managed_live_guild
from svcconf.deployments.requests import plan_warnings
from svcconf.errors import BadRequest, FieldError

# The preflight names fields in a deploy request's body; svcAiChat's are the configuration's own (as `changes`).
_REQUEST_PREFIX = "config."


class LiveGuildTurn:
    """One turn's view of the live guild: read once, then every configuration of the turn is checked against it."""

    def __init__(self, standing: CallerStanding, view: CallerView):
        self.standing = standing
        self.view = view
        self.live = view.live  # the channels the caller cannot view left out
        self._as_it_is: ServerConfig | None = None
        self._reviewed: tuple[ServerConfig, GuildReview, DeploymentPlan | None] | None = None

    def starting_config(self, current_config: dict[str, Any] | None) -> dict[str, Any] | None:
        """The caller's configuration, or the guild itself (with its ids) when there is none."""
        if current_config is not None:
            return current_config
        return self.as_it_is().model_dump(mode="json", exclude_none=True)  # what is unset is not sent on

    def as_it_is(self) -> ServerConfig:
        if self._as_it_is is None:
            self._as_it_is = export_config(self.live, self.live.settings).config
        return self._as_it_is

    def grants(self) -> dict[str, Any]:
        """What the bot and the caller may do on this server, as the model is told it: a deploy grants only what
        both hold, and changes only roles below both their highest roles."""
        live, standing = self.live, self.standing
        roles = [role for role in live.roles if not role.is_everyone(live.id)]
        caller_top = max((r for r in roles if r.id in standing.role_ids), key=lambda r: r.position, default=None)
        return {
            "server": live.name,
            "features": sorted(live.features),
            "bot_permissions": _permission_names(live.bot_permissions),
            "bot_highest_role": live.bot_top_role_name,
            "roles_the_bot_cannot_change": [role.name for role in roles if not live.bot_can_edit(role)],
            "user_is_owner": standing.owner,
            "user_permissions": _permission_names(standing.permissions),
            "user_highest_role": caller_top.name if caller_top else "@everyone",
            "roles_the_user_cannot_change": [role.name for role in roles if not standing.outranks(role)],
        }

    def review(self, config: ServerConfig | None) -> GuildReview:
        """The plan of deploying `config` here with `prune`, and what that deploy would refuse (`[]`: it would pass)."""
        if config is None:
            return GuildReview(plan=None, problems=[])
        if self._reviewed is not None and self._reviewed[0] is config:
            return self._reviewed[1]
        plan: DeploymentPlan | None = None
        try:
            plan = self._plan(config)
        except BadRequest as refused:  # names an object twice: a deploy refuses it before planning
            review = GuildReview(plan=None, problems=[_in_config(p) for p in refused.details or []])
        else:
            problems = [_in_config(problem) for problem in self._problems(config, plan)]
            review = GuildReview(plan=plan.items, plan_id=plan.plan_id, problems=problems)
        self._reviewed = (config, review, plan)
        return review

    def warnings(self, config: ServerConfig | None) -> list[LintWarning]:
        """What the dry run would warn of besides the lint: what the plan keeps and deletes (the members holding
        each deleted role, read from the platform), and the channels the caller cannot view."""
        self.review(config)
        plan = self._reviewed[2] if self._reviewed is not None else None
        return [*(plan_warnings(plan) if plan is not None else []), *self.view.hidden_warnings()]

    def _plan(self, config: ServerConfig) -> DeploymentPlan:
        # As the dry run plans it with `prune`: what the conversation removed is deleted there, within the caller's
        # reach, so the plan_id is the one a deploy's `confirm` takes.
        return caller_rights.within_reach(self.standing, self.view, plan_deployment(self.live, config, prune=True))

    def _problems(self, config: ServerConfig, plan: DeploymentPlan) -> list[FieldError]:
        """What the deploy would refuse, in the order it checks: what cannot work at all (409), what the platform
        would refuse the caller (403), the dangerous grants it needs acknowledged (409)."""
        problems = [
            *preflight_problems(self.live, plan),
            *caller_rights.plan_refusals(self.standing, self.live, plan),
        ]
        try:
            caller_rights.require_acknowledged(config, [], self.live, plan.ids)
        except GrantNotAcknowledged as grants:
            problems += grants.details or []
        return problems


def open_guild_turn(user: BearerUser, guild_id: str) -> LiveGuildTurn:
    """The guild read as a deploy reads it: the caller manages it (403), the bot is in it (409 with the link)."""
    return LiveGuildTurn(*managed_live_guild(user, guild_id))


def _permission_names(bits: int) -> list[str] | str:
    return "ALL (ADMINISTRATOR or owner)" if bits & ALL_PERMISSIONS == ALL_PERMISSIONS else from_bitfield(bits)


def _in_config(problem: FieldError) -> FieldError:
    return problem.model_copy(update={"field": problem.field.removeprefix(_REQUEST_PREFIX)})
