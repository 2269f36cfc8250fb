"""`python -m bench`: a piece that fails is reported, the others still run, and the exit status says so."""

from __future__ import annotations

import sys
import types

import pytest

import bench.__main__ as bench_main


@pytest.fixture
def pieces(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    ran: list[str] = []

    def broken() -> None:
        raise RuntimeError("UnresolvedReferenceError, say")

    monkeypatch.setitem(sys.modules, "bench.probe_first", types.SimpleNamespace(run=lambda: ran.append("first")))
    monkeypatch.setitem(sys.modules, "bench.probe_broken", types.SimpleNamespace(run=broken))
    monkeypatch.setitem(sys.modules, "bench.probe_last", types.SimpleNamespace(run=lambda: ran.append("last")))
    monkeypatch.setattr(bench_main, "PIECES", ["probe_first", "probe_broken", "probe_last"])
    return ran


def test_a_broken_piece_fails_the_run_and_the_others_still_run(pieces, capsys) -> None:
    status = bench_main.main([])

    out = capsys.readouterr().out
    assert status == 1
    assert pieces == ["first", "last"]
    assert "==> bench.probe_broken FAILED" in out
    assert "==> bench: 2 of 3 pieces ran, full size, in 0 s; failed: probe_broken" in out


def test_a_run_whose_pieces_all_work_exits_0(pieces) -> None:
    assert bench_main.main(["probe_first", "probe_last"]) == 0
    assert pieces == ["first", "last"]


def test_an_unknown_piece_is_refused_with_the_known_ones(pieces, capsys) -> None:
    assert bench_main.main(["nope"]) == 2
    assert "no benchmark nope; these are: probe_first, probe_broken, probe_last" in capsys.readouterr().err
