"""What one turn may send the model: the input budget (`SVC_AI_MAX_INPUT_TOKENS`, docs/06-ai.md, Input budget).

Tokens are estimated before the call, from the classes of the characters sent: a tokenizer gives a word of
letters about one token for four characters, punctuation (JSON's quotes, braces and colons) about one for one and
a half, digits one for under three, each character of another script one, whitespace little. Prose thus costs
fewer tokens per character than a configuration's JSON, as it does at the provider; the estimate stays within
15 % of the provider's reported count on both (tests/integration/test_input_budget_turns.py).

The system prompt and the current configuration are always sent; then the newest messages that fit; the older
ones are left out (the configuration carries the state) and the answer says how many (`history_trimmed`).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from svcconf.ai_chat import ChatMessage

_LETTERS = re.compile(r"[A-Za-z]+")
_DIGITS = re.compile(r"[0-9]+")
_SPACES = re.compile(r"\s+")
_OTHER_SCRIPTS = re.compile(r"[^\x00-\x7f]+")
LETTERS_PER_TOKEN = 4.0
DIGITS_PER_TOKEN = 2.7
PUNCTUATION_PER_TOKEN = 1.5
SPACES_PER_TOKEN = 10.0
# A message's own envelope in the request: its role, its block's type, the separators.
MESSAGE_OVERHEAD_TOKENS = 12
# Messages are left out this many at a time, so the first one sent stays the same for several turns and the
# provider's prompt cache keeps reading the history after it (the breakpoint is on the last assistant turn).
TRIM_STEP = 10


def _covered(pattern: re.Pattern[str], text: str) -> int:
    return len(text) - len(pattern.sub("", text))


def estimated_tokens(text: str) -> int:
    """The tokens a provider's tokenizer would make of `text`, estimated from its character classes."""
    letters = _covered(_LETTERS, text)
    digits = _covered(_DIGITS, text)
    spaces = _covered(_SPACES, text)
    other_scripts = _covered(_OTHER_SCRIPTS, text)
    punctuation = len(text) - letters - digits - spaces - other_scripts
    estimate = (
        letters / LETTERS_PER_TOKEN
        + digits / DIGITS_PER_TOKEN
        + punctuation / PUNCTUATION_PER_TOKEN
        + spaces / SPACES_PER_TOKEN
        + other_scripts
    )
    return round(estimate)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def estimated_request_tokens(
    system: str, messages: Sequence[Mapping[str, Any]], output_config: Mapping[str, Any] | None = None
) -> int:
    """The input tokens of a Messages API request: its system prompt, its messages' blocks, its output schema."""
    total = estimated_tokens(system) + (estimated_tokens(_text(output_config)) if output_config else 0)
    for message in messages:
        content = message.get("content")
        blocks = content if isinstance(content, list) else [content]
        total += MESSAGE_OVERHEAD_TOKENS + sum(estimated_tokens(_text(block)) for block in blocks)
    return total


def first_sent(messages: Sequence[ChatMessage], room: int) -> int:
    """The index of the oldest message sent: the newest that fit in `room` tokens, left out `TRIM_STEP` at a time
    (the newest message is sent whatever its size)."""
    left_out = len(messages) - newest_that_fit(messages, room)
    if not left_out:
        return 0
    return min(len(messages) - 1, -(-left_out // TRIM_STEP) * TRIM_STEP)


def newest_that_fit(messages: Sequence[ChatMessage], room: int) -> int:
    """How many of the newest messages fit in `room` tokens: at least the newest one, whatever its size."""
    kept, used = 0, 0
    for message in reversed(messages):
        cost = MESSAGE_OVERHEAD_TOKENS + estimated_tokens(message.content)
        if kept and used + cost > room:
            break
        kept, used = kept + 1, used + cost
    return kept
