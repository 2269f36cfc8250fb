"""The data `make run` and `make invoke` seed into the embedded services, so that the banner's curls and every
file in events/ work as they stand: a deployment code, a chat account linked to the dev user, and (for the
deploy worker's event) a queued deployment.

Everything is written by the layer's own code (svcconf), in this process, with the environment the template
gives the function that would write it in AWS: the seeded items are exactly what the service writes itself.
"""

from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

from local.environ import environment
from local.resources import FunctionSpec, all_functions, layers
from local.samples import SAMPLE_CONFIGURATION
from local.template import LOCAL_NAME_PREFIX, Template

DEV_USER = "dev-user"  # the `sub` of the banner's user token and of the bearer token in events/*.json
DEV_ADMIN = "dev-admin"
DEMO_CODE = "SVC-DEMO-2026"  # events/getConfigByCode.json asks for it
DEMO_PROJECT_ID = "sample-project"  # events/deployToChat.json and events/deployWorker.json
DEMO_PROJECT_NAME = "Sample community"
BUILD_GUILD_ID = "1191000000000001005"  # the sandbox's "Alice's Build Lab": empty, alice owns it, for deploys
LINKED_USERNAME = "alice"  # the sandbox user whose account the seeding links to DEV_USER


class SeedingRunner(Protocol):
    """What seeding needs of the runner (local/runner.py's Runner, which imports this module)."""

    tpl: Template
    chat_sandbox: Any  # the sandbox's server, None when it is not running

    def function_environ(self, spec: FunctionSpec, function_name: str) -> dict[str, str]: ...

    def mint_sample_code(self) -> tuple[str, str]: ...


@dataclass
class Seeded:
    """What was seeded, for the banner; `problems` says what could not be and why."""

    sample_code: str | None = None
    sample_code_expires_at: str | None = None
    demo_code: str | None = None
    linked_chat_user: dict[str, str] | None = None  # {id, username} of the account linked to DEV_USER
    problems: list[str] = field(default_factory=list)


def function_named(runner: SeedingRunner, name: str) -> Any:
    """A function of the template by its operation name (the folder under functions/) or its logical id."""
    for spec in all_functions(runner.tpl):
        if name in (spec.logical_id, spec.code_dir.name):
            return spec
    known = ", ".join(sorted(spec.code_dir.name for spec in all_functions(runner.tpl)))
    raise KeyError(f"no function {name!r} in template.yaml (known: {known})")


@contextmanager
def layer_environment(runner: SeedingRunner, function: str) -> Iterator[None]:
    """os.environ as the template sets it for `function`, the layer importable, its cached settings fresh."""
    spec = function_named(runner, function)
    environ = runner.function_environ(spec, spec.function_name or f"{LOCAL_NAME_PREFIX}{spec.logical_id}")
    # The layer logs through Powertools; the runner's terminal wants its own lines, not the seeding's INFO.
    environ |= {"POWERTOOLS_LOG_LEVEL": "WARNING", "AWS_LAMBDA_LOG_LEVEL": "WARNING"}
    for path in reversed([str(runner.tpl.root), *(str(layer.import_dir) for layer in layers(runner.tpl))]):
        if path not in sys.path:
            sys.path.insert(0, path)
    with environment(environ):
        _clear_layer_caches()
        importlib.import_module("svcconf.observability")  # sets the SDK's loggers to INFO, for Lambda's sake
        for sdk in ("boto3", "botocore"):
            logging.getLogger(sdk).setLevel(logging.WARNING)  # the runner's terminal is not a Lambda's log
        try:
            yield
        finally:
            _clear_layer_caches()


def _clear_layer_caches() -> None:
    for module_name, cached in (("svcconf.settings", "get_settings"), ("svcconf.chat", "get_chat_client")):
        module = sys.modules.get(module_name)
        if module is not None:
            getattr(module, cached).cache_clear()


def sandbox_user(runner: SeedingRunner, username: str) -> dict[str, Any] | None:
    state = getattr(runner.chat_sandbox, "state", None)
    if state is None:
        return None
    with state.lock:
        return next((dict(user) for user in state.users.values() if user.get("username") == username), None)


def seed_service(runner: SeedingRunner) -> Seeded:
    """The sample code (random, SAMPLE_CONFIGURATION), DEMO_CODE, and alice's chat account linked to DEV_USER."""
    seeded = Seeded()
    try:
        seeded.sample_code, seeded.sample_code_expires_at = runner.mint_sample_code()
    except Exception as exc:
        seeded.problems.append(f"sample code not minted: {type(exc).__name__}: {exc}")
    alice = sandbox_user(runner, LINKED_USERNAME)
    try:
        with layer_environment(runner, "getConfigByCode"):
            seeded.demo_code = _store_demo_code(SAMPLE_CONFIGURATION, alice["id"] if alice else None)
    except Exception as exc:
        seeded.problems.append(f"{DEMO_CODE} not stored: {type(exc).__name__}: {exc}")
    if alice is None:
        seeded.problems.append("no chat account linked: the sandbox is not running (CHAT_API_BASE_URL is set)")
        return seeded
    try:
        with layer_environment(runner, "chatAuth"):
            seeded.linked_chat_user = _link_chat_account(runner, alice["id"])
    except Exception as exc:
        seeded.problems.append(f"{LINKED_USERNAME} not linked to {DEV_USER}: {type(exc).__name__}: {exc}")
    return seeded


