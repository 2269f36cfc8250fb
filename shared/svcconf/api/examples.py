"""openapi.json's examples: one request and one answer per action, taken from events/ and the local runner's answers.

tests/unit/test_api_description.py holds them to openapi.json's schemas and to events/, so neither drifts.

It stays one module past 400 lines: it is data (example bodies, and three small builders of the parts they
repeat), looked up by name rather than read through, and the operations share its sample guild and configuration.
"""

from __future__ import annotations

from typing import Any

GUILD_ID = "1191000000000001005"
BACKUP_GUILD_ID = "1187392640113156136"
BACKUP_ID = "bk_01a20e187637d90b57ec59"
CREATED_AT = "2026-11-24T15:06:53.879169Z"

SAMPLE_CONFIG: dict[str, Any] = {
    "name": "Sample community",
    "roles": [
        {"name": "Moderator", "color": "#3498DB", "hoist": True, "permissions": ["KICK_MEMBERS", "MANAGE_MESSAGES"]},
        {"name": "Member", "permissions": ["SEND_MESSAGES"]},
    ],
    "categories": [
        {
            "name": "Community",
            "channels": [
                {"name": "welcome", "topic": "Say hello"},
                {"name": "Lounge", "type": "voice", "user_limit": 10},
            ],
        },
        {
            "name": "Staff",
            "overwrites": [
                {"role": "@everyone", "deny": ["VIEW_CHANNEL"]},
                {"role": "Moderator", "allow": ["VIEW_CHANNEL"]},
            ],
            "channels": [{"name": "mod-log"}],
        },
    ],
}


def _counts(planned: int, created: int = 0) -> dict[str, int]:
    return {"planned": planned, "created": created, "updated": 0, "existing": 0, "deleted": 0, "failed": 0}


def _steps(done: bool) -> dict[str, Any]:
    return {
        "roles": _counts(2, 2 if done else 0),
        "categories": _counts(2, 2 if done else 0),
        "channels": _counts(3, 3 if done else 0),
        "overwrites": _counts(4, 4 if done else 0),
        "errors": [],
    }


def _deployment(kind: str, status: str, **fields: Any) -> dict[str, Any]:
    done = status == "succeeded"
    return {
        "ok": True,
        "deployment_id": "dp_01a20e188a0e2d24b4c3",
        "kind": kind,
        "status": status,
        "steps": _steps(done),
        "generation": {
            "project_id": "sample-project",
            "project_name": "Sample community",
            "guild_id": GUILD_ID,
            "guild_name": "Alice's Build Lab",
            "status": status,
            "result": "Created 2 roles, 2 categories, 3 channels, 4 overwrites; updated nothing." if done else None,
            "error": None,
            "steps": _steps(done),
        },
        "backup_id": None,
        "deployment_code": "SVC-3W9K-89H6",
        "rollback_of": None,
        "created_at": "2026-11-24T15:06:58.958205Z",
        "finished_at": None,
        "resumes_at": None,
        "wait_reason": None,
        "warnings": [],
        "config": None,
        "history": None,
        **fields,
    }


