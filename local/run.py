"""`make run`: the service on 127.0.0.1 without Docker, read from template.yaml.

API Gateway (REST, proxy integration) is emulated by a threading HTTP server (local/gateway.py); each
function runs in its own spawned worker processes, warm and reused like Lambda sandboxes
(local/lambda_runtime.py); AWS is a moto server provisioned from the template (local/aws.py); SQS-triggered
functions are fed by pollers (local/queues.py). Top-level imports stay light: every sandbox process imports
this module when it starts.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import ipaddress
import json
import logging
import os
import re
import signal
import socket
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from local.gateway import ApiGateway, ApiServer
from local.lambda_runtime import DEFAULT_CONCURRENCY, FunctionRuntime
from local.queues import QueuePoller, ScheduleFirer
from local.samples import SAMPLE_CONFIGURATION, SAMPLE_PROJECT_ID, SAMPLE_PROJECT_NAME
from local.template import (
    LOCAL_NAME_PREFIX,
    LOCAL_REGION,
    QUEUE_TYPE,
    SECRET_TYPE,
    FunctionSpec,
    Template,
    api_functions,
    function_layers,
    layers,
    load_template,
    logging_environment,
    raw_environment,
    worker_functions,
)

if TYPE_CHECKING:
    from local.aws import LocalAws, ProvisionedResources
    from local.seed import Seeded

REPO_ROOT = Path(__file__).resolve().parent.parent
TEMPLATE_PATH = REPO_ROOT / "template.yaml"
DEFAULT_PORT = 3000

# Local defaults: dev-only values, printed on purpose so that curl works out of the box.
LOCAL_JWT_SECRET = "local-dev-jwt-secret-not-for-production-0123456789abcdef0123456789abcdef"  # noqa: S105
LOCAL_BOT_TOKEN = "local-dev-bot-token"  # noqa: S105
LOCAL_REDIRECT_URIS = "http://127.0.0.1:5173/auth/callback"
PASS_THROUGH_PREFIXES = ("CHAT_", "ANTHROPIC_")
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

_RESOURCE_WORDS = {
    "AWS::DynamoDB::Table": "tables",
    "AWS::SQS::Queue": "queues",
    "AWS::SecretsManager::Secret": "secrets",
    "AWS::KMS::Key": "KMS keys",
    "AWS::KMS::Alias": "KMS aliases",
    "AWS::Scheduler::ScheduleGroup": "schedule groups",
    "AWS::IAM::Role": "roles",
}

log = logging.getLogger("local.run")


# ---------------------------------------------------------------- local settings


@dataclass
class LocalSettings:
    """The variables `make run` reads, with the local defaults it filled in."""

    values: dict[str, str]
    defaults_used: set[str]
    concurrency: int
    ai_provider: str = ""  # SVC_AI_PROVIDER: "local" serves the local model; unset: the provider's API

    @classmethod
    def from_environ(cls, environ: dict[str, str]) -> LocalSettings:
        values = {k: v for k, v in environ.items() if k.startswith(PASS_THROUGH_PREFIXES)}
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
        return cls(values=values, defaults_used=defaults_used, concurrency=max(1, concurrency), ai_provider=ai_provider)

    def use_local_model(self, base_url: str, api_key: str) -> None:
        """Point the AI functions at the local model: its URL and a placeholder key (into the key's secret)."""
        for name, value in (("ANTHROPIC_BASE_URL", base_url), ("ANTHROPIC_API_KEY", api_key)):
            self.values[name] = value
            self.defaults_used.add(name)

    def use_sandbox(self, base_url: str, application: dict[str, Any]) -> None:
        """Point the functions at the sandbox and, unless set, use its OAuth2 client."""
        self.values["CHAT_API_BASE_URL"] = base_url
        self.defaults_used.add("CHAT_API_BASE_URL")
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


# ---------------------------------------------------------------- the runner


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def start_chat_sandbox(bot_token: str) -> tuple[Any, str] | None:
    """The chat-platform sandbox (local/chat_sandbox.py) when it exists: (server, base_url), else None.

    Its bot is given the runner's bot token: the service authenticates to the platform with the same token
    the bot sends it (docs/03-api.md, Authentication), so both sides must agree.
    """
    try:
        chat_sandbox = importlib.import_module("local.chat_sandbox")
    except ModuleNotFoundError as exc:
        if exc.name != "local.chat_sandbox":
            raise
        return None
    fixture = json.loads(Path(chat_sandbox.DEFAULT_FIXTURE).read_text(encoding="utf-8"))
    fixture["bot"]["token"] = bot_token
    started: tuple[Any, str] = chat_sandbox.start_sandbox(host="127.0.0.1", port=0, fixture=fixture)
    return started


@dataclass
class Runner:
    tpl: Template
    settings: LocalSettings
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    quiet: bool = False  # no access log
    silent: bool = False  # no progress lines either
    moto: LocalAws | None = None
    provisioned: ProvisionedResources | None = None
    runtimes: dict[str, FunctionRuntime] = field(default_factory=dict)
    server: ApiServer | None = None
    chat_sandbox: Any = None
    local_model: Any = None
    stop_event: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def moto_url(self) -> str:
        return self.moto.url if self.moto is not None else ""

    def aws_environment(self) -> dict[str, str]:
        assert self.moto is not None
        return self.moto.environment()

    @cached_property
    def secret_links(self) -> dict[str, str]:
        """`<id variable>: !Ref <Secret>` in the template's environments: clear variable → secret logical id."""
        secret_of_id = {id_variable: name for name, id_variable in SECRET_ID_VARIABLE.items()}
        links = {}
        served = [*api_functions(self.tpl), *worker_functions(self.tpl)]
        for logical_id in [None, *(spec.logical_id for spec in served)]:
            for name, value in raw_environment(self.tpl, logical_id).items():
                target = value.get("Ref") if isinstance(value, dict) else None
                if name in secret_of_id and target and self.tpl.resource_type(target) == SECRET_TYPE:
                    links[secret_of_id[name]] = target
        return links

    def say(self, message: str) -> None:
        """One progress line: what is starting, so nobody watches a silent terminal."""
        if not self.silent:
            print(message, flush=True)

    def start(self) -> Seeded:
        """Everything `make run` starts, in order, then the seeded data (while the functions' sandboxes warm)."""
        from local.seed import seed_service  # imports the layer's settings: not at the top, like local.aws

        self.start_backends()
        self._start_api()
        self._start_pollers()
        started = time.monotonic()
        self.say("  seeding         a sample code, SVC-DEMO-2026, the dev user linked to a sandbox account ...")
        seeded = seed_service(self)
        self.say(f"  seeding         done ({time.monotonic() - started:.1f} s)")
        return seeded

    def start_backends(self) -> None:
        """What the functions talk to: the chat-platform sandbox and moto with the template's resources."""
        self._start_chat_sandbox()
        self._start_local_model()
        self._start_aws()

    def _start_chat_sandbox(self) -> None:
        if self.settings.values.get("CHAT_API_BASE_URL"):
            self.say(f"  chat platform   {self.settings.values['CHAT_API_BASE_URL']} (CHAT_API_BASE_URL; no sandbox)")
            return  # the user points the service at a platform of their own
        started = time.monotonic()
        self.say("  chat platform   starting the sandbox (local/chat_sandbox) ...")
        sandbox = start_chat_sandbox(self.settings.values["SVC_BOT_TOKEN"])
        if sandbox is not None:
            self.chat_sandbox, base_url = sandbox
            state = getattr(self.chat_sandbox, "state", None)
            self.settings.use_sandbox(base_url, dict(getattr(state, "application", None) or {}))
            self.say(f"  chat platform   sandbox on {base_url} ({time.monotonic() - started:.1f} s)")

    def _start_local_model(self) -> None:
        if self.settings.ai_provider != "local":
            return
        from local.ai_model import LOCAL_API_KEY, start_local_model
        from local.ai_model.server import FIRST_TOKEN_SECONDS, TOKENS_PER_SECOND

        # A real model's pace unless told otherwise (SVC_LOCAL_MODEL_TOKENS_PER_SECOND=0: answers at once). The
        # runner's own settings: read from its environment, never passed to the functions.
        self.local_model = start_local_model(
            host="127.0.0.1",
            port=0,
            first_token_seconds=float(os.environ.get("SVC_LOCAL_MODEL_FIRST_TOKEN_SECONDS") or FIRST_TOKEN_SECONDS),
            tokens_per_second=float(os.environ.get("SVC_LOCAL_MODEL_TOKENS_PER_SECOND") or TOKENS_PER_SECOND),
        )
        self.settings.use_local_model(self.local_model.base_url, LOCAL_API_KEY)

    def _start_aws(self) -> None:
        started = time.monotonic()
        self.say("  AWS             starting moto and creating template.yaml's tables, queues, secrets, keys ...")
        from local.aws import LocalAws, provision  # imports boto3: not at the top, which every sandbox imports

        self.moto = LocalAws(region=LOCAL_REGION)
        self.moto.start()
        links = self.secret_links
        secret_values = {links[name]: value for name, value in self.settings.values.items() if name in links and value}
        self.provisioned = provision(
            self.tpl, secret_values=secret_values, endpoint_url=self.moto_url, region=LOCAL_REGION
        )
        created = Counter(self.tpl.resource_type(logical_id) for logical_id in self.provisioned.refs)
        inventory = ", ".join(f"{count} {_RESOURCE_WORDS.get(kind or '', kind)}" for kind, count in created.items())
        inventory = inventory.replace("1 KMS keys", "1 KMS key")
        self.say(f"  AWS             moto on {self.moto_url}: {inventory} ({time.monotonic() - started:.1f} s)")

    def function_environ(self, spec: FunctionSpec, function_name: str) -> dict[str, str]:
        assert self.provisioned is not None
        environ = {k: v for k, v in os.environ.items() if SYSTEM_VARIABLES.match(k)}  # nothing else leaks in
        environ |= {  # what Lambda itself sets
            "AWS_LAMBDA_FUNCTION_NAME": function_name,
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(spec.memory_size),
            "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
            "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{function_name}",
            **logging_environment(self.tpl, spec.logical_id),
        }
        environ |= self.provisioned.environment_for(spec.logical_id)
        environ |= {
            **self.aws_environment(),
            "POWERTOOLS_METRICS_DISABLED": "true",  # EMF lines on stdout are noise locally
        }
        for name in sorted(set(self.settings.values) | set(SECRET_VARIABLES)):
            value = self.settings.values.get(name)
            if name in self.secret_links:  # the value went into the template's secret, which the function reads
                if not value:  # unset locally: the function sees the setting as not configured
                    environ.pop(SECRET_ID_VARIABLE[name], None)
            elif value:
                environ[name] = value
        return environ

    def _runtime(self, spec: FunctionSpec) -> FunctionRuntime:
        if spec.logical_id not in self.runtimes:
            function_name = spec.function_name or f"{LOCAL_NAME_PREFIX}{spec.logical_id}"
            sys_path = [
                str(spec.code_dir),
                *(str(layer.import_dir) for layer in function_layers(self.tpl, spec)),
                str(self.tpl.root),
            ]
            self.runtimes[spec.logical_id] = FunctionRuntime(
                spec=spec,
                function_name=function_name,
                environ=self.function_environ(spec, function_name),
                sys_path=sys_path,
                concurrency=self.settings.concurrency,
            )
        return self.runtimes[spec.logical_id]

    def _start_api(self) -> None:
        gateway = ApiGateway.from_template(self.tpl, self._runtime, quiet=self.quiet)
        self.server = ApiServer((self.host, self.port), gateway)
        self.port = self.server.server_address[1]
        thread = threading.Thread(target=self.server.serve_forever, args=(0.1,), name="api-gateway", daemon=True)
        thread.start()
        self._threads.append(thread)
        for runtime in self.runtimes.values():
            runtime.prewarm()
        self.say(
            f"  API Gateway     {self.base_url}: {len(self.runtimes)} functions, each warming one sandbox process"
            " in the background"
        )

    def _start_pollers(self) -> None:
        workers = worker_functions(self.tpl)
        if not workers:
            return
        assert self.moto is not None
        assert self.provisioned is not None
        sqs = self.moto.client("sqs")
        for worker in workers:
            runtime = self._runtime(worker)
            runtime.prewarm()
            poller = QueuePoller(
                worker=worker,
                runtime=runtime,
                queue_url=self.provisioned.refs[worker.queue_logical_id],
                queue_arn=self.provisioned.attrs[(worker.queue_logical_id, "Arn")],
                sqs=sqs,
                stop=self.stop_event,
            )
            self._threads.extend(poller.start())
            self.say(f"  SQS             {worker.queue_logical_id} polled for {worker.logical_id}")
        self._start_scheduler(sqs)

    def _start_scheduler(self, sqs: Any) -> None:
        """One-time schedules fire on the sandbox's clock, so moving it forward makes what waits on it due."""
        assert self.moto is not None
        assert self.provisioned is not None
        queues = {
            arn: self.provisioned.refs[logical_id]
            for (logical_id, name), arn in self.provisioned.attrs.items()
            if name == "Arn" and self.tpl.resource_type(logical_id) == QUEUE_TYPE
        }
        sandbox_clock = getattr(getattr(self.chat_sandbox, "state", None), "clock", None)
        firer = ScheduleFirer(self.moto.client("scheduler"), sqs, queues, sandbox_clock or time.time, self.stop_event)
        self._threads.append(firer.start())
        on = "the chat sandbox's clock (POST /_sandbox/clock moves it)" if sandbox_clock else "real time"
        self.say(f"  Scheduler       one-time schedules fire on {on}")

    def mint_sample_code(self) -> tuple[str, str]:
        """A deployment code with SAMPLE_CONFIGURATION, minted by the layer's own code: (code, expires_at)."""
        assert self.provisioned is not None
        os.environ.update(self.provisioned.environment_for(None) | self.aws_environment())
        for path in reversed([str(self.tpl.root), *(str(layer.import_dir) for layer in layers(self.tpl))]):
            if path not in sys.path:
                sys.path.insert(0, path)
        settings_module = importlib.import_module("svcconf.settings")
        settings_module.get_settings.cache_clear()
        codes = importlib.import_module("svcconf.codes")
        minted = codes.mint_code(SAMPLE_PROJECT_ID, SAMPLE_PROJECT_NAME, SAMPLE_CONFIGURATION)
        expires_at = getattr(minted, "expires_at", "")
        return str(minted.code), expires_at.isoformat() if hasattr(expires_at, "isoformat") else str(expires_at)

    def shutdown(self) -> None:
        self.stop_event.set()
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
        for runtime in self.runtimes.values():
            runtime.close()
        if self.moto is not None:
            with contextlib.suppress(Exception):
                self.moto.stop()
        if self.chat_sandbox is not None:
            with contextlib.suppress(Exception):
                self.chat_sandbox.shutdown()
        if self.local_model is not None:
            with contextlib.suppress(Exception):
                self.local_model.shutdown()
        for thread in self._threads:
            thread.join(timeout=3)


# ---------------------------------------------------------------- what it prints and writes


def _print_settings(runner: Runner) -> None:
    settings = runner.settings
    for name in (
        "SVC_JWT_SECRET",
        "SVC_BOT_TOKEN",
        "CHAT_API_BASE_URL",
        "CHAT_CLIENT_ID",
        "CHAT_CLIENT_SECRET",
        "CHAT_REDIRECT_URIS",
        "ANTHROPIC_BASE_URL",
    ):
        print(settings.describe(name))
    print(settings.describe("ANTHROPIC_API_KEY", unset_note="unset: AI operations answer 503"))
    if runner.local_model is not None:
        print(f"SVC_AI_PROVIDER: local (the local model answers on {runner.local_model.base_url}/v1/messages)")
    if runner.chat_sandbox is None and "CHAT_API_BASE_URL" not in os.environ:
        print("chat-platform sandbox: local/chat_sandbox.py is missing; chat calls go to the platform's host")
    print(f"SVC_LOCAL_CONCURRENCY: up to {settings.concurrency} worker processes per function, started on demand")


def _state(runner: Runner) -> dict[str, Any]:
    """The state file's content, less the sample code: URLs, dev tokens, what reaches the local AWS."""
    from local.seed import DEV_ADMIN, DEV_USER
    from local.tokens import issue_token

    assert runner.provisioned is not None
    globals_env = runner.provisioned.environment_for(None)
    jwt_secret = runner.settings.values["SVC_JWT_SECRET"]
    issuer, audience = globals_env.get("SVC_JWT_ISSUER") or None, globals_env.get("SVC_JWT_AUDIENCE") or None
    return {
        "pid": os.getpid(),
        "base_url": runner.base_url,
        "moto_url": runner.moto_url,
        "region": LOCAL_REGION,
        "user_token": issue_token(jwt_secret, DEV_USER, issuer=issuer, audience=audience),
        "admin_token": issue_token(jwt_secret, DEV_ADMIN, role="admin", issuer=issuer, audience=audience),
        "bot_token": runner.settings.values["SVC_BOT_TOKEN"],
        "operations": {f.operation: runner.base_url + f.path for f in api_functions(runner.tpl)},
        "chat_api_base_url": runner.settings.values.get("CHAT_API_BASE_URL"),
        "ai_base_url": runner.settings.values.get("ANTHROPIC_BASE_URL"),
        "codes_table": globals_env.get("CODES_TABLE_NAME"),
        "env": globals_env | runner.aws_environment(),
    }


# Sample requests of the banner: (body, who calls). An operation not listed here (a new one in template.yaml)
# gets `{}` and a pointer to docs/03-api.md; who calls it comes from openapi.json's security then.
_DRY_RUN_CONFIGURATION = {
    "name": "Local Sample Server",
    "roles": [{"name": "Moderator", "color": "#3498DB", "permissions": ["KICK_MEMBERS", "MANAGE_MESSAGES"]}],
    "categories": [{"name": "Community", "channels": [{"name": "welcome", "topic": "Say hello"}]}],
}
SAMPLE_REQUESTS: dict[str, tuple[dict[str, Any], str]] = {
    "getConfigByCode": ({"code": "<sample code>"}, "bot"),
    "manageBackup": ({"action": "list", "guild_id": "1191000000000001001"}, "bot"),
    "validateChatInvite": ({"invite": "https://discord.gg/svcDemo"}, "user"),
    "chatAuth": ({"code": "<oauth code>", "redirect_uri": "<redirect uri>"}, "user"),
    "getChatGuilds": ({}, "user"),
    "deployToChat": (
        {
            "action": "deploy",
            "dry_run": True,
            "guild_id": "1191000000000001005",
            "project_id": SAMPLE_PROJECT_ID,
            "project_name": SAMPLE_PROJECT_NAME,
            "config": _DRY_RUN_CONFIGURATION,
        },
        "user",
    ),
    "svcAiChat": ({"messages": [{"role": "user", "content": "A small gaming community server"}]}, "user"),
    "seedTemplates": ({"count": 5}, "admin"),
}
_SAMPLE_NOTES = {
    "getConfigByCode": "the sample code's configuration (the bot's call)",
    "manageBackup": "the backups of Svc Demo Guild (create one with action create, guild_id, backup_data)",
    "validateChatInvite": "a sandbox invite (also Temp2026x: 7 days; Old2024y: expired)",
    "chatAuth": "signs in with a single-use OAuth code just minted for {linked}, and links it to the user token",
    "getChatGuilds": "{linked}'s servers: the user token is linked to {linked}",
    "deployToChat": "a dry run on Alice's Build Lab; without dry_run it deploys (then action info, project_id)",
    "svcAiChat": "needs ANTHROPIC_API_KEY or SVC_AI_PROVIDER=local (else 503)",
    "seedTemplates": "administrators only: the admin token",
}


def _openapi_security(runner: Runner) -> dict[str, str]:
    """operation → "bot" or "user" from the committed openapi.json's security requirements."""
    try:
        document = json.loads((runner.tpl.root / "openapi.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    found = {}
    for path, methods in (document.get("paths") or {}).items():
        schemes = {name for item in (methods.get("post") or {}).get("security") or [] for name in item}
        found[path.rstrip("/").rsplit("/", 1)[-1]] = "bot" if "botToken" in schemes else "user"
    return found


def _sandbox_lines(runner: Runner) -> list[str]:
    """The sandbox's users with their ids and the servers they manage, its bot, its invites."""
    state = getattr(runner.chat_sandbox, "state", None)
    if state is None:
        return []
    from local.chat_sandbox import control

    _, _, body = control.handle(state, "GET", "/_sandbox/users", b"")  # what GET /_sandbox/users answers
    users = json.loads(body)
    lines = ["", f"Sandbox users (control API: {_sandbox_root(runner)}/_sandbox/, see docs/04-chat-platform.md)"]
    for user in users["users"]:
        manages = "; ".join(
            f"{guild['name']} {guild['id']}" + (" (owner)" if guild["owner"] else "") for guild in user["manages"]
        )
        lines.append(f"  {user['username']:<6} {user['id']}  manages: {manages or 'nothing'}")
    lines.append(f"  bot    {users['bot']['id']}  {users['bot']['username']}")
    with state.lock:
        invites = sorted(state.invites)
    if invites:
        lines.append(f"  invites: {', '.join(invites)}")
    return lines


def _sandbox_root(runner: Runner) -> str:
    return str(runner.settings.values.get("CHAT_API_BASE_URL", "")).split("/api/", 1)[0]


def _banner(runner: Runner, state: dict[str, Any], seeded: Seeded) -> str:
    local_bot_token = "SVC_BOT_TOKEN" in runner.settings.defaults_used
    bot = state["bot_token"] if local_bot_token else "$SVC_BOT_TOKEN"  # never print the user's own token
    operations = {function.operation: function.path for function in api_functions(runner.tpl)}
    chat_platform = runner.settings.values.get("CHAT_API_BASE_URL") or "(the platform's default host)"
    if runner.chat_sandbox is not None:
        chat_platform += "  (the sandbox)"
    linked = seeded.linked_chat_user
    lines = [
        "",
        "Server configuration service, local: everything lives in memory until the runner stops",
        f"  API            {runner.base_url}/functions/<operation>  ({', '.join(operations)})",
        f"  OpenAPI        {runner.base_url}/openapi.json",
        f"  API docs       {runner.base_url}/docs  (Swagger UI: Authorize with the user token below, then Try it out)",
        f"  AWS (moto)     {runner.moto_url}",
        f"  chat platform  {chat_platform}",
        f"  user token     {state['user_token']}",
        f"                 (sub dev-user; {f'linked to the chat user {linked["username"]}' if linked else 'unlinked'})",
        f"  admin token    {state['admin_token']}",
        "                 (sub dev-admin, role admin)",
        f"  bot token      {bot if local_bot_token else '(set: $SVC_BOT_TOKEN)'}",
    ]
    if state.get("sample_code"):
        lines.append(f"  sample code    {state['sample_code']}  (expires {state.get('sample_code_expires_at')})")
    if seeded.demo_code:
        lines.append(f"  demo code      {seeded.demo_code}  (bound to alice: events/getConfigByCode.json)")
    lines.extend(f"  not seeded     {problem}" for problem in seeded.problems)
    lines.extend(_sandbox_lines(runner))
    lines += ["", "Every operation, ready to paste:"]
    security = _openapi_security(runner)
    oauth_code, redirect_uri = _fresh_oauth_code(runner, linked)
    for operation, path in operations.items():
        body, caller = SAMPLE_REQUESTS.get(operation, ({}, security.get(operation, "user")))
        note = _SAMPLE_NOTES.get(operation, f"a sample body is not known here: see {operation} in docs/03-api.md")
        text = json.dumps(body, separators=(", ", ": "))
        text = text.replace("<sample code>", state.get("sample_code") or "SVC-XXXX-XXXX")
        text = text.replace("<oauth code>", oauth_code or "<POST /_sandbox/oauth/codes>")
        text = text.replace("<redirect uri>", redirect_uri)
        header = {
            "bot": f'-H "x-bot-token: {bot}"',
            "user": f"-H 'Authorization: Bearer {state['user_token']}'",
            "admin": f"-H 'Authorization: Bearer {state['admin_token']}'",
        }[caller]
        lines.append(f"  # {operation}: {note.format(linked=linked['username'] if linked else 'alice')}")
        lines.append(
            f"  curl -s -X POST {runner.base_url}{path} -H 'Content-Type: application/json' {header} -d '{text}'"
        )
    if oauth_code and linked:
        lines.append(
            f"  # another OAuth code (single use): curl -s -X POST {_sandbox_root(runner)}/_sandbox/oauth/codes"
            f' -d \'{{"user_id": "{linked["id"]}"}}\''
        )
    lines.append("  # one function with one event, no server: make invoke FN=<operation> (events/<operation>.json)")
    return "\n".join(lines) + "\n"


def _fresh_oauth_code(runner: Runner, linked: dict[str, str] | None) -> tuple[str | None, str]:
    """A single-use sandbox OAuth code for the linked user, for the chatAuth curl; (None, uri) without a sandbox."""
    redirect_uri = runner.settings.values.get("CHAT_REDIRECT_URIS", LOCAL_REDIRECT_URIS).split(",")[0].strip()
    state = getattr(runner.chat_sandbox, "state", None)
    if state is None or linked is None:
        return None, redirect_uri
    return state.mint_code(linked["id"], redirect_uri), redirect_uri


def _write_state(path: Path, state: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(json.dumps(state, indent=2))
    temporary.chmod(0o600)  # holds dev tokens
    temporary.replace(path)


# ---------------------------------------------------------------- entry point


def _loopback(host: str) -> str:
    if host == "localhost":
        return "127.0.0.1"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if address is None or address.version != 4 or not address.is_loopback:
        raise SystemExit(f"--host {host}: the local runner listens on IPv4 loopback addresses (127.x.x.x) only")
    return host


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m local.run", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=None, help=f"API port (default: $PORT or {DEFAULT_PORT})")
    parser.add_argument("--host", default="127.0.0.1", help="loopback address to listen on (default 127.0.0.1)")
    parser.add_argument("--state-file", type=Path, help="write URLs, tokens and the sample code here once ready")
    parser.add_argument("--template", type=Path, default=TEMPLATE_PATH, help=argparse.SUPPRESS)
    parser.add_argument("--quiet", action="store_true", help="no access log")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    log.setLevel(logging.INFO)
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]

    port = args.port if args.port is not None else int(os.environ.get("PORT") or DEFAULT_PORT)
    settings = LocalSettings.from_environ(dict(os.environ))
    runner = Runner(
        tpl=load_template(args.template), settings=settings, host=_loopback(args.host), port=port, quiet=args.quiet
    )

    def request_stop(signum: int, _frame: Any) -> None:
        runner.stop_event.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    try:
        print(f"Starting the service of {args.template.name} without Docker:", flush=True)
        seeded = runner.start()
        print(f"PORT: {runner.port}" + (" (local default)" if args.port is None and not os.environ.get("PORT") else ""))
        _print_settings(runner)
        state = _state(runner)
        state["sample_code"], state["sample_code_expires_at"] = seeded.sample_code, seeded.sample_code_expires_at
        for problem in seeded.problems:
            print(f"could not seed: {problem}", file=sys.stderr)
        print(_banner(runner, state, seeded))
        if args.state_file:
            _write_state(args.state_file, state)
        print(f"Ready on {runner.base_url}", flush=True)
        while not runner.stop_event.wait(0.5):
            pass
        print("Shutting down", flush=True)
    except OSError as exc:
        hint = (
            f" (is something else listening on {runner.host}:{port}? set PORT)" if exc.errno == errno.EADDRINUSE else ""
        )
        print(f"could not start: {exc}{hint}", file=sys.stderr)
        return 1
    finally:
        runner.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
