"""manageBackup `schedule` / `unschedule` and the backup worker: one schedule per guild, its runs, its retention.

The stack of template.yaml in moto, the chat-platform sandbox over HTTP, and `make run`'s own scheduler
(local.queues.ScheduleFirer) firing the guild's EventBridge schedule on a clock the test moves; the backup queue
is drained into functions/backupWorker as Lambda's event source mapping would.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest

from local.queues import ScheduleFirer
from local.template import LOCAL_REGION
from svcconf.api import budget
from svcconf.chat import get_chat_client
from svcconf.settings import get_settings
from tests.helpers.deploy_worker import QUIET, WorkerContext, WorkerQueue, sqs_record

DEMO = "1191000000000001001"  # the bot is in it with MANAGE_ROLES
BOB, CAROL = "1191000000000000102", "1191000000000000103"  # members of DEMO: Bob a Moderator, Carol a Member
MODERATOR, MEMBER = "1191000000000002012", "1191000000000002013"
MEMBER_LIST = "/guilds/{guild_id}/members"  # the paged member list's route in the sandbox's request log
HOUR = 3600.0


class Scheduled:
    """The guild's schedules as EventBridge Scheduler holds them, fired by the runner's firer on a test clock,
    and the backup queue drained into the backup worker."""

    def __init__(self, aws: Any, monkeypatch: pytest.MonkeyPatch):
        self.scheduler = boto3.client("scheduler", region_name=LOCAL_REGION)
        self.queue = WorkerQueue(aws, "BackupQueue")
        self.now = [float(int(datetime.now(UTC).timestamp()))]  # whole seconds, as EventBridge's StartDate
        # The service's clock is the scheduler's: next_run_at, created_at and backup ids follow the test's hours.
        for module in ("schedules", "archive"):
            monkeypatch.setattr(f"svcconf.backups.{module}.utc_now", lambda: datetime.fromtimestamp(self.now[0], UTC))
        sqs = boto3.client("sqs", region_name=LOCAL_REGION)
        self.firer = ScheduleFirer(
            self.scheduler, sqs, {self.queue.arn: self.queue.url}, lambda: self.now[0], threading.Event()
        )

    def schedules(self) -> list[dict[str, Any]]:
        group = get_settings().backup_schedule_group
        return [
            self.scheduler.get_schedule(Name=summary["Name"], GroupName=group)
            for summary in self.scheduler.list_schedules(GroupName=group)["Schedules"]
        ]

    def after(self, hours: float) -> list[dict[str, Any]]:
        """Moves the clock `hours` on, fires what is due, runs the worker on each message; the worker's answers."""
        self.now[0] += hours * HOUR
        self.firer.fire_due()
        return self.drain()

    def drain(self) -> list[dict[str, Any]]:
        from functions.backupWorker.app import lambda_handler

        answers = []
        while messages := self.queue.receive():
            budget.stop()
            answer = lambda_handler({"Records": [sqs_record(m, self.queue.arn) for m in messages]}, WorkerContext())
            answers.append(answer)
            failed = {failure["itemIdentifier"] for failure in answer.get("batchItemFailures", [])}
            for message in messages:
                if message["MessageId"] not in failed:
                    self.queue.sqs.delete_message(QueueUrl=self.queue.url, ReceiptHandle=message["ReceiptHandle"])
        return answers


@pytest.fixture
def scheduled(
    platform: Any, aws: Any, function_environment: Callable[..., None], monkeypatch: pytest.MonkeyPatch
) -> Scheduled:
    function_environment("ManageBackupFunction")
    return Scheduled(aws, monkeypatch)


def schedule(invoke: Callable[..., Any], guild_id: str = DEMO, **fields: Any) -> Any:
    return invoke("manageBackup", {"action": "schedule", "guild_id": guild_id, "every_hours": 6, "keep": 3, **fields})


def listed(invoke: Callable[..., Any], guild_id: str = DEMO) -> dict[str, Any]:
    response = invoke("manageBackup", {"action": "list", "guild_id": guild_id})
    assert response.status == 200, response.body
    return response.body


