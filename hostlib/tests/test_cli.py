"""The `hilrig` command as a technician uses it: validate, run, interrupt."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import hostlib
from hostlib._process import processes

from .conftest import REPO, requires_native


def hilrig(*args: str, cwd: Path, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "hostlib", *args], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def sim_pids(parent: int | None = None) -> set[int]:
    """Running hilrig-sim processes (zombies excluded), optionally only children of `parent`."""
    return processes("hilrig-sim", parent)


def test_public_surface_is_what_all_says():
    import types

    for name in hostlib.__all__:
        assert getattr(hostlib, name) is not None, name
    # Nothing public beyond __all__ (subpackages aside): a new export must be listed.
    public = {n for n, v in vars(hostlib).items()
              if not n.startswith("_") and not isinstance(v, types.ModuleType)}
    assert public <= set(hostlib.__all__), public - set(hostlib.__all__)


def test_validate_exit_codes(tmp_path):
    ok = hilrig("validate", str(REPO / "testcases"), cwd=tmp_path)
    out, _ = ok.communicate(timeout=60)
    assert ok.returncode == 0, out
    bad = hilrig("validate", str(REPO / "hostlib/tests/yaml_corpus/two_errors.yaml"), cwd=tmp_path)
    out, _ = bad.communicate(timeout=60)
    assert bad.returncode == 2
    assert "two_errors.yaml:7" in out and "two_errors.yaml:10" in out


@requires_native
def test_interrupted_run_keeps_measured_results_and_leaks_nothing(tmp_path):
    cases = tmp_path / "cases.yaml"
    cases.write_text(textwrap.dedent("""
        cases:
          - {name: first, device: dut, direction: rx, master_clock: 100 MHz, decimation: 100,
             transport: {kind: shm, frame_bytes: 8048}, duration: 0.5 s}
          - {name: second, device: dut, direction: rx, master_clock: 100 MHz, decimation: 100,
             transport: {kind: shm, frame_bytes: 8048}, duration: 30 s}
    """))
    outbox = tmp_path / "outbox"
    # Started with SIGINT ignored, as a script's background job is (and as a test runner's
    # fork may inherit): hilrig must still stop on it. PYTHONFAULTHANDLER: should the run
    # not exit, SIGABRT makes it print every thread's stack.
    proc = subprocess.Popen(["bash", "-c", "trap '' INT; exec \"$@\"", "bash", sys.executable, "-m", "hostlib",
                             "run", str(cases), "--rig", str(REPO / "rigs/sim.yaml"), "--outbox", str(outbox)],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "PYTHONFAULTHANDLER": "1", "COLUMNS": "200"})
    assert proc.stdout is not None
    seen: list[str] = []
    for line in proc.stdout:   # until the second case reports its first second of streaming
        seen.append(line)
        if any(l.startswith("[2/2]") for l in seen) and "t=" in line:
            break
    else:
        raise AssertionError("the second case never streamed: " + "".join(seen))
    files = list(outbox.glob("*.lp"))
    ours = sim_pids(parent=proc.pid)
    assert ours, "the second case's simulator is not running"
    proc.send_signal(signal.SIGINT)
    try:
        rest, _ = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        rest, _ = proc.communicate(timeout=20)
        raise AssertionError("the run did not end within 20 s of SIGINT; its threads:\n" + "".join(seen) + rest)
    out = "".join(seen) + rest
    assert proc.returncode == 130, out
    lines = [l for l in files[0].read_text().splitlines() if l.startswith("hilrig_case")]
    assert len(lines) == 1 and "testcase=first" in lines[0]
    time.sleep(0.2)
    assert sim_pids() & ours == set(), "simulator left running after Ctrl-C"
    assert "interrupted" in out
    # Ctrl-C gives the prompt back without plotting; the report is one command away.
    run_id = files[0].stem
    assert f"hilrig report: not written (interrupted); `hilrig report {run_id}`" in out, out
    assert not list((tmp_path / "results" / "reports").glob("*.html"))
    report = hilrig("report", run_id, cwd=tmp_path)
    out, _ = report.communicate(timeout=120)
    assert report.returncode == 0, out
    assert list((tmp_path / "results" / "reports").glob(f"{run_id}*.html")), out


@requires_native
def test_absent_device_skips_and_a_run_of_only_skips_exits_5(tmp_path):
    case = tmp_path / "c.yaml"
    case.write_text("{name: on x310, device: x310, direction: rx, master_clock: 200 MHz, decimation: 2,"
                    " transport: {kind: udp, frame_bytes: 8000}, duration: 1 s}\n")
    proc = hilrig("run", str(case), "--rig", str(REPO / "rigs/sim.yaml"), "--outbox", str(tmp_path / "o"), cwd=tmp_path)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 5, out  # the case SKIPs; a run that tested nothing is not a pass
    assert "nothing was tested" in out
    assert "SKIP" in out and "x310" in out


def test_user_mistakes_get_one_line_errors_not_tracebacks(tmp_path):
    rig_typo = tmp_path / "typo.yaml"
    rig_typo.write_text((REPO / "rigs/sim.yaml").read_text().replace("driver: sim", "drvier: sim", 1))
    checks = [
        (("run", str(tmp_path / "missing.yaml")), 2, "missing.yaml: no such file"),
        (("run", str(REPO / "testcases/tx/tx_udp.yaml"), "--rig", str(rig_typo)), 2,
         "typo.yaml:9: devices.dut.drvier: unknown field 'drvier'; did you mean 'driver'?"),
        (("run", str(REPO / "testcases/tx/tx_udp.yaml"), "--rig", "no_such_rig"), 2, "no_such_rig.yaml"),
        (("results", "show", "--last", "0"), 2, "hilrig: ConfigError: --last 0: give 1 or more"),
    ]
    for args, code, text in checks:
        proc = hilrig(*args, cwd=tmp_path)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == code, (args, out)
        assert text in out, (args, out)
        assert "Traceback" not in out, (args, out)
