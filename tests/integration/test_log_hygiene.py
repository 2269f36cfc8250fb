"""No secret in any log record: every operation of template.yaml driven, its success and failure paths, at DEBUG.

The operations are discovered from the template, so one added later (svcAiChat, seedTemplates, ...) is driven
too: with the steps below when it has them, else with its events/ body under every kind of credential. Logging
is set up as a `LogLevel: DEBUG` deployment has it: the root logger and Powertools' Logger at DEBUG (urllib3's
connection log included); the AWS SDK's loggers stay where the service pins them (observability.py), because
at DEBUG they print Secrets Manager's answers.

Secrets looked for: bearer tokens (valid, expired, forged), the bot token (the right one and a wrong one), the
chat platform's access and refresh tokens (those issued, refreshed and rotated away), OAuth codes, the OAuth
client secret, the JWT secret and the AI provider's API key.
"""

from __future__ import annotations

import importlib
import json
import logging
import secrets
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import boto3
import pytest
from pydantic import SecretStr

from local.queues import ScheduleFirer
from local.resources import api_functions, worker_functions
from local.template import LOCAL_REGION, load_template
from local.tokens import issue_token
from svcconf.api import budget
from svcconf.chat import get_chat_client
from svcconf.clock import utc_now
from svcconf.observability import logger as service_logger
from svcconf.settings import get_settings
from svcconf.store.chat_links import ChatLink, ChatLinkRepository
from tests.helpers.deploy_worker import DeployQueue, WorkerContext, WorkerQueue, deploy_body, sqs_record
from tests.helpers.handlers import BOT_TOKEN, CHAT_CLIENT_SECRET, JWT_SECRET, REDIRECT_URI, ROOT, bearer
from tests.helpers.sign_in import authorize_query
from tests.helpers.template_worker import TemplateQueue

ALICE, BOB = "1191000000000000101", "1191000000000000102"
DEMO, BUILD = "1191000000000001001", "1191000000000001005"
TEMPLATE = load_template(ROOT / "template.yaml")
OPERATIONS = sorted(function.operation for function in api_functions(TEMPLATE))
WORKERS = sorted(function.logical_id for function in worker_functions(TEMPLATE))
BACKUP_EVERY_HOURS = 6
ORDER = ["chatAuth", "validateChatInvite", "getChatGuilds", "deployToChat", "getConfigByCode", "manageBackup"]