def scheduled_backups(guild_id: str = DEMO) -> list[dict[str, Any]]:
    """The guild's scheduled backups as the table holds them, newest first."""
    items = (
        boto3.resource("dynamodb", region_name=LOCAL_REGION)
        .Table(get_settings().backups_table)
        .query(
            KeyConditionExpression="guild_id = :g AND begins_with(sk, :p)",
            ExpressionAttributeValues={":g": guild_id, ":p": "BACKUP#"},
            ScanIndexForward=False,
        )["Items"]
    )
    return [item for item in items if item.get("retention") == "scheduled"]


def second_actor_adds_a_role(name: str) -> str:
    """Someone else changes the guild, through the platform's HTTP API."""
    return get_chat_client().create_role(DEMO, {"name": name}).id


def test_schedule_answers_it_and_creates_one_recurring_eventbridge_schedule_to_the_backup_queue(invoke, scheduled, aws):
    response = schedule(invoke, every_hours=12, keep=5, members=False, label="twice a day")

    assert response.status == 200, response.body
    answer = response.body
    assert answer["action"] == "schedule"
    assert {k: answer["schedule"][k] for k in ("guild_id", "every_hours", "keep", "members", "label")} == {
        "guild_id": DEMO,
        "every_hours": 12,
        "keep": 5,
        "members": False,
        "label": "twice a day",
    }
    assert answer["schedule"]["last_run_at"] is None
    assert answer["schedule"]["last_result"] is None
    next_run = datetime.fromisoformat(answer["schedule"]["next_run_at"]).timestamp()
    assert abs(next_run - (scheduled.now[0] + 12 * HOUR)) < 5
    [eventbridge] = scheduled.schedules()
    assert eventbridge["Name"] == f"backup-{DEMO}"
    assert eventbridge["ScheduleExpression"] == "rate(12 hours)"
    assert eventbridge["StartDate"].timestamp() == pytest.approx(next_run, abs=1)
    assert eventbridge["Target"]["Arn"] == aws.attrs[("BackupQueue", "Arn")]
    assert eventbridge["Target"]["RoleArn"] == aws.attrs[("BackupSchedulerRole", "Arn")]
    assert json.loads(eventbridge["Target"]["Input"])["guild_id"] == DEMO
    assert listed(invoke)["schedule"] == answer["schedule"]


def test_fired_twice_with_no_change_between_stores_one_backup_not_two(invoke, scheduled, platform):
    schedule(invoke, every_hours=6, keep=3)

    assert scheduled.after(5.9) == []  # not due yet: no message, no backup
    assert scheduled_backups() == []
    scheduled.after(0.2)
    first = listed(invoke)["schedule"]["last_result"]
    scheduled.after(6)
    second = listed(invoke)["schedule"]

    assert first["outcome"] == "stored"
    unchanged = {"outcome": "unchanged", "backup_id": first["backup_id"], "pruned": [], "detail": None}
    assert second["last_result"] == unchanged
    assert [item["backup_id"] for item in scheduled_backups()] == [first["backup_id"]]
    assert datetime.fromisoformat(second["next_run_at"]).timestamp() == pytest.approx(scheduled.now[0] + 5.9 * HOUR)
    fetched = invoke("manageBackup", {"action": "get", "backup_id": first["backup_id"], "guild_id": DEMO}).body
    data = fetched["data"]["backup_data"]
    live_roles = {r["id"]: r["name"] for r in platform.guild(DEMO)["roles"].values() if r["name"] != "@everyone"}
    live_roles = {i: n for i, n in live_roles.items() if not platform.guild(DEMO)["roles"][i].get("managed")}
    assert {role["id"]: role["name"] for role in data["roles"]} == live_roles  # with ids, as export makes them
    assert data["owner_id"] == platform.guild(DEMO)["owner_id"]
    assert fetched["data"]["guild_name"] == "Svc Demo Guild"
    # made as manageBackup `create` makes one from the live guild: members' roles, a restorable configuration
    held = {u: [r for r in m["roles"] if r in live_roles] for u, m in platform.guild(DEMO)["members"].items()}
    assert data["members"] == [
        {"user_id": u, "roles": r} for u, r in sorted(held.items(), key=lambda i: int(i[0])) if r
    ]
    [summary] = [b for b in listed(invoke)["backups"] if b["backup_id"] == first["backup_id"]]
    assert (summary["kind"], summary["format"], summary["restorable"]) == ("scheduled", "configuration", True)
    assert summary["members_count"] == len(data["members"]) > 0

    second_actor_adds_a_role("Night Shift")
    scheduled.after(6)
    third = listed(invoke)["schedule"]["last_result"]

    assert third["outcome"] == "stored"
    assert third["backup_id"] != first["backup_id"]
    assert [item["backup_id"] for item in scheduled_backups()] == [third["backup_id"], first["backup_id"]]
    newest = invoke("manageBackup", {"action": "get", "backup_id": third["backup_id"], "guild_id": DEMO}).body
    assert "Night Shift" in {role["name"] for role in newest["data"]["backup_data"]["roles"]}


