"""svcAiChat on a live guild (`guild_id`, docs/06-ai.md): the guild read once per turn, the configuration the
conversation starts from, what the bot may grant there (told to the model), and for each answer what a deploy
would do with it: the plan, its `plan_id`, and the problems the preflight would refuse.

Loaded for turns on a live guild only (the deploy engine is not every svcAiChat cold start's to pay).
"""

from __future__ import annotations

from typing import Any

from svcconf.ai_chat import GuildReview
from svcconf.auth import BearerUser
from svcconf.config import ServerConfig, from_bitfield
from svcconf.deploy_engine.export import export_config
from svcconf.deploy_engine.live import ADMINISTRATOR, LiveGuild
from svcconf.deploy_engine.plan import plan_deployment
from svcconf.deploy_engine.preflight import preflight_problems
from svcconf.errors import BadRequest, FieldError
from svcconf.guild_configs import managed_live_guild

# The preflight names fields in a deploy request's body; svcAiChat's are the configuration's own (as `changes`).
_REQUEST_PREFIX = "config."


class LiveGuildTurn:
    """One turn's view of the live guild: read once, then every configuration of the turn is checked against it."""

    def __init__(self, live: LiveGuild):
        self.live = live
        self._reviewed: tuple[ServerConfig, GuildReview] | None = None

    def starting_config(self, current_config: dict[str, Any] | None) -> dict[str, Any] | None:
        """The caller's configuration, or the guild itself (with its ids) when there is none."""
        if current_config is not None:
            return current_config
        exported = export_config(self.live, self.live.settings)
        return exported.config.model_dump(mode="json", exclude_none=True)  # what is unset is not sent on

    def grants(self) -> dict[str, Any]:
        """What the bot may do on this server, as the model is told it: a deploy can only grant what the bot
        holds, and only change roles below the bot's highest."""
        live = self.live
        held = "ALL (ADMINISTRATOR)" if live.bot_permissions & ADMINISTRATOR else from_bitfield(live.bot_permissions)
        fixed = [role.name for role in live.roles if not role.is_everyone(live.id) and not live.bot_can_edit(role)]
        return {
            "server": live.name,
            "bot_permissions": held,
            "bot_highest_role": live.bot_top_role_name,
            "roles_the_bot_cannot_change": fixed,
            "features": sorted(live.features),
        }

    def review(self, config: ServerConfig | None) -> GuildReview:
        """The plan of deploying `config` here, and what the deploy would refuse (`[]`: it would pass)."""
        if config is None:
            return GuildReview(plan=None, problems=[])
        if self._reviewed is not None and self._reviewed[0] is config:
            return self._reviewed[1]
        try:
            # As a deploy with `prune` would run it: what the conversation removed is deleted there.
            plan = plan_deployment(self.live, config, prune=True)
        except BadRequest as refused:  # names an object twice: a deploy refuses it before planning
            review = GuildReview(plan=None, problems=[_in_config(p) for p in refused.details or []])
        else:
            problems = preflight_problems(self.live, plan)
            review = GuildReview(plan=plan.items, plan_id=plan.plan_id, problems=[_in_config(p) for p in problems])
        self._reviewed = (config, review)
        return review


def open_guild_turn(user: BearerUser, guild_id: str) -> LiveGuildTurn:
    """The guild, read as a deploy reads it: the caller manages it (403), the bot is in it (409 with the link)."""
    return LiveGuildTurn(managed_live_guild(user, guild_id))


def _in_config(problem: FieldError) -> FieldError:
    return problem.model_copy(update={"field": problem.field.removeprefix(_REQUEST_PREFIX)})
