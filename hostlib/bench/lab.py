"""The lab rows of `make bench`: what running on a labgrid place costs, beside a plain
local run measured in the same bench (docs/scale-out.md).

A loopback lab (hostlib.lab.local: a real coordinator and a hilrig exporter on
127.0.0.1) with one simulator place. Interleaved, `repeats` times each:

* `hilrig run CASES --rig R` (the peer) and `hilrig run CASES --rig R --place-tags
  driver=sim` (the rig): the time from launching the command to the first sample of
  its case (the case's start + its time_to_first_sample_s, against the launch time);
* the place run with the default lease (90 s: no heartbeat within a short run) and
  with a 0.6 s lease (a heartbeat every 0.1 s): the whole run's wall time, which is
  what the lease and heartbeat add;
* (as root, with an OpenSSH server) the same place exported with `--ssh` to a rig host
  on loopback (hostlib.lab.local.LocalSshd): launch -> first sample when the case runs
  on the rig host, against the place run here.

The medians are shown with their ratio; nothing here is a pass/fail test.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .._installed import packaged_executable
from ..lab.local import LocalLab, LocalSshd, write_sim_case, write_sim_rig
from ..lab.place import RunsOn
from .record import BenchRow

Row = tuple[str, str, str, str, str, str, str]


def _run(command: list[str], cwd: Path, evidence: Path, env: dict[str, str] | None = None) -> tuple[float, float]:
    """(launch -> first sample, launch -> exit) in seconds, from one `hilrig run`."""
    before = set(evidence.glob("*.json"))
    launched = _dt.datetime.now(_dt.UTC)
    t0 = time.monotonic()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300, env=env)
    wall_s = time.monotonic() - t0
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stdout[-1500:]}")
    (new,) = set(evidence.glob("*.json")) - before
    case = json.loads(new.read_text())["cases"][0]
    started = _dt.datetime.fromisoformat(case["started_utc"])
    first_s = (started - launched).total_seconds() + float(case["metrics"]["time_to_first_sample_s"])
    return first_s, wall_s


def rows(repeats: int) -> list[tuple[Row, BenchRow]]:
    sim = packaged_executable("hilrig-sim")
    if sim is None:
        return [(("lab: run on a place", "-", "error: hilrig-sim not built", "-", "-", "-", "-"),
                 BenchRow("lab: run on a place", 0))]
    with tempfile.TemporaryDirectory(prefix="hilrig-bench-lab-") as tmp:
        root = Path(tmp)
        write_sim_case(root / "cases")
        rig = write_sim_rig(root / "rig.yaml", "bench-lab", sim, root)
        evidence = root / "evidence"
        evidence.mkdir()
        sshd = LocalSshd(root / "sshd") if _can_run_sshd() else None
        with LocalLab(root / "lab") as lab, sshd or contextlib.nullcontext():
            lab.add_place("bench", rig, exporter="bench-ex", tags={"via": "here"})
            lab.wait_for("bench", available=True)
            local = [sys.executable, "-m", "hostlib", "run", "cases", "--rig", str(rig)]
            placed = [*local, "--coordinator", lab.address, "--place-tags", "driver=sim,via=here"]
            beating = [*placed, "--lease", "0.6"]
            runs: dict[str, tuple[list[str], dict[str, str] | None]] = {
                "local": (local, None), "place": (placed, None), "beating": (beating, None)}
            if sshd is not None:
                lab.add_place("bench-ssh", rig, exporter="bench-ssh-ex", tags={"via": "ssh"},
                              runs_on=RunsOn(sshd.alias, shlex.join([sys.executable, "-m", "hostlib"]), str(root)))
                lab.wait_for("bench-ssh", available=True)
                runs["ssh"] = ([*local, "--coordinator", lab.address, "--place", "bench-ssh"],
                               {**os.environ, "HILRIG_SSH_CONFIG": str(sshd.ssh_config)})
            samples: dict[str, list[tuple[float, float]]] = {name: [] for name in runs}
            for _ in range(repeats):
                for name, (command, env) in runs.items():
                    samples[name].append(_run(command, root, evidence, env))

    def med(name: str, index: int) -> float:
        return statistics.median(s[index] for s in samples[name])

    first_place, first_local = med("place", 0), med("local", 0)
    wall_beat, wall_quiet = med("beating", 1), med("place", 1)
    n = f"median of {repeats}"
    ssh_rows = []
    if "ssh" in samples:
        first_ssh = med("ssh", 0)
        ssh_rows = [(("lab: launch -> first sample, on the rig host (ssh)", "1 case", f"{first_ssh:.2f} s", "-",
                      f"place run here ({n})", f"{first_place:.2f} s", f"{first_ssh / first_place:.2f}"),
                     BenchRow("lab: launch -> first sample, on the rig host (ssh)", 0, peer="place run here",
                              ratio=first_ssh / first_place, rig_s=first_ssh, peer_s=first_place))]
    return [
        (("lab: launch -> first sample", "1 case", f"{first_place:.2f} s", "-", f"plain local run ({n})",
          f"{first_local:.2f} s", f"{first_place / first_local:.2f}"),
         BenchRow("lab: launch -> first sample", 0, peer="plain local run", ratio=first_place / first_local,
                  rig_s=first_place, peer_s=first_local)),
        (("lab: run wall, heartbeat 0.1 s", "1 case", f"{wall_beat:.2f} s", "-", f"no heartbeat ({n})",
          f"{wall_quiet:.2f} s", f"{wall_beat / wall_quiet:.2f}"),
         BenchRow("lab: run wall, heartbeat 0.1 s", 0, peer="no heartbeat", ratio=wall_beat / wall_quiet,
                  rig_s=wall_beat, peer_s=wall_quiet)),
        *ssh_rows,
    ]


def _can_run_sshd() -> bool:
    """A rig host on loopback needs root (sshd switches users) and the OpenSSH server."""
    return os.geteuid() == 0 and os.access(shutil.which("sshd") or "/usr/sbin/sshd", os.X_OK)
