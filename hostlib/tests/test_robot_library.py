"""HilrigLibrary in a real Robot run: expansion of YAML cases, selection, verdict mapping, sinks.

Robot, the DSL loader, the rig loader, the outbox and the evidence writer are
the real ones. Only the engine is replaced, and only inside these tests
(FAKE ENGINE below, via monkeypatch on hostlib.engine.run_case): it "measures"
metrics chosen per case name and judges them with the case's real thresholds,
so these tests need no native build. End-to-end runs on the simulator are
covered by the lead's suite tests.
"""
from __future__ import annotations

import io
import json
import shutil
import textwrap
from pathlib import Path

import pytest
import robot
from robot.api import ExecutionResult

from hostlib.engine.verdict import judge
from hostlib.robot.suite import suite_text
from hostlib.results import CaseResult, summary_line
from hostlib.results.record import ErrorKind, iso_utc, utc_now

REPO = Path(__file__).resolve().parents[2]

RIG = """\
name: testrig
devices:
  dut:
    driver: sim
    channels: 2
    max_rate: 1 GS/s
    directions: [rx, tx, loopback]
    transports: [udp, shm]
results:
  outbox: out/outbox
"""

CASE = """\
name: {name}
device: dut
direction: {direction}
channels: 1
format: sc16
master_clock: 200 MHz
{ratio}: 20
transport: {{kind: {kind}, frame_bytes: 8000}}
duration: 1 s
pattern: counter
tags: [{tags}]
thresholds:
  throughput: ">= 99% of rate"
  missing_frames: "== 0"
"""

GOOD = {"samples_received": 15e6, "throughput_sps": 10e6, "throughput_ratio": 1.0, "missing_frames": 0.0, "overruns": 0.0,
        "underruns": 0.0, "latency_p99_s": 0.0002}
BAD = dict(GOOD, throughput_sps=9.0e6, throughput_ratio=0.9, missing_frames=125.0)
MARGINAL = dict(GOOD, throughput_sps=9.95e6, throughput_ratio=0.995)  # inside 99 %, outside a 99.9 % band


# ---- FAKE ENGINE (test only): stands in for hostlib.engine.run_case -----------------
def fake_run_case(case, rig, *, run_id, progress=None, require_devices=False):
    behaviour = case.name.split()[-1]  # the last word of the case name says what to do
    started = iso_utc(utc_now())
    if behaviour == "absent":  # as the real engine reports a device the rig lacks
        result = CaseResult(case=case, rig_name=rig.name, device=case.device, driver="", run_id=run_id,
                            started_utc=started, ended_utc=started, verdict="SKIP",
                            message=f"rig {rig.name!r} has no device for {case.name!r}")
        result.message = summary_line(result)
        return result
    metrics = {"pass": GOOD, "fail": BAD, "marginal": MARGINAL}.get(behaviour, {})
    series = [{"t_s": 1.0, "throughput_sps": metrics.get("throughput_sps", 0.0), "missing_frames": 0.0}]
    if progress and metrics:
        progress(series[0])
    result = CaseResult(case=case, rig_name=rig.name, device=case.device, driver="sim", run_id=run_id,
                        started_utc=started, ended_utc=iso_utc(utc_now()), verdict="ERROR",
                        metrics=dict(metrics), series=series if metrics else [])
    if behaviour == "crash":
        result.set_error(ErrorKind.DEVICE, "hilrig-sim exited with signal 9")
        return result
    judge(case, result)  # the real judgement: thresholds, verdict, message
    return result


@pytest.fixture
def suite_dir(tmp_path, monkeypatch):
    import hostlib.engine

    monkeypatch.setattr(hostlib.engine, "run_case", fake_run_case)
    monkeypatch.chdir(tmp_path)  # evidence goes to results/evidence under the cwd
    monkeypatch.delenv("HILRIG_RIG", raising=False)
    (tmp_path / "rig.yaml").write_text(RIG)
    suite = tmp_path / "cases"
    suite.mkdir()
    (suite / "hilrig.robot").write_text(suite_text([]))  # the placeholder alone: it expands every case
    return suite


