"""The local model's svcAiChat answers (`ChatTurn`): a server configuration from the conversation, by keywords.

Deterministic and small, for trying the flow without a key: a first configuration from the theme it finds in
the conversation and questionnaire (gaming, study, development, music, art, or a general community), then simple
edits asked in plain words: "add a voice channel named Hangout", "add a role called VIP", "remove the channel
off-topic", "rename the server to Night Owls". "done" or "looks good" completes it. Every configuration it writes
passes the service's schema.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any, TypeGuard

from local.ai_model.responders import Request, responder

CONTEXT = re.compile(r"<service_context>\s*(\{.*\})\s*</service_context>", re.DOTALL)
COMPLETE = re.compile(r"\b(done|finished|looks good|that's all|perfect|finish)\b", re.IGNORECASE)
ADD_CHANNEL = re.compile(
    r"\badd (?:a |an |the )?(?P<type>text |voice |forum |stage |announcement )?channel"
    r"(?: (?:called|named))? [\"']?(?P<name>[\w][\w \-]{0,60}?)[\"']?(?:[.!?,]|$| to | in )",
    re.IGNORECASE,
)
ADD_ROLE = re.compile(
    r"\badd (?:a |an |the )?role(?: (?:called|named))? [\"']?(?P<name>[\w][\w \-]{0,60}?)[\"']?(?:[.!?,]|$| with )",
    re.IGNORECASE,
)
REMOVE = re.compile(
    r"\b(?:remove|delete) (?:the )?(?P<kind>channel|role) [\"']?(?P<name>[\w][\w \-]{0,60}?)[\"']?(?:[.!?,]|$)",
    re.IGNORECASE,
)
RENAME = re.compile(r"\brename the server to [\"']?(?P<name>[^\"'.!?\n]{1,100})", re.IGNORECASE)

THEMES: dict[str, dict[str, Any]] = {
    "gaming": {
        "words": ("game", "gaming", "esport", "minecraft", "fortnite", "valorant", "raid", "clan"),
        "title": "Gaming Hub",
        "role": "Gamer",
        "category": "Gaming",
        "channels": [("looking-for-group", "Find teammates"), ("clips", "Share your best plays")],
        "voice": "Squad Voice",
    },
    "study": {
        "words": ("study", "school", "class", "homework", "university", "exam", "learn", "course"),
        "title": "Study Hall",
        "role": "Tutor",
        "category": "Study",
        "channels": [("homework-help", "Ask for help"), ("resources", "Notes and links")],
        "voice": "Study Room",
    },
    "development": {
        "words": ("code", "coding", "program", "developer", "software", "open source", "dev "),
        "title": "Dev Den",
        "role": "Contributor",
        "category": "Development",
        "channels": [("help", "Ask a coding question"), ("show-and-tell", "Share what you built")],
        "voice": "Pairing",
    },
    "music": {
        "words": ("music", "band", "song", "producer", "guitar", "concert"),
        "title": "Music Lounge",
        "role": "Musician",
        "category": "Music",
        "channels": [("share-your-music", "Your latest tracks"), ("gear", "Instruments and software")],
        "voice": "Jam Room",
    },
    "art": {
        "words": ("art", "drawing", "artist", "paint", "illustration", "design"),
        "title": "Art Studio",
        "role": "Artist",
        "category": "Art",
        "channels": [("showcase", "Finished work"), ("critique", "Feedback on works in progress")],
        "voice": "Art Stream",
    },
    "community": {
        "words": (),
        "title": "Community Server",
        "role": "Regular",
        "category": "Topics",
        "channels": [("introductions", "Say who you are"), ("media", "Pictures and videos")],
        "voice": "Hangout",
    },
}
QUICK_REPLIES = ["Add a voice channel named Hangout", "Add a role named VIP", "Remove the channel off-topic", "Done"]


def _current_turn(request: Request) -> str:
    """The user turn the service wrote its context into (a repair round's request comes after it)."""
    turns = [request.text_of(message) for message in request.messages if message.get("role") == "user"]
    return next((turn for turn in reversed(turns) if CONTEXT.search(turn)), turns[-1] if turns else "")


def _context(turn: str) -> dict[str, Any]:
    match = CONTEXT.search(turn)
    if not match:
        return {}
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _user_words(request: Request) -> str:
    """What the user wrote (the service's context blocks removed), the last turn last."""
    return CONTEXT.sub("", request.text()).strip()


def _theme(text: str) -> str:
    lowered = f" {text.lower()} "
    for name, theme in THEMES.items():
        if any(word in lowered for word in theme["words"]):
            return name
    return "community"


def _questionnaire_text(questionnaire: Any) -> str:
    return json.dumps(questionnaire, ensure_ascii=False) if questionnaire else ""


def build_config(theme_name: str, name: str | None = None) -> dict[str, Any]:
    theme = THEMES[theme_name]
    return {
        "name": (name or theme["title"])[:100],
        "description": f"A {theme_name} server drafted by the local model",
        "roles": [
            {
                "name": "Admin",
                "color": "#E74C3C",
                "hoist": True,
                "mentionable": False,
                "permissions": ["ADMINISTRATOR"],
            },
            {
                "name": "Moderator",
                "color": "#3498DB",
                "hoist": True,
                "mentionable": True,
                "permissions": ["KICK_MEMBERS", "BAN_MEMBERS", "MANAGE_MESSAGES", "MODERATE_MEMBERS"],
            },
            {
                "name": theme["role"],
                "color": "#2ECC71",
                "hoist": False,
                "mentionable": True,
                "permissions": ["SEND_MESSAGES", "ATTACH_FILES", "EMBED_LINKS"],
            },
            {
                "name": "Member",
                "color": "#95A5A6",
                "hoist": False,
                "mentionable": False,
                "permissions": ["SEND_MESSAGES", "READ_MESSAGE_HISTORY", "ADD_REACTIONS", "CONNECT", "SPEAK"],
            },
        ],
        "categories": [
            {
                "name": "Information",
                "overwrites": [{"role": "@everyone", "allow": [], "deny": ["SEND_MESSAGES"]}],
                "channels": [
                    {"name": "rules", "type": "text", "topic": "Read before posting", "overwrites": []},
                    {"name": "announcements", "type": "text", "topic": "News from the team", "overwrites": []},
                ],
            },
            {
                "name": "Community",
                "overwrites": [],
                "channels": [
                    {"name": "general", "type": "text", "topic": "Talk about anything", "overwrites": []},
                    {"name": "off-topic", "type": "text", "overwrites": []},
                    {"name": "Lounge", "type": "voice", "user_limit": 0, "overwrites": []},
                ],
            },
            {
                "name": theme["category"],
                "overwrites": [],
                "channels": [
                    *({"name": n, "type": "text", "topic": t, "overwrites": []} for n, t in theme["channels"]),
                    {"name": theme["voice"], "type": "voice", "user_limit": 10, "overwrites": []},
                ],
            },
            {
                "name": "Staff",
                "overwrites": [
                    {"role": "@everyone", "allow": [], "deny": ["VIEW_CHANNEL"]},
                    {"role": "Moderator", "allow": ["VIEW_CHANNEL"], "deny": []},
                ],
                "channels": [
                    {"name": "mod-chat", "type": "text", "overwrites": []},
                    {"name": "mod-log", "type": "text", "topic": "What the moderators did", "overwrites": []},
                ],
            },
        ],
        "channels": [],
    }


def _usable(config: Any) -> TypeGuard[dict[str, Any]]:
    """Looks like a configuration this model can edit (the service validates it for real)."""
    return (
        isinstance(config, dict)
        and isinstance(config.get("name"), str)
        and all(isinstance(config.get(key, []), list) for key in ("roles", "categories", "channels"))
    )


def _counts(config: dict[str, Any]) -> tuple[int, int, int]:
    categories = config.get("categories") or []
    channels = len(config.get("channels") or []) + sum(len(c.get("channels") or []) for c in categories)
    return len(config.get("roles") or []), len(categories), channels


def _all_channels(config: dict[str, Any]) -> list[list[dict[str, Any]]]:
    return [config.setdefault("channels", []), *(c.setdefault("channels", []) for c in config.get("categories", []))]


def _edit(config: dict[str, Any], text: str) -> list[str]:
    """Apply the edits the user asked for in `text`; what was done, as sentences."""
    done: list[str] = []
    if match := RENAME.search(text):
        config["name"] = match.group("name").strip()[:100]
        done.append(f"Renamed the server to {config['name']}.")
    for match in ADD_CHANNEL.finditer(text):
        kind = (match.group("type") or "text").strip().lower()
        name = match.group("name").strip()[:100]
        channel: dict[str, Any] = {"name": name, "type": kind, "overwrites": []}
        if kind in ("voice", "stage"):
            channel["user_limit"] = 0
        categories = [c for c in config.get("categories", []) if c.get("name") not in ("Staff", "Information")]
        target = categories[-1]["channels"] if categories else config.setdefault("channels", [])
        if len(target) < 50:
            target.append(channel)
            done.append(f"Added the {kind} channel {name}.")
    for match in ADD_ROLE.finditer(text):
        name = match.group("name").strip()[:100]
        roles = config.setdefault("roles", [])
        if name.casefold() != "@everyone" and all(r.get("name", "").casefold() != name.casefold() for r in roles):
            roles.append({"name": name, "color": "#F1C40F", "hoist": False, "mentionable": True, "permissions": []})
            done.append(f"Added the role {name}.")
    for match in REMOVE.finditer(text):
        kind, name = match.group("kind").lower(), match.group("name").strip().casefold()
        if kind == "role":
            before = len(config.get("roles", []))
            config["roles"] = [r for r in config.get("roles", []) if r.get("name", "").casefold() != name]
            if len(config["roles"]) < before:
                _drop_overwrites_of(config, name)
                done.append(f"Removed the role {match.group('name').strip()}.")
        else:
            for channels in _all_channels(config):
                kept = [c for c in channels if c.get("name", "").casefold() != name]
                if len(kept) < len(channels):
                    channels[:] = kept
                    done.append(f"Removed the channel {match.group('name').strip()}.")
    return done


def _drop_overwrites_of(config: dict[str, Any], folded_role: str) -> None:
    holders = [*config.get("categories", []), *(ch for channels in _all_channels(config) for ch in channels)]
    for holder in holders:
        holder["overwrites"] = [o for o in holder.get("overwrites", []) if o.get("role", "").casefold() != folded_role]


@responder("ChatTurn")
def chat_turn(request: Request) -> dict[str, Any]:
    turn = _current_turn(request)
    context = _context(turn)
    words = _user_words(request)
    last = CONTEXT.sub("", turn).strip()
    questionnaire = context.get("questionnaire_data") or {}
    current = context.get("currentConfig")
    files = context.get("files") or []

    if _usable(current):
        config = copy.deepcopy(current)
        done = _edit(config, last)
        summary = " ".join(done) or "I kept your configuration as it is; tell me what to change."
    else:
        theme = _theme(f"{words} {_questionnaire_text(questionnaire)}")
        name = (
            questionnaire.get("server_name") or questionnaire.get("name") if isinstance(questionnaire, dict) else None
        )
        config = build_config(theme, name if isinstance(name, str) and name.strip() else None)
        done = _edit(config, last)
        roles, categories, channels = _counts(config)
        summary = (
            f'I drafted "{config["name"]}", a {theme} server with {roles} roles, {categories} categories and '
            f"{channels} channels. {' '.join(done)}"
        ).strip()
    if files:
        summary += f" I received {len(files)} file(s)."
    return {
        "reply": f"{summary} (Local model: deterministic answers for trying the service, no AI.)",
        "config": config,
        "quick_replies": QUICK_REPLIES,
        "is_complete": bool(COMPLETE.search(last)),
    }
