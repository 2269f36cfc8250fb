"""The local model's community objects (configuration version 4): what its gaming first build proposes, onboarding
that hands out game roles and an AutoMod set, and the edits that switch one AutoMod rule ("turn off the invite-link
filter", "enable the spam filter") as a real model would write them: one `update` of kind `automod`, by name.

The build is deployable on the platform as it is: onboarding's 7 default channels, 5 of them open for @everyone to
write in; one rule of each trigger but keyword; the alerts go to the staff-only mod-log, the staff exempt; the admins
manage the server without ADMINISTRATOR (a bot without it could not deploy them).
"""

from __future__ import annotations

import json
import re
from typing import Any

GAMES = ("Minecraft", "Valorant", "Fortnite")
STAFF = ["Admin", "Moderator"]
ADMIN = ["MANAGE_GUILD", "MANAGE_ROLES", "MANAGE_CHANNELS", "VIEW_AUDIT_LOG"]
ALERT = {"type": "alert", "channel": "mod-log"}
GO_ON = re.compile(r"\b(?:go on|continue)\b", re.IGNORECASE)
REST = "Onboarding (a question about games that hands out game roles) and AutoMod (spam, mentions, slurs, invites)."
TOGGLE = re.compile(
    r"\b(?:turn (?P<turn>off|on)|(?P<switch>disable|enable)) (?:the )?(?P<what>[\w][\w \-]{0,40}?) (?:filter|rule)\b",
    re.IGNORECASE,
)


def propose_community(build: dict[str, Any]) -> None:
    """A gaming build's onboarding and AutoMod, and the game roles and the events channel they need (in place)."""
    # A community's admins manage it without ADMINISTRATOR: a bot cannot grant what it does not hold, and the owner
    # has every permission anyway; they see the staff's channels too.
    build["roles"][0]["permissions"] = [*ADMIN, "moderator"]
    build["roles"] += [{"name": game, "mentionable": True} for game in GAMES]
    staff = next(category for category in build["categories"] if category["name"] == "Staff")
    staff["private_to"] = STAFF
    gaming = next(category for category in build["categories"] if category["name"] == "Gaming")
    gaming["channels"].insert(2, {"name": "events", "topic": "Tournaments and game nights"})
    build["onboarding"], build["automod"] = onboarding(), automod()


def onboarding() -> dict[str, Any]:
    return {
        "enabled": True,
        # rules and announcements are read-only: the other five let @everyone write, as the platform requires
        "default_channels": ["rules", "announcements", "general", "off-topic", "looking-for-group", "clips", "events"],
        "prompts": [
            {
                "title": "Which games do you play?",
                "options": [
                    {"title": game, "roles": [game], **({"channels": ["looking-for-group"]} if not i else {})}
                    for i, game in enumerate(GAMES)
                ],
            }
        ],
    }


def automod() -> list[dict[str, Any]]:
    return [
        {"name": "Spam", "trigger": "spam", "actions": [{"type": "block"}]},
        {
            "name": "Mention spam",
            "trigger": "mention_spam",
            "mention_limit": 5,
            "mention_raid_protection": True,
            "actions": [{"type": "block"}, ALERT],
            "exempt_roles": STAFF,
        },
        {"name": "Slurs", "trigger": "keyword_preset", "presets": ["slurs", "sexual_content"], "actions": [ALERT]},
        {
            "name": "Invite links",
            "trigger": "keyword",
            "keywords": ["*discord.gg/*", "*discord.com/invite/*"],
            "actions": [{"type": "block", "message": "Invite links to other servers are not allowed here."}, ALERT],
            "exempt_roles": STAFF,
        },
    ]


def fit_to_budget(build: dict[str, Any], output_budget: Any) -> str | None:
    """A build too long for the turn's output budget leaves its onboarding and AutoMod for the next turn ("rest"), as
    the system prompt asks a model to do; None when it fits (the answer's envelope counted at about 200 tokens)."""
    if "automod" not in build or not isinstance(output_budget, int):
        return None
    if len(json.dumps(build, separators=(",", ":"))) // 4 + 200 <= output_budget:
        return None
    del build["onboarding"], build["automod"]
    return REST


def community_rest(config: dict[str, Any], text: str) -> list[dict[str, Any]]:
    """ "Go on" after a build that left them: onboarding and the AutoMod rules, as edits."""
    roles = {role.get("name") for role in config.get("roles") or [] if isinstance(role, dict)}
    if not GO_ON.search(text) or config.get("automod") or not set(GAMES) <= roles:
        return []
    board = onboarding()
    [prompt] = board.pop("prompts")
    edits: list[dict[str, Any]] = [{"op": "update", "kind": "onboarding", "set": board}]
    edits.append({"op": "add", "kind": "prompt", "name": prompt.pop("title"), "set": prompt})
    for rule in automod():
        edits.append({"op": "add", "kind": "automod", "name": rule.pop("name"), "set": rule})
    return edits


def community_edits(config: dict[str, Any], text: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The AutoMod rules the user switches off or on in `text`: one update each, and what they do, as sentences."""
    edits: list[dict[str, Any]] = []
    done: list[str] = []
    rules = [
        rule for rule in config.get("automod") or [] if isinstance(rule, dict) and isinstance(rule.get("name"), str)
    ]
    for match in TOGGLE.finditer(text):
        rule = _rule_named(rules, match.group("what"))
        if rule is None:
            continue
        enabled = (match.group("turn") or match.group("switch")).lower() in ("on", "enable")
        edits.append({"op": "update", "kind": "automod", "name": rule["name"], "set": {"enabled": enabled}})
        done.append(f"Turned {'on' if enabled else 'off'} the AutoMod rule {rule['name']}.")
    rest = community_rest(config, text)
    if rest:
        done.append("Added onboarding (a question about games) and the AutoMod rules.")
    return edits + rest, done


def _rule_named(rules: list[dict[str, Any]], what: str) -> dict[str, Any] | None:
    """The rule whose name shares the most words with `what` ("invite-link" finds "Invite links")."""
    words = {word.rstrip("s") for word in re.split(r"[\s\-_]+", what.lower()) if len(word) > 2}
    scored = [(len(words & {w.rstrip("s") for w in re.split(r"[\s\-_]+", r["name"].lower())}), r) for r in rules]
    best = max(scored, key=lambda pair: pair[0], default=(0, None))
    return best[1] if best[0] else None
