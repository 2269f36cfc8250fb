"""The local model's svcAiChat answers (`ChatTurn`): edits to the current configuration, or a compact first build.

Deterministic and small, for trying the flow without a key: a first build in the compact form from the theme it
finds in the conversation and questionnaire (gaming, study, development, music, art, or a general community),
sized by the questionnaire's `roles` and `channels` when it gives them; then edits asked in plain words: "add a
voice channel named Hangout to Gaming", "add a role called VIP" (or "... VIP with BAN_MEMBERS and KICK_MEMBERS"),
"remove the channel off-topic" (a role or category too), "rename the role Mods to Moderators", "move the channel
clips to Gaming", "rename the server to Night Owls", "add ten categories with ten channels each" (all of them:
max_tokens cuts it as it would cut a real model), "turn off the invite-link filter" (local/ai_model/community.py:
a gaming build proposes onboarding and AutoMod). "done" or "looks good" completes it. It writes edits for
what the user names, as a model would, so an edit naming what does not exist is the service's to refuse.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeGuard

from local.ai_model.community import community_edits, fit_to_budget, propose_community
from local.ai_model.responders import Request, responder

CONTEXT = re.compile(r"<service_context>\s*(\{.*\})\s*</service_context>", re.DOTALL)
COMPLETE = re.compile(r"\b(done|finished|looks good|that's all|perfect|finish)\b", re.IGNORECASE)
ADD_CHANNEL = re.compile(
    r"\badd (?:a |an |the )?(?P<type>text |voice |forum |stage |announcement )?channel"
    r"(?: (?:called|named))? [\"']?(?P<name>[\w][\w \-]{0,60}?)[\"']?"
    r"(?: (?:to|in) (?:the )?[\"']?(?P<cat>[\w][\w \-]{0,60}?)[\"']?)?(?:[.!?,]|$)",
    re.IGNORECASE,
)
MANY = re.compile(r"\badd (?P<n>\w+) categories (?:with|of) (?P<m>\w+) channels", re.IGNORECASE)
RENAME_ITEM = re.compile(
    r"\brename the (?P<kind>role|channel|category) [\"']?(?P<old>[\w][\w \-]{0,60}?)[\"']? to "
    r"[\"']?(?P<new>[\w][\w \-]{0,60}?)[\"']?(?:[.!?,]|$| and )",
    re.IGNORECASE,
)
NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
ADD_ROLE = re.compile(
    r"\badd (?:a |an |the )?role(?: (?:called|named))? [\"']?(?P<name>[\w][\w \-]{0,60}?)[\"']?(?:[.!?,]|$| with )",
    re.IGNORECASE,
)
REMOVE = re.compile(
    r"\b(?:remove|delete) (?:the )?(?P<kind>channel|role|category) "
    r"[\"']?(?P<name>[\w][\w \-]{0,60}?)[\"']?(?:[.!?,]|$| and )",
    re.IGNORECASE,
)
# A role's permissions, named as the platform names them after "with": "with BAN_MEMBERS and KICK_MEMBERS".
GRANTS = re.compile(r"(?:the )?(?:permissions? )?(?P<names>[A-Z][A-Z_]{2,}(?:(?:, |,| and | )[A-Z][A-Z_]{2,})*)")
MOVE = re.compile(
    r"\bmove the channel [\"']?(?P<name>[\w][\w \-]{0,60}?)[\"']? (?:to|into) (?:the )?"
    r"(?:(?P<outside>top level|outside)|[\"']?(?P<cat>[\w][\w \-]{0,60}?)[\"']?)(?: category)?(?:[.!?,]|$| and )",
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


def build_compact(theme_name: str, name: str | None = None, roles: int = 0, channels: int = 0) -> dict[str, Any]:
    """A first build in the service's compact form (presets, plain channel names, shorthands); at least `roles`
    roles and `channels` channels when the questionnaire asks for a size."""
    theme = THEMES[theme_name]
    build: dict[str, Any] = {
        "name": (name or theme["title"])[:100],
        "description": f"A {theme_name} server drafted by the local model",
        "roles": [
            {"name": "Admin", "color": "#E74C3C", "hoist": True, "permissions": "admin"},
            {"name": "Moderator", "color": "#3498DB", "hoist": True, "mentionable": True, "permissions": "moderator"},
            {"name": theme["role"], "color": "#2ECC71", "mentionable": True, "permissions": "member"},
            {"name": "Member", "color": "#95A5A6", "permissions": "member"},
        ],
        "categories": [
            {"name": "Information", "read_only": True, "channels": ["rules", "announcements"]},
            {"name": "Community", "channels": ["general", "off-topic", {"name": "Lounge", "type": "voice"}]},
            {
                "name": theme["category"],
                "channels": [
                    *({"name": n, "topic": t} for n, t in theme["channels"]),
                    {"name": theme["voice"], "type": "voice", "user_limit": 10},
                ],
            },
            {"name": "Staff", "private_to": ["Moderator"], "channels": ["mod-chat", "mod-log"]},
        ],
    }
    if theme_name == "gaming":  # a community: onboarding that hands out game roles, and AutoMod
        propose_community(build)
    for number in range(len(build["roles"]), roles):
        build["roles"].append({"name": f"{theme['role']} {number - 2}", "permissions": "member"})
    made = sum(1 + len(category["channels"]) for category in build["categories"])
    topic = 0
    while made < channels:
        topic += 1
        size = min(9, channels - made - 1)
        rooms = [f"{theme['category'].lower()}-{topic}-{n + 1}" for n in range(size)]
        build["categories"].append({"name": f"{theme['category']} {topic}", "channels": rooms})
        made += 1 + size
    return build


def _usable(config: Any) -> TypeGuard[dict[str, Any]]:
    """Looks like a configuration this model can edit (the service validates it for real)."""
    return (
        isinstance(config, dict)
        and isinstance(config.get("name"), str)
        and all(isinstance(config.get(key, []), list) for key in ("roles", "categories", "channels"))
    )


def _count(word: str) -> int:
    return int(word) if word.isdigit() else NUMBERS.get(word.lower(), 1)


def _edits(config: dict[str, Any], text: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The edits the user asked for in `text`, and what they do, as sentences."""
    edits: list[dict[str, Any]] = []
    done: list[str] = []
    if match := RENAME.search(text):
        edits.append({"op": "update", "kind": "server", "set": {"name": match.group("name").strip()[:100]}})
        done.append(f"Renamed the server to {match.group('name').strip()[:100]}.")
    for match in RENAME_ITEM.finditer(text):
        kind, old, new = match.group("kind").lower(), match.group("old").strip(), match.group("new").strip()
        rename: dict[str, Any] = {"op": "rename", "kind": kind, "name": old, "to": new}
        if kind == "channel":
            rename["cat"] = _category_of(config, old)
        edits.append(rename)
        done.append(f"Renamed the {kind} {old} to {new}.")
    for match in MOVE.finditer(text):
        name, target = match.group("name").strip(), "" if match.group("outside") else match.group("cat").strip()
        edits.append({"op": "move", "kind": "channel", "name": name, "cat": _category_of(config, name), "to": target})
        done.append(f"Moved the channel {name} to {target or 'outside the categories'}.")
    for match in MANY.finditer(text):
        categories, channels = _count(match.group("n")), _count(match.group("m"))
        for c in range(categories):
            category = f"New Area {c + 1}"
            edits.append({"op": "add", "kind": "category", "name": category})
            edits += [
                {"op": "add", "kind": "channel", "name": f"new-area-{c + 1}-room-{n + 1}", "cat": category}
                for n in range(channels)
            ]
        done.append(f"Added {categories} categories of {channels} channels.")
    for match in ADD_CHANNEL.finditer(text):
        kind = (match.group("type") or "text").strip().lower()
        name = match.group("name").strip()[:100]
        edit: dict[str, Any] = {"op": "add", "kind": "channel", "name": name}
        if kind != "text":
            edit["set"] = {"type": kind}
        target = (match.group("cat") or "").removesuffix(" category") or _default_category(config)
        if target:
            edit["cat"] = target.strip()
        edits.append(edit)
        done.append(f"Added the {kind} channel {name}.")
    for match in ADD_ROLE.finditer(text):
        name = match.group("name").strip()[:100]
        fields: dict[str, Any] = {"color": "#F1C40F", "mentionable": True}
        grants = GRANTS.match(text, match.end()) if match.group(0).endswith(" with ") else None
        if grants:
            fields["permissions"] = re.findall(r"[A-Z][A-Z_]{2,}", grants.group("names"))
        edits.append({"op": "add", "kind": "role", "name": name, "set": fields})
        done.append(f"Added the role {name}.")
    for match in REMOVE.finditer(text):
        kind, name = match.group("kind").lower(), match.group("name").strip()
        edit = {"op": "remove", "kind": kind, "name": name}
        if kind == "channel":
            edit["cat"] = _category_of(config, name)
        edits.append(edit)
        done.append(f"Removed the {kind} {name}.")
    switched, said = community_edits(config, text)
    return edits + switched, done + said


