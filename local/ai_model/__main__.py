"""`python -m local.ai_model --port 8791`: the local model alone, with the settings to point the service at it."""

from __future__ import annotations

import argparse
import threading

from local.ai_model import LOCAL_API_KEY, start_local_model
from local.ai_model.server import FIRST_TOKEN_SECONDS, TOKENS_PER_SECOND


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Run the deterministic local model (Messages API) on loopback.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8791)
    parser.add_argument("--cache-min-tokens", type=int, default=None, help="default: the model's own minimum")
    parser.add_argument("--first-token-seconds", type=float, default=FIRST_TOKEN_SECONDS)
    parser.add_argument("--tokens-per-second", type=float, default=TOKENS_PER_SECOND, help="0: answer at once")
    args = parser.parse_args(argv)
    server = start_local_model(
        args.host,
        args.port,
        cache_min_tokens=args.cache_min_tokens,
        first_token_seconds=args.first_token_seconds,
        tokens_per_second=args.tokens_per_second,
    )
    print(f"local model on {server.base_url}/v1/messages")
    print("settings for the service:")
    print(f"  ANTHROPIC_BASE_URL={server.base_url}")
    print(f"  ANTHROPIC_API_KEY={LOCAL_API_KEY}")
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.shutdown()


if __name__ == "__main__":
    main()