class Everything(logging.Handler):
    """Every record of every logger, as text: message, arguments, extra fields, exception and stack."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.texts: list[str] = []
        self.levels: set[int] = set()

    def emit(self, record: logging.LogRecord) -> None:
        self.levels.add(record.levelno)
        parts = [record.getMessage(), repr(record.__dict__)]
        if record.exc_info:
            parts.append(logging.Formatter().formatException(record.exc_info))
        if record.stack_info:
            parts.append(record.stack_info)
        self.texts.append("\n".join(parts))


@pytest.fixture
def every_log_record(monkeypatch: pytest.MonkeyPatch) -> Iterator[Everything]:
    handler = Everything()
    root = logging.getLogger()
    pinned = {"boto3", "botocore"}  # observability.py keeps the SDK at INFO: its DEBUG prints secret values
    loggers = [logging.getLogger(name) for name in list(logging.root.manager.loggerDict) if name not in pinned]
    saved = [(each, each.level) for each in [root, *loggers]]
    root.setLevel(logging.DEBUG)
    root.addHandler(handler)
    service_logger.setLevel("DEBUG")
    for each in loggers:
        if not each.name.startswith(tuple(pinned)) and each.level > logging.DEBUG:
            each.setLevel(logging.DEBUG)
        if not each.propagate:  # Powertools' Logger writes to its own handler only
            each.addHandler(handler)
    yield handler
    root.removeHandler(handler)
    for each, level in saved:
        each.setLevel(level)
        if handler in each.handlers:
            each.removeHandler(handler)


class Drive:
    """Calls operations the way their callers do, and remembers every secret it used or was given."""

    def __init__(self, invoke: Callable[..., Any], platform: Any, aws: Any):
        self.invoke, self.platform, self.aws = invoke, platform, aws
        self.secrets: set[str] = {BOT_TOKEN, CHAT_CLIENT_SECRET, JWT_SECRET, "a-wrong-bot-token-0123456789"}
        self.statuses: dict[str, list[int]] = {}
        self.deployment_code: str | None = None

    def bearer(self, sub: str, **claims: Any) -> dict[str, str]:
        header = bearer(sub, **claims)
        self.secrets.add(header["Authorization"].split()[1])
        return header

    def expired_bearer(self) -> dict[str, str]:
        token = issue_token(JWT_SECRET, "web-user-expired", ttl_seconds=-120)
        self.secrets.add(token)
        return {"Authorization": f"Bearer {token}"}

    def forged_bearer(self) -> dict[str, str]:
        token = issue_token("a-forged-signing-secret-0123456789-0123456789-0123", "web-user-1")
        self.secrets.add(token)
        return {"Authorization": f"Bearer {token}"}

    def code_for(self, user_id: str) -> str:
        code = self.platform.mint_code(user_id)
        self.secrets.add(code)
        return code

    def call(self, operation: str, body: Any, headers: dict[str, str] | None = None, **kwargs: Any):
        response = self.invoke(operation, body, headers=headers, **kwargs)
        self.statuses.setdefault(operation, []).append(response.status)
        if isinstance(response.body, dict) and response.body.get("chatAccessToken"):
            self.secrets.add(response.body["chatAccessToken"])
        if isinstance(response.body, dict) and response.body.get("deployment_code"):
            self.deployment_code = response.body["deployment_code"]
        return response

    def collect_platform_tokens(self) -> None:
        self.secrets.update(self.platform.access_tokens)
        self.secrets.update(self.platform.refresh_tokens)


def store_link(user: str, access_token: str, refresh_token: str, expires_in: timedelta) -> None:
    settings = get_settings()
    ChatLinkRepository(settings.chat_links_table, settings.kms_key_id).save(
        ChatLink(
            user_id=user,
            chat_user_id=BOB,
            chat_username="bob",
            access_token=SecretStr(access_token),
            refresh_token=SecretStr(refresh_token),
            expires_at=utc_now() + expires_in,
            linked_at=utc_now(),
        )
    )


# -- the steps of each operation: success, refusals, and the paths where tokens are refreshed or refused --------


def chat_auth(drive: Drive, monkeypatch: pytest.MonkeyPatch) -> None:
    user = drive.bearer("web-user-1")
    started = drive.call("chatAuth", {"redirect_uri": REDIRECT_URI}, user).body
    drive.secrets.add(started["state"])
    challenge = authorize_query(started["authorize_url"])["code_challenge"]
    code = drive.platform.mint_code(ALICE, REDIRECT_URI, code_challenge=challenge)
    drive.secrets.add(code)
    body = {"code": code, "redirect_uri": REDIRECT_URI, "state": started["state"]}
    assert drive.call("chatAuth", body, user).body["linked"] is True
    drive.call("chatAuth", {"code": drive.code_for(ALICE), "redirect_uri": REDIRECT_URI}, drive.forged_bearer())  # 401
    anonymous = {"drop_headers": ("Authorization",)}
    drive.call("chatAuth", {"code": drive.code_for(BOB), "redirect_uri": REDIRECT_URI}, **anonymous)
    drive.call("chatAuth", {"code": "used-or-unknown-code", "redirect_uri": REDIRECT_URI}, **anonymous)  # 400
    with monkeypatch.context() as wrong_client:
        wrong_client.setenv("CHAT_CLIENT_SECRET_ID", "")
        wrong_client.setenv("CHAT_CLIENT_SECRET", "a-wrong-client-secret-0123456789")
        drive.secrets.add("a-wrong-client-secret-0123456789")
        get_settings.cache_clear()
        get_chat_client.cache_clear()
        body = {"code": drive.code_for(BOB), "redirect_uri": REDIRECT_URI}
        assert drive.call("chatAuth", body, **anonymous).status == 502  # invalid_client
    get_settings.cache_clear()
    get_chat_client.cache_clear()


def validate_chat_invite(drive: Drive, monkeypatch: pytest.MonkeyPatch) -> None:
    user = drive.bearer("web-user-1")
    for invite in ("svcDemo", "https://discord.gg/Old2024y", "noSuchInvite"):
        drive.call("validateChatInvite", {"invite": invite}, user)
    drive.call("validateChatInvite", {"invite": "svcDemo"}, drive.expired_bearer())
    drive.platform.configure(fail_next=4, fail_next_status=503)
    drive.call("validateChatInvite", {"invite": "svcDemo"}, user)  # 502 after retries
    drive.platform.configure(fail_next=0)


def get_chat_guilds(drive: Drive, monkeypatch: pytest.MonkeyPatch) -> None:
    assert drive.call("getChatGuilds", {}, drive.bearer("web-user-1")).status == 200
    store_link("web-user-2", "dev-access-bob-expired", "dev-refresh-bob", timedelta(days=-1))  # refreshed first
    drive.secrets.update({"dev-access-bob-expired", "dev-refresh-bob"})
    assert drive.call("getChatGuilds", {}, drive.bearer("web-user-2")).status == 200
    store_link("web-user-3", "revoked-access-token-0123", "revoked-refresh-token-0123", timedelta(days=3))
    drive.secrets.update({"revoked-access-token-0123", "revoked-refresh-token-0123"})
    assert drive.call("getChatGuilds", {}, drive.bearer("web-user-3")).status == 400  # both refused
    drive.call("getChatGuilds", {}, drive.bearer("never-linked"))
    drive.call("getChatGuilds", {}, drive.forged_bearer())
    drive.collect_platform_tokens()


def deploy_to_chat(drive: Drive, monkeypatch: pytest.MonkeyPatch) -> None:
    user = drive.bearer("web-user-1")
    config = {"name": "Hygiene", "roles": [{"name": "Helper", "permissions": ["SEND_MESSAGES"]}]}
    drive.call("deployToChat", deploy_body(BUILD, config, dry_run=True), user)
    assert drive.call("deployToChat", deploy_body(BUILD, config), user).status == 202
    drive.call("deployToChat", {"action": "info", "project_id": "proj-1"}, user)
    drive.call("deployToChat", deploy_body(DEMO, config), drive.bearer("never-linked"))  # 403
    DeployQueue(drive.aws).drain()  # the worker applies the deploy with the bot's token


def drive_workers(drive: Drive) -> None:
    """Every worker of the template, on what the operations queued."""
    for name in WORKERS:
        if name == "DeployWorkerFunction":
            DeployQueue(drive.aws).drain()
        elif name == "BackupWorkerFunction":
            drive_backup_worker(drive)
        elif name == "TemplateWorkerFunction":
            queue = TemplateQueue(drive.aws)  # seedTemplates queued a job; each message once (the provider fails)
            while messages := queue.receive():
                queue.deliver(sqs_record(messages[0], queue.arn))
                queue.sqs.delete_message(QueueUrl=queue.url, ReceiptHandle=messages[0]["ReceiptHandle"])
            assert queue.delivered, "seedTemplates queued no job for the template worker"
        else:
            raise AssertionError(f"a new worker {name}: drive it here")


def drive_backup_worker(drive: Drive) -> None:
    """manageBackup scheduled DEMO's backups: its EventBridge schedule fired as `make run` fires it, and the backup
    queue drained into the worker, which reads the guild and its members with the bot's own platform token: once
    as the platform answers (a backup stored), once while it fails (recorded, and the job left to SQS's retries)."""
    drive.secrets.add(str(drive.platform.bot["token"]))
    queue = WorkerQueue(drive.aws, "BackupQueue")
    now = [utc_now().timestamp()]
    firer = ScheduleFirer(
        boto3.client("scheduler", region_name=LOCAL_REGION),
        boto3.client("sqs", region_name=LOCAL_REGION),
        {queue.arn: queue.url},
        lambda: now[0],
        threading.Event(),
    )
    worker = importlib.import_module("functions.backupWorker.app").lambda_handler
    bot = {"x-bot-token": BOT_TOKEN}
    results = []
    for failures in (0, 8):
        now[0] += BACKUP_EVERY_HOURS * 3600 + 1
        assert firer.fire_due(), "manageBackup's schedule fired no backup job"
        drive.platform.configure(fail_next=failures, fail_next_status=503)
        while messages := queue.receive():
            budget.stop()
            answer = worker({"Records": [sqs_record(m, queue.arn) for m in messages]}, WorkerContext())
            results.append(bool(answer["batchItemFailures"]))
            for message in messages:
                queue.sqs.delete_message(QueueUrl=queue.url, ReceiptHandle=message["ReceiptHandle"])
        drive.platform.configure(fail_next=0)
        schedule = drive.call("manageBackup", {"action": "list", "guild_id": DEMO}, bot).body["schedule"]
        results.append(schedule["last_result"]["outcome"])
    assert results == [False, "stored", True, "failed"]


def get_config_by_code(drive: Drive, monkeypatch: pytest.MonkeyPatch) -> None:
    assert drive.deployment_code
    bot = {"x-bot-token": BOT_TOKEN}
    drive.call("getConfigByCode", {"code": drive.deployment_code, "user_id": BOB}, bot)  # another user: 403
    assert drive.call("getConfigByCode", {"code": drive.deployment_code, "consume": True}, bot).status == 200
    drive.call("getConfigByCode", {"code": drive.deployment_code}, {"x-bot-token": "a-wrong-bot-token-0123456789"})


def manage_backup(drive: Drive, monkeypatch: pytest.MonkeyPatch) -> None:
    bot = {"x-bot-token": BOT_TOKEN}
    created = drive.call("manageBackup", {"action": "create", "guild_id": DEMO, "backup_data": {"roles": []}}, bot)
    drive.call("manageBackup", {"action": "get", "backup_id": created.body["data"]["backup_id"]}, bot)
    drive.call("manageBackup", {"action": "list", "guild_id": DEMO}, {"x-bot-token": "a-wrong-bot-token-0123456789"})
    body = {"action": "schedule", "guild_id": DEMO, "every_hours": BACKUP_EVERY_HOURS, "keep": 2, "user_id": ALICE}
    assert drive.call("manageBackup", body, bot).status == 200  # the backup worker runs it (drive_workers)


STEPS: dict[str, Callable[[Drive, pytest.MonkeyPatch], None]] = {
    "chatAuth": chat_auth,
    "validateChatInvite": validate_chat_invite,
    "getChatGuilds": get_chat_guilds,
    "deployToChat": deploy_to_chat,
    "getConfigByCode": get_config_by_code,
    "manageBackup": manage_backup,
}


def any_operation(operation: str):
    """An operation without steps of its own: its events/ body under every kind of credential there is."""

    def steps(drive: Drive, monkeypatch: pytest.MonkeyPatch) -> None:
        body = json.loads((ROOT / "events" / f"{operation}.json").read_text()).get("body") or "{}"
        for headers in (
            {**drive.bearer("web-user-1"), "x-bot-token": BOT_TOKEN},
            {**drive.bearer("web-admin", role="admin"), "x-bot-token": BOT_TOKEN},
            {**drive.expired_bearer(), "x-bot-token": "a-wrong-bot-token-0123456789"},
        ):
            drive.call(operation, body, headers)

    return steps


def test_no_secret_appears_in_any_log_record_of_any_operation(
    invoke, platform, aws, function_environment, every_log_record, monkeypatch, capsys
):
    # Given every function's environment, an AI provider key, and the chat platform's tokens as issued
    function_environment(*(function.logical_id for function in api_functions(TEMPLATE)), *WORKERS)
    api_key = "sk-ant-api03-" + secrets.token_urlsafe(32)
    monkeypatch.setenv("ANTHROPIC_API_KEY", api_key)
    # A loopback server that answers 404, never the internet
    monkeypatch.setenv("ANTHROPIC_BASE_URL", get_settings().chat_api_base_url.split("/api/")[0])
    get_settings.cache_clear()
    drive = Drive(invoke, platform, aws)
    drive.secrets.add(api_key)
    drive.collect_platform_tokens()
    # When every operation of the template runs its steps
    for operation in sorted(OPERATIONS, key=lambda name: (ORDER.index(name) if name in ORDER else len(ORDER), name)):
        STEPS.get(operation, any_operation(operation))(drive, monkeypatch)
    drive_workers(drive)
    drive.collect_platform_tokens()
    # Then each was driven, with successes and refusals among the answers
    assert set(drive.statuses) == set(OPERATIONS)
    answered = {status for statuses in drive.statuses.values() for status in statuses}
    assert {200, 201, 202, 400, 401, 403, 502} <= answered
    assert set(drive.statuses["chatAuth"]) == {200, 400, 401, 502}
    # And the logs were written at DEBUG, so the search below is not vacuous
    printed = capsys.readouterr()
    everything = "\n".join(every_log_record.texts) + printed.out + printed.err
    assert logging.DEBUG in every_log_record.levels
    assert "chat platform GET /users/@me/guilds -> 200" in everything
    assert len(drive.secrets) > 20
    # And not one secret is in them
    leaked = sorted(secret for secret in drive.secrets if secret in everything)
    where = [text[:600] for text in every_log_record.texts for secret in leaked if secret in text]
    assert leaked == [], where
