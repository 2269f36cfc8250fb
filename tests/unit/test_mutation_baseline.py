"""The mutation gate's baseline: survivors recognised by what they change, reasons kept across a rewrite."""

from __future__ import annotations

from pathlib import Path

from local.mutation import baseline, digest
from local.mutation.run import ModuleRun, Mutant, mutant_change, mutated_functions

MUTATED = """
def x_is_usable__mutmut_orig(self, now):
    return self.consumed_at is None and self.expires_at > now
def x_is_usable__mutmut_3(self, now):
    return self.consumed_at is None and self.expires_at >= now
"""


def survivor(name: str, change: str, status: str = "survived") -> Mutant:
    return Mutant(name=name, status=status, change=change)


def test_a_mutants_change_is_the_lines_it_alters_old_then_new(tmp_path: Path) -> None:
    module = tmp_path / "codes.py"
    module.write_text(MUTATED)

    change = mutant_change(mutated_functions(module), Mutant("svcconf.store.codes.x_is_usable__mutmut_3", "survived"))

    assert change == (
        "- return self.consumed_at is None and self.expires_at > now\n"
        "+ return self.consumed_at is None and self.expires_at >= now"
    )


def test_a_mutant_is_named_by_its_function_and_a_methods_by_its_class() -> None:
    assert Mutant("svcconf.codes.x_resolve_code__mutmut_12", "survived").function == "resolve_code"
    assert (
        Mutant("svcconf.store.codes.xǁCodeRepositoryǁconsume__mutmut_3", "killed").function == "CodeRepository.consume"
    )


def test_a_rewrite_keeps_the_reasons_of_survivors_and_timeouts_and_marks_new_survivors_unjudged(tmp_path: Path) -> None:
    judged = baseline.Equivalent("svcconf/codes.py", "resolve_code", "- a\n+ b", "no caller passes it")
    gone = baseline.Equivalent("svcconf/codes.py", "mint_code", "- c\n+ d", "fixed since")
    other = baseline.Equivalent("svcconf/api/auth.py", "bearer_user", "- e\n+ f", "another module, not run")
    slow = baseline.Equivalent("svcconf/codes.py", "consume", "- i\n+ j", "a consistent read reads the same here")
    previous = {entry.key: entry for entry in (judged, gone, other, slow)}
    run = ModuleRun(
        module="svcconf/codes.py",
        tests=[],
        mutants=[
            survivor("svcconf.codes.x_resolve_code__mutmut_7", "- a\n+ b"),  # renumbered, same change
            survivor("svcconf.codes.x_new_code_text__mutmut_2", "- g\n+ h", status="no tests"),
            Mutant("svcconf.codes.x_mint_code__mutmut_1", "killed"),
            survivor("svcconf.codes.x_consume__mutmut_4", "- i\n+ j", status="timeout"),  # a busy machine's verdict
            survivor("svcconf.codes.x_consume__mutmut_5", "- k\n+ l", status="timeout"),  # never judged: stays out
        ],
    )

    entries = baseline.rewritten([run], previous)
    baseline.write(entries, tmp_path / "baseline.toml")

    assert baseline.load(tmp_path / "baseline.toml") == {entry.key: entry for entry in entries}
    assert [(e.module, e.function, e.reason) for e in entries] == [
        ("svcconf/api/auth.py", "bearer_user", "another module, not run"),
        ("svcconf/codes.py", "consume", "a consistent read reads the same here"),
        ("svcconf/codes.py", "new_code_text", baseline.UNJUDGED),
        ("svcconf/codes.py", "resolve_code", "no caller passes it"),
    ]


def test_the_committed_baseline_gives_each_equivalent_mutant_a_reason() -> None:
    for entry in baseline.load().values():
        assert entry.reason.strip(), entry
        assert entry.change.startswith(("- ", "+ ")), entry


def write_tree(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_a_modules_digest_changes_with_its_code_its_tests_and_their_helpers_and_nothing_else(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(digest, "ROOT", tmp_path)
    monkeypatch.setattr(digest, "LAYER", tmp_path / "shared")
    write_tree(
        tmp_path,
        {
            "shared/svcconf/codes.py": "def f(): return 1\n",
            "tests/conftest.py": "",
            "tests/unit/test_codes.py": "from tests.helpers.clock import moved\n",
            "tests/unit/test_other.py": "",
            "tests/helpers/__init__.py": "",
            "tests/helpers/clock.py": "moved = 1\n",
            "tests/helpers/unused.py": "",
        },
    )
    selection = ["tests/unit/test_codes.py"]
    first = digest.selection_digest("svcconf/codes.py", selection)

    def after(relative: str, text: str) -> str:
        write_tree(tmp_path, {relative: text})
        return digest.selection_digest("svcconf/codes.py", selection)

    assert after("tests/unit/test_other.py", "x = 1\n") == first
    assert after("tests/helpers/unused.py", "x = 1\n") == first
    seen = {first}
    for relative, text in [
        ("shared/svcconf/codes.py", "def f(): return 2\n"),
        ("tests/unit/test_codes.py", "from tests.helpers.clock import moved\nx = 2\n"),
        ("tests/helpers/clock.py", "moved = 2\n"),
        ("tests/conftest.py", "y = 1\n"),
    ]:
        changed = after(relative, text)
        assert changed not in seen, relative
        seen.add(changed)
    assert digest.selection_digest("svcconf/codes.py", [*selection, "tests/unit/test_other.py"]) not in seen


def test_a_rewrite_keeps_the_recorded_digests_and_a_gate_can_replace_them(tmp_path: Path) -> None:
    path = tmp_path / "baseline.toml"
    entry = baseline.Equivalent("svcconf/codes.py", "resolve_code", "- a\n+ b", "no caller passes it")
    baseline.write([entry], path, digests={"svcconf/codes.py": "0123456789abcdef"})

    baseline.write([entry], path)  # a rewrite of the entries alone
    assert baseline.load_digests(path) == {"svcconf/codes.py": "0123456789abcdef"}
    assert list(baseline.load(path).values()) == [entry]

    baseline.write([entry], path, digests={"svcconf/codes.py": "fedcba9876543210", "svcconf/api/auth.py": "1" * 16})
    assert baseline.load_digests(path) == {"svcconf/api/auth.py": "1" * 16, "svcconf/codes.py": "fedcba9876543210"}
