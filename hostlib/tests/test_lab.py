"""Many rigs, one lab: a real labgrid coordinator and hilrig exporters on 127.0.0.1 (free
ports, subprocesses), simulator devices behind them, real `hilrig run`s, the janitor and
a pabot nightly. Conditions are made by construction (holders, deadlines with margins,
waits for a state with a timeout), never by sleeping and hoping."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from line_protocol_parser import parse_line

from hostlib._exceptions import PlaceUnavailable
from hostlib.lab.coordinator import Scheduling
from hostlib.lab.janitor import Outcome, sweep
from hostlib.lab.lease import lease_of
from hostlib.lab.local import LocalLab, write_sim_case, write_sim_rig
from hostlib.lab.place import PlaceRequest, parse_place_tags
from hostlib.lab.reserve import hold_place
from hostlib.tests.influx_servers import influx16  # noqa: F401  (fixture)

REPO = Path(__file__).resolve().parents[2]
SIM = REPO / "hostlib" / "bin" / "hilrig-sim"

ROBOT_SUITE = """\
*** Settings ***
Library           hostlib.robot.HilrigLibrary

*** Test Cases ***
Hilrig Cases
    [Tags]    hilrig:placeholder
    Fail    HilrigLibrary did not bind the YAML cases
"""


class Lab:
    """The module's lab: places sim-a (2 channels) and sim-b (4 channels), each its own
    exporter and its own simulator binary (a link that a test can remove)."""

    def __init__(self, root: Path):
        self.root = root
        self.outbox = root / "results" / "outbox"
        self.local = LocalLab(root / "lab")
        self.binaries = {p: root / f"sim-{p}" for p in ("a", "b", "0")}
        for link in self.binaries.values():
            link.symlink_to(SIM)
        self.rigs = {p: write_sim_rig(root / f"rig-{p}.yaml", f"rig-{p}", self.binaries[p], root / "results", ch)
                     for p, ch in (("a", 2), ("b", 4), ("0", 2))}
        self.cases = write_sim_case(root / "cases")
        self.long_cases = write_sim_case(root / "long", "60 s")

    def start(self) -> None:
        self.local.start_coordinator()
        self.local.add_place("sim-a", self.rigs["a"], exporter="ex-a", tags={"pool": "x"}, wait=False)
        self.local.add_place("sim-b", self.rigs["b"], exporter="ex-b", wait=False)
        self.local.wait_exporters()

    def request(self, *, name: str | None = None, tags: str = "", timeout_s: float = 10.0,
                lease_s: float = 60.0, heartbeat_s: float | None = None) -> PlaceRequest:
        return PlaceRequest(coordinator=self.local.address, name=name,
                            terms=parse_place_tags(tags) if tags else (), timeout_s=timeout_s, lease_s=lease_s,
                            heartbeat_s=heartbeat_s)

    def run(self, *args: str, cases: Path | None = None, **kw) -> subprocess.Popen[str]:
        """`hilrig run` on this lab, in its own process group (a kill -9 takes its simulator too)."""
        return subprocess.Popen([sys.executable, "-m", "hostlib", "run", str(cases or self.cases),
                                 "--rig", str(self.rigs["a"]), "--coordinator", self.local.address, *args],
                                cwd=self.root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True, **kw)

    def case_rows(self) -> list[str]:
        return [line for f in sorted(self.outbox.glob("*.lp")) for line in f.read_text().splitlines()
                if line.startswith("hilrig_case,")]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    if not os.access(SIM, os.X_OK):
        pytest.fail(f"{SIM} is not built (make build)")
    the_lab = Lab(tmp_path_factory.mktemp("lab"))
    the_lab.start()
    yield the_lab
    the_lab.local.close()


def wait_until(condition, timeout_s: float, what: str, every_s: float = 0.1):  # noqa: ANN001
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout_s:g} s")
        time.sleep(every_s)


def say(line: str) -> None:
    print(line)


def test_exporter_config_and_status_show_both_places(lab: Lab, monkeypatch: pytest.MonkeyPatch) -> None:
    from hostlib.cli import main

    monkeypatch.setenv("HILRIG_FIRMWARE_MANIFEST", str(Path(__file__).resolve().parents[2] / "firmware/images.yaml"))

    out = lab.root / "exporter.yaml"
    assert main(["lab", "exporter-config", str(lab.rigs["b"]), "--place", "sim-b", "-o", str(out)]) == 0
    text = out.read_text()
    assert "cls: HilrigDevice" in text and f"rig: {lab.rigs['b']}" in text and "channels: 4" in text
    # the image the manifest assigns the device
    from hostlib.rig.images import load_images
    sim_image = next(im for im in load_images() if im.image == "hilrig-sim")
    assert f"firmware: hilrig-sim@{sim_image.version}" in text, text
    assert "password" not in text and "token" not in text
    result = subprocess.run([sys.executable, "-m", "hostlib", "lab", "status", "--coordinator", lab.local.address],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = {line.split()[0]: line for line in result.stdout.splitlines() if line.startswith("sim-")}
    assert set(lines) == {"sim-a", "sim-b"}
    assert all("AVAILABLE" in line and "free" in line for line in lines.values())
    assert "[ex-a]" in lines["sim-a"] and "channels=4" in lines["sim-b"]


def test_two_runs_contend_the_second_waits_then_runs(lab: Lab) -> None:
    first = hold_place(lab.request(name="sim-a"), "first", say)
    try:
        second = lab.run("--place", "sim-a", "--place-timeout", "120")
        with lab.local.client() as client:   # the second run waits in labgrid's queue for sim-a
            wait_until(lambda: any(r.filters.get("name") == "sim-a" and r.state is Scheduling.WAITING
                                   for r in client.reservations()), 60, "the second run's reservation for sim-a")
        assert second.poll() is None
    finally:
        assert first.release() == []
    out, _ = second.communicate(timeout=120)
    assert second.returncode == 0, out
    assert "place sim-a on ex-a held" in out and "1 PASS" in out


def test_pytest_runs_the_cases_on_a_place(lab: Lab) -> None:
    before = set(lab.case_rows())
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--hilrig-cases",
                             "--rig", str(lab.rigs["a"]), "--coordinator", lab.local.address, "--place-tags",
                             "channels>=4", str(lab.cases)], cwd=lab.root, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "1 passed" in result.stdout, result.stdout + result.stderr
    (row,) = [parse_line(r) for r in lab.case_rows() if r not in before]
    assert row["tags"]["place"] == "sim-b" and row["tags"]["rig_host"] == "ex-b"


def test_a_short_deadline_ends_error_naming_the_holder(lab: Lab) -> None:
    first = hold_place(lab.request(name="sim-a"), "holder-run", say)
    try:
        second = lab.run("--place", "sim-a", "--place-timeout", "1")
        out, _ = second.communicate(timeout=120)
    finally:
        first.release()
    assert second.returncode == 3, out   # ERROR (infrastructure)
    flat = " ".join(out.split())
    assert first.holder in flat and "hilrig run holder-run" in flat and "since 20" in flat
    assert "we are number 1 of 1 waiting for it" in flat
    assert "ERROR (infrastructure)" in flat


def test_a_client_closed_twice_never_raises(lab: Lab) -> None:
    """A Ctrl-C between taking a place and handing it over releases it (which closes the
    client) and then unwinds through the reservation's own cleanup, which closes it again."""
    client = lab.local.client()
    assert {p.name for p in client.places()} >= {"sim-a", "sim-b"}
    client.close()
    client.close()


