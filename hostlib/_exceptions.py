"""The one exception tree of hostlib.

    HilrigError
    ├── ConfigError            bad YAML case or rig file (carries every issue found)
    ├── InputError             one value that does not parse (also a ValueError, so that
    │   │                      pydantic validators report it as a validation error)
    │   ├── UnitError          a quantity: "10 MS/s", "2 ms"
    │   ├── ThresholdError     a threshold expression, or one that does not fit its metric
    │   └── FrameError         a malformed frame (hostlib.reference.frame)
    ├── InfrastructureError    the rig cannot run the case: sim binary missing, port in use,
    │   │                      result server down, lock held ...
    │   ├── DeviceLocked       the device stayed locked by another run for the whole wait
    │   ├── LabError           the lab's coordinator could not be reached or refused a request
    │   │   ├── PlaceUnavailable   no place could be reserved within the deadline: names the
    │   │   │                      holder, since when, and the queue position
    │   │   └── RigHostError       a place's rig host (ssh) gave no result: names the host
    │   ├── LinkError          the emulated link failed: hilrig-link died or refused, a namespace
    │   │                      could not be made (the message names hilrig-link)
    │   ├── ResultServerError  the result server (InfluxDB) did not take or give results;
    │   │   │                  whatever was measured stays in the outbox
    │   │   ├── InfluxSetupError   configured wrongly: secret, credentials, database/bucket
    │   │   ├── InfluxUnavailable  unreachable, timed out, 5xx or 429: try again later
    │   │   └── InfluxRejected     the server refused the data itself (other 4xx): never retried
    │   └── DeviceAbsent       the rig has no device that can run the case -> SKIP
    │       ├── DeviceNotAttached  the rig lists the device but it is not there (unplugged,
    │       │                      switched off): SKIP, or ERROR (device) when devices are required
    │       ├── LinkUnavailable    this host cannot emulate the case's link (no root, no
    │       │                      /dev/net/tun) -> SKIP with that reason
    │       └── CongestionUnavailable  this host's kernel lacks the tcp congestion control
    │                              the case asks for (bbr) -> SKIP naming it
    └── DeviceError            the device (or simulator) failed or vanished mid-run
        └── DeviceSilent       ... went silent mid-run for longer than the silence bound

A threshold that a measurement misses is *not* an exception: it is data in the
verdict (see hostlib.engine.verdict). The engine maps the classes once to the
closed verdict type (hostlib.results.record.Verdict / ErrorKind), and exit codes
come from that: ConfigError -> ERROR (config) -> 2, InfrastructureError -> ERROR
(infrastructure) -> 3, DeviceError -> ERROR (device) -> 4, FAIL -> 1, DeviceAbsent -> SKIP.
"""
from __future__ import annotations

from dataclasses import dataclass


class HilrigError(Exception):
    """Base of every error hostlib raises on purpose."""

    exit_code = 1


@dataclass(frozen=True)
class ConfigIssue:
    """One problem in one file: where it is, which field, what is allowed."""

    file: str
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        field = f" {self.field}:" if self.field else ""
        if not where:  # a problem not in a file (a command-line option): no leading ": "
            return f"{field.strip()} {self.message}".strip()
        return f"{where}:{field} {self.message}"


class ConfigError(HilrigError):
    """One or more problems in YAML case or rig files; nothing ran."""

    exit_code = 2

    def __init__(self, issues: list[ConfigIssue] | ConfigIssue | str):
        if isinstance(issues, str):
            issues = [ConfigIssue(file="", line=None, field="", message=issues)]
        elif isinstance(issues, ConfigIssue):
            issues = [issues]
        self.issues: list[ConfigIssue] = list(issues)
        super().__init__("\n".join(str(i) for i in self.issues))


class InputError(HilrigError, ValueError):
    """One value that does not parse; the message says what is allowed. The caller that
    knows the file and line turns it into a ConfigIssue."""

    exit_code = 2


class UnitError(InputError):
    """A quantity that does not parse; the message says what is allowed."""


class ThresholdError(InputError):
    """A threshold that does not parse or does not fit its metric."""


class FrameError(InputError):
    """A malformed frame; the message names the field."""


class InfrastructureError(HilrigError):
    """The rig, not the device under test, stopped the run."""

    exit_code = 3


class DeviceLocked(InfrastructureError):
    """The device stayed locked by another run for the whole wait; `holder` is what the
    lock file says about the run that holds it (hostlib.rig.lock.read_holder)."""

    def __init__(self, message: str, holder: dict[str, object] | None):
        super().__init__(message)
        self.holder: dict[str, object] = holder or {}


class LabError(InfrastructureError):
    """The lab's labgrid coordinator could not be reached, or refused a request
    (hostlib.lab): the run did not get, or could not give back, a place."""


class PlaceUnavailable(LabError):
    """No place that fits the request could be reserved and acquired before the deadline.
    The message names the holder, since when it holds the place and our queue position;
    the fields carry the same for a front-end that shows them apart."""

    def __init__(self, message: str, *, place: str | None = None, holder: str | None = None,
                 since_utc: str | None = None, queue_position: int | None = None):
        super().__init__(message)
        self.place = place
        self.holder = holder
        self.since_utc = since_utc
        self.queue_position = queue_position


class RigHostError(LabError):
    """The rig host that runs a place's cases (hostlib.lab.remote) could not be reached,
    or gave no result for a case: the message names the host and where it keeps what
    it measured."""


class LinkError(InfrastructureError):
    """The emulated link between the device and the host failed (hostlib.link): the
    emulator died or refused, or its namespaces could not be made."""


class ResultServerError(InfrastructureError):
    """The result server did not take (or give back) results. Nothing measured is lost:
    the outbox keeps every file that was not accepted."""


class InfluxSetupError(ResultServerError):
    """The target cannot be used as configured: missing secret, bad credentials, no database."""


class InfluxUnavailable(ResultServerError):
    """Server unreachable, timed out, 5xx or 429: keep the data, try later."""


class InfluxRejected(ResultServerError):
    """The server refused the data itself (a 4xx other than credentials or a missing
    database): the file is set aside and never retried."""


class DeviceAbsent(InfrastructureError):
    """The rig has no device that can run this case; the case is skipped."""

    exit_code = 0


class DeviceError(HilrigError):
    """The device or simulator failed or vanished while the case ran."""

    exit_code = 4


class DeviceSilent(DeviceError):
    """The device sent (RX) or accepted (TX) nothing for longer than the silence bound
    (hostlib.engine.measure.silence_limit_s). `snapshot` holds the counters at the
    moment it was noticed, so what was measured before the silence is kept."""

    def __init__(self, message: str, snapshot: object = None):
        super().__init__(message)
        self.snapshot = snapshot


class DeviceNotAttached(DeviceAbsent):
    """The rig file lists the device, but the driver cannot find it on this host."""


class LinkUnavailable(DeviceAbsent):
    """This host cannot emulate the case's link (no root, no /dev/net/tun, no `ip`);
    the case is skipped with the reason."""


class CongestionUnavailable(DeviceAbsent):
    """This host's kernel has no tcp congestion control of the name the case asks for (one
    of Linux's, such as bbr, not built or not loaded here); the case is skipped naming it."""