DEPLOY_REQUESTS: dict[str, Any] = {
    "deploy": {
        "action": "deploy",
        "guild_id": GUILD_ID,
        "project_id": "sample-project",
        "project_name": "Sample community",
        "config": SAMPLE_CONFIG,
    },
    "dryRun": {
        "action": "deploy",
        "dry_run": True,
        "guild_id": GUILD_ID,
        "project_id": "sample-project",
        "project_name": "Sample community",
        "config": SAMPLE_CONFIG,
    },
    "deployConfirmed": {
        "action": "deploy",
        "prune": True,
        "confirm": "plan_3f2a9c0d1e4b5a6978c0d1e2f3a4b5c6",
        "guild_id": GUILD_ID,
        "project_id": "sample-project",
        "project_name": "Sample community",
        "config": SAMPLE_CONFIG,
    },
    "info": {"action": "info", "project_id": "sample-project"},
    "infoOfOne": {"action": "info", "project_id": "sample-project", "deployment_id": "dp_01a20e188a0e2d24b4c3"},
    "rollback": {"action": "rollback", "project_id": "sample-project", "guild_id": GUILD_ID},
    "rollbackOfOne": {"action": "rollback", "deployment_id": "dp_01a20e188a0e2d24b4c3"},
    "cancel": {"action": "cancel", "deployment_id": "dp_01a20e1c5d7e10b2f4a1"},
    "cancelCurrent": {"action": "cancel", "guild_id": GUILD_ID},
    "rollbackPlan": {"action": "rollback", "project_id": "sample-project", "dry_run": True},
    "export": {"action": "export", "guild_id": GUILD_ID},
    "import": {"action": "import", "template": "https://discord.new/svcPlainClub"},
    "importData": {
        "action": "import",
        "data": {
            "name": "Plain Club",
            "roles": [
                {
                    "name": "Helpers",
                    "color": "#3498DB",
                    "hoist": True,
                    "permissions": "8192",
                    "mentionable": False,
                    "position": 1,
                    "isEveryone": False,
                },
                {
                    "name": "@everyone",
                    "color": "#000000",
                    "hoist": False,
                    "permissions": "104324673",
                    "mentionable": False,
                    "position": 0,
                    "isEveryone": True,
                },
            ],
            "channels": {
                "categories": [],
                "others": [{"type": "GUILD_TEXT", "name": "bienvenue", "permissions": [], "messages": []}],
            },
            "bans": [{"id": "1191000000000009001", "reason": "spam"}],
        },
    },
}
# A plan's delete item and its id, as the dry run and svcAiChat on a live guild show them.
MEMES_DELETED = {
    "kind": "channel",
    "name": "memes",
    "action": "delete",
    "id": "1191000000000003016",
    "changes": [],
    "field": "",
    "note": "its messages are deleted with it and cannot come back",
}
PLAN_ID = "plan_3f2a9c0d1e4b5a6978c0d1e2f3a4b5c6"
DEPLOY_PLANNED: dict[str, Any] = {
    "ok": True,
    "status": "planned",
    "steps": _steps(done=False),
    "plan": [
        {"kind": "role", "name": "Moderator", "action": "create", "changes": [], "field": "roles[0]"},
        {"kind": "category", "name": "Staff", "action": "create", "changes": [], "field": "categories[1]"},
        {
            "kind": "channel",
            "name": "Staff / mod-log",
            "action": "create",
            "changes": [],
            "field": "categories[1].channels[0]",
        },
        {
            "kind": "channel",
            "name": "Community / lobby",
            "action": "update",
            "id": "1191000000000003012",
            "changes": [{"field": "name", "old": "general", "new": "lobby"}],
            "field": "categories[0].channels[0]",
        },
        MEMES_DELETED,
    ],
    "plan_id": PLAN_ID,
    "warnings": [
        {
            "field": "channels",
            "rule": "delete",
            "message": "1 channel and all their messages will be deleted: memes",
        }
    ],
}
DEPLOY_HISTORY: list[dict[str, Any]] = [
    {
        "deployment_id": "dp_01a20e188a0e2d24b4c3",
        "kind": "deploy",
        "status": "succeeded",
        "created_at": "2026-11-24T15:06:58.958205Z",
        "finished_at": "2026-11-24T15:06:59.205820Z",
        "result": "Created 2 roles, 2 categories, 3 channels, 4 overwrites; updated nothing.",
    },
    {
        "deployment_id": "dp_01a20d2f0c3b7a9e51d2",
        "kind": "deploy",
        "status": "cancelled",
        "created_at": "2026-11-23T09:12:01.114503Z",
        "finished_at": "2026-11-23T10:40:17.530921Z",
        "result": "Cancelled by chat user 1191000000000000101. Created 1 role; updated nothing.",
    },
]
DEPLOY_ANSWERS: dict[str, Any] = {
    "info": _deployment(
        "deploy",
        "succeeded",
        backup_id="bk_01a20e188acb1bc73d2588",
        finished_at="2026-11-24T15:06:59.205820Z",
        history=DEPLOY_HISTORY,
    ),
    "cancel": _deployment(
        "deploy",
        "cancelled",
        deployment_id="dp_01a20e1c5d7e10b2f4a1",
        backup_id="bk_01a20e1c5e02aa41c7e90b",
        finished_at="2026-11-24T16:20:03.417302Z",
        generation={
            **_deployment("deploy", "cancelled")["generation"],
            "result": "Cancelled by chat user 1191000000000000101. Created nothing; updated nothing.",
        },
    ),
    "dryRun": DEPLOY_PLANNED,
    "export": {
        "status": "exported",
        "config": {
            **SAMPLE_CONFIG,
            "name": "Alice's Build Lab",
            "roles": [{**SAMPLE_CONFIG["roles"][0], "color": 0x3498DB}, SAMPLE_CONFIG["roles"][1]],
        },
        "warnings": [],
    },
    "import": {
        "status": "imported",
        "config": {
            "name": "Plain Club",
            "everyone_permissions": ["VIEW_CHANNEL", "SEND_MESSAGES", "CONNECT", "SPEAK"],
            "settings": {"verification_level": "none", "preferred_locale": "fr"},
            "channels": [{"name": "bienvenue"}, {"name": "Salon vocal", "type": "voice", "bitrate": 64000}],
        },
        "warnings": [],
        "source": {"code": "svcPlainClub", "name": "Plain Club", "description": None, "usage_count": 3},
    },
    "importData": {
        "status": "imported",
        "config": {
            "name": "Plain Club",
            "settings": {
                "verification_level": "none",
                "default_notifications": "all_messages",
                "explicit_content_filter": "disabled",
                "afk_timeout": 300,
                "system_channel_flags": [],
            },
            "everyone_permissions": [
                "CREATE_INSTANT_INVITE",
                "ADD_REACTIONS",
                "STREAM",
                "VIEW_CHANNEL",
                "SEND_MESSAGES",
                "SEND_TTS_MESSAGES",
                "EMBED_LINKS",
                "ATTACH_FILES",
                "READ_MESSAGE_HISTORY",
                "MENTION_EVERYONE",
                "USE_EXTERNAL_EMOJIS",
                "CONNECT",
                "SPEAK",
                "USE_VAD",
                "CHANGE_NICKNAME",
            ],
            "roles": [
                {
                    "name": "Helpers",
                    "color": 3447003,
                    "hoist": True,
                    "mentionable": False,
                    "permissions": ["MANAGE_MESSAGES"],
                }
            ],
            "categories": [],
            "channels": [{"name": "bienvenue", "type": "text", "nsfw": False, "slowmode_seconds": 0, "overwrites": []}],
        },
        "warnings": [
            {
                "field": "bans",
                "rule": "unrestorable",
                "message": "bans are not part of a server's configuration: they are not restored",
            },
            {
                "field": "everyone_permissions",
                "rule": "everyone-permissions-dangerous",
                "message": "@everyone's server-wide permissions include MENTION_EVERYONE, so every member "
                "holds it: remove it from everyone_permissions and grant a staff role instead.",
            },
        ],
        "source": {"format": "discord-backup"},
    },
}
DEPLOY_QUEUED: dict[str, Any] = {
    "deploy": _deployment("deploy", "queued"),
    "rollback": _deployment(
        "rollback",
        "queued",
        deployment_id="dp_01a20e18a1dedfdda850",
        backup_id="bk_01a20e188acb1bc73d2588",
        deployment_code=None,
        rollback_of="dp_01a20e188a0e2d24b4c3",
    ),
}