def test_ctrl_c_releases_the_place(lab: Lab) -> None:
    run = lab.run("--place", "sim-b", cases=lab.long_cases)
    lab.local.wait_for("sim-b", held=True, timeout_s=60)
    os.killpg(run.pid, signal.SIGINT)
    out, _ = run.communicate(timeout=120)
    assert run.returncode == 130, out
    with lab.local.client() as client:   # released by the run itself, lease cleared: no janitor needed
        place = client.place("sim-b")
        assert place.holder is None and lease_of(place.comment) is None, place


def test_kill_9_leaves_the_place_locked_until_the_janitor_frees_it_after_the_lease(lab: Lab) -> None:
    lease_s = 4.0
    live = hold_place(lab.request(name="sim-a", lease_s=lease_s, heartbeat_s=0.5), "live-run", say)
    try:
        doomed = lab.run("--place", "sim-b", "--lease", str(lease_s), cases=lab.long_cases)
        lab.local.wait_for("sim-b", held=True, timeout_s=60)
        os.killpg(doomed.pid, signal.SIGKILL)
        doomed.wait(timeout=30)
        with lab.local.client() as client:
            before = {a.place: a for a in sweep(client)}
            assert before["sim-b"].outcome is Outcome.ALIVE, before   # within the lease: not freed
            assert client.place("sim-b").holder is not None           # kill -9 left it locked
            released = wait_until(lambda: next((a for a in sweep(client) if a.place == "sim-b"
                                                and a.outcome is Outcome.RELEASED), None),
                                  lease_s + 20, "the janitor freeing sim-b", every_s=0.25)
            assert released.age_s > lease_s
            assert client.place("sim-b").holder is None and lease_of(client.place("sim-b").comment) is None
            # nor a reservation of the dead run (killed, maybe, before it cancelled its own)
            assert not [r for r in client.reservations() if r.owner == released.holder], client.reservations()
            # the live run's place was judged every pass and never freed
            assert client.place("sim-a").holder == live.holder
            assert all(a.outcome is Outcome.ALIVE for a in sweep(client) if a.place == "sim-a")
    finally:
        assert live.release() == []


