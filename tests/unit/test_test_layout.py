"""The suite's own layout: pytest imports test files by their base name (the test folders are not packages), so two
files of one name in different folders stop the whole run with 'import file mismatch'."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_no_two_test_files_share_a_name() -> None:
    names = Counter(path.name for path in TESTS.glob("*/test_*.py"))
    assert [name for name, count in names.items() if count > 1] == []
