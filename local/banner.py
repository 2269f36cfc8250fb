"""What `make run` prints once ready (its settings, the banner with URLs, tokens and sample requests) and the
state file it writes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from local.resources import api_functions
from local.samples import SAMPLE_PROJECT_ID, SAMPLE_PROJECT_NAME
from local.template import LOCAL_REGION

if TYPE_CHECKING:
    from local.seed import Seeded

from local.runner import Runner
from local.settings import LOCAL_REDIRECT_URIS

# ---------------------------------------------------------------- what it prints and writes


def print_settings(runner: Runner) -> None:
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


def runner_state(runner: Runner) -> dict[str, Any]:
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
    "chatAuth": ({"redirect_uri": "<redirect uri>", "replace": True}, "user"),
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
    "chatAuth": "starts a sign-in for the user token (v4): open its authorize_url with {linked}'s sandbox token as "
    "Bearer, then send the code from the redirect with redirect_uri and state (docs/03-api.md, chatAuth)",
    "getChatGuilds": "{linked}'s servers: the user token is linked to {linked}",
    "deployToChat": "a dry run on Alice's Build Lab; without dry_run it deploys (then action info, project_id)",
    # str.format fills {linked}: the JSON's braces are doubled
    "seedTemplates": 'administrators only: the admin token; then read its job with -d \'{{"job_id": "tj_..."}}\' '
    "(status and counts; reading starts nothing)",
}


def _ai_note(runner: Runner) -> str:
    """What answers svcAiChat (and seedTemplates' worker) in this run, or what to set for it."""
    if runner.local_model is not None:
        return f"the local model answers (SVC_AI_PROVIDER=local, {runner.local_model.base_url})"
    if runner.settings.values.get("ANTHROPIC_API_KEY"):
        return "the AI provider answers (ANTHROPIC_API_KEY is set)"
    return "503 until the AI is set: restart with SVC_AI_PROVIDER=local make run (or set ANTHROPIC_API_KEY)"


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


def banner(runner: Runner, state: dict[str, Any], seeded: Seeded) -> str:
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
        note = (
            _ai_note(runner)
            if operation == "svcAiChat"
            else _SAMPLE_NOTES.get(operation, f"a sample body is not known here: see {operation} in docs/03-api.md")
        )
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


def write_state(path: Path, state: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(json.dumps(state, indent=2))
    temporary.chmod(0o600)  # holds dev tokens
    temporary.replace(path)