def write_case(suite: Path, file: str, name: str, direction="rx", kind="udp", tags="smoke"):
    ratio = "decimation" if direction == "rx" else "interpolation"
    (suite / file).write_text(CASE.format(name=name, direction=direction, kind=kind, tags=tags, ratio=ratio))


def run_robot(tmp_path: Path, suite: Path, *variables: str):
    console = io.StringIO()
    out = tmp_path / "robot-out"
    rc = robot.run(str(suite), outputdir=str(out), variable=[f"RIG:{tmp_path / 'rig.yaml'}", *variables],
                   stdout=console, stderr=console, console="verbose", log="NONE", report="NONE")
    tests = {t.name: t for t in ExecutionResult(str(out / "output.xml")).suite.all_tests}
    return rc, tests, console.getvalue()


def test_one_robot_test_per_case_with_tags_verdicts_and_results(tmp_path, suite_dir, capfd):
    write_case(suite_dir, "a_rx.yaml", "RX 10 MS/s pass", tags="smoke")
    write_case(suite_dir, "b_tx.yaml", "TX 10 MS/s fail", direction="tx", kind="shm", tags="nightly")
    rc, tests, console = run_robot(tmp_path, suite_dir)

    assert rc == 1, console  # one failed test
    assert list(tests) == ["RX 10 MS/s pass", "TX 10 MS/s fail"]
    rx, tx = tests["RX 10 MS/s pass"], tests["TX 10 MS/s fail"]
    assert set(rx.tags) == {"device:dut", "transport:udp", "direction:rx", "smoke", "verdict:pass"}
    assert set(tx.tags) == {"device:dut", "transport:shm", "direction:tx", "nightly", "verdict:fail"}
    assert rx.status == "PASS" and tx.status == "FAIL"
    assert rx.message == "PASS rx udp 10.0 MS/s: 10.00 MS/s (100.0%), 0 missing, 0 O, 0 U, p99 0.20 ms"
    assert tx.message.startswith("FAIL tx shm 10.0 MS/s: 9.00 MS/s (90.0%), 125 missing")
    assert "missing_frames == 0 (measured 125)" in tx.message
    assert rx.metadata["throughput_sps"] == "10.00 MS/s" and rx.metadata["verdict"] == "PASS"
    assert tx.metadata["missing_frames"] == "125"

    lp_files = list((tmp_path / "out" / "outbox").glob("*.lp"))
    assert len(lp_files) == 1
    case_lines = [l for l in lp_files[0].read_text().splitlines() if l.startswith("hilrig_case,")]
    assert len(case_lines) == 2 and "verdict=PASS" in case_lines[0] and "verdict=FAIL" in case_lines[1]
    evidence = list((tmp_path / "results" / "evidence").glob("*.json"))
    assert [p.stem for p in evidence] == [lp_files[0].stem]
    doc = json.loads(evidence[0].read_text())
    assert [c["verdict"] for c in doc["cases"]] == ["PASS", "FAIL"]
    assert doc["rig"]["text"] == RIG and doc["ended_utc"]

    assert console.count("RX 10 MS/s pass") == 1 and console.count("TX 10 MS/s fail") == 1  # each test once
    console = capfd.readouterr().out  # logger.console writes to the real stdout
    assert f"{lp_files[0]} (outbox)" in console and f"{evidence[0]} (evidence)" in console
    assert "1 PASS, 0 MARGINAL, 1 FAIL, 0 ERROR, 0 SKIP" in console


