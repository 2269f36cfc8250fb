"""The permission-safety lint's v4 rules (registered in lint.py's LINT_RULES): what a careful moderator would want
to hear about AutoMod and onboarding.

- an AutoMod alert channel no staff role can view (staff: a role holding a moderation permission);
- an AutoMod rule exempting @everyone (it then applies to no one);
- onboarding that hands out a role with a dangerous permission (anyone who joins may pick it: it counts as
  granted to @everyone).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from svcconf.config.access import VIEW_CHANNEL_BIT, Place, access_in, channel_place, config_holders, overwrite_bits
from svcconf.config.channels import Channel
from svcconf.config.roles import EVERYONE
from svcconf.config.schema import ServerConfig

Finding = tuple[str, str]  # (field, message)
STAFF_PERMISSIONS = (
    "ADMINISTRATOR",
    "MANAGE_GUILD",
    "MANAGE_MESSAGES",
    "MODERATE_MEMBERS",
    "KICK_MEMBERS",
    "BAN_MEMBERS",
)


def _place_of(config: ServerConfig, wanted: Channel) -> Place | None:
    for category in config.categories:
        for channel in category.channels:
            if channel is wanted:
                return channel_place(channel, overwrite_bits(category.overwrites))
    for channel in config.channels:
        if channel is wanted:
            return channel_place(channel, {})
    return None


def automod_alert_hidden(config: ServerConfig) -> Iterator[Finding]:
    staff = [role.name for role in config.roles if any(p in role.permissions for p in STAFF_PERMISSIONS)]
    holders = config_holders(config)
    for r, rule in enumerate(config.automod or []):
        for a, action in enumerate(rule.actions):
            found = config.find_channels(action.channel, "text") if action.channel else []
            place = _place_of(config, found[0]) if found else None
            if place is None:
                continue
            staff_holders = {name: holders[name] for name in staff if name in holders}
            if not any(bits & VIEW_CHANNEL_BIT for _, bits in access_in(place, staff_holders)):
                yield (
                    f"automod[{r}].actions[{a}].channel",
                    f"AutoMod rule '{rule.name}' alerts channel '{action.channel}', which no staff role can view:"
                    " allow VIEW_CHANNEL there to the roles that moderate.",
                )


def automod_exempts_everyone(config: ServerConfig) -> Iterator[Finding]:
    for r, rule in enumerate(config.automod or []):
        if EVERYONE in rule.exempt_roles:
            n = rule.exempt_roles.index(EVERYONE)
            yield (
                f"automod[{r}].exempt_roles[{n}]",
                f"AutoMod rule '{rule.name}' exempts @everyone, so it applies to no one: exempt staff roles instead.",
            )


def onboarding_hands_out_dangerous(config: ServerConfig, dangerous: Sequence[str]) -> Iterator[Finding]:
    if config.onboarding is None:
        return
    roles = {role.name: role for role in config.roles}
    for p, prompt in enumerate(config.onboarding.prompts):
        for o, option in enumerate(prompt.options):
            for n, name in enumerate(option.roles):
                role = roles.get(name)
                granted = [d for d in dangerous if role is not None and d in role.permissions]
                if granted:
                    yield (
                        f"onboarding.prompts[{p}].options[{o}].roles[{n}]",
                        f"Onboarding hands out role '{name}', which grants {', '.join(granted)}: anyone who joins may"
                        " pick it, as if @everyone held it; hand out a role without them.",
                    )
