"""A place whose cases run on its rig host: a real labgrid coordinator and exporter, a
real OpenSSH server on 127.0.0.1 standing for the rig host (its own checkout, rig file and
results folder), and real `hilrig run`s from a client folder. The client records what the
rig host measured; the rig host keeps its own copy; a rig host that cannot be reached, a
case file that differs there and a run killed there each end in an ERROR naming it."""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hostlib.lab.local import LocalLab, LocalSshd, write_sim_case, write_sim_rig
from hostlib.lab.place import RunsOn
from hostlib.lab.remote import RigHost, case_file_name
from hostlib.results.record import CaseResult
from hostlib.results.schema import EvidenceRun
from hostlib.tests.factories import case_result, make_case

REPO = Path(__file__).resolve().parents[2]
SIM = REPO / "hostlib" / "bin" / "hilrig-sim"
PLACE = "sim-r"


class RemoteLab:
    """The client's folder (its cases, its rig file and results) and a rig host's (its
    checkout with the same cases, its rig file and results), joined by ssh."""

    def __init__(self, root: Path):
        self.root = root
        self.client = root / "client"
        self.host = root / "righost"
        self.checkout = self.host / "checkout"
        write_sim_case(self.client / "cases")
        write_sim_case(self.client / "long", "60 s")
        shutil.copytree(self.client, self.checkout)
        self.host_rig = write_sim_rig(self.host / "rig.yaml", "righost-rig", SIM, self.host / "results")
        self.client_rig = write_sim_rig(self.client / "rig.yaml", "client-rig", SIM, self.client / "results")
        self.sshd = LocalSshd(root / "sshd")
        self.local = LocalLab(root / "lab")

    def start(self) -> None:
        self.sshd.start()
        self.local.start_coordinator()
        self.local.add_place(PLACE, self.host_rig, exporter="ex-r",
                             runs_on=RunsOn(self.sshd.alias, f"{sys.executable} -m hostlib", str(self.checkout)))

    def close(self) -> None:
        self.local.close()
        self.sshd.stop()

    def run(self, cases: str = "cases", timeout_s: float = 10.0) -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-m", "hostlib", "run", cases, "--rig", str(self.client_rig),
                                 "--coordinator", self.local.address, "--place", PLACE,
                                 "--place-timeout", str(timeout_s)],
                                cwd=self.client, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env={**os.environ, "HILRIG_SSH_CONFIG": str(self.sshd.ssh_config)})

    def evidence(self, output: str) -> EvidenceRun:
        """The client's evidence of the run that printed `output`."""
        for path in (self.client / "results" / "evidence").glob("*.json"):
            if path.stem in output:
                return EvidenceRun.model_validate_json(path.read_text())
        raise AssertionError(f"no evidence of this run in the client's results: {output}")


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RemoteLab]:
    if os.geteuid() != 0:
        pytest.skip("a rig host on loopback needs root: sshd switches to the logged-in user")
    if shutil.which("sshd") is None and not os.access("/usr/sbin/sshd", os.X_OK):
        pytest.fail("no OpenSSH server (make build installs openssh-server)")
    if not os.access(SIM, os.X_OK):
        pytest.fail(f"{SIM} is not built (make build)")
    lab = RemoteLab(tmp_path_factory.mktemp("remote"))
    lab.start()
    yield lab
    lab.close()


def finish(proc: subprocess.Popen[str], timeout_s: float = 60.0) -> tuple[int, str]:
    out, _ = proc.communicate(timeout=timeout_s)
    return proc.returncode, out


def test_the_cases_run_on_the_rig_host_and_the_client_records_them(remote: RemoteLab) -> None:
    sessions_before = remote.sshd.proc.log.read_text().count("Starting session: command")
    code, out = finish(remote.run())
    assert code == 0, out
    assert f"its cases run on rig host {remote.sshd.alias}" in out
    evidence = remote.evidence(out)
    [record] = evidence.cases
    assert record.verdict == "PASS" and record.place == PLACE and record.rig_name == "righost-rig"
    assert record.metrics["throughput_sps"] > 0.9e6 and record.metrics["missing_frames"] == 0
    # the rig host measured it (its run-case kept the record) over ssh (two sessions: the
    # rig file when the place was taken, then the case)
    kept = remote.host / "results" / "evidence" / "remote" / f"{evidence.run_id}.jsonl"
    [line] = kept.read_text().splitlines()
    there = json.loads(line)
    assert there["verdict"] == "PASS" and there["metrics"] == record.metrics
    assert remote.sshd.proc.log.read_text().count("Starting session: command") - sessions_before == 2
    # the client's outbox has the row, with the place
    rows = [r for f in (remote.client / "results" / "outbox").glob(f"{evidence.run_id}*.lp")
            for r in f.read_text().splitlines() if r.startswith("hilrig_case,")]
    assert len(rows) == 1 and f"place={PLACE}" in rows[0]


