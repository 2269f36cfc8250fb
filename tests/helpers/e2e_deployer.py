"""The web app's side of a deploy through `make run`, shared by the deploy end-to-end tests."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import requests

if TYPE_CHECKING:
    from tests.helpers.local_service import LocalService

ALICE = "1191000000000000101"
BUILD_GUILD = "1191000000000001005"
REDIRECT_URI = "http://127.0.0.1:5173/auth/callback"
DEPLOY_TIMEOUT_SECONDS = 240
WRITES = ("POST", "PATCH", "PUT", "DELETE")


class Deployer:
    """The web app's side of a deploy: a linked user, deployToChat calls, and waiting for the worker."""

    def __init__(self, service: LocalService):
        self.service = service
        self.sandbox = service.state["chat_api_base_url"].removesuffix("/api/v10")
        self.bearer = {"Authorization": f"Bearer {service.state['user_token']}"}

    def link(self) -> None:
        from tests.helpers.sign_in import link_account

        def call(operation: str, body: dict[str, Any]) -> tuple[int, Any]:
            answer = self.call(operation, body)
            return answer.status_code, answer.json()

        def mint(chat_user_id: str, redirect_uri: str, challenge: str) -> str:
            body = {"user_id": chat_user_id, "redirect_uri": redirect_uri, "code_challenge": challenge}
            return str(requests.post(f"{self.sandbox}/_sandbox/oauth/codes", json=body, timeout=30).json()["code"])

        link_account(call, mint, ALICE)

    def call(self, operation: str, body: dict[str, Any]) -> requests.Response:
        return requests.post(self.service.url(operation), json=body, headers=self.bearer, timeout=60)

    def deploy(self, config: dict[str, Any], project_id: str = "e2e-large") -> dict[str, Any]:
        body = {
            "action": "deploy",
            "guild_id": BUILD_GUILD,
            "project_id": project_id,
            "project_name": "E2E",
            "config": config,
        }
        queued = self.call("deployToChat", body)
        assert queued.status_code == 202, queued.text
        return self.finished(project_id)

    def rollback(self, project_id: str = "e2e-large") -> dict[str, Any]:
        queued = self.call("deployToChat", {"action": "rollback", "project_id": project_id, "guild_id": BUILD_GUILD})
        assert queued.status_code == 202, queued.text
        return self.finished(project_id)

    def finished(self, project_id: str) -> dict[str, Any]:
        deadline = time.monotonic() + DEPLOY_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            info = self.call("deployToChat", {"action": "info", "project_id": project_id}).json()
            if info["status"] in ("succeeded", "partial", "failed"):
                return info
            time.sleep(0.5)
        raise AssertionError(f"not finished within {DEPLOY_TIMEOUT_SECONDS} s: {info}")

    def guild(self) -> dict[str, Any]:
        return requests.get(f"{self.sandbox}/_sandbox/guilds/{BUILD_GUILD}", timeout=30).json()

    def backup(self, backup_id: str) -> dict[str, Any]:
        """A deployment's snapshot, as the bot fetches it (with its guild's id)."""
        bot = {"x-bot-token": self.service.state["bot_token"]}
        body = {"action": "get", "backup_id": backup_id, "guild_id": BUILD_GUILD}
        fetched = requests.post(self.service.url("manageBackup"), json=body, headers=bot, timeout=60)
        assert fetched.status_code == 200, fetched.text
        return fetched.json()["data"]["backup_data"]

    def log_size(self) -> int:
        return len(self.log())

    def log(self) -> list[dict[str, Any]]:
        return requests.get(f"{self.sandbox}/_sandbox/log", timeout=30).json()["requests"]

    def writes_since(self, start: int) -> list[tuple[str, str]]:
        return [(entry["method"], entry["route"]) for entry in self.log()[start:] if entry["method"] in WRITES]
