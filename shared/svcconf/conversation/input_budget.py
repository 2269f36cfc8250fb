"""What one turn may send the model: the input budget (`SVC_AI_MAX_INPUT_TOKENS`, docs/06-ai.md, Input budget).

The system prompt and the current configuration are always sent; then the newest messages that fit; the older
ones are left out (the configuration carries the state) and the answer says how many (`history_trimmed`). Tokens
are estimated by svcconf.ai.token_estimate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from svcconf.ai.token_estimate import MESSAGE_OVERHEAD_TOKENS, estimated_tokens

if TYPE_CHECKING:
    from collections.abc import Sequence

    from svcconf.conversation.models import ChatMessage

# Messages are left out this many at a time, so the first one sent stays the same for several turns and the
# provider's prompt cache keeps reading the history after it (the breakpoint is on the last assistant turn).
TRIM_STEP = 10


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
