"""Robot's own selection in the default command (`robot [options] <dir>/`): --test,
--include, --exclude, --rerunfailed then `rebot --merge`, as every Robot CI runs them.

Real Robot command lines on the simulator rig (the real engine, hilrig-sim, the
run session and its sinks), with small cases; the suite file is the real generator's.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from robot.api import ExecutionResult

from hostlib.robot.suite import SUITE_FILE, check_suite, suite_text

from .conftest import REPO, requires_native

CASES = """\
cases:
  - name: RX short pass
    device: dut
    direction: rx
    master_clock: 100 MHz
    decimation: 100
    transport: {kind: udp, frame_bytes: 4048}
    duration: 0.3 s
    tags: [quick]
    thresholds:
      missing_frames: "== 0"
  - name: RX short fail
    device: dut
    direction: rx
    master_clock: 100 MHz
    decimation: 100
    transport: {kind: shm, frame_bytes: 4048}
    duration: 0.3 s
    tags: [impossible]
    thresholds:
      throughput: ">= 200% of rate"
"""


def robot(tmp_path: Path, *args: str, tool: str = "robot") -> tuple[int, str]:
    env = dict(os.environ, HILRIG_RIG=str(REPO / "rigs" / "sim.yaml"))
    console = ["--console", "dotted"] if tool == "robot" else []
    done = subprocess.run([sys.executable, "-m", tool, *console, *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout + done.stderr


def statuses(output: Path) -> dict[str, str]:
    return {t.name: t.status for t in ExecutionResult(str(output)).suite.all_tests}


@pytest.fixture
def suite(tmp_path):
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "short.yaml").write_text(CASES)
    done = subprocess.run([sys.executable, "-m", "hostlib.robot.suite", str(cases)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return cases


def test_the_shipped_suite_file_lists_every_shipped_case():
    assert check_suite(REPO / "testcases") is None


@requires_native
def test_rerunfailed_then_rebot_merge(tmp_path, suite):
    rc, out = robot(tmp_path, "--outputdir", "first", "cases")
    assert rc == 1, out
    assert statuses(tmp_path / "first" / "output.xml") == {"RX short pass": "PASS", "RX short fail": "FAIL"}

    rc, out = robot(tmp_path, "--rerunfailed", "first/output.xml", "--outputdir", "rerun", "cases")
    assert rc == 1, out   # the failed case ran again, alone, and failed again
    assert statuses(tmp_path / "rerun" / "output.xml") == {"RX short fail": "FAIL"}

    rc, out = robot(tmp_path, "--merge", "--output", "merged.xml", "first/output.xml", "rerun/output.xml",
                    tool="robot.rebot")
    assert rc == 1, out
    merged = ExecutionResult(str(tmp_path / "merged.xml")).suite
    tests = {t.name: t for t in merged.all_tests}
    assert {n: t.status for n, t in tests.items()} == {"RX short pass": "PASS", "RX short fail": "FAIL"}
    assert "re-executed and results merged" in tests["RX short fail"].message


@requires_native
@pytest.mark.parametrize("option, ran", [
    (["--test", "RX short pass"], {"RX short pass": "PASS"}),
    (["--include", "impossible"], {"RX short fail": "FAIL"}),
    (["--exclude", "impossible"], {"RX short pass": "PASS"}),
])
def test_robot_test_include_and_exclude_select_cases(tmp_path, suite, option, ran):
    rc, out = robot(tmp_path, *option, "--outputdir", "out", "cases")
    assert rc == (1 if "FAIL" in ran.values() else 0), out
    assert statuses(tmp_path / "out" / "output.xml") == ran
    # the cases Robot's own selection left out are listed in the file: no advice to rewrite it
    assert "not listed in hilrig.robot" not in out, out


@requires_native
def test_robot_test_selects_a_shipped_case_in_the_default_command(tmp_path):
    rc, out = robot(tmp_path, "--test", "RX UDP 1 MS/s", "--outputdir", "out", str(REPO / "testcases"))
    assert rc == 0, out
    assert statuses(tmp_path / "out" / "output.xml") == {"RX UDP 1 MS/s": "PASS"}


def test_a_stale_suite_file_fails_the_missing_case_and_runs_the_new_one(tmp_path, monkeypatch):
    """A listed name without a YAML case fails naming the fix; a case the file does not
    list still runs (the placeholder stands in for it) and the run warns."""
    import hostlib.engine
    from hostlib.dsl import load_cases

    from .test_robot_library import RIG, fake_run_case, run_robot

    monkeypatch.setattr(hostlib.engine, "run_case", fake_run_case)   # its verdict: the name's last word
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rig.yaml").write_text(RIG)
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "a.yaml").write_text(CASES.replace("RX short pass", "RX old pass"))
    (cases / SUITE_FILE).write_text(suite_text(load_cases([cases])))
    (cases / "a.yaml").write_text(CASES)  # renamed after the suite file was written
    assert check_suite(cases) is not None
    _, tests, console = run_robot(tmp_path, cases)
    assert list(tests) == ["RX old pass", "RX short fail", "RX short pass"], console
    assert "no YAML case under" in tests["RX old pass"].message
    assert "python -m hostlib.robot.suite" in tests["RX old pass"].message
    assert tests["RX short pass"].status == "PASS"
    assert "not listed in hilrig.robot" in console


def test_names_robot_cannot_read_back_are_left_to_the_placeholder():
    from .factories import make_case

    text = suite_text([make_case("odd  name"), make_case("plain name")])
    assert "\nplain name\n" in text and "# not listed, the placeholder adds it" in text
    assert text.count("    Run Hilrig Case\n") == 1