def _store_demo_code(configuration: dict[str, Any], chat_user_id: str | None) -> str:
    """DEMO_CODE with the sample configuration, bound to the linked chat user: the codes store's own insert."""
    store = importlib.import_module("svcconf.store.codes")
    settings = importlib.import_module("svcconf.settings").get_settings()
    now = datetime.now(UTC)
    record = store.CodeRecord(
        code=DEMO_CODE,
        project_id=DEMO_PROJECT_ID,
        project_name=DEMO_PROJECT_NAME,
        configuration=configuration,
        chat_user_id=chat_user_id,
        created_at=now,
        expires_at=now + timedelta(hours=settings.code_ttl_hours),
    )
    store.CodeRepository(settings.codes_table).insert(record)  # False if it exists: it is there either way
    return DEMO_CODE


def _link_chat_account(runner: SeedingRunner, chat_user_id: str) -> dict[str, str]:
    """What chatAuth does for DEV_USER when the user signs in with the sandbox: a sign-in's state minted, the code
    the sandbox issues for its PKCE challenge, and the code exchanged with the state."""
    sign_in = importlib.import_module("svcconf.accounts.sign_in")
    auth = importlib.import_module("svcconf.api.auth")
    redirect_uri = importlib.import_module("svcconf.settings").get_settings().chat_redirect_uris[0]
    user = auth.BearerUser(sub=DEV_USER)
    state, code = start_sandbox_sign_in(runner, user, redirect_uri, chat_user_id)
    identity = sign_in.finish_sign_in(code, redirect_uri, state, user)
    return {"id": identity.chatUserId, "username": identity.chatUsername}


def start_sandbox_sign_in(runner: SeedingRunner, user: Any, redirect_uri: str, chat_user_id: str) -> tuple[str, str]:
    """(state, code): chatAuth's first step for the bearer user (`replace: true`, so a linked user may sign in
    again), and the code the sandbox issues when the chat user approves it (bound to the state's PKCE challenge).
    Run inside layer_environment(runner, "chatAuth")."""
    sign_in = importlib.import_module("svcconf.accounts.sign_in")
    started = sign_in.start_sign_in(user, redirect_uri, replace=True)
    challenge = parse_qs(urlsplit(started.authorize_url).query)["code_challenge"][0]
    code = runner.chat_sandbox.state.mint_code(chat_user_id, redirect_uri, code_challenge=challenge)
    return str(started.state), str(code)


def seed_deployment(runner: SeedingRunner, job: dict[str, Any], chat_user_id: str) -> str:
    """A queued deployment of the sample configuration to BUILD_GUILD_ID for a deploy job (the worker's
    message), stored and locked as deployToChat stores it; says what it did."""
    with layer_environment(runner, "deployToChat"):
        store = importlib.import_module("svcconf.store.deployment_records")
        items = importlib.import_module("svcconf.store.deployment_items")
        deployments = importlib.import_module("svcconf.deployments.common")
        settings = importlib.import_module("svcconf.settings").get_settings()
        repository = store.DeploymentRepository(settings.deployments_table)
        user_id, project_id, deployment_id = job["user_id"], job["project_id"], job["deployment_id"]
        if repository.get(user_id, project_id, deployment_id) is not None:
            return f"deployment {deployment_id} is already stored"
        guild = runner.chat_sandbox.state.guild(BUILD_GUILD_ID)
        now = datetime.now(UTC)
        record = items.DeploymentRecord(
            deployment_id=deployment_id,
            kind="deploy",
            user_id=user_id,
            chat_user_id=chat_user_id,
            project_id=project_id,
            project_name=DEMO_PROJECT_NAME,
            guild_id=guild["id"],
            guild_name=guild["name"],
            status="queued",
            configuration=SAMPLE_CONFIGURATION,
            created_at=now,
            updated_at=now,
        )
        epoch = int(now.timestamp())
        repository.start(record, lock_expiration=epoch + deployments.LOCK_SECONDS, now=epoch)
        return f"queued deployment {deployment_id} of the sample configuration to {guild['name']} ({guild['id']})"


def seed_template_job(runner: SeedingRunner, message: dict[str, Any]) -> str:
    """The running job a template worker's chunk message names, at that chunk's round, as seedTemplates and the
    round's planning would have stored it; says what it did."""
    with layer_environment(runner, "seedTemplates"):
        store = importlib.import_module("svcconf.store.templates")
        jobs = importlib.import_module("svcconf.store.seeding_jobs")
        seeding = importlib.import_module("svcconf.templates.seeding")
        settings = importlib.import_module("svcconf.settings").get_settings()
        repository = store.TemplateRepository(settings.templates_table)
        job_id, chunk_id, count = message["job_id"], message["chunk_id"], int(message["count"])
        if repository.get_job(job_id) is not None:
            return f"template job {job_id} is already stored"
        now = datetime.now(UTC)
        job = jobs.JobRecord(job_id=job_id, requested=count, requested_by="dev-admin", created_at=now, updated_at=now)
        epoch = int(now.timestamp())
        repository.start(job, lock_expiration=epoch + seeding.LOCK_SECONDS, now=epoch)
        round_number = int(str(chunk_id).split("-")[0])
        repository.start_round(job, round_number, {chunk_id: count}, now)
        return f"started template job {job_id} for {count} templates (round {round_number}: chunk {chunk_id})"
