"""`make lint` fails when code, tests, the Makefile or CI reach a folder outside the repository."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from local.outside_paths import ROOT, find_outside_paths

UP = ".."  # the samples below are built from this, so that this file itself names no folder outside


def write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def found(root: Path) -> list[tuple[str, int]]:
    return [(finding.path, finding.line) for finding in find_outside_paths(root)]


@pytest.mark.parametrize(
    ("relative", "line"),
    [
        ("tests/integration/test_spec.py", 'SPEC = Path(__file__).resolve().parents[2].parent / "shared" / "x.json"'),
        ("tests/test_spec.py", 'SPEC = Path(__file__).parent.parent.parent / "shared"'),
        ("local/tool.py", f'SPEC = Path(__file__).resolve().parent / "{UP}/{UP}" / "x"'),
        ("bench/run.py", f'DATA = os.path.join(os.path.dirname(__file__), "{UP}", "{UP}", "shared")'),
        ("functions/op/app.py", f'open("{UP}/shared/spec/x.json")'),
        ("Makefile", f"spec:\n\tcp {UP}/shared/spec/x.json tests/data/"),
        (".ci/run", f'cd "$(dirname "$0")/{UP}/{UP}/shared"'),
        (".ci/run", f"cd {UP}"),
    ],
)
def test_a_path_that_climbs_out_of_the_repository_is_found(tmp_path: Path, relative: str, line: str):
    # Given a repository with one file that reaches outside it, on its last line
    write(tmp_path, relative, f"{line}\n")
    # When it is checked, Then that file and line are reported
    assert found(tmp_path) == [(relative, line.count("\n") + 1)]


def test_paths_that_stay_inside_are_not_found(tmp_path: Path):
    write(tmp_path, "tests/integration/test_x.py", 'DATA = Path(__file__).resolve().parents[1] / "data" / "x.json"')
    write(tmp_path, "local/chat/__init__.py", 'LAYER = Path(__file__).resolve().parents[2] / "shared"')
    write(tmp_path, "bench/run.py", f'ROOT = os.path.join(os.path.dirname(__file__), "{UP}")')
    write(tmp_path, "local/x.py", f'"""Never read {UP}/shared at test time."""\nNAME = "{UP}"')
    write(tmp_path, ".ci/run", f'#!/usr/bin/env bash\n# never cd {UP}/shared\ncd "$(dirname "$0")/{UP}"\nmake test\n')
    write(tmp_path, "Makefile", "PY ?= $$HOME/.pyenv/versions/3.13*/bin/python3.13\nrun:\n\t$(PY) -m local.run\n")
    assert found(tmp_path) == []


def test_the_repository_itself_reaches_nowhere_outside():
    assert [str(finding) for finding in find_outside_paths(ROOT)] == []


def test_the_command_fails_and_names_each_finding(tmp_path: Path):
    write(tmp_path, "tests/test_x.py", f'SPEC = "{UP}/shared/spec.json"\n')
    result = subprocess.run(
        [sys.executable, "-m", "local.outside_paths", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 1
    assert (
        result.stdout.splitlines()[0]
        == f'tests/test_x.py:1: reaches outside the repository: SPEC = "{UP}/shared/spec.json"'
    )