def test_selection_by_case_glob_and_tag(tmp_path, suite_dir):
    write_case(suite_dir, "a_rx.yaml", "RX 10 MS/s pass", tags="smoke")
    write_case(suite_dir, "b_tx.yaml", "TX 10 MS/s pass", direction="tx", tags="nightly")
    _, tests, _ = run_robot(tmp_path, suite_dir, "CASE:tx*")
    assert list(tests) == ["TX 10 MS/s pass"]
    _, tests, _ = run_robot(tmp_path, suite_dir, "TAG:smoke")
    assert list(tests) == ["RX 10 MS/s pass"]
    _, tests, _ = run_robot(tmp_path, suite_dir, "TAG:direction:tx")
    assert list(tests) == ["TX 10 MS/s pass"]
    rc, tests, _ = run_robot(tmp_path, suite_dir, "CASE:nothing*")
    assert rc == 1 and list(tests) == ["Nothing Was Tested"]  # a zero-case run fails
    assert tests["Nothing Was Tested"].message == "nothing was tested: no case selected by name nothing*"


def test_absent_device_skips_and_errors_are_told_apart(tmp_path, suite_dir):
    write_case(suite_dir, "a.yaml", "RX absent")
    write_case(suite_dir, "b.yaml", "RX crash")
    _, tests, _ = run_robot(tmp_path, suite_dir)
    absent, crash = tests["RX absent"], tests["RX crash"]
    assert absent.status == "SKIP" and "has no device for 'RX absent'" in absent.message
    assert crash.status == "FAIL"
    assert crash.message == "ERROR (device) rx udp 10.0 MS/s: hilrig-sim exited with signal 9"
    assert "error:device" in crash.tags
    lp = next((tmp_path / "out" / "outbox").glob("*.lp")).read_text()
    assert "verdict=SKIP" in lp and "verdict=ERROR" in lp  # skipped and errored cases are recorded too


def test_broken_yaml_fails_the_suite_naming_file_and_line(tmp_path, suite_dir):
    write_case(suite_dir, "good.yaml", "RX pass")
    (suite_dir / "broken.yaml").write_text(textwrap.dedent("""\
        name: broken
        device: dut
        direction: sideways
        """))
    rc, tests, _ = run_robot(tmp_path, suite_dir)
    assert rc == 1 and list(tests) == ["Load hilrig cases"]
    assert tests["Load hilrig cases"].status == "FAIL"
    assert "broken.yaml:3" in tests["Load hilrig cases"].message


def test_real_engine_skip_message_is_one_summary(tmp_path, monkeypatch):
    """The real engine (no fake): a device the rig lacks gives SKIP whose message says
    the verdict and what ran once, then the reason (not 'SKIP ...: SKIP ...:')."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HILRIG_RIG", raising=False)
    (tmp_path / "rig.yaml").write_text(RIG)
    suite = tmp_path / "cases"
    suite.mkdir()
    (suite / "hilrig.robot").write_text(suite_text([]))
    (suite / "a.yaml").write_text(CASE.format(name="RX on x310", direction="rx", kind="udp", tags="smoke",
                                              ratio="decimation").replace("device: dut", "device: x310"))
    _, tests, _ = run_robot(tmp_path, suite)
    skipped = tests["RX on x310"]
    assert skipped.status == "SKIP"
    assert skipped.message == "SKIP rx udp 10.0 MS/s: rig 'testrig' has no device 'x310' (it has: dut)"


def test_selection_examples_in_the_docs_select_starter_cases():
    """Every `--variable CASE:...`/`TAG:...` example in README.md and docs/ selects at
    least one of the shipped cases (a renamed case must not leave a dead example)."""
    import re

    from hostlib.dsl import load_cases
    from hostlib.selection import Selection

    cases = load_cases([REPO / "testcases"])
    examples = []
    for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for m in re.finditer(r"--variable\s+\"?(CASE|TAG):([^\"\s]+(?: [^\"\s-][^\"\s]*)*)\"?\s+testcases/", doc.read_text()):
            examples.append((doc.name, m.group(1), m.group(2).strip("'")))
    assert any(kind == "CASE" for _, kind, _ in examples), examples
    for doc, kind, glob in examples:
        selection = Selection.of(names=glob) if kind == "CASE" else Selection.of(include=glob)
        hits = selection.apply(cases)
        assert hits, f"{doc}: {kind}:{glob} selects no case under testcases/"
