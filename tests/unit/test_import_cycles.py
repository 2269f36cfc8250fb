"""No import cycle in the layer (shared/svcconf) or in local/: every import counts, those under TYPE_CHECKING and
inside functions too."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def module_name(root: Path, path: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Each module of `package` (a folder under `root`) and the modules of the package it imports anywhere."""
    paths = {module_name(root, path): path for path in (root / package).rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in paths}
    for name, path in paths.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: up from this module's package
                    anchor = name.split(".")[: len(name.split(".")) - node.level + (1 if is_package else 0)]
                    base = ".".join([*anchor, *([base] if base else [])])
                # `from a.b import c` imports the module a.b.c when there is one, else a name of a.b
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in paths else base for alias in node.names]
            else:
                continue
            graph[name].update(target for target in targets if target in paths and target != name)
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while (member := stack.pop()) != node:
                component.append(member)
            component.append(node)
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(cycles)


def write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_an_import_under_type_checking_or_in_a_function_closes_a_cycle(tmp_path: Path):
    write(tmp_path, "pkg/__init__.py", "")
    write(tmp_path, "pkg/run.py", "def start():\n    from pkg.seed import seed\n")
    write(tmp_path, "pkg/seed.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import run\n")
    write(tmp_path, "pkg/sub/__init__.py", "")
    write(tmp_path, "pkg/sub/state.py", "from . import oauth\n")
    write(tmp_path, "pkg/sub/oauth.py", "from .state import State\n")
    write(tmp_path, "pkg/alone.py", "import pkg.run\nfrom pkg.sub import oauth\n")
    assert import_cycles(import_graph(tmp_path, "pkg")) == [["pkg.run", "pkg.seed"], ["pkg.sub.oauth", "pkg.sub.state"]]


def test_local_has_no_import_cycle():
    assert import_cycles(import_graph(ROOT, "local")) == []


def test_the_layer_has_no_import_cycle():
    assert import_cycles(import_graph(ROOT / "shared", "svcconf")) == []


FOUNDATION = {"errors", "settings", "clock", "observability"}


def declared_imports(init: Path) -> set[str]:
    """The rooms a room's docstring says it may import: its `May import:` sentence, the foundation aside."""
    docstring = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
    sentence = " ".join(docstring.partition("May import:")[2].split())
    allowed = sentence.partition(")")[2] if "foundation (" in sentence else sentence
    return {word for word in allowed.replace(",", " ").replace(".", " ").split() if word.isidentifier()}


def test_each_room_of_the_layer_imports_only_what_its_docstring_allows():
    layer = ROOT / "shared" / "svcconf"
    rooms = sorted(path.parent.name for path in layer.glob("*/__init__.py"))
    undeclared = {}
    for room, targets in import_graph(ROOT / "shared", "svcconf").items():
        parts = room.split(".")
        if len(parts) < 2 or parts[1] not in rooms:
            continue
        reached = {target.split(".")[1] for target in targets if len(target.split(".")) > 1} - {parts[1]} - FOUNDATION
        allowed = declared_imports(layer / parts[1] / "__init__.py")
        assert allowed, f"svcconf/{parts[1]}/__init__.py says nothing of what it may import ('May import: ...')"
        if reached - allowed:
            undeclared[room] = sorted(reached - allowed)
    assert undeclared == {}
