"""The platform routes the sandbox answers: method, path template, handler, and who may call it.

Who: "optional" (anonymous or the bot), "any" (a user's OAuth token or the bot), "bot", "client" (the
OAuth client's credentials, on the token endpoint).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from local.chat_sandbox import audit, oauth
from local.chat_sandbox.protocol import Call
from local.chat_sandbox.routes import (
    automod,
    channels,
    community,
    guilds,
    invites,
    member_roles,
    members,
    templates,
    users,
)

if TYPE_CHECKING:
    from local.chat_sandbox.state import SandboxState

Handler = Callable[["SandboxState", Call], tuple[int, Any]]


@dataclass(frozen=True)
class Route:
    method: str
    template: str
    handler: Handler
    who: str
    pattern: re.Pattern[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(self.template))
        object.__setattr__(self, "pattern", re.compile(f"^{pattern}$"))


ROUTES = [
    Route("GET", "/invites/{code}", invites.get_invite, "optional"),
    Route("GET", "/guilds/templates/{code}", templates.get_template, "optional"),
    Route("POST", "/oauth2/token", oauth.token, "client"),
    Route("GET", "/oauth2/authorize", oauth.authorize, "any"),
    Route("GET", "/users/@me", users.get_me, "any"),
    Route("GET", "/users/@me/guilds", users.get_my_guilds, "any"),
    Route("GET", "/guilds/{guild_id}", guilds.get_guild, "bot"),
    Route("PATCH", "/guilds/{guild_id}", guilds.modify_guild, "bot"),
    Route("GET", "/guilds/{guild_id}/roles", guilds.list_roles, "bot"),
    Route("GET", "/guilds/{guild_id}/roles/member-counts", guilds.role_member_counts, "bot"),
    Route("POST", "/guilds/{guild_id}/roles", guilds.create_role, "bot"),
    Route("PATCH", "/guilds/{guild_id}/roles", guilds.reorder_roles, "bot"),
    Route("PATCH", "/guilds/{guild_id}/roles/{role_id}", guilds.modify_role, "bot"),
    Route("DELETE", "/guilds/{guild_id}/roles/{role_id}", guilds.delete_role, "bot"),
    Route("GET", "/guilds/{guild_id}/channels", channels.list_channels, "bot"),
    Route("POST", "/guilds/{guild_id}/channels", channels.create_channel, "bot"),
    Route("PATCH", "/guilds/{guild_id}/channels", channels.reorder_channels, "bot"),
    Route("PATCH", "/channels/{channel_id}", channels.modify_channel, "bot"),
    Route("DELETE", "/channels/{channel_id}", channels.delete_channel, "bot"),
    Route("PUT", "/channels/{channel_id}/permissions/{overwrite_id}", channels.put_overwrite, "bot"),
    Route("DELETE", "/channels/{channel_id}/permissions/{overwrite_id}", channels.delete_overwrite, "bot"),
    Route("GET", "/guilds/{guild_id}/members/{user_id}", members.get_member, "bot"),
    Route("GET", "/guilds/{guild_id}/members", member_roles.list_members, "bot"),
    Route("PUT", "/guilds/{guild_id}/members/{user_id}/roles/{role_id}", member_roles.add_member_role, "bot"),
    Route("DELETE", "/guilds/{guild_id}/members/{user_id}/roles/{role_id}", member_roles.remove_member_role, "bot"),
    Route("GET", "/guilds/{guild_id}/audit-logs", audit.list_audit_log, "bot"),
    # v4: onboarding and the welcome screen (routes/community.py), AutoMod (routes/automod.py)
    Route("GET", "/guilds/{guild_id}/onboarding", community.get_onboarding, "bot"),
    Route("PUT", "/guilds/{guild_id}/onboarding", community.put_onboarding, "bot"),
    Route("GET", "/guilds/{guild_id}/auto-moderation/rules", automod.list_rules, "bot"),
    Route("POST", "/guilds/{guild_id}/auto-moderation/rules", automod.create_rule, "bot"),
    Route("GET", "/guilds/{guild_id}/auto-moderation/rules/{rule_id}", automod.get_rule, "bot"),
    Route("PATCH", "/guilds/{guild_id}/auto-moderation/rules/{rule_id}", automod.modify_rule, "bot"),
    Route("DELETE", "/guilds/{guild_id}/auto-moderation/rules/{rule_id}", automod.delete_rule, "bot"),
    Route("GET", "/guilds/{guild_id}/welcome-screen", community.get_welcome_screen, "bot"),
    Route("PATCH", "/guilds/{guild_id}/welcome-screen", community.modify_welcome_screen, "bot"),
]


def match(method: str, path: str) -> tuple[Route | None, dict[str, str], bool]:
    """The route for a request and its path parameters; the flag says whether the path exists at all."""
    path_exists = False
    for route in ROUTES:
        found = route.pattern.match(path)
        if found:
            path_exists = True
            if route.method == method:
                return route, found.groupdict(), True
    return None, {}, path_exists