def test_the_janitor_cancels_the_reservation_a_run_killed_before_cancelling_it_left(lab: Lab) -> None:
    """The window a kill -9 can hit: the run reserved the place, acquired it with a lease and
    died before cancelling its reservation. Freed by the janitor, the place is free for the
    next run at once, not after labgrid's 60 s for an unpolled reservation."""
    from hostlib.lab.coordinator import LabClient
    from hostlib.lab.lease import new_lease

    dead = LabClient(lab.local.address, user_suffix="killed-run")
    try:
        token = dead.reserve(lab.request(name="sim-b").labgrid_filter("sim-b")).token
        wait_until(lambda: dead.poll_reservation(token).state is Scheduling.ALLOCATED, 10, "the allocation")
        dead.acquire("sim-b")
        dead.set_comment("sim-b", new_lease("sim-b", dead.holder, "killed-run", 1.0, "").comment())
    finally:
        dead.close()   # it stops beating and never cancels: the run is gone
    time.sleep(1.5)    # the lease is 1 s
    with lab.local.client() as client:
        assert [a.outcome for a in sweep(client) if a.place == "sim-b"] == [Outcome.RELEASED]
        assert not [r for r in client.reservations() if r.owner == dead.holder], client.reservations()
    with hold_place(lab.request(name="sim-b", timeout_s=5), "next-run", say) as held:
        assert held.name == "sim-b"


def test_an_unavailable_device_makes_its_place_unavailable_and_tags_pick_the_other(lab: Lab) -> None:
    lab.binaries["b"].unlink()   # the simulator behind sim-b is gone: its exporter's probe fails
    try:
        lab.local.wait_for("sim-b", available=False, timeout_s=10)
        with hold_place(lab.request(tags="driver=sim"), "by-tags", say) as held:
            assert held.name == "sim-a"
        with pytest.raises(PlaceUnavailable, match="sim-b: unavailable: ex-b/dut"):
            hold_place(lab.request(name="sim-b"), "by-name", say)
    finally:
        lab.binaries["b"].symlink_to(SIM)
    lab.local.wait_for("sim-b", available=True, timeout_s=10)


def test_predicates_labgrid_tags_cannot_express(lab: Lab) -> None:
    with hold_place(lab.request(tags="channels>=3,max_rate>=61.44 MS/s,transport=udp"), "four-ch", say) as held:
        assert held.name == "sim-b"
    with pytest.raises(PlaceUnavailable, match="no place fits"):
        hold_place(lab.request(tags="channels>=8"), "eight-ch", say)