BACKUP_DATA: dict[str, Any] = {
    "roles": [{"name": "Moderators", "color": 3447003, "permissions": "1099511627776"}],
    "categories": [{"name": "Community", "channels": [{"name": "general", "type": 0}]}],
    "channels": [],
}
BACKUP_SUMMARY: dict[str, Any] = {
    "backup_id": BACKUP_ID,
    "guild_id": BACKUP_GUILD_ID,
    "guild_name": "Demo Guild",
    "label": "before the relaunch",
    "channels_count": 2,
    "roles_count": 1,
    "created_at": CREATED_AT,
    "size_bytes": 170,
    "stored_bytes": 154,
    "kind": "uploaded",
    "format": "unknown",
    "restorable": False,
}
LIVE_BACKUP_SUMMARY: dict[str, Any] = {
    "backup_id": "bk_01a20e18912c4f0e3a77b1",
    "guild_id": BACKUP_GUILD_ID,
    "guild_name": "Demo Guild",
    "label": "before the relaunch",
    "channels_count": 14,
    "roles_count": 6,
    "created_at": CREATED_AT,
    "size_bytes": 48210,
    "stored_bytes": 6113,
    "kind": "manual",
    "format": "configuration",
    "restorable": True,
    "made_by": "1191000000000000101",
    "digest": "sha256:5d41402abc4b2a76b9719d911017c592b3c1e0f5a6b2d6f1e2a7c4b9d0e3f182",
    "members_count": 212,
}
BACKUP_PROBLEMS: list[dict[str, Any]] = [
    {
        "field": "roles[0].permissions",
        "message": "matches no backup format: a configuration names permissions, the platform's objects give ids",
    }
]
BACKUP_REQUESTS: dict[str, Any] = {
    "create": {
        "action": "create",
        "guild_id": BACKUP_GUILD_ID,
        "guild_name": "Demo Guild",
        "label": "before the relaunch",
        "backup_data": BACKUP_DATA,
    },
    "createFromLive": {
        "action": "create",
        "guild_id": BACKUP_GUILD_ID,
        "label": "before the relaunch",
        "user_id": "1191000000000000101",
    },
    "list": {"action": "list", "guild_id": BACKUP_GUILD_ID},
    "get": {"action": "get", "backup_id": BACKUP_ID},
    "delete": {"action": "delete", "backup_id": BACKUP_ID, "guild_id": BACKUP_GUILD_ID},
}
BACKUP_CREATED: dict[str, Any] = {
    "create": {
        "action": "create",
        "data": {**BACKUP_SUMMARY, "problems": BACKUP_PROBLEMS, "warnings": [], "pruned": []},
    },
    "createFromLive": {
        "action": "create",
        "data": {
            **LIVE_BACKUP_SUMMARY,
            "problems": [],
            "warnings": [
                {
                    "field": "categories[2].channels[0].overwrites",
                    "message": "an overwrite for a member is left out: a configuration names roles",
                    "rule": "unrepresentable",
                }
            ],
            "pruned": ["bk_019f3a7c5e2d41b09a8e33"],
        },
    },
}
BACKUP_ANSWERS: dict[str, Any] = {
    "list": {"action": "list", "backups": [LIVE_BACKUP_SUMMARY, BACKUP_SUMMARY], "schedule": None},
    "get": {"action": "get", "data": {**BACKUP_SUMMARY, "backup_data": BACKUP_DATA}},
    "delete": {"action": "delete", "data": {"backup_id": BACKUP_ID}},
}

