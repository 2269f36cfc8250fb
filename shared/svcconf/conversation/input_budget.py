"""What one turn may send the model: the input budget (`SVC_AI_MAX_INPUT_TOKENS`, docs/06-ai.md, Input budget).

v4: the budget is per turn and counts everything sent. The fixed part always goes: the system prompt, the current
configuration (or the live guild) in the compact form, `style`, `questionnaire_data`, the files (each image or
PDF at its allowance, svcconf.ai.token_estimate) and the newest user message with what follows it. A turn whose
fixed part alone passes the budget is a 400 naming its largest field: sending it anyway was the cost hole (one
1 MB turn sent 187,489 tokens against 60,000). Then the older messages, newest first, as they fit; the ones left
out are counted in the answer (`history_trimmed`). Tokens are estimated by svcconf.ai.token_estimate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from svcconf.ai.token_estimate import MESSAGE_OVERHEAD_TOKENS, estimated_tokens, estimated_value_tokens
from svcconf.errors import BadRequest, FieldError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from svcconf.conversation.models import ChatMessage

# Messages are left out this many at a time, so the first one sent stays the same for several turns and the
# provider's prompt cache keeps reading the history after it (the breakpoint is on the last assistant turn).
TRIM_STEP = 10


def fixed_tail(messages: Sequence[ChatMessage]) -> int:
    """The index of the newest user message (what follows it is sent with it); the newest message without one."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "user":
            return index
    return max(0, len(messages) - 1)


@dataclass(frozen=True)
class FixedPart:
    """The tokens of what a turn always sends: the whole, and each request field's share of it."""

    tokens: int
    fields: Mapping[str, int]

    def check(self, budget: int) -> None:
        """A 400 naming the largest field when the fixed part alone passes the budget."""
        if self.tokens <= budget:
            return
        field = max(self.fields, key=lambda name: self.fields[name]) if self.fields else "messages"
        message = (
            f"is about {self.fields.get(field, 0):,} tokens, and with the rest of what every turn sends (about "
            f"{self.tokens:,} in all) it passes the input budget of {budget:,} tokens (SVC_AI_MAX_INPUT_TOKENS): "
            "send less of it"
        )
        raise BadRequest(f"{field}: {message}", details=[FieldError(field=field, message=message)])


def fixed_fields(
    *,
    tail: Sequence[ChatMessage],
    tail_start: int,
    config_field: str,
    config: Any,
    style: Any,
    questionnaire_data: Any,
    file_tokens: Mapping[str, int],
) -> dict[str, int]:
    """Each request field's tokens in the fixed part (its files at their allowances), for naming the largest."""
    fields = {f"messages[{tail_start + i}].content": estimated_tokens(m.content) for i, m in enumerate(tail)}
    for name, value in ((config_field, config), ("style", style), ("questionnaire_data", questionnaire_data)):
        if value:
            fields[name] = estimated_value_tokens(value)
    fields.update({name: tokens for name, tokens in file_tokens.items() if tokens})
    return fields


def first_sent(messages: Sequence[ChatMessage], room: int, *, keep_newest: bool = True) -> int:
    """The index of the oldest message sent: the newest that fit in `room` tokens, left out `TRIM_STEP` at a time
    (with `keep_newest`, the newest message is sent whatever its size; the older messages of a turn go only as
    they fit)."""
    left_out = len(messages) - newest_that_fit(messages, room, keep_newest=keep_newest)
    if not left_out:
        return 0
    return min(len(messages) - (1 if keep_newest else 0), -(-left_out // TRIM_STEP) * TRIM_STEP)


def newest_that_fit(messages: Sequence[ChatMessage], room: int, *, keep_newest: bool = True) -> int:
    """How many of the newest messages fit in `room` tokens: with `keep_newest`, at least the newest one, whatever
    its size."""
    kept, used = 0, 0
    for message in reversed(messages):
        cost = MESSAGE_OVERHEAD_TOKENS + estimated_tokens(message.content)
        if (kept or not keep_newest) and used + cost > room:
            break
        kept, used = kept + 1, used + cost
    return kept


# What a repair round adds to the prompt besides the first answer: the problems found, and the ask to fix them.
REPAIR_ASK_TOKENS = 1_000


def turn_reservation(input_tokens: int, max_tokens: int, repair_max_tokens: int) -> int:
    """The day's tokens a turn reserves before its call: its input and `max_tokens`, and one repair round (the same
    input again, the first answer sent back, the problems, and the repair's own answer)."""
    repair = input_tokens + max_tokens + REPAIR_ASK_TOKENS + repair_max_tokens
    return input_tokens + max_tokens + repair
