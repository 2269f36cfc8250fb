"""What a module's mutation verdict depends on, as one digest: the module, the tests its selection runs, and the
conftest files and test helpers those tests import.

The gate records the digest of each module whose run passed (baseline.toml's [digests]); a later gate whose digest
is the same re-proves nothing (the same code under the same tests gives the same mutants the same verdicts), so a
fresh clone's gate checks that the baseline is current in seconds and a change pays only for the modules it touched.
"""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

from local.mutation.run import LAYER, ROOT


def _test_files(selection: list[str]) -> list[Path]:
    files: list[Path] = []
    for entry in selection:
        path = ROOT / entry.partition("::")[0]
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return files


def _conftests(path: Path) -> list[Path]:
    """The conftest.py files pytest loads for a test file: its folder's and every parent's up to tests/."""
    found = []
    for folder in path.parents:
        if (folder / "conftest.py").is_file():
            found.append(folder / "conftest.py")
        if folder == ROOT / "tests":
            break
    return found


def _helpers_imported(path: Path) -> list[Path]:
    """The modules under tests/ that `path` imports (test helpers, fixtures' modules)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        for name in names:
            if name.split(".")[0] != "tests":
                continue
            candidate = ROOT / Path(*name.split("."))
            for module in (candidate.with_suffix(".py"), candidate / "__init__.py"):
                if module.is_file():
                    found.append(module)
    return found


def inputs(module: str, selection: list[str]) -> list[Path]:
    """Every file the module's verdict depends on, each once, in a stable order."""
    seen: dict[Path, None] = {LAYER / module: None}
    pending = [*_test_files(selection)]
    while pending:
        path = pending.pop()
        if path in seen or not path.is_file():
            continue
        seen[path] = None
        pending += _conftests(path) + _helpers_imported(path)
    return sorted(seen, key=lambda path: str(path.relative_to(ROOT)))


def selection_digest(module: str, selection: list[str]) -> str:
    digest = hashlib.sha256()
    for path in inputs(module, selection):
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update("\0".join(selection).encode())  # a changed selection is a changed verdict too
    return digest.hexdigest()[:16]
