"""The repository stands alone: no project code, test, Makefile or CI script reaches a folder outside it.

A user clones the repository by itself, so a path into a sibling folder (the team's `../shared` reference
folder, say) works on one machine and fails on theirs. `make lint` runs this check; it reports:

- Python: a path built from `__file__` that climbs above the repository's root
  (`Path(__file__).resolve().parents[2].parent`, `.parent / ".."`, `os.path.dirname(...)` chains), and a
  string that starts with `../` (make, CI and pytest run at the root, so it names a folder beside it);
- the Makefile and `.ci/`: a relative path that starts with `..`, and `$(dirname "$0")/..` or `$(CURDIR)/..`
  climbing above the root.

Absolute paths (an interpreter under /usr/bin or ~/.pyenv) are the machine's, not the project's, and are
not checked.

Documents stand alone too: code, tests, the Makefile, template.yaml, `.ci/`, openapi.json, the README and
`docs/` cite the pages under `docs/`, never the team's reference documents (`OUTSIDE_DOCUMENTS`, or a section
sign); the README stays at most `README_MAX_LINES` lines, and its links and the pages' lead to files and
headings that exist.

Usage: `python -m local.outside_paths [ROOT]`; exit status 1 with one line per finding.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKIPPED_DIRECTORIES = {
    ".git",
    ".venv",
    ".venv-sam",
    ".venv-clients",
    ".venv-checkov",
    ".venv-uv",
    ".aws-sam",
    ".artifacts",
    ".local-state",
    "node_modules",
    "__pycache__",
}
ANCHORED_CALLS = {"resolve", "absolute", "expanduser"}  # methods that keep a path where it is
OS_PATH_KEEPING = {"abspath", "realpath", "normpath"}

Location = tuple[str, ...]  # parts relative to the root; a leading ".." is outside


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    text: str

    problem: str = "reaches outside the repository"

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.problem}: {self.text}"


def _climb(location: Location, segments: str) -> Location:
    parts = list(location)
    for segment in segments.split("/"):
        if segment in ("", "."):
            continue
        if segment == ".." and parts and parts[-1] != "..":
            parts.pop()
        else:
            parts.append(segment)
    return tuple(parts)


class _PythonPaths(ast.NodeVisitor):
    """Evaluates `__file__`-anchored path expressions; remembers the strings they consume."""

    def __init__(self, location: Location):
        self.file = location
        self.consumed: set[int] = set()

    def where(self, node: ast.AST) -> Location | None:
        match node:
            case ast.Name(id="__file__"):
                return self.file
            case ast.Call(func=ast.Name(id="Path" | "PurePath") | ast.Attribute(attr="Path"), args=[argument]):
                return self.where(argument)
            case ast.Call(func=ast.Attribute(value=inner, attr=attr), args=[]) if attr in ANCHORED_CALLS:
                return self.where(inner)
            case ast.Attribute(value=inner, attr="parent"):
                return self._then(inner, "..")
            case ast.Subscript(value=ast.Attribute(value=inner, attr="parents"), slice=ast.Constant(value=int(n))):
                return self._then(inner, "/".join([".."] * (n + 1)))
            case ast.BinOp(left=inner, op=ast.Div(), right=ast.Constant(value=str(segment)) as constant):
                return self._then(inner, segment, constant)
            case ast.Call(func=ast.Attribute(value=inner, attr="joinpath"), args=[ast.Constant(value=str(segment))]):
                return self._then(inner, segment, node.args[0])
            case ast.Call(func=ast.Attribute(value=ast.Attribute(attr="path"), attr="dirname"), args=[argument]):
                return self._then(argument, "..")
            case ast.Call(func=ast.Attribute(value=ast.Attribute(attr="path"), attr=attr), args=[argument]) if (
                attr in OS_PATH_KEEPING
            ):
                return self.where(argument)
            case ast.Call(func=ast.Attribute(value=ast.Attribute(attr="path"), attr="join"), args=[first, *rest]) if (
                all(isinstance(part, ast.Constant) and isinstance(part.value, str) for part in rest)
            ):
                location = self.where(first)
                if location is not None:
                    self.consumed.update(id(part) for part in rest)
                    for part in rest:
                        location = _climb(location, part.value)  # type: ignore[attr-defined]
                return location
        return None

    def _then(self, inner: ast.AST, segments: str, constant: ast.AST | None = None) -> Location | None:
        location = self.where(inner)
        if location is None:
            return None
        if constant is not None:
            self.consumed.add(id(constant))
        return _climb(location, segments)


_LEADING_CLIMB = re.compile(r"\.\./")
_RELATIVE_CLIMB = re.compile(r"(?<![\w.\-/$})\]])\.\.(?=/|[\s\"';)]|$)")
_ANCHORED_CLIMB = re.compile(r"(?P<anchor>\$\(dirname\s+\"?\$\{?0\}?\"?\)|\$\(CURDIR\))(?P<climbs>(?:/\.\.)+)")


def _python_findings(path: Path, relative: str) -> list[Finding]:
    source = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(source, filename=relative)
    except SyntaxError:
        return []  # ruff reports it
    lines = source.splitlines()
    paths = _PythonPaths(tuple(Path(relative).parts))
    outside: set[int] = set()
    expressions = [node for node in ast.walk(tree) if isinstance(node, ast.expr)]  # paths are expressions
    for node in expressions:
        location = paths.where(node)
        if location and location[0] == "..":
            outside.add(node.lineno)
    for node in expressions:
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in paths.consumed
            and _LEADING_CLIMB.match(node.value)
        ):
            outside.add(node.lineno)
    return [Finding(relative, line, lines[line - 1].strip()) for line in sorted(outside)]


def _script_findings(path: Path, relative: str) -> list[Finding]:
    findings = []
    depth = len(Path(relative).parts) - 1  # how far the script's folder is below the root
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        code = line.split("#", 1)[0] if not line.lstrip().startswith("#") else ""
        climbs_out = any(
            match.group("climbs").count("..") > (depth if match.group("anchor").startswith("$(dirname") else 0)
            for match in _ANCHORED_CLIMB.finditer(code)
        )
        if _RELATIVE_CLIMB.search(_ANCHORED_CLIMB.sub("", code)) or climbs_out:
            findings.append(Finding(relative, number, line.strip()))
    return findings


def _checked_files(root: Path) -> list[Path]:
    files = []
    # Pruned as it walks: the virtualenvs and node_modules hold far more files than the project.
    for directory, subdirectories, names in os.walk(root):
        subdirectories[:] = sorted(name for name in subdirectories if name not in SKIPPED_DIRECTORIES)
        for name in sorted(names):
            path = Path(directory, name)
            relative = path.relative_to(root)
            if path.is_file() and (path.suffix == ".py" or name == "Makefile" or relative.parts[0] == ".ci"):
                files.append(path)
    return sorted(files)


def find_outside_paths(root: Path = ROOT) -> list[Finding]:
    findings = []
    for path in _checked_files(root):
        relative = path.relative_to(root).as_posix()
        check = _python_findings if path.suffix == ".py" else _script_findings
        findings.extend(check(path, relative))
    return findings


# The team's reference documents, which a clone does not have; spelt so that this file names none of them.
OUTSIDE_DOCUMENTS = tuple(
    f"{name}.md"
    for name in (
        "contract".upper(),
        "chat-platform",
        "service-api",
        "ai-provider",
        "architecture".upper(),
        "style".upper(),
    )
)
_OUTSIDE_DOCUMENT = re.compile(  # the contract by its name alone too; our docs/04-chat-platform.md has "-" before
    r"\b" + "contract".upper() + r"\b|(?<![\w/-])(?:" + "|".join(map(re.escape, OUTSIDE_DOCUMENTS)) + ")"
)
_SECTION_SIGN = re.compile(r"(?<!\d )\u00a7")  # a section sign cites a document's section, unless after "RFC 6749 "
README_MAX_LINES = 250
_LINK = re.compile(r"\]\((?!https?:|mailto:)([^)\s]+)\)")  # a relative link: a page, a page#heading or #heading


def _cites_outside(line: str) -> bool:
    return bool(_OUTSIDE_DOCUMENT.search(line) or _SECTION_SIGN.search(line))


def _citing_files(root: Path) -> list[Path]:
    named = [root / "template.yaml", root / "openapi.json", root / "README.md", *sorted((root / "docs").glob("*.md"))]
    return [*_checked_files(root), *(path for path in named if path.is_file())]


def find_outside_documents(root: Path = ROOT) -> list[Finding]:
    findings = []
    for path in _citing_files(root):
        relative = path.relative_to(root).as_posix()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if _cites_outside(line):
                findings.append(Finding(relative, number, line.strip(), "cites a document outside the repository"))
    return findings


def find_readme_problems(root: Path = ROOT) -> list[Finding]:
    readme = root / "README.md"
    if not readme.is_file():
        return []
    lines = readme.read_text(encoding="utf-8").splitlines()
    findings = []
    if len(lines) > README_MAX_LINES:
        findings.append(Finding("README.md", len(lines), f"{len(lines)} lines", f"is over {README_MAX_LINES} lines"))
    for path in [readme, *sorted((root / "docs").glob("*.md"))]:
        relative = path.relative_to(root).as_posix()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for target in _LINK.findall(line):
                page, _, anchor = target.partition("#")
                linked = path.parent / page if page else path
                if not linked.exists():
                    findings.append(Finding(relative, number, target, "links to a file that does not exist"))
                elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
                    findings.append(Finding(relative, number, target, "links to a heading that does not exist"))
    return findings


def _anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as dashes."""
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    headings = re.findall(r"^#+ (.+)$", text, flags=re.M)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0]) if args else ROOT
    findings = [*find_outside_paths(root), *find_outside_documents(root), *find_readme_problems(root)]
    for finding in findings:
        print(finding)
    if findings:
        print(f"{len(findings)} finding(s): a fresh clone cannot use what they name.")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
