"""One device, one run: a lock per device so that a nightly run and a technician
never share a radio.

The lock is flock(2) on <lock dir>/<key>.lock: the kernel releases it when the
holder's file descriptor closes, which includes the holder dying by kill -9, so a
dead holder's lock is free for the next run without any stale-lock guessing. The
file also carries a JSON holder record (pid, user, host, case, since) that a
waiting run reads to say who holds the device.

Lock dir: $HILRIG_LOCK_DIR, else /run/lock/hilrig (created 1777, sticky, so users
of one host share it), else <tmp>/hilrig-locks when /run/lock is not writable.
"""
from __future__ import annotations

import datetime as _dt
import fcntl
import getpass
import json
import os
import re
import socket
import tempfile
import time
from pathlib import Path

from .._exceptions import DeviceLocked, InfrastructureError
from .inventory import DeviceEntry

__all__ = ["DeviceLock", "DeviceLocked", "device_lock_key", "lock_dir", "read_holder"]

DEFAULT_LOCK_DIR = "/run/lock/hilrig"
POLL_S = 0.05


def lock_dir() -> Path:
    env = os.environ.get("HILRIG_LOCK_DIR", "").strip()
    candidates = [Path(env)] if env else [Path(DEFAULT_LOCK_DIR), Path(tempfile.gettempdir()) / "hilrig-locks"]
    errors = []
    for d in candidates:
        try:
            d.mkdir(parents=True, exist_ok=True)
            if not env:
                os.chmod(d, 0o1777)  # shared by the users of this host, like /tmp
            if os.access(d, os.W_OK):
                return d
            errors.append(f"{d}: not writable")
        except OSError as exc:
            errors.append(f"{d}: {exc.strerror}")
    raise InfrastructureError(f"no usable lock directory ({'; '.join(errors)}); set HILRIG_LOCK_DIR")


def device_lock_key(device: DeviceEntry) -> str:
    """What identifies the physical device: its serial when the rig gives one (two
    rig files naming one radio share the lock), else driver + args, else the alias."""
    serial = device.serial
    if serial:
        raw = f"{device.driver}-serial-{serial}"
    else:
        args = device.args.given()
        raw = f"{device.driver}-{device.alias}"
        if args:
            raw += "-" + ",".join(f"{k}={v}" for k, v in sorted(args.items()))
    return re.sub(r"[^A-Za-z0-9_.=,-]+", "_", raw)[:200]


def read_holder(path: Path) -> dict[str, object]:
    try:
        text = Path(path).read_text()
        return json.loads(text) if text.strip() else {}
    except (OSError, ValueError):
        return {}


def describe_holder(holder: dict[str, object]) -> str:
    if not holder:
        return "an unknown holder (no holder record)"
    parts = [f"pid {holder.get('pid', '?')}", f"user {holder.get('user', '?')}"]
    if holder.get("host"):
        parts.append(f"host {holder['host']}")
    if holder.get("case"):
        parts.append(f"case {holder['case']!r}")
    if holder.get("since"):
        parts.append(f"since {holder['since']}")
    return ", ".join(parts)


class DeviceLock:
    """Context manager: `with DeviceLock(device, case="RX 10 MS/s", timeout_s=60): ...`

    acquire() waits up to timeout_s (0 = try once) and raises DeviceLocked naming
    the holder; release() is idempotent.
    """

    def __init__(self, device: DeviceEntry, *, case: str = "", timeout_s: float = 60.0, directory: Path | None = None):
        self.device = device
        self.case = case
        self.timeout_s = float(timeout_s)
        self.path = (directory or lock_dir()) / f"{device_lock_key(device)}.lock"
        self._fd: int | None = None
        self.waited_s = 0.0

    def acquire(self) -> DeviceLock:
        if self._fd is not None:
            return self
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        except OSError as exc:
            raise InfrastructureError(f"cannot open device lock {self.path}: {exc.strerror}") from exc
        start = time.monotonic()
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                waited = time.monotonic() - start
                if waited >= self.timeout_s:
                    os.close(fd)
                    holder = read_holder(self.path)
                    alias = self.device.alias
                    raise DeviceLocked(
                        f"device {alias!r} is locked by {describe_holder(holder)}; waited {waited:.1f} s "
                        f"(lock {self.path})", holder) from None
                time.sleep(min(POLL_S, max(self.timeout_s - waited, 0.001)))
        self.waited_s = time.monotonic() - start
        # We hold it: a previous holder that died left its record; ours replaces it.
        record = {"pid": os.getpid(), "user": _user(), "host": socket.gethostname(), "case": self.case,
                  "device": self.device.alias,
                  "since": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(record) + "\n").encode(), 0)
        try:
            os.chmod(self.path, 0o666)  # the next user of the host may lock it too
        except OSError:
            pass
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            os.ftruncate(fd, 0)  # no stale holder record once free
        except OSError:
            pass
        os.close(fd)  # closing releases the flock

    def __enter__(self) -> DeviceLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001  no passwd entry in a container: the uid will do
        return str(os.getuid())
