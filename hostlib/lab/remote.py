"""A place's cases run on its rig host: the host whose radios they are, over SSH.

A USB radio is reachable only from the host it is plugged into, so a run on a place
whose exporter was configured with `--ssh DEST` (hilrig lab exporter-config) runs each
case there: the client (a technician's laptop, the pabot host of the nightly) keeps the
reservation, the lease and the heartbeat, and records every result in its own outbox
and evidence as a local run would; the rig host opens the devices (its own device
locks apply) and measures.

    client                                         rig host (ssh DEST)
    RunSession.run(case)  ── ssh -o BatchMode=yes ──▶  cd CHECKOUT && HILRIG lab run-case
      RigHost.run_case      --rig RIG --run-id ID --file testcases/x.yaml --sha256 H --case NAME
      ◀── JSON lines: {"progress": row}, {"say": line}, {"result": ResultRecord} | {"error": ...}
                                                     and the record kept in
                                                     <evidence dir>/remote/<run id>.jsonl

The case file is named relative to the client's working directory (a lab runs from
its checkout) and found relative to the rig host's checkout; the rig host refuses a
file whose SHA-256 differs from the client's, so a result is always of the case asked
for. SSH is the lab's own (keys, ~/.ssh/config, or $HILRIG_SSH_CONFIG): hilrig never
holds a credential and never prompts (BatchMode).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shlex
import subprocess
import sys
import tempfile
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from .._exceptions import ConfigError, ConfigIssue, HilrigError, RigHostError
from ..results.record import CaseResult
from ..results.schema import ResultRecord
from ..verdicts import ErrorKind

if TYPE_CHECKING:
    from ..dsl.case import Case
    from ..rig.inventory import Rig

__all__ = ["CONNECT_TIMEOUT_S", "RigHost", "run_case_here"]

# How long ssh may take to connect, and how long a silent connection lives
# (ServerAliveInterval x ServerAliveCountMax): a rig host that vanishes mid-case is
# known within ALIVE_INTERVAL_S * ALIVE_COUNT seconds, not at TCP's timeout.
CONNECT_TIMEOUT_S = 10
ALIVE_INTERVAL_S = 5
ALIVE_COUNT = 3
STDERR_TAIL_LINES = 20
KEPT_DIR = "remote"   # under the rig host's evidence folder: <run id>.jsonl


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def case_file_name(case: Case, cwd: Path | None = None) -> str:
    """The case file as the rig host finds it: relative to the client's working
    directory when it is inside it (the checkout), else absolute."""
    here = (cwd or Path.cwd()).resolve()
    path = Path(case.source_file).resolve()
    return str(path.relative_to(here)) if path.is_relative_to(here) else str(path)


@dataclass(frozen=True)
class RigHost:
    """Where a place's devices are and how hilrig runs there."""

    ssh: str                      # [user@]host, or a Host of the lab's ssh config
    hilrig: tuple[str, ...]       # the command that runs hilrig on the rig host
    checkout: str                 # the rig host's checkout: case files are found from here
    rigs: Mapping[str, str]       # device alias -> the rig file on the rig host

    def __str__(self) -> str:
        return f"rig host {self.ssh}"

    def argv(self, words: list[str], *, in_checkout: bool = True) -> list[str]:
        """ssh ... DEST 'cd CHECKOUT && exec HILRIG words...' (never prompts, no stdin)."""
        opts = ["-n", "-o", "BatchMode=yes", "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}",
                "-o", f"ServerAliveInterval={ALIVE_INTERVAL_S}", "-o", f"ServerAliveCountMax={ALIVE_COUNT}"]
        config = os.environ.get("HILRIG_SSH_CONFIG", "").strip()
        if config:
            opts = ["-F", config, *opts]
        remote = shlex.join(words)
        if in_checkout:
            remote = f"cd {shlex.quote(self.checkout)} && exec {shlex.join(self.hilrig)} {remote}"
        return ["ssh", *opts, self.ssh, remote]

    def fetch_rig(self, rig_file: str) -> Rig:
        """The rig file as it is on the rig host (the devices the place describes),
        validated here; RigHostError when the host or the file cannot be had, ConfigError
        when the file is not a valid rig file."""
        from ..rig.inventory import load_rig

        try:
            proc = subprocess.run(self.argv(["cat", "--", rig_file], in_checkout=False), capture_output=True,
                                  text=True, timeout=CONNECT_TIMEOUT_S * 3, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise RigHostError(f"{self}: reading its rig file {rig_file} took over "
                                  f"{CONNECT_TIMEOUT_S * 3} s") from None
        if proc.returncode != 0:
            problem = _ssh_problem(proc.returncode, proc.stderr)
            raise RigHostError(f"{self}: cannot read its rig file {rig_file}: {problem}")
        with tempfile.TemporaryDirectory(prefix="hilrig-rig-") as folder:
            local = Path(folder) / Path(rig_file).name
            local.write_text(proc.stdout)
            try:
                return load_rig(local)
            except ConfigError as exc:
                raise ConfigError(f"{self}: its rig file {rig_file} is not valid: {exc}") from None

    def run_case(self, case: Case, run_id: str, *, require_devices: bool = False,
                 progress: Callable[[dict[str, float]], None] | None = None,
                 say: Callable[[str], None] | None = None) -> CaseResult:
        """Run one case on the rig host; its result as a local run returns it.
        RigHostError naming the host when no result came back; ConfigError when the rig
        host refused the case (its case file differs, no such case or device)."""
        rig_file = self.rigs.get(case.device)
        if rig_file is None:
            raise ConfigError(f"{self}: the place has no device {case.device!r} "
                              f"(it has {', '.join(sorted(self.rigs))})")
        name = case_file_name(case)
        words = ["lab", "run-case", "--rig", rig_file, "--run-id", run_id, "--file", name,
                 "--sha256", sha256_of(Path(case.source_file)), "--case", case.test_name]
        if require_devices:
            words.append("--require-devices")
        proc = subprocess.Popen(self.argv(words), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, bufsize=1)
        tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        reader = threading.Thread(target=_collect, args=(proc.stderr, tail), daemon=True)
        reader.start()
        answer: dict[str, object] = {}
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                answer = _handle_line(line, progress, say) or answer
            rc = proc.wait()
        except BaseException:   # Ctrl-C: the ssh goes; the rig host keeps what it measures
            proc.kill()
            proc.wait()
            raise
        reader.join(timeout=5)
        return self._result(case, run_id, answer, rc, "\n".join(tail))

    def _result(self, case: Case, run_id: str, answer: Mapping[str, object], rc: int, stderr: str) -> CaseResult:
        if "result" in answer:
            return CaseResult.from_record(ResultRecord.model_validate(answer["result"]), case)
        error = answer.get("error")
        if isinstance(error, dict):
            text = f"{self}: {error.get('text')}"
            raise ConfigError(text) if ErrorKind(str(error.get("kind"))) is ErrorKind.CONFIG else RigHostError(text)
        kept = f"{self.ssh}:{self.checkout}/<its evidence folder>/{KEPT_DIR}/{run_id}.jsonl"
        raise RigHostError(f"{self}: no result came back ({_ssh_problem(rc, stderr)}); "
                              f"a result it measured is kept in {kept}")


def _collect(stream: IO[str] | None, tail: deque[str]) -> None:
    if stream is not None:
        for line in stream:
            tail.append(line.rstrip())


def _handle_line(line: str, progress: Callable[[dict[str, float]], None] | None,
                 say: Callable[[str], None] | None) -> dict[str, object] | None:
    """One line from the rig host: progress and say lines are passed on, a result or an
    error is returned; anything else (a library that wrote to stdout) is said as it is."""
    try:
        message = json.loads(line)
    except ValueError:
        message = None
    if not isinstance(message, dict):
        if say is not None and line.strip():
            say(line.rstrip())
        return None
    if "progress" in message:
        if progress is not None:
            progress({k: float(v) for k, v in message["progress"].items()})
        return None
    if "say" in message:
        if say is not None:
            say(str(message["say"]))
        return None
    return message


def _ssh_problem(rc: int, stderr: str) -> str:
    last = stderr.strip().splitlines()[-1] if stderr.strip() else "nothing on stderr"
    if rc == 255:
        return f"ssh failed: {last}"
    if rc < 0:
        return f"ssh ended by signal {-rc}"
    return f"exit code {rc}: {last}"


# ---------------------------------------------------------------- the rig host's side


@contextlib.contextmanager
def _protocol_stdout() -> Iterator[IO[str]]:
    """The client reads JSON lines on stdout: they get a private copy of it, and fd 1
    goes to stderr, so that whatever a driver library prints cannot break a line."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    out = os.fdopen(os.dup(saved), "w", buffering=1)
    try:
        yield out
    finally:
        out.close()
        os.dup2(saved, 1)
        os.close(saved)


def run_case_here(rig_file: str, run_id: str, case_file: str, sha256: str, test_name: str,
                  require_devices: bool = False) -> int:
    """`hilrig lab run-case`: run one case on this host's devices for a client that holds
    the place. Exit code as the verdict's; the answer is the last JSON line on stdout."""
    from ..dsl import load_cases
    from ..engine import run_case
    from ..results import results_dirs
    from ..rig.inventory import load_rig

    with _protocol_stdout() as out:
        def send(message: Mapping[str, object]) -> None:
            out.write(json.dumps(message) + "\n")

        path = Path(case_file)
        try:
            if not path.is_file():
                raise ConfigError(ConfigIssue(case_file, None, "", f"no such case file in {Path.cwd()}: "
                                              "the rig host's checkout lacks it"))
            if sha256 and sha256_of(path) != sha256:
                raise ConfigError(ConfigIssue(case_file, None, "", f"differs from the client's (checkout "
                                              f"{Path.cwd()}): update the rig host's checkout"))
            case = next((c for c in load_cases([path]) if c.test_name == test_name), None)
            if case is None:
                raise ConfigError(ConfigIssue(case_file, None, "", f"no case {test_name!r} in it here"))
            rig = load_rig(rig_file)
        except ConfigError as exc:
            send({"error": {"kind": ErrorKind.CONFIG.value, "text": str(exc)}})
            return ErrorKind.CONFIG.exit_code
        try:
            result = run_case(case, rig, run_id=run_id, require_devices=require_devices,
                              progress=lambda row: send({"progress": row}),
                              say=(lambda line: send({"say": line})) if case.search is not None else None)
        except HilrigError as exc:
            send({"error": {"kind": ErrorKind.INFRASTRUCTURE.value, "text": str(exc)}})
            return ErrorKind.INFRASTRUCTURE.exit_code
        record = result.to_record().model_dump(mode="json")
        kept = results_dirs(rig)[1] / KEPT_DIR / f"{run_id}.jsonl"
        try:   # kept first: a connection lost now loses nothing measured
            kept.parent.mkdir(parents=True, exist_ok=True)
            with kept.open("a") as f:
                f.write(json.dumps(record) + "\n")
        except OSError as exc:
            print(f"hilrig lab run-case: the result was not kept in {kept}: {exc}", file=sys.stderr)
        send({"result": record, "kept": str(kept)})
        return result.exit_code
