"""openapi.json's examples for manageBackup's schedules: `schedule`, `unschedule`, and `list` with a schedule.

Apart from examples.py so that the backups' actions added at once by different hands each keep their own file.
"""

from __future__ import annotations

from typing import Any

from svcconf.api.examples import BACKUP_GUILD_ID, BACKUP_SUMMARY

SCHEDULE: dict[str, Any] = {
    "guild_id": BACKUP_GUILD_ID,
    "every_hours": 24,
    "keep": 7,
    "members": True,
    "label": "daily",
    "next_run_at": "2026-11-25T15:06:54Z",
    "last_run_at": "2026-11-24T15:07:02.114020Z",
    "last_result": {"outcome": "unchanged", "backup_id": "bk_01a20e187637d90b57ec59", "pruned": [], "detail": None},
}
BACKUP_SCHEDULE_REQUESTS: dict[str, Any] = {
    "schedule": {
        "action": "schedule",
        "guild_id": BACKUP_GUILD_ID,
        "every_hours": 24,
        "keep": 7,
        "members": True,
        "label": "daily",
        "user_id": "1191000000000000101",
    },
    "unschedule": {"action": "unschedule", "guild_id": BACKUP_GUILD_ID},
}
BACKUP_SCHEDULE_ANSWERS: dict[str, Any] = {
    "list": {"action": "list", "backups": [BACKUP_SUMMARY], "schedule": SCHEDULE},
    "schedule": {"action": "schedule", "schedule": {**SCHEDULE, "last_run_at": None, "last_result": None}},
    "unschedule": {"action": "unschedule", "schedule": None},
}
