"""Tokens a request will cost, estimated before the call (the input budget of svcconf.conversation.input_budget).

Tokens are estimated before the call, from the classes of the characters sent: a tokenizer gives a word of
letters about one token for four characters, punctuation (JSON's quotes, braces and colons) about one for one and
a half, digits one for under three, each character of another script one, whitespace little. Prose thus costs
fewer tokens per character than a configuration's JSON, as it does at the provider; the estimate stays within
15 % of the provider's reported count on both (tests/integration/test_input_budget_turns.py).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

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
# What a file given to the model by URL costs at most (the provider reads it; the service never fetches it): an
# image at the provider's cap for one image, a PDF at 2,000 tokens a page for the 20 pages the service allows.
IMAGE_TOKENS = 1_600
PDF_PAGE_TOKENS = 2_000
PDF_MAX_PAGES = 20
PDF_TOKENS = PDF_PAGE_TOKENS * PDF_MAX_PAGES


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


def estimated_value_tokens(value: Any) -> int:
    """The tokens of a value as the prompt carries it (compact JSON; a string as it is)."""
    return estimated_tokens(_text(value))


def file_block_tokens(block: Any) -> int:
    """What a message's file block costs at most: its allowance (an image, a PDF); 0 for any other block."""
    kind = block.get("type") if isinstance(block, dict) else None
    return IMAGE_TOKENS if kind == "image" else PDF_TOKENS if kind == "document" else 0


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def estimated_request_tokens(
    system: str, messages: Sequence[Mapping[str, Any]], output_config: Mapping[str, Any] | None = None
) -> int:
    """The input tokens of a Messages API request: its system prompt, its messages' blocks (a file at its allowance),
    its output schema."""
    total = estimated_tokens(system) + (estimated_tokens(_text(output_config)) if output_config else 0)
    for message in messages:
        content = message.get("content")
        blocks = content if isinstance(content, list) else [content]
        total += MESSAGE_OVERHEAD_TOKENS + sum(
            estimated_tokens(_text(block)) + file_block_tokens(block) for block in blocks
        )
    return total
