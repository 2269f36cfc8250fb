"""The layer and the handlers use Powertools through its public API only, so an upgrade cannot break them
silently: no private names imported, none of the internals the old auth-before-validation needed."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted([*(ROOT / "shared" / "svcconf").rglob("*.py"), *(ROOT / "functions").rglob("*.py")])
# What api.py used to reach into: the dependency cache, the validation middleware, the matched route.
INTERNALS = ("_DEPENDS_CACHE_KEY", "_request_validation_middleware", "_route", "solve_dependencies")


@pytest.mark.parametrize("source", SOURCES, ids=lambda path: str(path.relative_to(ROOT)))
def test_only_public_powertools_names_are_imported(source):
    tree = ast.parse(source.read_text())
    imported = [
        (node.module, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("aws_lambda_powertools")
        for alias in node.names
    ]
    private = [(module, name) for module, name in imported if name.startswith("_") or "._" in module]
    assert private == []


@pytest.mark.parametrize("source", SOURCES, ids=lambda path: str(path.relative_to(ROOT)))
def test_no_powertools_internals_are_named(source):
    tree = ast.parse(source.read_text())
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    names |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    names |= {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    names |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert sorted(names & set(INTERNALS)) == []