def test_the_newest_keep_scheduled_backups_are_kept_and_other_backups_are_not_touched(invoke, scheduled):
    manual = invoke("manageBackup", {"action": "create", "guild_id": DEMO, "backup_data": {"roles": []}}).body
    schedule(invoke, every_hours=1, keep=2)

    stored = []
    for n in range(4):
        second_actor_adds_a_role(f"Shift {n}")
        scheduled.after(1)
        stored.append(listed(invoke)["schedule"]["last_result"])

    assert [result["outcome"] for result in stored] == ["stored"] * 4
    assert [item["backup_id"] for item in scheduled_backups()] == [stored[3]["backup_id"], stored[2]["backup_id"]]
    assert stored[2]["pruned"] == [stored[0]["backup_id"]]
    assert stored[3]["pruned"] == [stored[1]["backup_id"]]
    for gone in stored[:2]:
        assert invoke("manageBackup", {"action": "get", "backup_id": gone["backup_id"]}).status == 404
    ids = [backup["backup_id"] for backup in listed(invoke)["backups"]]
    assert manual["data"]["backup_id"] in ids


def test_a_second_schedule_replaces_the_first_and_the_first_ones_late_job_does_nothing(invoke, scheduled, aws):
    schedule(invoke, every_hours=6, keep=3)
    [old] = scheduled.schedules()
    old_job = json.loads(old["Target"]["Input"])

    replaced = schedule(invoke, every_hours=24, keep=7, label="daily")

    assert replaced.status == 200, replaced.body
    [eventbridge] = scheduled.schedules()
    assert eventbridge["ScheduleExpression"] == "rate(24 hours)"
    assert json.loads(eventbridge["Target"]["Input"])["schedule_id"] != old_job["schedule_id"]
    assert {k: listed(invoke)["schedule"][k] for k in ("every_hours", "keep", "label")} == {
        "every_hours": 24,
        "keep": 7,
        "label": "daily",
    }
    # The first schedule's job, delivered late: nothing made, nothing recorded.
    scheduled.queue.sqs.send_message(QueueUrl=scheduled.queue.url, MessageBody=json.dumps(old_job))
    scheduled.drain()
    assert scheduled_backups() == []
    assert listed(invoke)["schedule"]["last_result"] is None
    assert scheduled.after(6) == []  # the 6-hour schedule is gone
    scheduled.after(18)
    assert listed(invoke)["schedule"]["last_result"]["outcome"] == "stored"


def test_unschedule_removes_the_schedule_and_keeps_the_backups_and_a_second_one_is_404(invoke, scheduled):
    schedule(invoke, every_hours=2, keep=3)
    scheduled.after(2)
    [kept] = scheduled_backups()

    removed = invoke("manageBackup", {"action": "unschedule", "guild_id": DEMO})
    again = invoke("manageBackup", {"action": "unschedule", "guild_id": DEMO})

    assert (removed.status, removed.body) == (200, {"action": "unschedule", "schedule": None})
    assert scheduled.schedules() == []
    assert listed(invoke)["schedule"] is None
    assert [item["backup_id"] for item in scheduled_backups()] == [kept["backup_id"]]
    assert again.status == 404, again.body
    assert "schedule" in again.body["message"]
    assert scheduled.after(10) == []


def test_a_new_schedule_after_unschedule_still_skips_a_backup_equal_to_the_newest(invoke, scheduled):
    schedule(invoke, every_hours=1, keep=3)
    scheduled.after(1)
    invoke("manageBackup", {"action": "unschedule", "guild_id": DEMO})
    schedule(invoke, every_hours=1, keep=3)
    scheduled.after(1)

    assert listed(invoke)["schedule"]["last_result"]["outcome"] == "unchanged"
    assert len(scheduled_backups()) == 1