_SIGN_IN_STATE = "m3Q0V9y7xk2W1c8Jt6pR4sLh5Gd0aZbN2fYqEeUoTiw"
CHAT_AUTH_REQUESTS: dict[str, Any] = {
    "startSignIn": {"redirect_uri": "http://127.0.0.1:5173/auth/callback"},
    "signIn": {
        "code": "dev-code-alice",
        "redirect_uri": "http://127.0.0.1:5173/auth/callback",
        "state": _SIGN_IN_STATE,
    },
    "identityOnly": {"code": "dev-code-alice", "redirect_uri": "http://127.0.0.1:5173/auth/callback"},
}
CHAT_AUTH_ANSWERS: dict[str, Any] = {
    "startSignIn": {
        "state": _SIGN_IN_STATE,
        "authorize_url": "https://discord.com/oauth2/authorize?client_id=1191000000000000900&response_type=code"
        "&redirect_uri=http%3A%2F%2F127.0.0.1%3A5173%2Fauth%2Fcallback&scope=identify+email+guilds"
        f"&state={_SIGN_IN_STATE}&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256",
        "expires_at": "2026-11-26T15:10:00Z",
    },
    "signIn": {
        "email": "alice@example.com",
        "chatUserId": "1191000000000000101",
        "chatUsername": "alice",
        "chatAvatar": "https://cdn.discordapp.com/avatars/1191000000000000101/8342729096ea3675442027381ff50dfe.png",
        "chatAccessToken": "cKMHWBlwn-clldltIVm7TQuwe_dVq3AP",
        "linked": True,
    },
    "identityOnly": {
        "email": "alice@example.com",
        "chatUserId": "1191000000000000101",
        "chatUsername": "alice",
        "chatAvatar": "https://cdn.discordapp.com/avatars/1191000000000000101/8342729096ea3675442027381ff50dfe.png",
        "chatAccessToken": "cKMHWBlwn-clldltIVm7TQuwe_dVq3AP",
        "linked": False,
    },
}

