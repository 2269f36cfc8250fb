"""openapi.json's examples for restores and comparisons (manageBackup `restore`, `info`, `cancel`, `rollback`,
`diff`; deployToChat `restore`): one request and one answer per action, as the local runner answers them."""

from __future__ import annotations

from typing import Any

from svcconf.api.examples import BACKUP_GUILD_ID, BACKUP_ID, GUILD_ID, _deployment, _steps

USER_ID = "1191000000000000101"
RESTORE_ID = "dp_01a20e18c2b0f4aa91e7"

RESTORE_REQUESTS: dict[str, Any] = {
    "restorePlan": {
        "action": "restore",
        "backup_id": BACKUP_ID,
        "guild_id": BACKUP_GUILD_ID,
        "user_id": USER_ID,
        "dry_run": True,
    },
    "restore": {
        "action": "restore",
        "backup_id": BACKUP_ID,
        "guild_id": BACKUP_GUILD_ID,
        "user_id": USER_ID,
        "only": ["roles", "channels", "members"],
        "acknowledge": ["member-dangerous-role"],
    },
    "restoreInfo": {"action": "info", "deployment_id": RESTORE_ID},
    "restoreCancel": {"action": "cancel", "deployment_id": RESTORE_ID, "user_id": USER_ID},
    "restoreRollback": {"action": "rollback", "deployment_id": RESTORE_ID, "user_id": USER_ID},
    "diff": {"action": "diff", "backup_id": BACKUP_ID, "against": "live", "user_id": USER_ID},
    "diffBackups": {"action": "diff", "backup_id": BACKUP_ID, "against": "bk_01a20e0c55d3e0b1c7a4f1"},
}
_RESTORED = {
    **_deployment("restore", "queued", deployment_id=RESTORE_ID, deployment_code=None),
    "generation": {
        **_deployment("restore", "queued")["generation"],
        "project_id": f"restore-{BACKUP_ID}",
        "project_name": "Restore of before the relaunch",
        "guild_id": BACKUP_GUILD_ID,
    },
}
RESTORE_QUEUED: dict[str, Any] = {
    "restore": _RESTORED,
    "restoreRollback": {
        **_RESTORED,
        "deployment_id": "dp_01a20e1f3b7c9d2e4f60",
        "kind": "rollback",
        "backup_id": "bk_01a20e18c9d1f2a3b4c5d6",
        "rollback_of": RESTORE_ID,
    },
}
RESTORE_ANSWERS: dict[str, Any] = {
    "restorePlan": {
        "ok": True,
        "status": "planned",
        "action": "restore",
        "steps": _steps(done=False),
        "plan": [
            {"kind": "role", "name": "Moderators", "action": "create", "changes": [], "field": "roles[0]"},
            {
                "kind": "channel",
                "name": "Community / general",
                "action": "update",
                "id": "1187392640113156201",
                "changes": [{"field": "name", "old": "general-renamed", "new": "general"}],
                "field": "categories[0].channels[0]",
            },
        ],
        "plan_id": "plan_9b1d2c3e4f5a6b7c8d9e0f1a2b3c4d5e",
        "warnings": [],
        "members": {"planned": 2, "left_server": 1, "dangerous": [{"user_id": USER_ID, "role": "Moderators"}]},
    },
    "restoreInfo": {**_RESTORED, "action": "info", "status": "succeeded", "finished_at": "2026-11-24T15:07:31Z"},
    "restoreCancel": {**_RESTORED, "action": "cancel", "status": "cancelled", "finished_at": "2026-11-24T15:07:02Z"},
    "diff": {
        "action": "diff",
        "changes": [
            {"kind": "role", "name": "Moderators", "action": "create", "changes": [], "field": "roles[0]"},
            {
                "kind": "channel",
                "name": "Community / general",
                "action": "update",
                "id": "1187392640113156201",
                "changes": [{"field": "name", "old": "general-renamed", "new": "general"}],
                "field": "categories[0].channels[0]",
            },
        ],
        "members": [{"user_id": USER_ID, "missing": ["Moderators"], "extra": []}],
        "counts": {"create": 1, "update": 1, "delete": 0, "members": 1},
    },
}
DEPLOY_RESTORE_REQUESTS: dict[str, Any] = {
    "restore": {"action": "restore", "backup_id": BACKUP_ID, "guild_id": GUILD_ID, "dry_run": True},
    "infoDrift": {"action": "info", "project_id": "sample-project", "drift": True},
}
