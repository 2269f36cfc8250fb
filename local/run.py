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
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from local.gateway import ApiGateway, ApiServer
from local.lambda_runtime import DEFAULT_CONCURRENCY, FunctionRuntime
from local.queues import QueuePoller
from local.template import (
    LOCAL_NAME_PREFIX,
    LOCAL_REGION,
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

REPO_ROOT = Path(__file__).resolve().parent.parent
TEMPLATE_PATH = REPO_ROOT / "template.yaml"
DEFAULT_PORT = 3000

# Local defaults: dev-only values, printed on purpose so that curl works out of the box.
LOCAL_JWT_SECRET = "local-dev-jwt-secret-not-for-production-0123456789abcdef0123456789abcdef"  # noqa: S105
LOCAL_BOT_TOKEN = "local-dev-bot-token"  # noqa: S105
LOCAL_REDIRECT_URIS = "http://127.0.0.1:5173/auth/callback"
PASS_THROUGH_PREFIXES = ("CHAT_", "ANTHROPIC_")
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

SAMPLE_PROJECT_ID = "local-sample-project"
SAMPLE_PROJECT_NAME = "Local sample project"
SAMPLE_CONFIGURATION: dict[str, Any] = {
    "name": "Local Sample Server",
    "description": "Minted by make run",
    "roles": [
        {
            "name": "Moderator",
            "color": "#3498DB",
            "hoist": True,
            "mentionable": True,
            "permissions": ["KICK_MEMBERS", "MANAGE_MESSAGES"],
        }
    ],
    "categories": [
        {
            "name": "Community",
            "overwrites": [],
            "channels": [
                {"name": "welcome", "type": "text", "topic": "Say hello", "overwrites": []},
                {"name": "lounge", "type": "voice", "user_limit": 10, "overwrites": []},
            ],
        }
    ],
    "channels": [],
}

log = logging.getLogger("local.run")


# ---------------------------------------------------------------- local settings


@dataclass
class LocalSettings:
    """The variables `make run` reads, with the local defaults it filled in."""

    values: dict[str, str]
    defaults_used: set[str]
    concurrency: int

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
        return cls(values=values, defaults_used=defaults_used, concurrency=max(1, concurrency))

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
        return sock.getsockname()[1]


def start_chat_sandbox(bot_token: str) -> tuple[Any, str] | None:
    """The chat-platform sandbox (local/chat_sandbox.py) when it exists: (server, base_url), else None.

    Its bot is given the runner's bot token: the service authenticates to the platform with the same token
    the bot sends it (CONTRACT §3), so both sides must agree.
    """
    try:
        chat_sandbox = importlib.import_module("local.chat_sandbox")
    except ModuleNotFoundError as exc:
        if exc.name != "local.chat_sandbox":
            raise
        return None
    fixture = json.loads(Path(chat_sandbox.DEFAULT_FIXTURE).read_text(encoding="utf-8"))
    fixture["bot"]["token"] = bot_token
    return chat_sandbox.start_sandbox(host="127.0.0.1", port=0, fixture=fixture)


@dataclass
class Runner:
    tpl: Template
    settings: LocalSettings
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    quiet: bool = False
    moto: LocalAws | None = None
    provisioned: ProvisionedResources | None = None
    runtimes: dict[str, FunctionRuntime] = field(default_factory=dict)
    server: ApiServer | None = None
    chat_sandbox: Any = None
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

    def start(self) -> None:
        self._start_chat_sandbox()
        self._start_aws()
        self._start_api()
        self._start_pollers()

    def _start_chat_sandbox(self) -> None:
        if self.settings.values.get("CHAT_API_BASE_URL"):
            return  # the user points the service at a platform of their own
        sandbox = start_chat_sandbox(self.settings.values["SVC_BOT_TOKEN"])
        if sandbox is not None:
            self.chat_sandbox, base_url = sandbox
            state = getattr(self.chat_sandbox, "state", None)
            self.settings.use_sandbox(base_url, dict(getattr(state, "application", None) or {}))

    def _start_aws(self) -> None:
        from local.aws import LocalAws, provision  # imports boto3: not at the top, which every sandbox imports

        self.moto = LocalAws(region=LOCAL_REGION)
        self.moto.start()
        links = self.secret_links
        secret_values = {links[name]: value for name, value in self.settings.values.items() if name in links and value}
        self.provisioned = provision(
            self.tpl, secret_values=secret_values, endpoint_url=self.moto_url, region=LOCAL_REGION
        )

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
            "POWERTOOLS_TRACE_DISABLED": "true",  # no X-Ray daemon locally
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
    if runner.chat_sandbox is None and "CHAT_API_BASE_URL" not in os.environ:
        print("chat-platform sandbox: local/chat_sandbox.py is missing; chat calls go to the platform's host")
    print(f"SVC_LOCAL_CONCURRENCY: up to {settings.concurrency} worker processes per function, started on demand")


def _state(runner: Runner) -> dict[str, Any]:
    """The state file's content, less the sample code: URLs, dev tokens, what reaches the local AWS."""
    from local.tokens import issue_token

    assert runner.provisioned is not None
    globals_env = runner.provisioned.environment_for(None)
    jwt_claims = {
        "issuer": globals_env.get("SVC_JWT_ISSUER") or None,
        "audience": globals_env.get("SVC_JWT_AUDIENCE") or None,
    }
    jwt_secret = runner.settings.values["SVC_JWT_SECRET"]
    return {
        "pid": os.getpid(),
        "base_url": runner.base_url,
        "moto_url": runner.moto_url,
        "region": LOCAL_REGION,
        "user_token": issue_token(jwt_secret, "dev-user", **jwt_claims),
        "admin_token": issue_token(jwt_secret, "dev-admin", role="admin", **jwt_claims),
        "bot_token": runner.settings.values["SVC_BOT_TOKEN"],
        "operations": {f.operation: runner.base_url + f.path for f in api_functions(runner.tpl)},
        "chat_api_base_url": runner.settings.values.get("CHAT_API_BASE_URL"),
        "codes_table": globals_env.get("CODES_TABLE_NAME"),
        "env": globals_env | runner.aws_environment(),
    }


def _banner(runner: Runner, state: dict[str, Any], mint_error: str | None) -> str:
    local_bot_token = "SVC_BOT_TOKEN" in runner.settings.defaults_used
    bot = state["bot_token"] if local_bot_token else "$SVC_BOT_TOKEN"  # never print the user's own token
    operations = {function.operation: function.path for function in api_functions(runner.tpl)}
    chat_platform = runner.settings.values.get("CHAT_API_BASE_URL") or "(the platform's default host)"
    if runner.chat_sandbox is not None:
        chat_platform += "  (sandbox; its control API is under /_sandbox/)"
    lines = [
        "",
        "Server configuration service, local",
        f"  API            {runner.base_url}/functions/<operation>  ({', '.join(operations)})",
        f"  OpenAPI        {runner.base_url}/openapi.json",
        f"  AWS (moto)     {runner.moto_url}",
        f"  chat platform  {chat_platform}",
        f"  user token     {state['user_token']}",
        f"  admin token    {state['admin_token']}",
        f"  bot token      {bot if local_bot_token else '(set: $SVC_BOT_TOKEN)'}",
    ]
    if state.get("sample_code"):
        lines.append(f"  sample code    {state['sample_code']}  (expires {state.get('sample_code_expires_at')})")
    else:
        lines.append(f"  sample code    not minted: {mint_error}")
    lines.append("")
    if "getConfigByCode" in operations:
        code = state.get("sample_code") or "SVC-XXXX-XXXX"
        lines.append(
            f"  curl -s -X POST {runner.base_url}{operations['getConfigByCode']} -H 'Content-Type: application/json'"
            f' -H "x-bot-token: {bot}" -d \'{{"code": "{code}"}}\''
        )
    if "manageBackup" in operations:
        lines.append(
            f"  curl -s -X POST {runner.base_url}{operations['manageBackup']} -H 'Content-Type: application/json'"
            f' -H "x-bot-token: {bot}" -d \'{{"action": "list", "guild_id": "123456789012345678"}}\''
        )
    return "\n".join(lines) + "\n"


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
        runner.start()
        print(f"PORT: {runner.port}" + (" (local default)" if args.port is None and not os.environ.get("PORT") else ""))
        _print_settings(runner)
        state = _state(runner)
        mint_error = None
        try:
            state["sample_code"], state["sample_code_expires_at"] = runner.mint_sample_code()
        except Exception as exc:
            mint_error = f"{type(exc).__name__}: {exc}"
            print(f"could not mint a sample code: {mint_error}", file=sys.stderr)
        print(_banner(runner, state, mint_error))
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
