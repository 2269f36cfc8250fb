"""`make run`'s settings: the variables it reads and the local defaults it fills in, and what a sandbox keeps."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from local.lambda_runtime import DEFAULT_CONCURRENCY

REPO_ROOT = Path(__file__).resolve().parent.parent
TEMPLATE_PATH = REPO_ROOT / "template.yaml"
DEFAULT_PORT = 3000

# Local defaults: dev-only values, printed on purpose so that curl works out of the box.
LOCAL_JWT_SECRET = "local-dev-jwt-secret-not-for-production-0123456789abcdef0123456789abcdef"  # noqa: S105
LOCAL_BOT_TOKEN = "local-dev-bot-token"  # noqa: S105
LOCAL_REDIRECT_URIS = "http://127.0.0.1:5173/auth/callback"
PASS_THROUGH_PREFIXES = ("CHAT_", "ANTHROPIC_")
# The limits per user (docs/07-operations.md, Limits): set in make run's environment, they reach every function.
PASS_THROUGH_NAMES = (
    "SVC_AI_TURNS_PER_MINUTE",
    "SVC_AI_TOKENS_PER_DAY",
    "SVC_PLATFORM_READS_PER_MINUTE",
    "SVC_AI_MAX_INPUT_TOKENS",
    "SVC_BOT_API_KEY",  # the bot's own key to this service (v4); unset: x-bot-token is the bot token
)
AI_PROVIDERS = ("", "anthropic", "local")
# Variables whose value is a secret: put into the template's Secrets Manager secret when the function's
# environment names one by its id variable, else given to the function in clear. The id variable follows the
# settings' naming: SVC_JWT_SECRET -> SVC_JWT_SECRET_ID, SVC_BOT_TOKEN -> SVC_BOT_TOKEN_SECRET_ID.
SECRET_VARIABLES = ("SVC_JWT_SECRET", "SVC_BOT_TOKEN", "CHAT_CLIENT_SECRET", "ANTHROPIC_API_KEY")
SECRET_ID_VARIABLE = {name: f"{name.removesuffix('_SECRET')}_SECRET_ID" for name in SECRET_VARIABLES}
_SECRET_WORDS = ("SECRET", "TOKEN", "KEY", "PASSWORD")  # a set value whose name has one is printed as "(set)"
# What a sandbox keeps from the runner's environment; everything else comes from the template, like Lambda.
SYSTEM_VARIABLES = re.compile(
    r"^(PATH|HOME|USER|LOGNAME|LANG|LANGUAGE|LC_\w+|TZ|TMPDIR|TEMP|TMP|PYTHON\w*|VIRTUAL_ENV|SSL_CERT_\w+|"
    r"REQUESTS_CA_BUNDLE|CURL_CA_BUNDLE|(?i:https?_proxy|no_proxy|all_proxy)|COVERAGE_\w+)$"
)


# ---------------------------------------------------------------- local settings


@dataclass
class LocalSettings:
    """The variables `make run` reads, with the local defaults it filled in."""

    values: dict[str, str]
    defaults_used: set[str]
    concurrency: int
    ai_provider: str = ""  # SVC_AI_PROVIDER: "local" serves the local model; unset: the provider's API
    preload_libraries: bool = True  # sandboxes forked with the libraries imported; make invoke: fresh ones
    shared_clock: bool = False  # SVC_LOCAL_SHARED_CLOCK=1: the functions' now is the chat sandbox's (it moves)
    prewarm: bool = True  # SVC_LOCAL_PREWARM=0: a function's first sandbox starts on its first request

    @classmethod
    def from_environ(cls, environ: dict[str, str]) -> LocalSettings:
        values = {k: v for k, v in environ.items() if k.startswith(PASS_THROUGH_PREFIXES) or k in PASS_THROUGH_NAMES}
        defaults_used = set()
        for name, default in (("SVC_JWT_SECRET", LOCAL_JWT_SECRET), ("SVC_BOT_TOKEN", LOCAL_BOT_TOKEN)):
            values[name] = environ.get(name) or default
            if not environ.get(name):
                defaults_used.add(name)
        if not values.get("CHAT_REDIRECT_URIS"):
            values["CHAT_REDIRECT_URIS"] = LOCAL_REDIRECT_URIS
            defaults_used.add("CHAT_REDIRECT_URIS")
        concurrency = int(environ.get("SVC_LOCAL_CONCURRENCY") or DEFAULT_CONCURRENCY)
        ai_provider = (environ.get("SVC_AI_PROVIDER") or "").strip().lower()
        if ai_provider not in AI_PROVIDERS:
            raise SystemExit(f"SVC_AI_PROVIDER={ai_provider}: use 'local' (the local model) or leave it unset")
        return cls(
            values=values,
            defaults_used=defaults_used,
            concurrency=max(1, concurrency),
            ai_provider=ai_provider,
            shared_clock=environ.get("SVC_LOCAL_SHARED_CLOCK") == "1",
            prewarm=environ.get("SVC_LOCAL_PREWARM") != "0",
        )

    def use_local_model(self, base_url: str, api_key: str) -> None:
        """Point the AI functions at the local model: its URL and a placeholder key (into the key's secret)."""
        for name, value in (("ANTHROPIC_BASE_URL", base_url), ("ANTHROPIC_API_KEY", api_key)):
            self.values[name] = value
            self.defaults_used.add(name)

    def use_sandbox(self, base_url: str, application: dict[str, Any]) -> None:
        """Point the functions at the sandbox and, unless set, use its OAuth2 client."""
        self.values["CHAT_API_BASE_URL"] = base_url
        self.defaults_used.add("CHAT_API_BASE_URL")
        if not self.values.get("CHAT_AUTHORIZE_URL"):  # the sign-in's authorize page (v4: the sandbox's)
            self.values["CHAT_AUTHORIZE_URL"] = base_url.split("/api/", 1)[0] + "/oauth2/authorize"
            self.defaults_used.add("CHAT_AUTHORIZE_URL")
        for name, default in (
            ("CHAT_CLIENT_ID", str(application.get("client_id", ""))),
            ("CHAT_CLIENT_SECRET", str(application.get("client_secret", ""))),
        ):
            if not self.values.get(name) and default:
                self.values[name] = default
                self.defaults_used.add(name)

    def describe(self, name: str, *, unset_note: str = "unset") -> str:
        value = self.values.get(name)
        if not value:
            return f"{name}: ({unset_note})"
        if name in self.defaults_used:
            return f"{name}: {value} (local default)"
        return f"{name}: (set)" if any(word in name for word in _SECRET_WORDS) else f"{name}: {value}"
