"""`make lint` fails when code, tests, the Makefile or CI reach a folder outside the repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from local.outside_paths import ROOT, find_outside_documents, find_outside_paths, find_readme_problems, main

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


def test_the_command_fails_and_names_each_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    write(tmp_path, "tests/test_x.py", f'SPEC = "{UP}/shared/spec.json"\n')
    assert main([str(tmp_path)]) == 1  # `python -m local.outside_paths` exits with it
    assert (
        capsys.readouterr().out.splitlines()[0]
        == f'tests/test_x.py:1: reaches outside the repository: SPEC = "{UP}/shared/spec.json"'
    )


SECTION = "\u00a7"  # the samples below are built from these, so that this file itself cites no outside document
TEAM_CONTRACT = "contract".upper()
MD = ".md"


def cited(root: Path) -> list[tuple[str, int]]:
    return [(finding.path, finding.line) for finding in find_outside_documents(root)]


@pytest.mark.parametrize(
    ("relative", "line"),
    [
        ("shared/svcconf/errors.py", f'    """The error body ({TEAM_CONTRACT} {SECTION}2)."""'),
        ("local/chat_sandbox/access.py", f"# needs ADMINISTRATOR (chat-platform{MD}, Roles)"),
        ("tests/unit/test_x.py", f"# invalid by {SECTION}5: an overwrite names a role nobody defines"),
        ("Makefile", f"docs:\n\tcat STYLE{MD}"),
        ("template.yaml", f"Description: see service-api{MD}"),
        (".ci/run", f"# ai-provider{MD} says so"),
        ("docs/05-deploy.md", f"The plan follows {TEAM_CONTRACT}{MD}."),
    ],
)
def test_a_citation_of_a_document_outside_the_repository_is_found(tmp_path: Path, relative: str, line: str):
    # Given a repository whose only citation of a team document is on that file's last line
    write(tmp_path, relative, f"{line}\n")
    # When it is checked, Then that file and line are reported
    assert cited(tmp_path) == [(relative, line.count("\n") + 1)]


def test_citations_of_the_repositorys_own_pages_and_of_rfcs_are_not_found(tmp_path: Path):
    write(tmp_path, "local/chat_sandbox/oauth.py", '"""Form-encoded bodies only (docs/04-chat-platform.md)."""')
    write(tmp_path, "shared/svcconf/chat/client.py", f"# HTTP Basic (RFC 6749 {SECTION}2.3.1)")
    write(tmp_path, "shared/svcconf/errors.py", f'_{TEAM_CONTRACT}_PHRASES = {{502: "Error"}}')
    write(tmp_path, "README.md", "4. [The chat platform](docs/04-chat-platform.md)\n")
    assert cited(tmp_path) == []


def test_a_readme_over_250_lines_is_found(tmp_path: Path):
    write(tmp_path, "README.md", "line\n" * 251)
    assert [(finding.path, finding.problem) for finding in find_readme_problems(tmp_path)] == [
        ("README.md", "is over 250 lines")
    ]


def test_a_link_to_a_page_that_does_not_exist_is_found(tmp_path: Path):
    write(tmp_path, "docs/01-start.md", "# Start\n\nNext: [2. API](02-api.md#errors), [home](../README.md).\n")
    write(
        tmp_path, "README.md", "# X\n\n1. [Start](docs/01-start.md)\n2. [API](docs/02-api.md)\n[web](https://x.org)\n"
    )
    found_links = [(finding.path, finding.line, finding.text) for finding in find_readme_problems(tmp_path)]
    assert found_links == [("README.md", 4, "docs/02-api.md"), ("docs/01-start.md", 3, "02-api.md#errors")]


def test_a_link_to_a_heading_that_does_not_exist_is_found(tmp_path: Path):
    write(
        tmp_path,
        "docs/07-ops.md",
        "# 7. Ops\n\n## Time budgets\n\n## svcAiChat's init\n\n```text\n# not a heading\n```\n",
    )
    write(
        tmp_path,
        "README.md",
        "[a](docs/07-ops.md#time-budgets) [b](docs/07-ops.md#svcaichats-init) [c](docs/07-ops.md#not-a-heading)\n",
    )
    found_links = [(finding.text, finding.problem) for finding in find_readme_problems(tmp_path)]
    assert found_links == [("docs/07-ops.md#not-a-heading", "links to a heading that does not exist")]


def test_the_repository_cites_only_its_own_documents_and_its_readme_leads_to_pages_that_exist():
    assert [str(finding) for finding in [*find_outside_documents(ROOT), *find_readme_problems(ROOT)]] == []