def _default_category(config: dict[str, Any]) -> str | None:
    """Where a new channel goes: the last category that is not Information or Staff."""
    names = [c.get("name") for c in config.get("categories") or [] if c.get("name") not in ("Staff", "Information")]
    return names[-1] if names else None


def _category_of(config: dict[str, Any], channel: str) -> str | None:
    for category in config.get("categories") or []:
        if any(_name(c).casefold() == channel.casefold() for c in category.get("channels") or []):
            return str(category.get("name"))
    return None


def _name(channel: Any) -> str:
    return channel if isinstance(channel, str) else str(channel.get("name", "")) if isinstance(channel, dict) else ""


def _size(questionnaire: Any, *keys: str) -> int:
    if not isinstance(questionnaire, dict):
        return 0
    value = next((questionnaire[key] for key in keys if key in questionnaire), 0)
    return value if isinstance(value, int) and 0 <= value <= 500 else 0


@responder("ChatTurn")
def chat_turn(request: Request) -> dict[str, Any]:
    turn = _current_turn(request)
    context = _context(turn)
    words = _user_words(request)
    last = CONTEXT.sub("", turn).strip()
    questionnaire = context.get("questionnaire_data") or {}
    current = context.get("currentConfig")
    files = context.get("files") or []
    build = None
    rest: str | None = None
    edits: list[dict[str, Any]] = []

    if _usable(current):
        edits, done = _edits(current, last)
        summary = " ".join(done) or "I kept your configuration as it is; tell me what to change."
    else:
        theme = _theme(f"{words} {_questionnaire_text(questionnaire)}")
        name = (
            questionnaire.get("server_name") or questionnaire.get("name") if isinstance(questionnaire, dict) else None
        )
        build = build_compact(
            theme,
            name if isinstance(name, str) and name.strip() else None,
            roles=_size(questionnaire, "roles", "role_count"),
            channels=_size(questionnaire, "channels", "channel_count"),
        )
        rest = fit_to_budget(build, context.get("output_budget_tokens"))
        roles = len(build["roles"])
        channels = sum(1 + len(c["channels"]) for c in build["categories"])
        summary = (
            f'I drafted "{build["name"]}", a {theme} server with {roles} roles and {len(build["categories"])} '
            f"categories ({channels} channels, categories included)."
        )
        summary += f" Left for the next turn: {rest} Say go on." if rest else ""
    if files:
        summary += f" I received {len(files)} file(s)."
    return {
        "reply": f"{summary} (Local model: deterministic answers for trying the service, no AI.)",
        "edits": edits or None,
        "build": build,
        "rest": rest,
        "quick_replies": ["Go on", *QUICK_REPLIES[:3]] if rest else QUICK_REPLIES,
        "is_complete": bool(COMPLETE.search(last)),
    }
