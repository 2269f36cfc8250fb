"""The permission-safety lint (docs/05-deploy-engine.md): what a valid configuration does that is probably unsafe.

`lint_config` only warns; it never refuses a configuration. Each rule is a record in `LINT_RULES` (id, summary,
check), so adding a rule is adding a record; warnings come in the rules' order, then the configuration's order.
The function is pure and cheap: the deploy's dry run and the AI chat call it on every request.

Who can view a channel is the platform's effective-permission order (svcconf/config/access.py, read holder by holder
until one can view): a channel's overwrites are its category's with its own replacing them
role by role (what the deploy writes), @everyone's base is `everyone_permissions` (VIEW_CHANNEL, the platform's
default, when the configuration leaves them out), and a channel is visible when @everyone alone or a holder of one
role can view it. The server owner (who sees everything) and member overwrites are outside the configuration.
A neutral overwrite (nothing allowed or denied) is how a configuration says a channel keeps none of its category's
overwrite for a role: no rule asks to fill it in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from svcconf.config.access import VIEW_CHANNEL_BIT, Place, access_in, channel_place, config_holders, overwrite_bits
from svcconf.config.channels import Category, Channel, Overwrite, platform_channel_name
from svcconf.config.lint_community import automod_alert_hidden, automod_exempts_everyone, onboarding_hands_out_dangerous
from svcconf.config.permissions import ADMINISTRATOR, CHANNEL_TYPES
from svcconf.config.roles import EVERYONE
from svcconf.config.schema import ServerConfig
from svcconf.errors import field_path

# What no member should hold just for being on the server (ADMINISTRATOR grants all of them): the power to run it,
# to moderate its members and their messages, to reach everyone at once or to read its audit log.
DANGEROUS_PERMISSIONS = (
    ADMINISTRATOR,
    "MANAGE_GUILD",
    "MANAGE_ROLES",
    "MANAGE_CHANNELS",
    "MANAGE_WEBHOOKS",
    "MENTION_EVERYONE",
    "BAN_MEMBERS",
    "KICK_MEMBERS",
    "MODERATE_MEMBERS",
    "MANAGE_MESSAGES",
    "MANAGE_NICKNAMES",
    "MANAGE_THREADS",
    "MANAGE_EVENTS",
    "MANAGE_GUILD_EXPRESSIONS",
    "VIEW_AUDIT_LOG",
)
VIEW_CHANNEL = "VIEW_CHANNEL"

Loc = tuple[str | int, ...]
Finding = tuple[str, str]  # (field, message)


class LintWarning(BaseModel):
    """One warning: where (`field`, a configuration path), which rule, and what to change."""

    field: str
    rule: str
    message: str


@dataclass(frozen=True, slots=True)
class LintRule:
    """A rule of the lint: its id (the warnings' `rule`), what it looks for, and the check yielding (field, message)."""

    id: str
    summary: str
    check: Callable[[ServerConfig], Iterator[Finding]]


# --- Walking the configuration ------------------------------------------------------------------


def _channels(config: ServerConfig) -> Iterator[tuple[Loc, Channel, Category | None]]:
    for c, category in enumerate(config.categories):
        for n, channel in enumerate(category.channels):
            yield ("categories", c, "channels", n), channel, category
    for n, channel in enumerate(config.channels):
        yield ("channels", n), channel, None


def _overwrite_holders(config: ServerConfig) -> Iterator[tuple[Loc, str, list[Overwrite]]]:
    """Every category and channel that carries overwrites, in the configuration's order, with its description."""
    for c, category in enumerate(config.categories):
        yield ("categories", c), f"category '{category.name}'", category.overwrites
        for n, channel in enumerate(category.channels):
            yield ("categories", c, "channels", n), _describe(channel, category), channel.overwrites
    for n, channel in enumerate(config.channels):
        yield ("channels", n), _describe(channel, None), channel.overwrites


def _describe(channel: Channel, category: Category | None) -> str:
    return f"channel '{channel.name}'" + (f" in category '{category.name}'" if category else "")


def _everyone_overwrite(overwrites: list[Overwrite]) -> tuple[int, Overwrite] | None:
    return next(((index, o) for index, o in enumerate(overwrites) if o.role == EVERYONE), None)


def _listing(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _them(names: Sequence[str]) -> str:
    return "it" if len(names) == 1 else "them"


# --- Rules ----------------------------------------------------------------------------------------


def _everyone_allowed_dangerous(config: ServerConfig) -> Iterator[Finding]:
    for loc, place, overwrites in _overwrite_holders(config):
        found = _everyone_overwrite(overwrites)
        if not found:
            continue
        index, overwrite = found
        dangerous = [name for name in DANGEROUS_PERMISSIONS if name in overwrite.allow]
        if dangerous:
            yield (
                field_path((*loc, "overwrites", index, "allow")),
                f"On {place}, @everyone is allowed {_listing(dangerous)}, so every member gets {_them(dangerous)}: "
                f"remove {_them(dangerous)} from this allow list and allow a staff role instead.",
            )


def _every_role_dangerous(config: ServerConfig) -> Iterator[Finding]:
    if len(config.roles) < 2:
        return
    common = set(DANGEROUS_PERMISSIONS)
    for role in config.roles:
        granted = set(role.permissions)
        common &= set(DANGEROUS_PERMISSIONS) if ADMINISTRATOR in granted else granted
        if not common:
            return
    # ADMINISTRATOR includes the others: naming it alone says it all.
    names = [ADMINISTRATOR] if ADMINISTRATOR in common else [p for p in DANGEROUS_PERMISSIONS if p in common]
    # Where a role grants the others through ADMINISTRATOR, say so (not where ADMINISTRATOR is what all grant).
    administrator = any(ADMINISTRATOR in r.permissions for r in config.roles)
    through = ", ADMINISTRATOR included," if administrator and names != [ADMINISTRATOR] else ""
    yield (
        "roles",
        f"All {len(config.roles)} roles of this configuration{through} grant {_listing(names)}, so every member "
        f"with any role holds {_them(names)}: keep {_them(names)} to the roles of trusted staff.",
    )


def _private_category_reopened(config: ServerConfig) -> Iterator[Finding]:
    for c, category in enumerate(config.categories):
        found = _everyone_overwrite(category.overwrites)
        if not (found and VIEW_CHANNEL in found[1].deny):
            continue
        for n, channel in enumerate(category.channels):
            own = _everyone_overwrite(channel.overwrites)
            if own and VIEW_CHANNEL in own[1].allow:
                yield (
                    field_path(("categories", c, "channels", n, "overwrites", own[0], "allow")),
                    f"In private category '{category.name}', channel '{channel.name}' allows @everyone VIEW_CHANNEL "
                    "again, so every member can see it: remove VIEW_CHANNEL from its @everyone overwrite's allow list.",
                )


_THIRD_PERSON = {"allow": "allows", "deny": "denies"}
# What a dropped @everyone allow or deny does to every member (an allow matters where everyone_permissions leave
# VIEW_CHANNEL out).
_EVERY_MEMBER = {
    "allow": ", so a member without a role that can view it no longer sees the channel",
    "deny": ", so every member can see the channel",
}


def _category_view_dropped(config: ServerConfig) -> Iterator[Finding]:
    everyone_and_roles = config_holders(config)
    for c, category in enumerate(config.categories):
        # role -> "allow" or "deny": what the category says about VIEW_CHANNEL for that role (whether dropping it
        # matters, @everyone's allow included, is _view_dropped's to say).
        view = {
            o.role: "allow" if VIEW_CHANNEL in o.allow else "deny"
            for o in category.overwrites
            if VIEW_CHANNEL in o.allow or VIEW_CHANNEL in o.deny
        }
        if not view:
            continue
        inherited = overwrite_bits(category.overwrites)
        for n, channel in enumerate(category.channels):
            place: Place | None = None  # read only for the overwrites that may drop a VIEW_CHANNEL
            for index, overwrite in enumerate(channel.overwrites):
                verb = view.get(overwrite.role)
                neutral = not (overwrite.allow or overwrite.deny)  # dropping the category's is what it is for
                if verb is None or neutral or VIEW_CHANNEL in overwrite.allow or VIEW_CHANNEL in overwrite.deny:
                    continue
                place = place or channel_place(channel, inherited)
                if not _view_dropped(everyone_and_roles, place, overwrite.role, verb):
                    continue  # the holder sees the channel (or not) as the category said, whatever the drop
                everyone = overwrite.role == EVERYONE
                target = EVERYONE if everyone else f"role '{overwrite.role}'"
                leak = _EVERY_MEMBER[verb] if everyone else ""
                yield (
                    field_path(("categories", c, "channels", n, "overwrites", index, verb)),
                    f"In category '{category.name}', channel '{channel.name}' has its own overwrite for "
                    f"{target}, which replaces the category's and no longer {_THIRD_PERSON[verb]} VIEW_CHANNEL{leak}: "
                    f"add VIEW_CHANNEL to its {verb} list.",
                )


def _view_dropped(everyone_and_roles: dict[str, int], place: Place, role: str, verb: str) -> bool:
    """Whether the role's holder would view the place otherwise had its overwrite kept the category's allow or
    deny of VIEW_CHANNEL."""
    own = place.overwrites[role]
    kept = (
        own._replace(allow=own.allow | VIEW_CHANNEL_BIT)
        if verb == "allow"
        else own._replace(deny=own.deny | VIEW_CHANNEL_BIT)
    )
    holder = {role: everyone_and_roles[role]}
    found = next(access_in(place, holder))[1]
    meant = next(access_in(place._replace(overwrites={**place.overwrites, role: kept}), holder))[1]
    return bool((found ^ meant) & VIEW_CHANNEL_BIT)


def _places(config: ServerConfig) -> Iterator[tuple[Loc, Channel, Category | None, Place]]:
    """Each channel with its place: its category's overwrites with its own replacing them."""
    for c, category in enumerate(config.categories):
        inherited = overwrite_bits(category.overwrites)
        for n, channel in enumerate(category.channels):
            yield ("categories", c, "channels", n), channel, category, channel_place(channel, inherited)
    for n, channel in enumerate(config.channels):
        yield ("channels", n), channel, None, channel_place(channel, {})


def _anyone_views(place: Place, everyone_and_roles: dict[str, int]) -> bool:
    # Those the place's overwrites name first: in a private channel they are the ones who view it.
    named = {holder: everyone_and_roles[holder] for holder in place.overwrites if holder in everyone_and_roles}
    return any(
        permissions & VIEW_CHANNEL_BIT
        for holders in (named, everyone_and_roles)
        for _, permissions in access_in(place, holders)
    )


def _channel_nobody_can_view(config: ServerConfig) -> Iterator[Finding]:
    everyone_and_roles = config_holders(config)
    for loc, channel, category, place in _places(config):
        if not _anyone_views(place, everyone_and_roles):
            yield (
                field_path((*loc, "overwrites")),
                f"No one but the server owner can see {_describe(channel, category)}: @everyone cannot view it "
                "and no role is allowed VIEW_CHANNEL; allow VIEW_CHANNEL to a role in its overwrites.",
            )


def _everyone_permissions_dangerous(config: ServerConfig) -> Iterator[Finding]:
    granted = config.everyone_permissions or []
    dangerous = [name for name in DANGEROUS_PERMISSIONS if name in granted]
    if dangerous:
        yield (
            "everyone_permissions",
            f"@everyone's server-wide permissions include {_listing(dangerous)}, so every member holds "
            f"{_them(dangerous)}: remove {_them(dangerous)} from everyone_permissions and grant a staff role instead.",
        )


def _system_channel_hidden(config: ServerConfig) -> Iterator[Finding]:
    name = config.settings.system_channel if config.settings else None
    if name is None:
        return
    text = CHANNEL_TYPES["text"]
    everyone = {EVERYONE: config_holders(config)[EVERYONE]}
    for _, channel, category, place in _places(config):
        if channel.type == "text" and platform_channel_name(channel.name, text) == platform_channel_name(name, text):
            if not next(access_in(place, everyone))[1] & VIEW_CHANNEL_BIT:
                yield (
                    "settings.system_channel",
                    f"The system channel, {_describe(channel, category)}, is hidden from @everyone, so new members "
                    "never see its welcome messages: choose a channel everyone can view, or allow @everyone "
                    "VIEW_CHANNEL on it.",
                )
            return


def _forum_tags_unusable(config: ServerConfig) -> Iterator[Finding]:
    for loc, channel, category in _channels(config):
        if not channel.require_tag:
            continue
        forum = f"Forum '{channel.name}'" + (f" in category '{category.name}'" if category else "")
        if not channel.tags:
            yield (
                field_path((*loc, "require_tag")),
                f"{forum} requires a tag on every post but has no tags, so no one can post: add tags or set "
                "require_tag to false.",
            )
        elif all(tag.moderated for tag in channel.tags):
            yield (
                field_path((*loc, "tags")),
                f"{forum} requires a tag on every post but all its tags are moderated, so only members who can "
                "manage threads can post: make at least one tag unmoderated.",
            )


def _administrator_with_redundant_permissions(config: ServerConfig) -> Iterator[Finding]:
    for index, role in enumerate(config.roles):
        if ADMINISTRATOR not in role.permissions:
            continue
        others = list(dict.fromkeys(name for name in role.permissions if name != ADMINISTRATOR))
        if others:
            yield (
                field_path(("roles", index, "permissions")),
                f"Role '{role.name}' has ADMINISTRATOR, which already grants every permission, so {_listing(others)} "
                f"{'is' if len(others) == 1 else 'are'} redundant: list ADMINISTRATOR alone.",
            )


LINT_RULES: tuple[LintRule, ...] = (
    LintRule(
        "everyone-dangerous-permission",
        "An @everyone overwrite allows a dangerous permission (ADMINISTRATOR, a MANAGE_ one, BAN_MEMBERS, "
        "KICK_MEMBERS, MODERATE_MEMBERS, MENTION_EVERYONE or VIEW_AUDIT_LOG).",
        _everyone_allowed_dangerous,
    ),
    LintRule(
        "every-role-dangerous-permission",
        "Every role (of two or more) grants one of those permissions.",
        _every_role_dangerous,
    ),
    LintRule(
        "private-category-channel-reopened",
        "A channel in a private category allows @everyone VIEW_CHANNEL again.",
        _private_category_reopened,
    ),
    LintRule(
        "category-view-dropped",
        "A channel's own overwrite for a role replaces its category's overwrite for that role "
        "and drops the category's VIEW_CHANNEL allow or deny, so that role sees the channel otherwise.",
        _category_view_dropped,
    ),
    LintRule(
        "channel-nobody-can-view",
        "A channel that neither @everyone nor any role of the configuration can view.",
        _channel_nobody_can_view,
    ),
    LintRule(
        "everyone-permissions-dangerous",
        "everyone_permissions grant one of those permissions to every member.",
        _everyone_permissions_dangerous,
    ),
    LintRule(
        "system-channel-hidden",
        "The system channel (welcome messages) is one that @everyone cannot view.",
        _system_channel_hidden,
    ),
    LintRule(
        "forum-tags-unusable",
        "A forum requires a tag on every post but has no tag, or only moderated ones.",
        _forum_tags_unusable,
    ),
    LintRule(
        "administrator-redundant-permissions",
        "A role with ADMINISTRATOR also lists other permissions.",
        _administrator_with_redundant_permissions,
    ),
    # v4 (lint_community.py)
    LintRule("automod-alert-hidden", "An AutoMod alert channel no staff role can view.", automod_alert_hidden),
    LintRule("automod-exempts-everyone", "An AutoMod rule exempts @everyone.", automod_exempts_everyone),
    LintRule(
        "onboarding-dangerous-role",
        "Onboarding hands out a role with one of those permissions.",
        lambda config: onboarding_hands_out_dangerous(config, DANGEROUS_PERMISSIONS),
    ),
)


def lint_config(config: ServerConfig) -> list[LintWarning]:
    """The permission-safety warnings of a validated configuration: the rules' order, then the configuration's."""
    return [
        LintWarning(field=field, rule=rule.id, message=message)
        for rule in LINT_RULES
        for field, message in rule.check(config)
    ]
