"""Device locks: one device, one run; waiting names the holder; kill -9 frees it."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from hostlib.results.record import ErrorKind

from hostlib.rig import DeviceEntry
from hostlib.rig.args import UhdArgs
from hostlib.rig.lock import DeviceLock, DeviceLocked, read_holder
from hostlib.tests.conftest import requires_native

HOLDER = """
import sys, time
from hostlib.rig import DeviceEntry
from hostlib.rig.args import UhdArgs
from hostlib.rig.lock import DeviceLock
dev = DeviceEntry(alias="dut", driver="uhd", args=UhdArgs(type="b200"), serial="ABC", channels=1,
                  max_rate_sps=1e6, directions=("rx",), transports=("usb",))
lock = DeviceLock(dev, case="nightly RX", timeout_s=5).acquire()
print("locked", flush=True)
time.sleep(120)
"""


def device(serial="ABC", alias="dut"):
    return DeviceEntry(alias=alias, driver="uhd", args=UhdArgs(type="b200"), serial=serial, channels=1,
                       max_rate_sps=1e6, directions=("rx",), transports=("usb",))


@pytest.fixture
def lock_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("HILRIG_LOCK_DIR", str(tmp_path))
    return tmp_path


def start_holder(lock_dir):
    env = {**os.environ, "HILRIG_LOCK_DIR": str(lock_dir)}
    proc = subprocess.Popen([sys.executable, "-c", HOLDER], env=env, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def test_second_run_waits_names_holder_and_kill9_frees_the_lock(lock_dir):
    holder = start_holder(lock_dir)
    try:
        t0 = time.monotonic()
        with pytest.raises(DeviceLocked) as err:
            DeviceLock(device(), case="technician", timeout_s=1.0).acquire()
        waited = time.monotonic() - t0
        assert 1.0 <= waited < 3.0                     # it waited for the timeout, no longer
        msg = str(err.value)
        assert f"pid {holder.pid}" in msg and "case 'nightly RX'" in msg and "since 20" in msg, msg
        assert err.value.holder["pid"] == holder.pid
        os.kill(holder.pid, signal.SIGKILL)             # the holder dies without cleaning up
        holder.wait(timeout=5)
        # The kernel dropped the flock with the process: the next run takes it at once.
        with DeviceLock(device(), case="technician", timeout_s=2.0) as lock:
            assert lock.waited_s < 1.0
            rec = read_holder(lock.path)
            assert rec["pid"] == os.getpid() and rec["case"] == "technician"
        assert read_holder(lock.path) == {}             # released: no stale record
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


def test_waiter_gets_the_lock_when_the_holder_releases(lock_dir):
    holder = start_holder(lock_dir)
    try:
        t0 = time.monotonic()
        # Kill the holder 0.5 s into a 5 s wait: the waiter must get it then, not at the end.
        killer = subprocess.Popen(["sh", "-c", f"sleep 0.5; kill -9 {holder.pid}"])
        with DeviceLock(device(), timeout_s=5.0) as lock:
            assert 0.3 < time.monotonic() - t0 < 3.0
            assert lock.waited_s > 0.3
        killer.wait(timeout=5)
    finally:
        holder.kill()
        holder.wait()


def test_one_lock_per_device(lock_dir):
    with DeviceLock(device("A"), timeout_s=0):
        with DeviceLock(device("B"), timeout_s=0):   # another device: not blocked
            pass
        with pytest.raises(DeviceLocked):
            DeviceLock(device("A", alias="same-radio-other-name"), timeout_s=0).acquire()


@requires_native
def test_engine_reports_locked_device_as_infrastructure_error(lock_dir, monkeypatch, write_case, sim_rig):
    from hostlib.engine import run_case
    monkeypatch.setenv("HILRIG_LOCK_TIMEOUT", "0.5")
    case = write_case("""
        name: rx soapy locked
        device: soapy_sim
        direction: rx
        master_clock: 100 MHz
        decimation: 100
        transport: {kind: udp}
        duration: 0.5 s
    """)[0]
    entry = sim_rig.devices["soapy_sim"]
    with DeviceLock(entry, case="someone else's run", timeout_s=0):
        r = run_case(case, sim_rig, run_id="t")
    assert r.verdict == "ERROR" and r.kind is ErrorKind.INFRASTRUCTURE and r.exit_code == 3
    assert f"pid {os.getpid()}" in r.error and "someone else's run" in r.error
    r = run_case(case, sim_rig, run_id="t")             # free again: it runs
    assert r.verdict == "PASS", r.message