def test_a_run_that_cannot_read_the_guild_records_it_and_keeps_the_schedule(invoke, scheduled):
    response = schedule(invoke, guild_id=QUIET, every_hours=1, keep=3)  # the bot is not in that guild
    assert response.status == 200, response.body

    [answer] = scheduled.after(1)

    assert answer.get("batchItemFailures") == []  # recorded, not retried
    kept = listed(invoke, QUIET)["schedule"]
    assert kept["last_result"]["outcome"] == "failed"
    assert "could not be read" in kept["last_result"]["detail"]
    assert kept["last_run_at"] is not None
    assert scheduled_backups(QUIET) == []
    assert [s["Name"] for s in scheduled.schedules()] == [f"backup-{QUIET}"]
    scheduled.after(1)  # it runs again on its next period
    assert listed(invoke, QUIET)["schedule"]["last_run_at"] != kept["last_run_at"]


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"every_hours": 0}, "every_hours"),
        ({"every_hours": 169}, "every_hours"),
        ({"every_hours": "x"}, "every_hours"),
        ({"keep": 0}, "keep"),
        ({"keep": 51}, "keep"),
        ({"members": "sometimes"}, "members"),
        ({"guild_id": "not-a-guild"}, "guild_id"),
        ({"label": "x" * 101}, "label"),
    ],
)
def test_hostile_schedule_fields_are_a_400_naming_the_field_and_nothing_is_scheduled(invoke, scheduled, fields, field):
    response = schedule(invoke, **fields)

    assert response.status == 400, response.body
    assert field in {detail["field"] for detail in response.body["details"]}, response.body
    assert scheduled.schedules() == []
    assert listed(invoke)["schedule"] is None


@pytest.mark.parametrize("missing", ["guild_id", "every_hours", "keep"])
def test_a_missing_schedule_field_is_named(invoke, scheduled, missing):
    body = {"action": "schedule", "guild_id": DEMO, "every_hours": 6, "keep": 3}
    del body[missing]

    response = invoke("manageBackup", body)

    assert response.status == 400
    assert missing in {detail["field"] for detail in response.body["details"]}, response.body


def test_a_run_reads_the_platform_at_the_guilds_own_share_inside_the_users_share(
    invoke, scheduled, platform, monkeypatch
):
    monkeypatch.setenv("CHAT_BOT_OWN_GUILD_REQUESTS_PER_SECOND", "1")
    get_settings.cache_clear()
    schedule(invoke, every_hours=1, keep=3)
    platform.clear_log()

    scheduled.after(1)

    assert listed(invoke)["schedule"]["last_result"]["outcome"] == "stored"
    sent = len(platform.request_log)
    assert sent >= 3, platform.request_log
    counters = boto3.resource("dynamodb", region_name=LOCAL_REGION).Table(get_settings().usage_table).scan()["Items"]
    own = {item["key"]: int(item["used"]) for item in counters if item["key"].startswith(f"bot-own#{DEMO}#")}
    users = {item["key"]: int(item["used"]) for item in counters if item["key"].startswith("bot-share#")}
    # One request a second of the guild's own share: as many seconds as requests, each holding one.
    assert sorted(own.values()) == [1] * sent, own
    assert sum(users.values()) == sent  # and each in the users' share of the bot's rate


def backup_of(invoke: Callable[..., Any], backup_id: str) -> dict[str, Any]:
    fetched = invoke("manageBackup", {"action": "get", "backup_id": backup_id, "guild_id": DEMO})
    assert fetched.status == 200, fetched.body
    return fetched.body["data"]


