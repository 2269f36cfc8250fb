"""/docs in a real browser: headless Chromium (Debian's, `make browser`) driven by Playwright, against `make run`."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import requests
from playwright.sync_api import expect, sync_playwright

if TYPE_CHECKING:
    from tests.helpers.local_service import LocalService

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT = ROOT / ".artifacts" / "docs-try-it-out.png"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
UI_TIMEOUT_MS = 30_000


def banner_line(local_service: LocalService, label: str) -> str:
    match = re.search(rf"^  {label}\s+(\S+)", local_service.log_path.read_text(), re.MULTILINE)
    assert match, f"the banner has no {label!r} line"
    return match.group(1)


def test_the_docs_assets_come_from_the_runner_itself(local_service: LocalService) -> None:
    page = requests.get(f"{local_service.base_url}/docs", timeout=10)
    assert page.status_code == 200
    assert "text/html" in page.headers["Content-Type"]
    assets = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert assets
    assert all(asset.startswith("docs/") for asset in assets), assets  # relative: served by the runner, no CDN
    for asset in assets:
        answer = requests.get(f"{local_service.base_url}/{asset}", timeout=10)
        assert answer.status_code == 200, asset
        assert answer.content == (ROOT / "node_modules" / "swagger-ui-dist" / asset.removeprefix("docs/")).read_bytes()
    assert requests.get(f"{local_service.base_url}/docs/package.json", timeout=10).status_code == 404


def test_try_it_out_on_get_chat_guilds_answers_200_in_the_page(local_service: LocalService) -> None:
    assert shutil.which("chromium"), "Debian's chromium is not installed: make browser (make test and make e2e do)"
    docs_url = banner_line(local_service, "API docs")
    assert docs_url == f"{local_service.base_url}/docs"
    token = banner_line(local_service, "user token")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            outside = []  # every request the page makes must go to the runner: no CDN
            page.on("request", lambda r: None if r.url.startswith(local_service.base_url) else outside.append(r.url))
            page.goto(docs_url)
            expect(page.locator(".info .title")).to_contain_text("Server Configuration Service", timeout=UI_TIMEOUT_MS)
            expect(page.locator(".info .description")).to_contain_text("Every operation is POST /functions/{operation}")

            page.locator("button.authorize").first.click()
            dialog = page.locator(".dialog-ux .modal-ux")
            bearer = dialog.locator(".auth-container").filter(has_text="bearerAuth")
            bearer.locator("input").fill(token)
            bearer.locator("button[type=submit]").click()
            expect(bearer.locator("button", has_text="Logout")).to_be_visible()
            dialog.locator("button.btn-done").first.click()

            operation = page.locator("#operations-Servers-getChatGuilds")
            operation.locator(".opblock-summary").first.click()
            operation.locator("button.execute").click()
            status = operation.locator(".live-responses-table .response .response-col_status").first
            expect(status).to_have_text("200", timeout=UI_TIMEOUT_MS)
            expect(operation.locator(".live-responses-table .response .response-col_description")).to_contain_text(
                "Svc Demo Guild"
            )
            SCREENSHOT.parent.mkdir(exist_ok=True)
            # The picture: the executed request and its live 200 answer, in the middle of the window.
            status.evaluate("cell => cell.scrollIntoView({block: 'center'})")
            page.screenshot(path=str(SCREENSHOT))
            print(f"screenshot: {SCREENSHOT.relative_to(ROOT)}")
            assert outside == []
        finally:
            browser.close()
