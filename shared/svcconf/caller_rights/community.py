"""What a caller may do to the plan's v4 objects, as the platform asks of a person: AutoMod rules, onboarding and the
welcome screen need MANAGE_GUILD, onboarding MANAGE_ROLES too, an AutoMod rule with a timeout action
MODERATE_MEMBERS; a role an onboarding option hands out must be strictly below the caller's highest role."""

from __future__ import annotations

from collections.abc import Iterator

from svcconf.caller_rights.standing import CallerStanding
from svcconf.config import PERMISSION_BITS
from svcconf.deploy_engine.community import REF
from svcconf.deploy_engine.live import LiveGuild
from svcconf.deploy_engine.steps import CommunityStep, DeploymentPlan, PlanItem

COMMUNITY_KINDS = frozenset({"automod_rule", "onboarding", "welcome_screen"})
MANAGE_GUILD = 1 << PERMISSION_BITS["MANAGE_GUILD"]
MANAGE_ROLES = 1 << PERMISSION_BITS["MANAGE_ROLES"]
MODERATE_MEMBERS = 1 << PERMISSION_BITS["MODERATE_MEMBERS"]
TIMEOUT = 3


def community_refusals(
    standing: CallerStanding, live: LiveGuild, plan: DeploymentPlan, item: PlanItem
) -> Iterator[tuple[str, str]]:
    """(field, reason) for each thing the platform would refuse the caller on this v4 item."""
    what = {"automod_rule": "AutoMod rules", "onboarding": "onboarding", "welcome_screen": "the welcome screen"}
    field = item.field or item.kind
    if not standing.holds(MANAGE_GUILD):
        yield field, f"you need MANAGE_GUILD to change {what[item.kind]}"
    steps = [s for s in plan.steps if isinstance(s, CommunityStep) and s.key == item.key]
    for step in steps:
        if step.op == "put_onboarding":
            if not standing.holds(MANAGE_ROLES):
                yield field, "you need MANAGE_ROLES to change onboarding"
            roles = {role.id: role for role in live.roles}
            handed = {r for p in step.payload.get("prompts", []) for o in p["options"] for r in o["role_ids"]}
            for role_id in sorted(handed):
                role = roles.get(role_id)
                if role is not None and not role_id.startswith(REF) and not standing.outranks(role):
                    yield field, f"role '{role.name}' is not below your highest role: an option cannot hand it out"
        timeouts = [a for a in step.payload.get("actions", []) if a.get("type") == TIMEOUT]
        if timeouts and not standing.holds(MODERATE_MEMBERS):
            yield f"{field}.actions", "you need MODERATE_MEMBERS for a timeout action"
