"""The run session, the selection and the teaching error messages, without a device:
the engine is the real one where a case cannot reach a device, else a stand-in
(FAKE ENGINE below) that returns the verdict a case's name asks for."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from hostlib import ConfigError, RunSession, Selection, Verdict
from hostlib.dsl.thresholds import ThresholdError, parse_threshold
from hostlib.results.record import CaseResult, ErrorKind, iso_utc, utc_now
from hostlib.selection import case_tags

from .conftest import REPO
from .factories import make_case

RIG = """\
name: unit
devices:
  dut: {driver: sim, max_rate: 1 GS/s}
results: {outbox: out/outbox, evidence: out/evidence}
"""


def case(name: str, tags=(), direction="rx", kind="udp"):
    return make_case(name, tags=tags, direction=direction, kind=kind, rate_sps=1e6, duration_s=1.0,
                     warmup_s=0.25)


# ------------------------------------------------------------------ selection

def test_exact_names_keep_their_brackets_and_globs_only_star_and_question_mark():
    a = case("RX sweep [decimation=4, transport.frame_bytes=1400]")
    b = case("RX sweep [decimation=4, transport.frame_bytes=8000]")
    c = case("RX sweep [decimation=2, transport.frame_bytes=1400]")
    cases = [a, b, c]
    assert Selection.of(names=a.test_name).apply(cases) == [a]
    assert Selection.of(names="rx  SWEEP [decimation=4, transport.frame_bytes=1400]").apply(cases) == [a]
    assert Selection.of(names="RX sweep [decimation=4*").apply(cases) == [a, b]
    assert Selection.of(names="*frame_bytes=1400]").apply(cases) == [a, c]
    assert Selection.of(names="RX sweep [decimation=?, transport.frame_bytes=8000]").apply(cases) == [b]
    assert Selection.of(names="RX sweep [d]*").apply(cases) == []  # never a character class
    assert Selection.of(names=[a.test_name, c.test_name]).apply(cases) == [a, c]


def test_tag_expressions_as_robot_writes_them():
    smoke_udp = case("a", ["smoke"])
    ref = case("b", ["reference", "sweep"], kind="shm")
    tx = case("c", ["smoke"], direction="tx")
    cases = [smoke_udp, ref, tx]
    assert case_tags(ref) == ["device:dut", "transport:shm", "direction:rx", "reference", "sweep"]
    assert Selection.of(include="smoke").apply(cases) == [smoke_udp, tx]
    assert Selection.of(include="smokeANDdirection:rx").apply(cases) == [smoke_udp]
    assert Selection.of(include="transport:shm OR direction:tx").apply(cases) == [ref, tx]
    assert Selection.of(include="sweepNOTreference").apply(cases) == []
    assert Selection.of(include=["reference", "direction:tx"]).apply(cases) == [ref, tx]  # any include
    assert Selection.of(exclude="reference").apply(cases) == [smoke_udp, tx]
    assert Selection.of(include="smoke OR sweep", exclude=["direction:tx"]).apply(cases) == [smoke_udp, ref]
    assert Selection.of(include=["", "  "]).apply(cases) == cases  # empty variables select everything
    assert Selection.of(names="a", include="sm*", exclude="nightly").describe() == \
        "name a, include sm*, exclude nightly"


# ------------------------------------------------------------------ session

def fake_run_case(case, rig, *, run_id, progress=None, require_devices=False):
    """FAKE ENGINE (test only): the case name is the verdict, 'ERROR <kind>' an error."""
    now = iso_utc(utc_now())
    result = CaseResult(case=case, rig_name=rig.name, device=case.device, driver="sim", run_id=run_id,
                        started_utc=now, ended_utc=now, verdict=Verdict.PASS, message=case.name)
    word = case.name.split()[0]
    if word == "BUG":
        raise RuntimeError("a bug in the engine")
    if word == "ERROR":
        result.set_error(ErrorKind(case.name.split()[1]), "it broke")
    else:
        result.verdict = Verdict(word)
    return result


@pytest.fixture
def session_dir(tmp_path, monkeypatch):
    import hostlib.engine

    monkeypatch.setattr(hostlib.engine, "run_case", fake_run_case)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rig.yaml").write_text(RIG)
    return tmp_path


def run_all(names, tmp_path, **kw) -> RunSession:
    with RunSession(tmp_path / "rig.yaml", **kw) as run:
        for name in run.select([case(n) for n in names]):
            run.run(name)
    return run


@pytest.mark.parametrize("names, code", [
    (["PASS", "MARGINAL", "SKIP"], 0),
    (["PASS", "FAIL", "SKIP"], 1),
    (["PASS", "ERROR config"], 2),
    (["FAIL", "ERROR infrastructure"], 3),
    (["ERROR infrastructure", "ERROR device", "FAIL"], 4),
    (["SKIP", "SKIP"], 5),
    ([], 5),
])
def test_exit_code_comes_from_the_verdicts(session_dir, names, code):
    run = run_all(names, session_dir)
    assert run.exit_code == code
    assert run.nothing_tested == (code == 5)


def test_session_writes_every_result_then_closes_the_run(session_dir):
    from hostlib.results.outbox import is_active

    run = run_all(["PASS", "MARGINAL", "FAIL", "SKIP"], session_dir)
    assert run.tally().startswith("1 PASS, 1 MARGINAL, 1 FAIL, 0 ERROR, 1 SKIP in ")
    lp = run.outbox.file_for(run.run_id)
    assert not is_active(lp)  # released: the shipper may take it now
    lines = lp.read_text().splitlines()
    assert [l.split(",verdict=")[1].split(" ")[0] for l in lines if l.startswith("hilrig_case,")] == \
        ["PASS", "MARGINAL", "FAIL", "SKIP"]
    assert "marginal=1," in lines[-1] and "passed=2," in lines[-1]
    doc = json.loads(run.evidence.path.read_text())
    assert doc["tally"] == {"PASS": 1, "MARGINAL": 1, "FAIL": 1, "ERROR": 0, "SKIP": 1}
    assert doc["nothing_tested"] is False
    run.finish()  # idempotent: no second run row
    assert len(lp.read_text().splitlines()) == len(lines)
    # The HTML run report, written from the finished evidence beside the outbox and evidence.
    report = session_dir / "out" / "reports" / f"{run.run_id}.html"
    assert run.report_path.resolve() == report.resolve() and run.report_line() == f"hilrig report: {run.report_path}"
    html = report.read_text()
    assert run.run_id in html and "1 FAIL" in html


def test_a_report_that_cannot_be_written_changes_no_verdict(session_dir, monkeypatch):
    import hostlib.reports

    def broken(*a, **kw):
        raise RuntimeError("templates gone")

    monkeypatch.setattr(hostlib.reports, "write_run_report", broken)
    said: list[str] = []
    run = run_all(["PASS", "FAIL"], session_dir, say=said.append)
    assert run.exit_code == 1 and [r.verdict for r in run.results] == [Verdict.PASS, Verdict.FAIL]
    doc = json.loads(run.evidence.path.read_text())
    assert doc["tally"]["FAIL"] == 1 and len(doc["cases"]) == 2  # every result is kept
    assert run.report_path is None and run.report_line() is None
    assert any(l.startswith("hilrig report: not written (RuntimeError: templates gone)") for l in said), said
    assert not (session_dir / "out" / "reports").exists()


def test_a_bug_is_recorded_as_an_error_then_raised(session_dir):
    with pytest.raises(RuntimeError):
        with RunSession(session_dir / "rig.yaml") as run:
            run.run(case("BUG here"))
    assert [r.verdict for r in run.results] == [Verdict.ERROR]
    assert run.results[0].message.startswith("ERROR (infrastructure) rx udp 1.0 MS/s: internal: RuntimeError")
    assert run.exit_code == 3


def test_a_result_that_cannot_be_saved_is_an_infrastructure_error(session_dir):
    (session_dir / "out").mkdir()
    (session_dir / "out" / "evidence").write_text("a file where the evidence folder should be")
    run = run_all(["PASS"], session_dir)
    assert run.results[0].verdict is Verdict.ERROR and run.results[0].kind is ErrorKind.INFRASTRUCTURE
    assert "cannot write the evidence file" in run.results[0].message
    lines = run.outbox.file_for(run.run_id).read_text().splitlines()
    assert "verdict=PASS" in lines[0]  # the measurement reached the outbox before the evidence failed
    assert "errors=1," in lines[-1]    # and the run row counts the case as the ERROR it became


def test_require_devices_comes_from_the_option_or_the_rig(session_dir):
    assert not RunSession(session_dir / "rig.yaml").require_devices
    assert RunSession(session_dir / "rig.yaml", require_devices=True).require_devices
    (session_dir / "bench.yaml").write_text(RIG.replace("devices:", "require_devices: true\ndevices:"))
    assert RunSession(session_dir / "bench.yaml", require_devices=False).require_devices
    (session_dir / "bad.yaml").write_text(RIG.replace("devices:", "require_devices: sometimes\ndevices:"))
    with pytest.raises(ConfigError, match="bad.yaml:2: require_devices"):
        RunSession(session_dir / "bad.yaml")


# ------------------------------------------------------------------ error messages that teach

def test_threshold_messages_teach():
    with pytest.raises(ThresholdError, match=r'write ">= 99.9% of rate"'):
        parse_threshold("throughput", ">= 99.9%")
    assert parse_threshold("frames_per_s", ">= 29.6 kframes/s").evaluate({}, {}).limit == pytest.approx(29600)
    assert parse_threshold("frame_rate", "> 1.5 Mframes/s").evaluate({}, {}).limit == pytest.approx(1.5e6)


def test_unknown_key_is_suggested_by_meaning(tmp_path):
    from hostlib.dsl import validate_paths

    path = tmp_path / "c.yaml"
    path.write_text(textwrap.dedent("""\
        name: by meaning
        device: dut
        direction: rx
        master_clock: 200 MHz
        decimation: 20
        rate: 10 MS/s
        transport: {kind: udp}
        duration: 1 s
        """))
    _, issues = validate_paths([path])
    assert [(i.line, i.field) for i in issues] == [(6, "rate")]
    assert "did you mean 'decimation' or 'master_clock'?" in issues[0].message


def test_a_wrong_rig_name_lists_the_rigs():
    from hostlib.rig import default_rig_path, load_rig

    with pytest.raises(ConfigError) as err:
        load_rig(default_rig_path("b2100"))
    assert "b2100.yaml: no such rig file; rigs by name: b210, sim, usb_board, x310" in str(err.value)


def test_shell_completion_knows_the_commands_and_options():
    script = subprocess.run([sys.executable, "-m", "hostlib", "completion", "bash"], capture_output=True,
                            text=True, timeout=30, check=True).stdout
    assert "complete -o filenames -F _hilrig_complete hilrig" in script
    run_words = next(line for line in script.splitlines() if line.strip().startswith('"run") words='))
    for option in ("--rig", "--case", "--include", "--exclude", "--require-devices"):
        assert option in run_words
    version = subprocess.run([sys.executable, "-m", "hostlib", "--version"], capture_output=True, text=True,
                             timeout=30)
    assert version.stdout.strip() == f"hilrig {__import__('hostlib').__version__}"
    assert (REPO / "pyproject.toml").read_text().count('hilrig = "hostlib.pytest_plugin"') == 1


def test_results_show_tells_marginal_and_error_apart(session_dir):
    run = run_all(["PASS", "MARGINAL", "ERROR device"], session_dir)
    show = subprocess.run([sys.executable, "-m", "hostlib", "results", "show", "--rig", "rig.yaml"],
                          cwd=session_dir, capture_output=True, text=True, timeout=60,
                          env={**__import__("os").environ, "COLUMNS": "200"})
    assert show.returncode == 0, show.stdout + show.stderr
    assert f"run {run.run_id} on rig unit (1 PASS, 1 MARGINAL, 1 ERROR)" in show.stdout
    assert "PASS (marginal)" in show.stdout and "device: it broke" in show.stdout


def test_the_dsl_field_table_lists_every_field_the_shipped_cases_use():
    from hostlib.dsl import load_cases

    table = (REPO / "docs" / "dsl.md").read_text()
    used = {key for case in load_cases([REPO / "testcases"]) for key in case.raw}
    assert {"requires", "stream_args", "transport_args"} <= used  # the shipped cases do use them
    missing = sorted(key for key in used if f"| `{key}` |" not in table)
    assert not missing, f"docs/dsl.md's field table lacks {missing}"


def test_readme_names_rig_files_that_exist():
    import re

    text = (REPO / "README.md").read_text()
    for path in set(re.findall(r"rigs/[\w.-]+\.yaml", text)):
        assert (REPO / path).is_file(), path
    names = set(re.findall(r"--variable RIG:([\w-]+)", text)) | set(re.findall(r"--rig ([\w-]+)\s", text))
    assert "b210" in names, names
    for name in names:
        assert (REPO / "rigs" / f"{name}.yaml").is_file(), name
    soapy = text.index("export SOAPY_SDR_PLUGIN_PATH")
    assert soapy < text.index("SoapySDRUtil --find")  # set before the command that needs it
