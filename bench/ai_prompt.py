"""What every svcAiChat call sends before the conversation: the system prompt and the answer's JSON schema, in
tokens as `svcconf.ai.token_estimate` counts them (the input budget's estimate), and the prompt-cache minimum they
must pass. `python -m bench.ai_prompt`; docs/06-ai.md keeps the figures before and after configuration v4."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run() -> None:
    sys.path[:0] = [str(ROOT / "shared")]
    from svcconf.ai.client import output_schema
    from svcconf.ai.token_estimate import estimated_tokens
    from svcconf.conversation.envelope import ChatTurn
    from svcconf.conversation.prompt import COMMUNITY_RULES, SYSTEM_PROMPT

    schema = json.dumps(output_schema(ChatTurn), separators=(",", ":"))
    prompt, answer = estimated_tokens(SYSTEM_PROMPT), estimated_tokens(schema)
    print("\nsvcAiChat's fixed input (estimated tokens)")
    print(f"  system prompt     {prompt:>7,} ({len(SYSTEM_PROMPT):,} characters)")
    print(f"    of which v4     {estimated_tokens(COMMUNITY_RULES):>7,} (the community objects' shape and limits)")
    print(f"  answer's schema   {answer:>7,} ({len(schema):,} characters)")
    print(f"  in all            {prompt + answer:>7,}")


if __name__ == "__main__":
    run()
