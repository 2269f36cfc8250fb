"""`python -m local.ai_model --port 8791`: the local model alone, with the settings to point the service at it."""

from __future__ import annotations

import argparse
import threading

from local.ai_model import LOCAL_API_KEY, start_local_model


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Run the deterministic local model (Messages API) on loopback.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8791)
    parser.add_argument("--cache-min-tokens", type=int, default=1024)
    args = parser.parse_args(argv)
    server = start_local_model(args.host, args.port, cache_min_tokens=args.cache_min_tokens)
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
