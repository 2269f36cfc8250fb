"""deployToChat `import` with `data`: another tool's backup, in any backup format, read as a configuration
(`{config, warnings, source: {format}}`), with no platform read; an unknown shape is a 400 naming what is missing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from svcconf.backups.formats import read_backup
from tests.helpers.deploy_worker import USER, link
from tests.helpers.handlers import bearer

DATA = Path(__file__).parents[1] / "data" / "backups"


@pytest.fixture
def linked(invoke, platform, function_environment):
    function_environment("DeployToChatFunction", "DeployWorkerFunction")
    link(invoke, platform)
    return platform


def fixture(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    return loaded


@pytest.mark.parametrize("name", ["configuration", "discord-backup", "template", "platform"])
def test_each_format_imports_as_its_configuration(invoke, linked, name: str) -> None:
    linked.clear_log()
    response = invoke("deployToChat", {"action": "import", "data": fixture(name)}, headers=bearer(USER))
    assert response.status == 200, response.body
    assert response.body["status"] == "imported"
    assert response.body["source"] == {"format": name}
    expected = read_backup(fixture(name)).config
    assert expected is not None
    assert response.body["config"] == expected.model_dump(mode="json", exclude_none=True)
    assert linked.request_log == []  # read from what was sent: the platform was not asked


def test_what_a_format_cannot_carry_is_in_the_warnings(invoke, linked) -> None:
    response = invoke("deployToChat", {"action": "import", "data": fixture("discord-backup")}, headers=bearer(USER))
    lost = {warning["field"] for warning in response.body["warnings"] if warning["rule"] == "unrestorable"}
    assert {"bans", "emojis", "channels.categories[0].children[0].messages"} <= lost


def test_an_unknown_shape_is_400_naming_what_is_missing(invoke, linked) -> None:
    response = invoke("deployToChat", {"action": "import", "data": {"hello": "world"}}, headers=bearer(USER))
    assert response.status == 400
    assert [detail["field"] for detail in response.body["details"]] == ["data.roles", "data.categories", "data.name"]
    assert "is in no backup format" in response.body["message"]


def test_a_recognised_but_invalid_backup_is_400_naming_its_field(invoke, linked) -> None:
    data = fixture("configuration")
    data["roles"][0]["permissions"] = ["FLY"]
    response = invoke("deployToChat", {"action": "import", "data": data}, headers=bearer(USER))
    assert response.status == 400
    assert [detail["field"] for detail in response.body["details"]] == ["data.roles[0].permissions[0]"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"action": "import"}, "template"),
        ({"action": "import", "template": "abc", "data": {"name": "x"}}, "data"),
        ({"action": "import", "data": [1]}, "data"),
    ],
)
def test_import_needs_template_or_data_not_both(invoke, linked, body: dict[str, Any], field: str) -> None:
    response = invoke("deployToChat", body, headers=bearer(USER))
    assert response.status == 400
    assert [detail["field"] for detail in response.body["details"]] == [field]
