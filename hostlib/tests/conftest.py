"""Shared fixtures: the simulator rig, cases written as YAML the way a lab writes them."""
from __future__ import annotations

import os
import signal
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]


def skip_unless_required(reason: str) -> None:
    """Skip for a missing optional part (SoapySDR, UHD, GNU Radio); with
    HILRIG_REQUIRE_DEVICES=1 (set by `make test`, which installs them all) fail
    instead, so a build that lost one cannot pass by skipping its tests."""
    if os.environ.get("HILRIG_REQUIRE_DEVICES") == "1":
        pytest.fail(f"{reason} (HILRIG_REQUIRE_DEVICES=1: make test installs it)")
    pytest.skip(reason)


def ring_handles() -> list[str]:
    """This process's open fds and mappings of a shm ring. A ring is an anonymous
    memfd named "hilrig-ring" (nothing in /dev/shm), so a leaked one shows only here."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the fd of the listing itself is gone by now
            continue
        if "hilrig-ring" in target:
            found.append(f"fd {fd} -> {target}")
    with open("/proc/self/maps") as maps:
        found += [line.strip() for line in maps if "hilrig-ring" in line]
    return found


def child_pids(name: str = "hilrig-sim") -> list[int]:
    """Processes whose parent is this test process and whose command is `name`."""
    me = os.getpid()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        if ppid == me and comm == name[:15]:
            found.append(int(entry.name))
    return found


def run_in_background(case: Any, rig: Any, run_id: str) -> tuple[threading.Thread, dict, list[int]]:
    """run_case on a thread: (the thread, a dict that gets the result as "r", the pids of
    the simulator it started). Fails if no simulator starts within 5 s."""
    from hostlib.engine import run_case

    box: dict = {}
    worker = threading.Thread(target=lambda: box.setdefault("r", run_case(case, rig, run_id=run_id)))
    worker.start()
    deadline = time.monotonic() + 5
    pids: list[int] = []
    while not pids and time.monotonic() < deadline:
        time.sleep(0.05)
        pids = child_pids()
    assert pids, "simulator never started"
    return worker, box, pids


def run_killing_the_simulator(case: Any, rig: Any, run_id: str) -> Any:
    """run_case on a thread, its simulator SIGKILLed 0.8 s after it started; the result.
    Fails if the simulator never starts or the run hangs after it died."""
    worker, box, pids = run_in_background(case, rig, run_id)
    time.sleep(0.8)
    os.kill(pids[0], signal.SIGKILL)
    worker.join(timeout=15)
    assert not worker.is_alive(), "the run hung after the simulator died"
    return box["r"]


def native_built() -> bool:
    try:
        from hostlib import _native  # noqa: F401
    except ModuleNotFoundError:  # not built; a built module that fails to load is an error, not a skip
        return False
    return (REPO / "build" / "bin" / "hilrig-sim").exists() or bool(os.environ.get("HILRIG_SIM_BIN"))


requires_native = pytest.mark.skipif(not native_built(), reason="native core not built (run `make build`)")


@pytest.fixture
def sim_rig():
    from hostlib.rig import load_rig

    return load_rig(REPO / "rigs" / "sim.yaml")


@pytest.fixture
def write_case(tmp_path):
    """Write a YAML case file and load it; returns the list of resolved cases."""
    from hostlib.dsl import load_cases

    counter = {"n": 0}

    def _write(text: str):
        counter["n"] += 1
        path = tmp_path / f"case{counter['n']}.yaml"
        path.write_text(textwrap.dedent(text))
        return load_cases([path])

    return _write


def thin_robot_suite(directory: Path) -> Path:
    """directory/hilrig.robot holding only the placeholder: when the run starts it becomes
    one test per YAML case under `directory` (the shipped testcases/hilrig.robot lists the
    shipped cases by name, so a copy of it elsewhere would list cases that are not there)."""
    from hostlib.robot.suite import SUITE_FILE, suite_text

    path = directory / SUITE_FILE
    path.write_text(suite_text([]))
    return path


# The files that take longest go first: with `--dist loadfile` a worker takes a file at a
# time in collection order, so a long file collected late runs alone at the end while
# the other worker idles (the wheel build of test_packaging is minutes on a fresh clone).
LONGEST_FIRST = ("test_packaging.py", "test_frontends.py", "test_lab.py", "test_influx.py")


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))   # stable: the rest keep their order