GUILDS_ANSWERS: dict[str, Any] = {
    "guilds": {
        "guilds": [
            {
                "id": "1191000000000001001",
                "name": "Svc Demo Guild",
                "icon": "https://cdn.discordapp.com/icons/1191000000000001001/1f0b4a3c9d2e8f7a6b5c4d3e2f1a0b9c.png",
                "owner": True,
                "permissions": "8866461766385663",
                "can_manage": True,
                "bot_present": True,
            },
            {
                "id": "1191000000000001002",
                "name": "Bob's Workshop",
                "icon": None,
                "owner": False,
                "permissions": "311489449537",
                "can_manage": False,
                "bot_present": True,
            },
        ]
    }
}

CONFIG_BY_CODE_REQUESTS: dict[str, Any] = {
    "read": {"code": "SVC-DEMO-2026", "user_id": "1191000000000000101", "consume": False}
}
CONFIG_BY_CODE_ANSWERS: dict[str, Any] = {
    "read": {
        "configuration": {
            "name": "Local Sample Server",
            "description": "Minted by make run",
            "roles": [{"name": "Moderator", "color": "#3498DB", "hoist": True, "permissions": ["KICK_MEMBERS"]}],
            "categories": [{"name": "Community", "channels": [{"name": "welcome", "type": "text"}]}],
            "channels": [],
        },
        "project_name": "Sample community",
        "project_id": "sample-project",
        "expires_at": "2026-12-01T15:06:38.414061Z",
    }
}

INVITE_REQUESTS: dict[str, Any] = {"check": {"invite": "https://discord.gg/svcDemo"}}
INVITE_ANSWERS: dict[str, Any] = {
    "check": {
        "valid": True,
        "permanent": True,
        "expired": False,
        "guild_name": "Svc Demo Guild",
        "member_count": 4,
        "expires_at": None,
        "reason": None,
        "code": "svcDemo",
    }
}

SEED_JOB = "tj_01a20e18b2c3d4e5f6a7"
SEED_REQUESTS: dict[str, Any] = {"seed": {"count": 10}, "read": {"job_id": SEED_JOB}}


def _seed_job(status: str, stored: int, finished_at: str | None) -> dict[str, Any]:
    return {
        "job_id": SEED_JOB,
        "status": status,
        "requested": 10,
        "stored": stored,
        "failed": 0,
        "started_at": "2026-11-24T10:00:00Z",
        "finished_at": finished_at,
    }


