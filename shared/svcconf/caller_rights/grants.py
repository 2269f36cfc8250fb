"""Dangerous grants need an acknowledgement: a configuration that gives @everyone (its server-wide permissions or an
overwrite) or every role (of two or more) a dangerous permission (the lint's list, docs/05-deploy-engine.md) is
deployed only when the request names those lint rules in `acknowledge`. v4: a role an onboarding option hands out
counts as granted to @everyone (anyone who joins may pick it).

An AI answer steered by a prompt or an attachment, or an imported public template, can carry such a grant without
anyone having asked for it; the dry run shows the lint's findings as warnings, svcAiChat as `problems`.

Compared per permission and per matched object (docs/05-deploy-engine.md): what the server already grants on the same
object (@everyone's base permissions; the same category's or channel's @everyone overwrite; every configured role,
each matched to a live role that holds it; a role the server's onboarding already hands out, holding it) needs none,
whatever else the server grants; the same grant on another object, or on a new one, does. The refusal names exactly
the permissions that are new there.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

from svcconf.config import Overwrite, ServerConfig, lint_config
from svcconf.config.lint import DANGEROUS_PERMISSIONS, LintWarning
from svcconf.config.permissions import ADMINISTRATOR, from_bitfield
from svcconf.config.roles import EVERYONE
from svcconf.deploy_engine.live import LiveGuild
from svcconf.deploy_engine.matching import config_channel_key
from svcconf.deploy_engine.steps import category_key, role_key
from svcconf.errors import Conflict, FieldError

# The lint's rules that find a dangerous permission given to every member.
EVERYONE_BASE, EVERYONE_OVERWRITE, EVERY_ROLE, ONBOARDING_ROLE = (
    "everyone-permissions-dangerous",
    "everyone-dangerous-permission",
    "every-role-dangerous-permission",
    "onboarding-dangerous-role",
)
DANGEROUS_GRANT_RULES = frozenset({EVERYONE_BASE, EVERYONE_OVERWRITE, EVERY_ROLE, ONBOARDING_ROLE})


class GrantNotAcknowledged(Conflict):
    default_message = "The configuration gives every member dangerous permissions: name the rules in acknowledge."


def dangerous_grants(config: ServerConfig) -> list[LintWarning]:
    """The lint's findings of dangerous permissions given to every member (svcAiChat's `problems` use these too)."""
    return [warning for warning in lint_config(config) if warning.rule in DANGEROUS_GRANT_RULES]


def _dangerous(names: Iterable[str]) -> list[str]:
    """The dangerous permissions among `names`, in the lint's order; ADMINISTRATOR holds every one of them."""
    held = set(names)
    if ADMINISTRATOR in held:
        return list(DANGEROUS_PERMISSIONS)
    return [name for name in DANGEROUS_PERMISSIONS if name in held]


def _new(granted: Iterable[str], held: Iterable[str]) -> list[str]:
    """What `granted` gives that `held` does not: ADMINISTRATOR alone when it is new (it says it all)."""
    granted, held_now = set(granted), set(_dangerous(held))
    if ADMINISTRATOR in granted and ADMINISTRATOR not in held_now:
        return [ADMINISTRATOR]
    return [name for name in _dangerous(granted) if name not in held_now]


