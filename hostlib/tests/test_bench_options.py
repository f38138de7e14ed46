"""`python -m hostlib.bench` options: the BENCH_* variables are their defaults, bad input is a usage error."""
from __future__ import annotations

import pytest

from hostlib.bench.__main__ import DEFAULT_GROUPS, parse_args


def test_defaults_and_environment(monkeypatch):
    for var in ("BENCH_ONLY", "BENCH_LONG", "BENCH_CONFIRM_S", "BENCH_REPEATS"):
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
])
def test_bad_options_name_what_is_wrong(argv, says, capsys):
    with pytest.raises(SystemExit) as exc:
        parse_args(argv)
    assert exc.value.code == 2 and says in capsys.readouterr().err
