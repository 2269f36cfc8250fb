"""`make run`'s runner: starts the moto server, the chat-platform sandbox, the local model, the functions' sandboxes,
the pollers and the API, and stops them.

API Gateway (REST, proxy integration) is emulated by a threading HTTP server (local/gateway_server.py); each
function runs in its own sandbox processes, warm and reused like Lambda sandboxes
(local/lambda_runtime.py); AWS is a moto server provisioned from the template (local/provision.py); SQS-triggered
functions are fed by pollers (local/queues.py).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import os
import socket
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from local.function_environment import logging_environment, raw_environment
from local.gateway import ApiGateway
from local.gateway_server import ApiServer
from local.lambda_runtime import FunctionRuntime
from local.queues import QueuePoller, ScheduleFirer
from local.resources import FunctionSpec, api_functions, function_layers, layers, worker_functions
from local.samples import SAMPLE_CONFIGURATION, SAMPLE_PROJECT_ID, SAMPLE_PROJECT_NAME
from local.template import LOCAL_NAME_PREFIX, LOCAL_REGION, QUEUE_TYPE, SECRET_TYPE, Template

if TYPE_CHECKING:
    from collections.abc import Callable

    from local.aws import LocalAws, ProvisionedResources
    from local.seed import Seeded

from local.settings import DEFAULT_PORT, SECRET_ID_VARIABLE, SECRET_VARIABLES, SYSTEM_VARIABLES, LocalSettings

log = logging.getLogger("local.run")  # one logger for the whole runner

SANDBOX_STOP_SECONDS = 2.0  # what a sandbox gets to finish its invocation when the runner stops
_RESOURCE_WORDS = {  # the banner's inventory: one of each, several
    "AWS::DynamoDB::Table": ("table", "tables"),
    "AWS::SQS::Queue": ("queue", "queues"),
    "AWS::SecretsManager::Secret": ("secret", "secrets"),
    "AWS::KMS::Key": ("KMS key", "KMS keys"),
    "AWS::KMS::Alias": ("KMS alias", "KMS aliases"),
    "AWS::Scheduler::ScheduleGroup": ("schedule group", "schedule groups"),
    "AWS::IAM::Role": ("role", "roles"),
    "AWS::S3::Bucket": ("bucket", "buckets"),
}


def _resource_words(kind: str | None, count: int) -> str:
    one, several = _RESOURCE_WORDS.get(kind or "", (str(kind), str(kind)))
    return one if count == 1 else several


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
        # Both import boto3: not at the top, which every sandbox imports.
        from local.aws import LocalAws
        from local.provision import provision

        self.moto = LocalAws(region=LOCAL_REGION)
        self.moto.start()
        links = self.secret_links
        secret_values = {links[name]: value for name, value in self.settings.values.items() if name in links and value}
        self.provisioned = provision(
            self.tpl, secret_values=secret_values, endpoint_url=self.moto_url, region=LOCAL_REGION
        )
        created = Counter(self.tpl.resource_type(logical_id) for logical_id in self.provisioned.refs)
        inventory = ", ".join(f"{count} {_resource_words(kind, count)}" for kind, count in created.items())
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
                preload_libraries=self.settings.preload_libraries,
                clock_offset=self._sandbox_clock_offset() if self.settings.shared_clock else None,
            )
        return self.runtimes[spec.logical_id]

    def _sandbox_clock_offset(self) -> Callable[[], float] | None:
        """SVC_LOCAL_SHARED_CLOCK=1: how far POST /_sandbox/clock moved the chat sandbox's clock, which the
        functions' now then follows (a limit's minute or day passes without waiting for it)."""
        state = getattr(self.chat_sandbox, "state", None)
        return (lambda: state.clock_offset) if state is not None else None

    def _start_api(self) -> None:
        gateway = ApiGateway.from_template(self.tpl, self._runtime, quiet=self.quiet)
        self.server = ApiServer((self.host, self.port), gateway)
        self.port = self.server.server_address[1]
        thread = threading.Thread(target=self.server.serve_forever, args=(0.1,), name="api-gateway", daemon=True)
        thread.start()
        self._threads.append(thread)
        if self.settings.prewarm:
            for runtime in self.runtimes.values():
                runtime.prewarm()
        warming = "warming one sandbox process in the background" if self.settings.prewarm else "cold until asked"
        self.say(f"  API Gateway     {self.base_url}: {len(self.runtimes)} functions, each {warming}")

    def _start_pollers(self) -> None:
        workers = worker_functions(self.tpl)
        if not workers:
            return
        assert self.moto is not None
        assert self.provisioned is not None
        for worker in workers:
            runtime = self._runtime(worker)
            if self.settings.prewarm:
                runtime.prewarm()
            sqs = self.moto.client("sqs", threads=runtime.concurrency)  # one poller thread at most per instance
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
        self._start_scheduler(self.moto.client("sqs"))

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
        self.say(f"  Scheduler       schedules (one-time and recurring) fire on {on}")

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
        stopped_by = time.monotonic() + SANDBOX_STOP_SECONDS  # one wait for all: a busy sandbox is then killed
        for runtime in self.runtimes.values():
            runtime.wait_closed(stopped_by)
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
