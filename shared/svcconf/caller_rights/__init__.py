"""What a caller may do to a server: the platform's own rules for people, applied before the bot acts for them.

The bot holds more power than most of the people who use it; through the service a caller does to a server exactly
what the platform's client would let them do themselves (docs/05-deploy-engine.md, "What a caller may do"):
- `standing`: the caller's roles and permissions, read through the bot once per request, and the guild as they
  see it (channels they cannot view left out, counted in a `hidden-channels` warning);
- `checks`: per object of a plan, the permission, the role hierarchy and what it grants;
- `grants`: dangerous grants to every member need `acknowledge`.
The request modules call `as_caller` and `check_plan`; the worker calls `plan_as_caller` when a deployment starts
or resumes.

May import: the foundation (errors, settings, clock, observability) and chat, config, deploy_engine.
"""

from __future__ import annotations

from collections.abc import Callable

from svcconf.caller_rights.checks import MANAGE_GUILD, MANAGE_ROLES, plan_refusals
from svcconf.caller_rights.grants import DANGEROUS_GRANT_RULES, dangerous_grants, require_acknowledged
from svcconf.caller_rights.standing import (
    HIDDEN_CHANNELS_RULE,
    CallerStanding,
    CallerView,
    NotAMember,
    caller_view,
    read_standing,
    standing_of,
)
from svcconf.chat import ChatClient
from svcconf.config import LintWarning, ServerConfig
from svcconf.deploy_engine.apply import DeploymentAborted
from svcconf.deploy_engine.live import LiveGuild
from svcconf.deploy_engine.steps import DeleteStep, DeploymentPlan
from svcconf.errors import FieldError, Forbidden

__all__ = [
    "DANGEROUS_GRANT_RULES",
    "HIDDEN_CHANNELS_RULE",
    "CallerMayNot",
    "CallerStanding",
    "CallerView",
    "NotAMember",
    "as_caller",
    "caller_problems",
    "caller_view",
    "check_plan",
    "dangerous_grants",
    "plan_as_caller",
    "plan_refusals",
    "read_standing",
    "require_acknowledged",
    "standing_of",
    "within_reach",
]


class CallerMayNot(Forbidden):
    default_message = "You may not make some of these changes in this server."


def as_caller(client: ChatClient, live: LiveGuild, chat_user_id: str) -> tuple[CallerStanding, CallerView]:
    """The caller's standing, read now, and the guild as they see it."""
    standing = read_standing(client, live, chat_user_id)
    return standing, caller_view(live, standing)


def within_reach(standing: CallerStanding, view: CallerView, plan: DeploymentPlan) -> DeploymentPlan:
    """The plan as this caller may make it, theirs (its `plan_id` covers their chat user id): a pruning plan never
    deletes a role at or above the caller's highest: it keeps it with a warning, as it keeps one above the bot's (a
    caller without MANAGE_ROLES is refused every role delete by `check_plan` instead)."""
    plan = plan.model_copy(update={"caller_id": standing.user_id})
    if standing.owner or not standing.holds(MANAGE_ROLES):
        return plan
    roles = {role.id: role for role in view.live.roles}
    above = {
        item.key: roles[item.id].name
        for item in plan.deletes()
        if item.kind == "role" and item.id in roles and not standing.outranks(roles[item.id])
    }
    if not above:
        return plan
    kept = [
        LintWarning(field="roles", rule="kept", message=f"role '{name}' is kept: it is not below your highest role")
        for name in above.values()
    ]
    return plan.model_copy(
        update={
            "items": [item for item in plan.items if not (item.action == "delete" and item.key in above)],
            "steps": [step for step in plan.steps if not (isinstance(step, DeleteStep) and step.key in above)],
            "warnings": [*plan.warnings, *kept],
        }
    )


def check_plan(standing: CallerStanding, view: CallerView, plan: DeploymentPlan) -> None:
    """403 with one detail per object of the plan the caller may not change; nothing is written then."""
    refusals = plan_refusals(standing, view.live, plan)
    if refusals:
        noun = "object" if len(refusals) == 1 else "objects"
        raise CallerMayNot(
            f"You may not make these changes in this server: {len(refusals)} {noun} the chat platform would refuse "
            "you in its own client.",
            details=refusals,
        )


def caller_problems(
    standing: CallerStanding, view: CallerView, plan: DeploymentPlan, config: ServerConfig
) -> list[FieldError]:
    """Everything a deploy of this plan would be refused for the caller's sake, as one list (svcAiChat's
    `problems`): objects they may not change and dangerous grants (with their rule). A channel hidden from them is
    no problem: the plan, made in their view, does not see it (v4: naming one is naming nothing)."""
    grants = [FieldError(field=w.field, rule=w.rule, message=w.message) for w in dangerous_grants(config)]
    return [*plan_refusals(standing, view.live, plan), *grants]


def plan_as_caller[T](
    client: ChatClient, chat_user_id: str, live: LiveGuild, planner: Callable[[LiveGuild], tuple[DeploymentPlan, T]]
) -> tuple[DeploymentPlan, T]:
    """The worker's plan, made as the caller sees the guild now and checked against their standing now: rights lost
    since the request (or the caller gone) end the deployment with the reason before it writes anything more."""
    try:
        standing = read_standing(client, live, chat_user_id)
    except NotAMember as gone:
        raise DeploymentAborted("The person who asked for this deployment left the server.") from gone
    if not standing.holds(MANAGE_GUILD):
        raise DeploymentAborted("The person who asked for this deployment no longer manages the server.")
    view = caller_view(live, standing)
    plan, extra = planner(view.live)
    plan = within_reach(standing, view, plan)
    refusals = plan_refusals(standing, view.live, plan)
    if refusals:
        reasons = "; ".join(f"{refusal.field}: {refusal.message}" for refusal in refusals)
        # Either their rights changed or someone changed the server so the plan now reaches beyond them: a person's
        # change wins, and the deployment stops before writing over it.
        raise DeploymentAborted(
            "Since the deployment was asked for, your rights or the server changed, and what it must now do is "
            f"beyond your rights: {reasons}."
        )
    return plan, extra