def _listing(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def new_grants(config: ServerConfig, live: LiveGuild | None, ids: Mapping[str, str]) -> list[FieldError]:
    """Each dangerous grant to every member that the server does not already make on the same object, one detail
    per object naming exactly the permissions that are new there. `ids`: the plan's configuration key -> the live
    id it matched (none for what it creates); `live` None: nothing is granted yet."""
    return list(_new_grants(config, live, ids))


def _new_grants(config: ServerConfig, live: LiveGuild | None, ids: Mapping[str, str]) -> Iterator[FieldError]:
    held = from_bitfield(live.everyone.permissions) if live is not None else []
    new = _new(config.everyone_permissions or [], held)
    # What @everyone holds server-wide once deployed: an overwrite or every role granting it gives no member anything
    # (held already, or named on everyone_permissions above).
    base = set(_dangerous(held if config.everyone_permissions is None else config.everyone_permissions))
    if new:
        yield FieldError(
            field="everyone_permissions",
            rule=EVERYONE_BASE,
            message=f"@everyone's server-wide permissions would gain {_listing(new)}, which every member would then "
            "hold: grant a staff role instead.",
        )
    channels = {channel.id: channel for channel in live.channels} if live is not None else {}
    for loc, key, place, overwrites in _places(config):
        found = next(((index, o) for index, o in enumerate(overwrites) if o.role == EVERYONE), None)
        if found is None:
            continue
        index, overwrite = found
        channel = channels.get(ids.get(key, ""))
        everyone = live.id if live is not None else ""
        current = next((o for o in channel.permission_overwrites if o.id == everyone), None) if channel else None
        new = [p for p in _new(overwrite.allow, from_bitfield(current.allow) if current else []) if p not in base]
        if new:
            yield FieldError(
                field=f"{loc}.overwrites[{index}].allow",
                rule=EVERYONE_OVERWRITE,
                message=f"On {place}, @everyone would be allowed {_listing(new)}, which it is not allowed there now, "
                "so every member would get it: allow a staff role instead.",
            )
    yield from _every_role(config, live, ids, base)
    yield from _onboarding_roles(config, live, ids, base)


def _every_role(
    config: ServerConfig, live: LiveGuild | None, ids: Mapping[str, str], base: set[str]
) -> Iterator[FieldError]:
    if len(config.roles) < 2:
        return
    common = set(DANGEROUS_PERMISSIONS)
    for role in config.roles:
        common &= set(_dangerous(role.permissions))
    if not common:
        return
    roles = {role.id: role for role in live.roles} if live is not None else {}
    held = set(DANGEROUS_PERMISSIONS)  # what every matched role already holds
    for role in config.roles:
        found = roles.get(ids.get(role_key(role.name), ""))
        held &= set(_dangerous(from_bitfield(found.permissions))) if found is not None else set()
    new = [name for name in DANGEROUS_PERMISSIONS if name in common and name not in held and name not in base]
    if ADMINISTRATOR in new:
        new = [ADMINISTRATOR]
    if new:
        yield FieldError(
            field="roles",
            rule=EVERY_ROLE,
            message=f"All {len(config.roles)} roles of this configuration would grant {_listing(new)}, which not "
            "every one of them grants now, so every member with any role would hold it: keep it to trusted staff.",
        )


def _onboarding_roles(
    config: ServerConfig, live: LiveGuild | None, ids: Mapping[str, str], base: set[str]
) -> Iterator[FieldError]:
    """Each role an onboarding option hands out with a dangerous permission that the server's onboarding does not
    already hand out with it (the same live role, in any of its options), once per role."""
    if config.onboarding is None:
        return
    roles = {role.name: role for role in config.roles}
    handed_now = (
        {r for p in live.onboarding.prompts for o in p.options for r in o.role_ids}
        if live and live.onboarding
        else set()
    )
    live_roles = {role.id: role for role in live.roles} if live is not None else {}
    seen: set[str] = set()
    for p, prompt in enumerate(config.onboarding.prompts):
        for o, option in enumerate(prompt.options):
            for n, name in enumerate(option.roles):
                role = roles.get(name)
                if role is None or name in seen:
                    continue
                seen.add(name)
                live_id = ids.get(role_key(name), "")
                found = live_roles.get(live_id) if live_id in handed_now else None
                held = from_bitfield(found.permissions) if found is not None else []
                new = [permission for permission in _new(role.permissions, held) if permission not in base]
                if new:
                    yield FieldError(
                        field=f"onboarding.prompts[{p}].options[{o}].roles[{n}]",
                        rule=ONBOARDING_ROLE,
                        message=f"Onboarding would hand out role '{name}', which grants {_listing(new)}: anyone who "
                        "joins may pick it, as if @everyone held it; hand out a role without them.",
                    )


def _places(config: ServerConfig) -> Iterator[tuple[str, str, str, list[Overwrite]]]:
    for c, category in enumerate(config.categories):
        yield f"categories[{c}]", category_key(category.name), f"category '{category.name}'", category.overwrites
        for n, channel in enumerate(category.channels):
            key = config_channel_key(category.name, channel)
            place = f"channel '{channel.name}' in category '{category.name}'"
            yield f"categories[{c}].channels[{n}]", key, place, channel.overwrites
    for n, channel in enumerate(config.channels):
        yield f"channels[{n}]", config_channel_key(None, channel), f"channel '{channel.name}'", channel.overwrites


def require_acknowledged(
    config: ServerConfig,
    acknowledge: Iterable[str],
    live: LiveGuild | None = None,
    ids: Mapping[str, str] | None = None,
) -> None:
    """409 with one detail per object whose new dangerous grant's rule `acknowledge` does not name. What the server
    already grants on the same object (`live`, matched through the plan's `ids`) needs none: the platform's default
    @everyone mentions everyone, and deploying a server back as it is gives no one anything."""
    acknowledged = set(acknowledge)
    pending = [grant for grant in new_grants(config, live, ids or {}) if grant.rule not in acknowledged]
    if pending:
        rules = sorted({grant.rule or "" for grant in pending})
        raise GrantNotAcknowledged(
            f"The configuration gives every member dangerous permissions; to deploy it anyway, send acknowledge: "
            f"{rules}.",
            details=pending,
        )
