#
# Copyright 2026 hilrig.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The simulator device streaming a hilrig case into a flowgraph's rig_source.

hostlib's sim driver runs hilrig-sim exactly as for any case (configure from the
case's stream config, device FIFO, faults, pacing); only the host receiver is the
flowgraph's rig_source instead of the driver's own RxStream:

    src = hilrig.rig_source("sc16", 1, "udp", "127.0.0.1:0")
    sim = Simulator(src, "testcases/rx/rx_udp_rates.yaml", "RX UDP 10 MS/s")
    tb.start(); sim.start(); ...; device_stats = sim.stop(); tb.wait()

Needs hostlib importable (the project's venv, or `pip install` of hilrig).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any


def load_case(case_file: str | Path, case_name: str | None = None) -> Any:
    """One case of a YAML case file (the first, or the one named)."""
    from hostlib.dsl import load_cases

    cases = load_cases([Path(case_file)])
    if case_name is None:
        return cases[0]
    for case in cases:
        if case.name == case_name or case.test_name == case_name:
            return case
    raise ValueError(f"{case_file}: no case named {case_name!r} (has {', '.join(c.name for c in cases)})")


def case_from(**fields: Any) -> Any:
    """A case written inline with the keys of a YAML case (docs/dsl.md), checked by the
    same loader: case_from(master_clock="200 MHz", decimation=200,
    transport={"kind": "udp", "frame_bytes": 8000}, duration="3 s").
    Defaults: name "flowgraph", device "dut", direction "rx"."""
    import json
    import tempfile

    fields = {"name": "flowgraph", "device": "dut", "direction": "rx", **fields}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "case.yaml"
        path.write_text(json.dumps(fields))   # JSON is YAML
        return load_case(path)


class Simulator:
    """hilrig-sim as the rig's device `device` (rig: a rig file or name, default the
    simulator rig), configured for `case` and sending to `source` (a rig_source)."""

    def __init__(self, source: Any, case: Any, case_name: str | None = None, rig: str | None = None,
                 device: str = "dut"):
        from hostlib.drivers.sim import SimDriver
        from hostlib.rig import default_rig_path, load_rig

        self.case = case if hasattr(case, "rate_sps") else load_case(case, case_name)
        entry = load_rig(default_rig_path(rig)).devices[device]
        if entry.driver != "sim":
            raise ValueError(f"device {device!r} of the rig is driver {entry.driver!r}, not the simulator")
        self.source = source
        self.driver = SimDriver(entry)
        self._open = False

    def start(self) -> None:
        self.driver.open()
        self._open = True
        self.driver.configure(self.case, rx_dest=self.source.endpoint())
        self.driver.start()

    def stats(self) -> dict:
        """The simulator's own counters (frames sent, faults injected, FIFO overflows)."""
        return self.driver.poll().device

    def stop(self) -> dict:
        """Stops the stream (the simulator ends it with EOB) and returns its final counters."""
        try:
            return self.driver.stop().device
        finally:
            self.close()

    def close(self) -> None:
        if self._open:
            self.driver.close()
            self._open = False

    def __enter__(self) -> "Simulator":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
