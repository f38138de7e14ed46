"""Child processes we start: stopping one (simulator, InfluxDB, iperf3), finding
processes by name, and the JSON-lines control channel of hilrig's own executables
(hilrig-sim, hilrig-link: one request line -> one answer line on stdin/stdout)."""
from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from ._exceptions import HilrigError

WATCHDOG_PERIOD_S = 0.05   # how often a stream's silence is checked while a control answer is awaited


def stop_process(proc: subprocess.Popen, timeout_s: float) -> None:
    """SIGTERM, up to timeout_s to exit, then SIGKILL; reaped either way, so no
    zombie is left behind."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def processes(name: str, parent: int | None = None) -> set[int]:
    """Pids of the running processes called `name` (/proc/<pid>/stat's comm; zombies
    excluded), only the children of `parent` when given."""
    pids = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:   # exited while we looked
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        state, ppid = stat[stat.rindex(")") + 2 :].split()[:2]
        if comm == name and state != "Z" and (parent is None or int(ppid) == parent):
            pids.add(int(entry.name))
    return pids


class ControlledProcess:
    """One running hilrig executable and its control channel. `label` names it in every
    message ("simulator hilrig-sim"); `error` is what its failures raise (the simulator's
    are the device's, the link emulator's the rig's own)."""

    def __init__(self, argv: list[str], label: str, error: type[HilrigError],
                 start_error: type[HilrigError] | None = None):
        """start_error: what a process that cannot be started raises (default: error)."""
        self.label, self.error = label, error
        self._stderr = tempfile.TemporaryFile(mode="w+b")  # noqa: SIM115  the process's, closed in close()
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=self._stderr, close_fds=True)
        except OSError as exc:
            self._stderr.close()
            raise (start_error or error)(f"cannot start {label} ({' '.join(argv)}): {exc}") from exc
        if self.proc.stdin is None or self.proc.stdout is None:  # never: both are PIPEs
            raise error(f"{label} started without its control pipes")
        self._stdin, self._stdout = self.proc.stdin, self.proc.stdout
        self._sel = selectors.DefaultSelector()
        self._sel.register(self._stdout, selectors.EVENT_READ)
        self._buf = b""

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def short(self) -> str:
        """The first word of the label ("simulator"), as in "simulator refused 'start'"."""
        return self.label.split()[0]

    def describe(self) -> str:
        """How the process is named in messages: label, pid, and its state when it is
        not running normally (stopped by a signal, a zombie)."""
        state = ""
        try:
            stat = Path(f"/proc/{self.pid}/stat").read_text()
            state = stat[stat.rindex(")") + 2]
        except (OSError, ValueError, IndexError):
            pass
        how = {"T": ", stopped by a signal", "t": ", stopped by a tracer", "Z": ", a zombie"}.get(state, "")
        return f"{self.label} (pid {self.pid}{how})"

    def describe_exit(self) -> str:
        code = self.proc.poll()
        if code is None:
            return f"{self.label} (pid {self.pid}) is still running"
        if code < 0:
            try:
                how = f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"was killed by signal {-code}"
        else:
            how = f"exited with status {code}"
        self._stderr.seek(0)
        tail = self._stderr.read()[-400:].decode(errors="replace").strip()
        return f"{self.label} (pid {self.pid}) {how}" + (f"; its last words: {tail}" if tail else "")

    def _request(self, cmd: str, timeout_s: float, watchdog: Callable[[], None] | None = None,
                 fields: Mapping[str, object] | None = None) -> dict[str, object]:
        """Send one command, wait for its one-line answer; `error` if the process is gone.
        watchdog: called every WATCHDOG_PERIOD_S while the answer is awaited (it raises
        DeviceSilent when the stream has gone silent: a stopped simulator answers nothing)."""
        if self.proc.poll() is not None:
            raise self.error(f"{self.describe_exit()} (before {cmd!r})")
        line = json.dumps({"cmd": cmd, **(fields or {})}) + "\n"
        try:
            self._stdin.write(line.encode())
            self._stdin.flush()
        except (BrokenPipeError, OSError):
            self.proc.wait(timeout=2)
            raise self.error(f"{self.describe_exit()} (while sending {cmd!r})") from None
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buf:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self.error(f"{self.label} (pid {self.pid}) did not answer {cmd!r} within {timeout_s:.0f} s")
            if not self._sel.select(timeout=min(remaining, WATCHDOG_PERIOD_S if watchdog else 0.5)):
                if self.proc.poll() is not None:
                    raise self.error(f"{self.describe_exit()} (waiting for {cmd!r})")
                if watchdog is not None:
                    watchdog()
                continue
            chunk = os.read(self._stdout.fileno(), 65536)
            if not chunk:
                self.proc.wait(timeout=2)
                raise self.error(f"{self.describe_exit()} (waiting for {cmd!r})")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\n", 1)
        try:
            answer = json.loads(raw)
        except ValueError:
            raise self.error(f"{self.short} answered {cmd!r} with garbage: {raw[:200]!r}") from None
        if not isinstance(answer, dict):
            raise self.error(f"{self.short} answered {cmd!r} with {raw[:200]!r}, not an object")
        if not answer.get("ok"):
            raise self.error(f"{self.short} refused {cmd!r}: {answer.get('error', answer)}")
        return answer

    def close(self) -> None:
        """Ask politely, then terminate, then kill; always reaps."""
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGCONT)  # a stopped process could not hear "quit"
            try:
                self._stdin.write(b'{"cmd":"quit"}\n')
                self._stdin.flush()
            except OSError:
                pass
            try:
                self._stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                stop_process(self.proc, 2)
        self._sel.close()
        for f in (self._stdin, self._stdout):
            try:
                f.close()
            except OSError:
                pass
        self._stderr.close()