def test_an_exporter_killed_after_allocation_is_skipped_or_named(lab: Lab) -> None:
    lab.local.add_place("sim-0", lab.rigs["0"], exporter="ex-0", tags={"pool": "x"})

    def kill_ex0(place: str) -> None:
        if "ex-0" not in lab.local.exporters:   # killed already: the retry on the other place
            return
        assert place == "sim-0"     # sorts first: allocated and tried first
        lab.local.kill_exporter("ex-0")
        with lab.local.client() as client:
            wait_until(lambda: client.place("sim-0").unmatched, 30, "the coordinator dropping ex-0")

    started = time.monotonic()
    with hold_place(lab.request(tags="pool=x", timeout_s=30), "pool-run", say, before_acquire=kill_ex0) as held:
        assert held.name == "sim-a"   # went to the other place
    lab.local.start_exporter("ex-0", lab.local.workdir / "exporter-ex-0.yaml")
    lab.local.wait_for("sim-0", available=True)
    with pytest.raises(PlaceUnavailable, match="exporter ex-0 is offline"):
        hold_place(lab.request(name="sim-0", timeout_s=30), "only-0", say, before_acquire=kill_ex0)
    assert time.monotonic() - started < 30   # never hangs: no deadline was waited out
    with lab.local.client() as client:
        assert client.place("sim-0").holder is None


def test_nightly_lab_runs_each_place_in_parallel(lab: Lab) -> None:
    """ex-0 is down since the test before: sim-0's cases ERROR, sim-a's and sim-b's PASS."""
    suite = lab.root / "suite"
    suite.mkdir()
    (suite / "hilrig.robot").write_text(ROBOT_SUITE)
    write_sim_case(suite)
    before = set(lab.case_rows())
    out = lab.root / "night"
    result = subprocess.run([sys.executable, "-m", "hostlib", "lab", "nightly", "--places", "sim-a", "sim-b", "sim-0",
                             "--coordinator", lab.local.address, "--rig", str(lab.rigs["a"]), "--place-timeout", "30",
                             "--process-timeout", "300", "--outputdir", str(out), str(suite)],
                            cwd=lab.root, capture_output=True, text=True, timeout=400)
    assert result.returncode == 1, result.stdout + result.stderr   # one failed test: sim-0's ERROR
    rows = [r for r in lab.case_rows() if r not in before]
    by_place: dict[str, list[str]] = {}
    for row in rows:
        tags = parse_line(row)["tags"]
        by_place.setdefault(tags["place"], []).append(tags["verdict"])
    assert by_place == {"sim-a": ["PASS"], "sim-b": ["PASS"], "sim-0": ["ERROR"]}, rows   # each point once
    from robot.api import ExecutionResult

    merged = ExecutionResult(str(out / "output.xml")).suite
    tests = {(child.name, test.status, f"place:{child.name}" in test.tags)
             for child in merged.suites for test in child.all_tests}
    assert tests == {("sim-a", "PASS", True), ("sim-b", "PASS", True), ("sim-0", "FAIL", True)}, tests
    reports = list(out.glob("night-*.html"))
    assert len(reports) == 1
    html = reports[0].read_text()
    assert 'id="places"' in html and 'data-place="sim-0"' in html and 'data-place="sim-b"' in html
    # each place's device versions above its column (sim-0 never opened its device)
    assert re.search(r'data-place-versions="sim-a">hilrig-sim \S+', html) and 'data-place-versions="sim-0"></td>' in html
    night = json.loads(reports[0].with_suffix(".json").read_text())
    assert sorted(c["place"] for c in night["cases"]) == ["sim-0", "sim-a", "sim-b"]


def test_coordinator_stopped_mid_run(tmp_path: Path) -> None:
    """The coordinator stops answering (SIGSTOP: a hung or cut-off host) while a run holds
    its place: the run finishes its case (the lock was held already) and says that the
    release failed; once the coordinator answers again the janitor frees the place."""
    own = Lab(tmp_path)
    own.start()
    try:
        mid = write_sim_case(own.root / "mid", "2 s")
        run = own.run("--place", "sim-a", "--lease", "2", cases=mid)
        # Stopped once the run has the place in hand (it says so after its last call of
        # the taking: acquire, check, devices), not merely once the place shows held.
        assert run.stdout is not None
        said = []
        for line in run.stdout:   # the console may wrap a line: judged on the text so far
            said.append(line)
            if "held as" in " ".join("".join(said).split()):
                break
        assert "held as" in " ".join("".join(said).split()), "".join(said)
        assert own.local.coordinator is not None
        coordinator = own.local.coordinator.proc
        coordinator.send_signal(signal.SIGSTOP)
        try:
            rest, _ = run.communicate(timeout=120)
        finally:
            coordinator.send_signal(signal.SIGCONT)
        out = "".join(said) + rest
        flat = " ".join(out.split())
        assert run.returncode == 0 and "1 PASS" in flat, out
        assert "releasing place sim-a failed" in flat and "hilrig lab janitor" in flat, out
        with own.local.client() as client:
            def clean() -> bool:
                sweep(client)
                place = client.place("sim-a")
                return place.holder is None and lease_of(place.comment) is None
            wait_until(clean, 30, "the janitor freeing sim-a", every_s=0.25)
    finally:
        own.local.close()