def test_status_says_where_the_cases_run(remote: RemoteLab) -> None:
    from hostlib.lab.status import status_rows

    with remote.local.client() as lab:
        [row] = status_rows(lab)
    assert row.runs_on == remote.sshd.alias and f"cases on ssh {remote.sshd.alias}" in row.line()


def test_a_case_file_that_differs_on_the_rig_host_is_a_config_error(remote: RemoteLab) -> None:
    there = remote.checkout / "cases" / "rx.yaml"
    original = there.read_text()
    there.write_text(original.replace("decimation: 200", "decimation: 100"))
    try:
        code, out = finish(remote.run())
    finally:
        there.write_text(original)
    assert code == 2, out
    [record] = remote.evidence(out).cases
    assert record.verdict == "ERROR" and record.error_kind == "config"
    assert "differs from the client's" in record.error and remote.sshd.alias in record.error


def test_a_run_killed_on_the_rig_host_is_an_infrastructure_error_naming_it(remote: RemoteLab) -> None:
    proc = remote.run("long")
    found = ""
    deadline = time.monotonic() + 30
    while not found and time.monotonic() < deadline and proc.poll() is None:
        found = subprocess.run(["pgrep", "-f", "lab run-case .*RX lab"], capture_output=True, text=True).stdout
        time.sleep(0.1)
    assert found, "the rig host's run-case never started"
    for pid in found.split():
        os.kill(int(pid), 9)
    code, out = finish(proc)
    assert code == 3, out
    [record] = remote.evidence(out).cases
    assert record.verdict == "ERROR" and record.error_kind == "infrastructure"
    assert f"rig host {remote.sshd.alias}: no result came back" in record.error
    assert "signal 9" in record.error or "exit code" in record.error


def test_a_rig_host_that_cannot_be_reached_is_skipped_and_named(remote: RemoteLab) -> None:
    remote.sshd.stop()
    try:
        code, out = finish(remote.run(timeout_s=5))
    finally:
        remote.sshd.start()
    assert code == 3, out
    [record] = remote.evidence(out).cases
    assert record.verdict == "ERROR" and record.error_kind == "infrastructure"
    assert f"rig host {remote.sshd.alias}: cannot read its rig file" in record.error
    assert "Connection refused" in record.error
    remote.local.wait_for(PLACE, held=False)   # given back: the next run gets it
    code, out = finish(remote.run())
    assert code == 0, out


def test_the_ssh_command_never_prompts_and_runs_in_the_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HILRIG_SSH_CONFIG", raising=False)
    host = RigHost("hilrig@righost1", ("/opt/hilrig/.venv/bin/python", "-m", "hostlib"), "/opt/hilrig", {})
    argv = host.argv(["lab", "run-case", "--case", "RX [rate=1 MS/s]"])
    assert argv[:2] == ["ssh", "-n"] and "BatchMode=yes" in argv and argv[-2] == "hilrig@righost1"
    assert argv[-1] == ("cd /opt/hilrig && exec /opt/hilrig/.venv/bin/python -m hostlib "
                        "lab run-case --case 'RX [rate=1 MS/s]'")
    monkeypatch.setenv("HILRIG_SSH_CONFIG", "/etc/hilrig/ssh_config")
    assert host.argv(["true"])[1:3] == ["-F", "/etc/hilrig/ssh_config"]


def test_a_case_file_is_named_from_the_checkout(tmp_path: Path) -> None:
    inside = dataclasses.replace(make_case(), source_file=str(tmp_path / "testcases" / "rx.yaml"))
    outside = dataclasses.replace(make_case(), source_file="/elsewhere/rx.yaml")
    assert case_file_name(inside, tmp_path) == "testcases/rx.yaml"
    assert case_file_name(outside, tmp_path) == "/elsewhere/rx.yaml"


def test_a_result_comes_back_from_its_record_unchanged() -> None:
    result = case_result()
    result.metrics["latency_p99_s"] = float("nan")   # written as null, read back as NaN
    record = result.to_record()
    again = CaseResult.from_record(record, result.case)
    assert again.to_record() == record