SEED_STARTED: dict[str, Any] = {
    "seed": {
        "success": True,
        "started": True,
        "message": f"Generating 10 templates into the library as job {SEED_JOB}.",
        "job_id": SEED_JOB,
        "requested": 10,
        "stored": 0,
        "job": _seed_job("queued", 0, None),
    }
}
SEED_RUNNING: dict[str, Any] = {
    "seed": {
        "success": True,
        "started": False,
        "message": f"Template generation job {SEED_JOB} is still running (4 of 10 stored); nothing new was started.",
        "job_id": SEED_JOB,
        "requested": 10,
        "stored": 4,
        "job": _seed_job("running", 4, None),
    },
    "read": {
        "success": True,
        "started": False,
        "message": f"Template generation job {SEED_JOB} succeeded (10 of 10 stored).",
        "job_id": SEED_JOB,
        "requested": 10,
        "stored": 10,
        "job": _seed_job("succeeded", 10, "2026-11-24T10:03:12Z"),
    },
}

AI_CHAT_REQUESTS: dict[str, Any] = {
    "chat": {
        "messages": [{"role": "user", "content": "A server for our gaming clan, about 50 people."}],
        "style": {"tone": "casual"},
        "questionnaire_data": {"server_name": "Night Owls", "purpose": "gaming"},
    },
    "live-guild": {
        "messages": [{"role": "user", "content": "Rename general to lobby and remove the memes channel."}],
        "guild_id": GUILD_ID,
    },
}
AI_CHAT_ANSWERS: dict[str, Any] = {
    "chat": {
        "reply": "Here is a start for Night Owls: a lounge, voice rooms for squads and a staff corner.",
        "config": {
            "name": "Night Owls",
            "roles": [{"name": "Officer", "permissions": ["KICK_MEMBERS"]}],
            "categories": [{"name": "Squads", "channels": [{"name": "Squad 1", "type": "voice"}]}],
            "channels": [{"name": "lounge"}],
        },
        "quick_replies": ["Add a streaming channel", "Fewer roles"],
        "suggested_templates": [],
        "is_complete": False,
        "changes": [  # a first build: each role, category and loose channel added (their full form, abridged here)
            {"op": "add", "path": "roles[0]", "old": None, "new": {"name": "Officer", "permissions": ["KICK_MEMBERS"]}},
            {
                "op": "add",
                "path": "categories[0]",
                "old": None,
                "new": {"name": "Squads", "channels": [{"name": "Squad 1", "type": "voice"}]},
            },
            {"op": "add", "path": "channels[0]", "old": None, "new": {"name": "lounge", "type": "text"}},
        ],
        "warnings": [],
    },
    "live-guild": {
        "reply": "Renamed general to lobby and removed memes.",
        "config": {
            "name": "Night Owls",
            "roles": [{"id": "1191000000000002012", "name": "Officer", "permissions": ["KICK_MEMBERS"]}],
            "channels": [{"id": "1191000000000003012", "name": "lobby"}],
        },
        "quick_replies": ["Add a voice channel"],
        "suggested_templates": [],
        "is_complete": False,
        "changes": [
            {"op": "rename", "path": "channels[0].name", "old": "general", "new": "lobby"},
            {"op": "remove", "path": "channels[1]", "old": {"id": "1191000000000003016", "name": "memes"}, "new": None},
        ],
        "warnings": [],
        "plan": [
            {
                "kind": "role",
                "name": "Officer",
                "action": "keep",
                "id": "1191000000000002012",
                "changes": [],
                "field": "roles[0]",
            },
            {
                "kind": "channel",
                "name": "lobby",
                "action": "update",
                "id": "1191000000000003012",
                "changes": [{"field": "name", "old": "general", "new": "lobby"}],
                "field": "channels[0]",
            },
            MEMES_DELETED,
        ],
        "plan_id": PLAN_ID,
        "problems": [],
    },
}