def test_lab_dashboard_queries_on_real_influxdb(lab: Lab, influx16, tmp_path: Path) -> None:
    """Every panel of reports/grafana/hilrig-lab-influxql.json against InfluxDB 1.6 holding
    the hilrig_place rows the runs above wrote, plus a `hilrig lab status --outbox` sample."""
    from hostlib.results.influx import InfluxTarget, ship_outbox

    from .factories import make_rig

    status = subprocess.run([sys.executable, "-m", "hostlib", "lab", "status", "--coordinator", lab.local.address,
                             "--outbox", str(lab.outbox)], capture_output=True, text=True, timeout=60)
    assert status.returncode == 0, status.stdout + status.stderr
    place_rows = [parse_line(line) for f in lab.outbox.glob("*.lp") for line in f.read_text().splitlines()
                  if line.startswith("hilrig_place,")]
    waits: dict[str, list[float]] = {}
    for row in place_rows:
        if "reservation_wait_s" in row["fields"]:
            waits.setdefault(row["tags"]["place"], []).append(row["fields"]["reservation_wait_s"])
    assert "sim-a" in waits, place_rows   # the runs' rows, one per run
    influx16.query("CREATE DATABASE lab")
    outbox = tmp_path / "outbox"
    outbox.mkdir()
    for f in lab.outbox.glob("*.lp"):
        (outbox / f.name).write_text(f.read_text())
    report = ship_outbox(outbox, InfluxTarget.from_rig(make_rig(results={"influxdb": {
        "url": influx16.url, "api": "v1", "database": "lab"}})))
    assert report.exit_code() == 0, report.lines()
    doc = json.loads((REPO / "reports" / "grafana" / "hilrig-lab-influxql.json").read_text())
    seen = {}
    for panel in doc["panels"]:
        (target,) = panel["targets"]
        query = (target["query"].replace("$timeFilter", "time > now() - 30d").replace("$__interval", "1h")
                 .replace("/^$place$/", "/^.*$/"))
        series = influx16.query(query, "lab")
        assert series, panel["title"]
        seen[panel["title"]] = {(s.get("tags") or {}).get("place") or (s.get("tags") or {}).get("lg_driver"): s
                                for s in series}
    assert set(seen["Utilisation per driver"]) == {"sim"}
    assert {"sim-a", "sim-b"} <= set(seen["Utilisation per place"])
    for place, values in waits.items():
        (row,) = seen["Reservation wait p50 / p95 per place"][place]["values"]
        p50, p95 = row[1], row[2]
        assert min(values) <= p50 <= p95 <= max(values)


def test_trend_series_keep_places_apart() -> None:
    """A nightly across rigs is one run per place: each place's case is its own trend series."""
    from hostlib.reports.history import History

    rows = {"n1-a": [{"testcase": "RX", "place": "sim-a", "throughput_sps": 1.0}],
            "n1-b": [{"testcase": "RX", "place": "sim-b", "throughput_sps": 2.0}],
            "n2-a": [{"testcase": "RX", "place": "sim-a", "throughput_sps": 1.1}],
            "n2-local": [{"testcase": "RX", "throughput_sps": 3.0}]}
    series = History("test", sorted(rows), rows).series()
    assert set(series) == {"RX @ sim-a", "RX @ sim-b", "RX"}
    assert [r["throughput_sps"] if r else None for r in series["RX @ sim-a"]] == [1.0, None, 1.1, None]