def test_a_scheduled_backup_holds_what_a_manual_one_holds_members_owner_and_administrators(invoke, scheduled, platform):
    schedule(invoke, every_hours=6, keep=3, user_id="1191000000000000101")  # Alice, the owner
    platform.clear_log()

    scheduled.after(6)
    run = listed(invoke)["schedule"]["last_result"]
    member_reads = platform.requests("GET", MEMBER_LIST)
    manual = invoke("manageBackup", {"action": "create", "guild_id": DEMO, "user_id": "1191000000000000101"})

    assert run["outcome"] == "stored", run
    made = backup_of(invoke, run["backup_id"])
    data = made["backup_data"]
    # the members' roles the guild's configuration holds (the bot's managed role is not one), from one page
    assert data["members"] == [{"user_id": BOB, "roles": [MODERATOR]}, {"user_id": CAROL, "roles": [MEMBER]}]
    assert [entry["query"] for entry in member_reads] == ["limit=1000&after=0"]
    assert data["owner_id"] == platform.guild(DEMO)["owner_id"]
    assert data["administrator_ids"] == []
    assert (made["kind"], made["format"], made["restorable"]) == ("scheduled", "configuration", True)
    assert (made["members_count"], made["made_by"]) == (2, "1191000000000000101")
    # the same content, and so the same digest, as manageBackup `create` reading the guild now
    assert manual.status == 201, manual.body
    assert backup_of(invoke, manual.body["data"]["backup_id"])["backup_data"] == data
    assert made["digest"] == manual.body["data"]["digest"]


def test_a_member_who_lost_a_role_makes_the_next_run_store_a_backup(invoke, scheduled, platform):
    schedule(invoke, every_hours=6, keep=3)
    scheduled.after(6)
    first = listed(invoke)["schedule"]["last_result"]
    scheduled.after(6)
    unchanged = listed(invoke)["schedule"]["last_result"]

    get_chat_client().remove_member_role(DEMO, CAROL, MEMBER)  # someone takes Carol's role, through the platform
    scheduled.after(6)
    changed = listed(invoke)["schedule"]["last_result"]

    assert (first["outcome"], unchanged["outcome"], changed["outcome"]) == ("stored", "unchanged", "stored")
    assert [item["backup_id"] for item in scheduled_backups()] == [changed["backup_id"], first["backup_id"]]
    before, after = backup_of(invoke, first["backup_id"]), backup_of(invoke, changed["backup_id"])
    assert before["backup_data"]["members"] == [
        {"user_id": BOB, "roles": [MODERATOR]},
        {"user_id": CAROL, "roles": [MEMBER]},
    ]
    assert after["backup_data"]["members"] == [{"user_id": BOB, "roles": [MODERATOR]}]
    assert {k: v for k, v in after["backup_data"].items() if k != "members"} == {
        k: v for k, v in before["backup_data"].items() if k != "members"
    }  # nothing else changed: the members made the digest differ
    assert after["digest"] != before["digest"]


def test_members_false_reads_no_member_list_and_a_members_change_stores_nothing(invoke, scheduled, platform):
    schedule(invoke, every_hours=6, keep=3, members=False)
    platform.clear_log()
    scheduled.after(6)
    first = listed(invoke)["schedule"]["last_result"]
    reads = [entry["route"] for entry in platform.request_log if entry["method"] == "GET"]

    get_chat_client().remove_member_role(DEMO, CAROL, MEMBER)
    scheduled.after(6)
    second = listed(invoke)["schedule"]["last_result"]

    assert first["outcome"] == "stored", first
    assert MEMBER_LIST not in reads, reads
    assert reads  # the guild was read: its roles, channels, the bot's membership
    made = backup_of(invoke, first["backup_id"])
    assert "members" not in made["backup_data"]
    assert made["members_count"] is None
    assert made["backup_data"]["owner_id"] == platform.guild(DEMO)["owner_id"]
    assert second == {"outcome": "unchanged", "backup_id": first["backup_id"], "pruned": [], "detail": None}
    assert platform.requests("GET", MEMBER_LIST) == []


def test_a_run_without_the_member_access_stores_the_backup_without_members_and_says_so(invoke, scheduled, platform):
    platform.configure(guild_members_intent_denied=[DEMO])
    schedule(invoke, every_hours=6, keep=3)

    scheduled.after(6)
    run = listed(invoke)["schedule"]["last_result"]

    assert run["outcome"] == "stored", run
    made = backup_of(invoke, run["backup_id"])
    assert "members" not in made["backup_data"]
    assert made["members_count"] is None
    assert run["detail"].startswith("members: made without members' roles: the bot lacks the platform's privileged")
