"""`python -m hostlib.bench` options: the BENCH_* variables are their defaults, bad input is a usage error."""
from __future__ import annotations

import pytest

from hostlib.bench.__main__ import DEFAULT_GROUPS, parse_args


def test_defaults_and_environment(monkeypatch):
    for var in ("BENCH_ONLY", "BENCH_LONG", "BENCH_CONFIRM_S", "BENCH_REPEATS", "BENCH_SPSC_S"):
        monkeypatch.delenv(var, raising=False)
    opts = parse_args([])
    assert opts.only == frozenset(DEFAULT_GROUPS) and "soapyremote" not in opts.only
    assert (opts.long, opts.window_s, opts.confirm_s, opts.sim_s, opts.repeats) == (False, 1.0, 10.0, 3.0, 5)
    monkeypatch.setenv("BENCH_ONLY", "rtl,usb")
    monkeypatch.setenv("BENCH_LONG", "1")
    monkeypatch.setenv("BENCH_REPEATS", "3")
    opts = parse_args([])
    assert opts.only == {"rtl", "usb"} and opts.long and (opts.window_s, opts.sim_s, opts.repeats) == (10.0, 30.0, 3)
    opts = parse_args(["--only", "shm", "--window-s", "0.5", "--confirm-s", "2"])   # options win over the environment
    assert opts.only == {"shm"} and (opts.window_s, opts.confirm_s) == (0.5, 2.0)


@pytest.mark.parametrize("argv, says", [
    (["--only", "udp,ufp"], "unknown row group(s) ufp"),
    (["--window-s", "0"], "--window-s must be > 0 seconds"),
    (["--repeats", "0"], "--repeats must be >= 1"),
    (["--spsc-s", "-1"], "--spsc-s must be > 0 seconds"),
])
def test_bad_options_name_what_is_wrong(argv, says, capsys):
    with pytest.raises(SystemExit) as exc:
        parse_args(argv)
    assert exc.value.code == 2 and says in capsys.readouterr().err


def test_spsc_table_puts_the_seed_beside_each_strategy_and_the_ratios():
    from hostlib.bench import spsc

    def row(queue, qd, runs, errors=0):
        return {"queue": queue, "payload_bytes": 24, "qd": qd, "mops_min": min(runs), "mops_median": sorted(runs)[1],
                "mops_runs": runs, "errors": errors}

    # Run k of every queue ran back to back: ratios are taken within a run, so the slow
    # third run (the host moved a vCPU) does not decide them.
    result = {"rows": [row("batched", 1, [2.0, 2.0, 0.5]), row("adaptive", 1, [4.0, 4.0, 0.4]),
                       row("boost", 1, [8.0, 8.0, 1.6], errors=1)],
              "latency": [{"queue": "adaptive", "one_way_p50_ns": 100.0, "one_way_p99_ns": 300.0}],
              "pingpong_one_way_ns": 50.0, "qd1_bound_mops": 10.0}
    table, notes = spsc.table([result])
    cells = [[str(c) for c in col.cells] for col in table.columns]
    by_queue = {cells[2][i]: [col[i] for col in cells] for i in range(len(cells[0]))}
    assert by_queue["batched"][5:] == ["0.94", "0.50", "0.25"]      # seed's QD 1, /best (adaptive), /boost
    assert by_queue["adaptive"][5:] == ["4.90", "1.00", "0.50"]
    assert "boost (1 ERRORS)" in by_queue
    assert any("adaptive 100/300" in n for n in notes) and any("adaptive 0.40" in n for n in notes)
    assert spsc.same_run_ratio([1.0, 3.0], [0.0, 1.0]) == 3.0    # a run where the peer did nothing is left out
