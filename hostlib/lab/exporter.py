"""The hilrig exporter: labgrid's exporter with hilrig devices that tell the truth about
being attached.

labgrid exports a resource class it does not know as always available, so an unplugged
radio would look free. labgrid has no plugin hook for exports; this thin wrapper
registers `HilrigDevice` into labgrid's table of exports and then runs labgrid's own
exporter (`hilrig lab exporter -c COORDINATOR -n NAME exporter.yaml`, the same options
as labgrid-exporter). Each device's `poll()` asks the device's own driver whether it is
attached (Driver.probe / Driver.attached: UHD find, SoapySDR enumerate, USB VID:PID,
the simulator binary) at most every `probe_interval_s`, so an unplugged radio is
unavailable within seconds and the coordinator stops offering its place.

`hilrig lab exporter-config RIG --place NAME` writes the exporter's YAML from a rig file.
"""
from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Sequence
from io import StringIO
from pathlib import Path

import attr
from labgrid.remote import exporter as labgrid_exporter
from ruamel.yaml import YAML

from .._exceptions import ConfigError, ConfigIssue
from ..drivers.probe import probe_device
from ..rig.inventory import DeviceEntry, Rig, load_rig
from .place import RESOURCE_CLASS, ExportedDevice, RunsOn

__all__ = ["exporter_config", "main", "place_matches"]

log = logging.getLogger("hilrig.lab.exporter")

# labgrid's exporter exits with this code when its coordinator went away (it expects a
# supervisor to start it again); the wrapper starts it again itself after a pause.
REEXEC_EXIT = 100
REEXEC_PAUSE_S = 1.0


@attr.s(eq=False)
class _DeviceProbe:
    """labgrid's view of the local device: `avail`, refreshed by `poll()`."""

    entry: DeviceEntry = attr.ib()
    interval_s: float = attr.ib()
    avail: bool = attr.ib(default=False)
    why: str = attr.ib(default="")
    _next_s: float = attr.ib(default=0.0)

    def poll(self) -> None:
        now = time.monotonic()
        if now < self._next_s:
            return
        self._next_s = now + self.interval_s
        row = probe_device(self.entry)
        if row.ok != self.avail:
            log.info("%s: %s", self.entry.alias, "attached: " + row.detail if row.ok else row.detail)
        self.avail, self.why = row.ok, "" if row.ok else row.detail


@attr.s(eq=False)
class HilrigDeviceExport(labgrid_exporter.ResourceExport):
    """A hilrig device (its rig-file entry) as a labgrid resource."""

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        exported = ExportedDevice.model_validate(self.local_params)
        rig = load_rig(exported.rig)
        self.local = _DeviceProbe(rig.devices[exported.device], exported.probe_interval_s)

    def _get_params(self) -> dict[str, object]:
        params: dict[str, object] = dict(self.local_params)
        params["unavailable"] = self.local.why
        return params


def register() -> None:
    """Make labgrid's exporter export `HilrigDevice` resources with HilrigDeviceExport."""
    labgrid_exporter.exports[RESOURCE_CLASS] = HilrigDeviceExport


def exporter_config(rig: Rig, place: str, devices: Sequence[str] = (), probe_interval_s: float = 1.0,
                    runs_on: RunsOn | None = None) -> str:
    """The labgrid exporter YAML for a rig file: one group named after the place, one
    HilrigDevice per device (all the rig's, or those named); with `runs_on`, the place's
    cases run on this rig host over SSH (hostlib.lab.remote). No credentials: a rig file
    has none, and only the rig path, what the devices offer and the ssh destination are written."""
    aliases = list(devices) or sorted(rig.devices)
    unknown = [a for a in aliases if a not in rig.devices]
    if unknown:
        raise ConfigError(ConfigIssue(rig.file, None, "devices", f"no device {', '.join(unknown)} "
                                      f"(the rig has {', '.join(sorted(rig.devices))})"))
    rig_file = str(Path(rig.file).resolve())
    group = {alias: {"cls": RESOURCE_CLASS,
                     **ExportedDevice.of(rig_file, rig.devices[alias], probe_interval_s, runs_on).params()}
             for alias in aliases}
    out = StringIO()
    # labgrid renders the file with Jinja2 first: "#" starts a statement there, "##" a comment.
    out.write(f"## labgrid exporter config for place {place}: hilrig lab exporter-config {rig.file} --place {place}\n"
              f"## run it with: hilrig lab exporter -c COORDINATOR_HOST:PORT -n EXPORTER_NAME THIS_FILE\n")
    YAML().dump({place: group}, out)
    return out.getvalue()


def place_matches(exporter_name: str, place: str) -> list[str]:
    """The labgrid match pattern that gives a place its exporter's hilrig devices."""
    return [f"{exporter_name}/{place}/{RESOURCE_CLASS}"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run labgrid's exporter with hilrig devices registered (labgrid-exporter's options)."""
    args = list(sys.argv[1:] if argv is None else argv)
    register()
    sys.argv = ["hilrig lab exporter", *args]
    try:
        labgrid_exporter.main()
    except SystemExit as exc:
        if exc.code != REEXEC_EXIT:
            raise
        # The coordinator went away: start afresh (a new process, as labgrid expects).
        time.sleep(REEXEC_PAUSE_S)
        os.execv(sys.executable, [sys.executable, "-m", "hostlib.lab.exporter", *args])
    return 0


if __name__ == "__main__":
    sys.exit(main())
