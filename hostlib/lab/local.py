"""A lab on this host, on loopback: a real labgrid coordinator and hilrig exporters as
subprocesses, each on a free 127.0.0.1 port. The tests, `make bench` and the docs'
walk-through start the same processes a lab runs (docs/scale-out.md), bound to
loopback only.

    with LocalLab(workdir) as lab:
        lab.add_place("sim-a", rig_file, exporter="ex-a")
        ... hilrig run --coordinator {lab.address} --place sim-a ...
"""
from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .._exceptions import LabError
from .._process import stop_process
from ..rig.inventory import load_rig
from .coordinator import LabClient
from .exporter import exporter_config, place_matches
from .place import Capabilities, ExportedDevice, RunsOn

__all__ = ["LocalLab", "LocalSshd", "free_port", "write_sim_case", "write_sim_rig"]

# A short RX case on a simulator place (tests, bench): 1 MS/s over UDP.
SIM_CASE = """\
name: RX lab
device: dut
direction: rx
master_clock: 200 MHz
decimation: 200
transport: {{kind: udp, frame_bytes: 8000}}
warmup: 100 ms
duration: {duration}
tags: [lab]
thresholds:
  throughput: ">= 90% of rate"
"""


def write_sim_case(folder: Path, duration: str = "0.5 s") -> Path:
    """A folder with one short simulator RX case (`duration` as YAML writes it)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "rx.yaml").write_text(SIM_CASE.format(duration=duration))
    return folder


def write_sim_rig(path: Path, name: str, binary: Path, results: Path, channels: int = 1) -> Path:
    """A rig file with one simulator device `dut` run from `binary` (a link a test may
    remove: the exporter's probe then finds no device), results under `results`."""
    path.write_text(f"""\
name: {name}
devices:
  dut:
    driver: sim
    args: {{binary: {binary}}}
    channels: {channels}
    max_rate: 100 MS/s
    transports: [udp, shm]
results:
  outbox: {results / "outbox"}
  evidence: {results / "evidence"}
""")
    return path

START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _labgrid_coordinator() -> str:
    return str(Path(sys.executable).with_name("labgrid-coordinator"))


@dataclass
class _Proc:
    proc: subprocess.Popen[bytes]
    log: Path
    mark: int = 0     # where this start's lines begin in the log


def _wait_for_line(proc: subprocess.Popen[bytes], log: Path, marker: bytes, timeout_s: float) -> None:
    """Wait until the process has written `marker` (its readiness line) to its log."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if marker in log.read_bytes():
            return
        if proc.poll() is not None:
            raise LabError(f"{proc.args!r} exited with {proc.returncode}: {log.read_text()[-2000:]}")
        time.sleep(0.05)
    raise LabError(f"{proc.args!r} did not say {marker.decode()!r} within {timeout_s:g} s; log {log}")


@dataclass
class LocalLab:
    """A coordinator and exporters on 127.0.0.1 in `workdir` (the coordinator keeps its
    places.yaml there, so a restarted one knows its places again)."""

    workdir: Path
    port: int = field(default_factory=free_port)
    coordinator: _Proc | None = None
    exporters: dict[str, _Proc] = field(default_factory=dict)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start_coordinator(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        log = self.workdir / "coordinator.log"
        with log.open("ab") as out:
            proc = subprocess.Popen([_labgrid_coordinator(), "--listen", self.address], cwd=self.workdir,
                                    stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.coordinator = _Proc(proc, log)
        _wait_for_line(proc, log, f"listening on 127.0.0.1:{self.port}".encode(), START_TIMEOUT_S)

    def stop_coordinator(self) -> None:
        if self.coordinator is not None:
            stop_process(self.coordinator.proc, STOP_TIMEOUT_S)
            self.coordinator = None

    def start_exporter(self, name: str, config: Path, *, wait: bool = True) -> None:
        """Start `hilrig lab exporter`; wait until the coordinator took it (unless wait=False:
        then wait_exporters() does, so that several start side by side)."""
        log = self.workdir / f"exporter-{name}.log"
        mark = log.stat().st_size if log.exists() else 0
        with log.open("ab") as out:
            proc = subprocess.Popen([sys.executable, "-m", "hostlib", "lab", "exporter", "-c", self.address, "-n", name,
                                     "--hostname", "127.0.0.1", str(config)], cwd=self.workdir,
                                    stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.exporters[name] = _Proc(proc, log, mark)
        if wait:
            self.wait_exporters()

    def wait_exporters(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        for name, started in self.exporters.items():
            while b"Exporter ready" not in started.log.read_bytes()[started.mark:]:
                if started.proc.poll() is not None or time.monotonic() > deadline:
                    raise LabError(f"exporter {name} did not start: {started.log.read_text()[-2000:]}")
                time.sleep(0.05)

    def kill_exporter(self, name: str) -> None:
        """SIGKILL: the exporter is gone as a crashed host's would be."""
        proc = self.exporters.pop(name).proc
        proc.send_signal(signal.SIGKILL)
        proc.wait()

    def add_place(self, place: str, rig_file: Path, *, exporter: str, tags: dict[str, str] | None = None,
                  wait: bool = True, runs_on: RunsOn | None = None) -> Path:
        """Write the exporter config of a rig file's devices, start its exporter, and
        create and tag the place on the coordinator (what `hilrig lab exporter-config`,
        `hilrig lab exporter` and `hilrig lab register` do). `runs_on`: the place's cases
        run on that rig host over SSH (a LocalSshd's, on loopback)."""
        rig = load_rig(rig_file)
        config = self.workdir / f"exporter-{exporter}.yaml"
        config.write_text(exporter_config(rig, place, probe_interval_s=0.25, runs_on=runs_on))
        self.start_exporter(exporter, config, wait=wait)
        caps = Capabilities.of(ExportedDevice.of(str(Path(rig.file).resolve()), d) for d in rig.devices.values())
        with self.client() as lab:
            lab.ensure_place(place, place_matches(exporter, place),
                             {k: v for k, v in {**caps.tags(), **(tags or {})}.items() if v})
        return config

    def client(self, user_suffix: str = "") -> LabClient:
        return LabClient(self.address, user_suffix=user_suffix)

    def wait_for(self, place: str, *, available: bool | None = None, held: bool | None = None,
                 timeout_s: float = 20.0) -> None:
        """Wait until the coordinator shows the place so (a condition, never a sleep)."""
        deadline = time.monotonic() + timeout_s
        with self.client() as lab:
            while True:
                state = lab.place(place)
                if ((available is None or state.available == available)
                        and (held is None or (state.holder is not None) == held)):
                    return
                if time.monotonic() > deadline:
                    raise LabError(f"place {place} did not become available={available} held={held} within "
                                   f"{timeout_s:g} s: {state}")
                time.sleep(0.1)

    def close(self) -> None:
        for name in list(self.exporters):
            stop_process(self.exporters.pop(name).proc, STOP_TIMEOUT_S)
        self.stop_coordinator()

    def __enter__(self) -> LocalLab:
        self.start_coordinator()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()



@dataclass
class LocalSshd:
    """A rig host on loopback: a real OpenSSH server on 127.0.0.1 (a free port) with a host
    key and one client key of its own, made in `workdir`. Clients use `ssh_config`
    ($HILRIG_SSH_CONFIG) and the destination `alias`; the host key is known beforehand,
    so nothing is accepted blindly. Needs root (sshd switches to the user) and the
    openssh-server package."""

    workdir: Path
    port: int = field(default_factory=free_port)
    alias: str = "righost-loopback"
    proc: _Proc | None = None

    @property
    def ssh_config(self) -> Path:
        return self.workdir / "ssh_config"

    def start(self) -> None:
        sshd = shutil.which("sshd") or "/usr/sbin/sshd"
        if not os.access(sshd, os.X_OK):
            raise LabError("no OpenSSH server here (Debian package openssh-server)")
        self.workdir.mkdir(parents=True, exist_ok=True)
        keys = {name: self.workdir / name for name in ("host_key", "client_key")}
        for key in keys.values():
            if not key.exists():
                subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True,
                               stdin=subprocess.DEVNULL)
        (self.workdir / "authorized_keys").write_text(Path(f"{keys['client_key']}.pub").read_text())
        host_public = Path(f"{keys['host_key']}.pub").read_text().split()
        (self.workdir / "known_hosts").write_text(f"[127.0.0.1]:{self.port} {host_public[0]} {host_public[1]}\n")
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)   # its privilege separation directory
        config = self.workdir / "sshd_config"
        config.write_text(f"""\
Port {self.port}
ListenAddress 127.0.0.1
HostKey {keys['host_key']}
AuthorizedKeysFile {self.workdir / 'authorized_keys'}
PidFile {self.workdir / 'sshd.pid'}
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
LogLevel VERBOSE
""")
        user = pwd.getpwuid(os.getuid()).pw_name
        self.ssh_config.write_text(f"""\
Host {self.alias}
    HostName 127.0.0.1
    Port {self.port}
    User {user}
    IdentityFile {keys['client_key']}
    IdentitiesOnly yes
    UserKnownHostsFile {self.workdir / 'known_hosts'}
    StrictHostKeyChecking yes
""")
        log = self.workdir / "sshd.log"
        with log.open("ab") as out:
            proc = subprocess.Popen([sshd, "-D", "-e", "-f", str(config)], stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL)
        self.proc = _Proc(proc, log)
        _wait_for_line(proc, log, f"listening on 127.0.0.1 port {self.port}".encode(), START_TIMEOUT_S)

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc.proc, STOP_TIMEOUT_S)
            self.proc = None

    def __enter__(self) -> LocalSshd:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
