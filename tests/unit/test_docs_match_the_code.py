"""What the docs and descriptions state as facts matches what a user meets: counts drift silently otherwise."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import get_args

from functions.deployToChat import app as deploy_app

ROOT = Path(__file__).resolve().parents[2]
NUMBERS = {"four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}


def pinned_packages() -> int:
    # As the Makefile's COUNT_PINS counts them: the lines that start with a package's name.
    files = ("requirements.txt", "shared/requirements.txt")
    return sum(1 for name in files for line in (ROOT / name).read_text().splitlines() if re.match(r"[A-Za-z0-9]", line))


def test_getting_started_states_the_count_of_pinned_packages_the_makefile_prints() -> None:
    text = (ROOT / "docs/01-getting-started.md").read_text()

    assert re.findall(r"installing (\d+) pinned packages", text) == [str(pinned_packages())]


def test_the_readme_and_getting_started_list_redocly_and_spectral_among_make_tests_checks() -> None:
    for page in ("README.md", "docs/01-getting-started.md"):
        line = next(line for line in (ROOT / page).read_text().splitlines() if line.startswith("make test "))
        assert "Redocly" in line, page
        assert "Spectral" in line, page


def test_deploy_to_chats_description_counts_the_actions_it_names() -> None:
    # The committed openapi.json (make openapi-check holds it to the handlers) as a client developer reads it.
    document = json.loads((ROOT / "openapi.json").read_text())
    description = document["paths"]["/functions/deployToChat"]["post"]["description"]
    stated = re.search(r"One operation, (\w+) actions", description)
    members = get_args(get_args(deploy_app.DeployToChatRequest)[0])

    assert stated is not None
    assert NUMBERS[stated.group(1)] == len(members)
    for member in members:
        (action,) = get_args(member.model_fields["action"].annotation)
        assert f"`{action}`" in description
