"""`python -m local.chat_sandbox --port 8790`: the sandbox alone, with the settings to point the service at it."""

from __future__ import annotations

import argparse
import threading

from local.chat_sandbox import DEFAULT_CONFIG, DEFAULT_FIXTURE, start_sandbox


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Run the chat-platform sandbox on loopback.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8790)
    parser.add_argument("--fixture", default=str(DEFAULT_FIXTURE))
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--rate-limit-probability", type=float, default=0.0)
    parser.add_argument("--global-429-probability", type=float, default=0.0)
    parser.add_argument("--error-5xx-probability", type=float, default=0.0)
    parser.add_argument("--bucket-limit", type=int, default=DEFAULT_CONFIG["bucket_limit"])
    parser.add_argument("--bucket-window-seconds", type=float, default=DEFAULT_CONFIG["bucket_window_seconds"])
    args = parser.parse_args(argv)
    server, base_url = start_sandbox(
        args.host,
        args.port,
        args.fixture,
        seed=args.seed,
        rate_limit_probability=args.rate_limit_probability,
        global_429_probability=args.global_429_probability,
        error_5xx_probability=args.error_5xx_probability,
        bucket_limit=args.bucket_limit,
        bucket_window_seconds=args.bucket_window_seconds,
    )
    state = server.state
    print(f"chat-platform sandbox on {base_url} (control API: {base_url.removesuffix('/api/v10')}/_sandbox/)")
    print("settings for the service:")
    print(f"  CHAT_API_BASE_URL={base_url}")
    print(f"  CHAT_CLIENT_ID={state.application['client_id']}")
    print(f"  CHAT_CLIENT_SECRET={state.application['client_secret']}")
    print(f"  CHAT_REDIRECT_URIS={','.join(state.application['redirect_uris'])}")
    print(f"  SVC_BOT_TOKEN={state.bot['token']}")
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.shutdown()


if __name__ == "__main__":
    main()
