"""The mutation gate's baseline: survivors recognised by what they change, reasons kept across a rewrite."""

from __future__ import annotations

from pathlib import Path

from local.mutation import baseline
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
