"""One run of hilrig: the object every front-end (CLI, Robot, pytest) drives.

    with RunSession(rig="sim", require_devices=False, say=print) as run:
        for case in run.select(load_cases(["testcases/"]), Selection.of(exclude="reference")):
            result = run.run(case, progress=...)    # engine -> outbox + evidence, at once
    run.exit_code                                  # from the verdicts (README "Exit codes")

Opening a run takes a run id, holds the run's outbox file (the shipper leaves it
alone until the run ends) and starts the evidence file. Every case result is on
disk before `run()` returns, so a killed run loses nothing it measured. Leaving
the `with` block stamps the evidence, appends the `hilrig_run` summary row,
releases the outbox file, writes the HTML run report (hostlib.reports) and, unless
the run was interrupted, ships the outbox. Neither the report nor shipping ever
changes a verdict or loses a result: a problem with either is printed and the run goes on.

A lab run (`place=PlaceRequest(...)`, docs/scale-out.md) reserves and acquires a place
when it opens (hostlib.lab.reserve), runs its cases on the devices the place describes,
keeps a lease on it while it runs, and releases it when it finishes: after success,
failure, Ctrl-C, SIGTERM or an exception alike. A place it cannot get before the
deadline makes every case an ERROR (infrastructure) whose text names the holder.

Trust: a run that executed nothing (no case selected, or every case SKIPped) has
`nothing_tested` set and exit code 5; with `require_devices` (the option, or the
rig file's `require_devices: true`) a device the rig lists but that is not
attached is an ERROR (device), not a SKIP.
"""
from __future__ import annotations

import dataclasses
import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from ._exceptions import ConfigError, InfrastructureError, LabError, PlaceUnavailable, RigHostError
from .dsl.case import Case
from .lab.place import PlaceRequest
from .results import Evidence, Outbox, new_run_id, results_dirs
from .results.outbox import RunLock
from .results.record import EXIT_NOTHING_TESTED, CaseResult, ErrorKind, Verdict, iso_utc, utc_now
from .results.save import save_result
from .results.verdict import summary_line
from .rig.inventory import Rig
from .selection import Selection

if TYPE_CHECKING:   # the lab's gRPC client is imported only by a run that asks for a place
    from .lab.remote import RigHost
    from .lab.reserve import HeldPlace

__all__ = ["RunSession"]

log = logging.getLogger("hilrig.session")

TALLY_ORDER = (Verdict.PASS, Verdict.MARGINAL, Verdict.FAIL, Verdict.ERROR, Verdict.SKIP)


class RunSession:
    """A run on one rig: open, run and record cases, finish, ship, summarise."""

    def __init__(self, rig: Rig | str | Path | None = None, *, require_devices: bool | None = None,
                 outbox_dir: str | Path | None = None, say: Callable[[str], None] | None = None,
                 place: PlaceRequest | None = None):
        """`rig`: a loaded Rig, a rig name or path, or None for $HILRIG_RIG / rigs/sim.yaml.
        `require_devices`: None takes the rig file's `require_devices`; True/False overrides
        it only upwards (a rig that requires devices cannot be relaxed from the command line).
        `say`: where the session's own lines go (the front-end's console).
        `place`: run on a lab place (reserved when the run opens) instead of the rig's own
        devices; the rig file still says where results go."""
        from .rig import default_rig_path, load_rig

        if rig is None or isinstance(rig, (str, Path)):
            self.rig_path: Path | None = default_rig_path(rig)
            self.rig = load_rig(self.rig_path)
        else:
            self.rig = rig
            self.rig_path = Path(rig.file) if rig.file else None
        self.require_devices = bool(require_devices) or self.rig.require_devices
        self._outbox_dir = outbox_dir
        self.say = say or (lambda line: None)
        self.run_id: str | None = None
        self.outbox: Outbox | None = None
        self.evidence: Evidence | None = None
        self.results: list[CaseResult] = []
        self.selected = 0            # cases the front-end selected (0 = nothing to test)
        self.started_utc: str | None = None
        self._t0 = 0.0
        self.wall_s = 0.0
        self._lock: RunLock | None = None
        self._finished = False
        self.report_path: Path | None = None   # the HTML run report, once written
        self.report_problem: str | None = None  # why it was not written
        # Other files the report links to, by label (e.g. {"Robot log": Path(".../log.html")}):
        # the front-end sets them before the run ends; the report links them relative to itself.
        self.report_links: dict[str, Path] = {}
        self.place_request = place
        self.held_place: HeldPlace | None = None
        self.place_error: LabError | ConfigError | None = None   # the place could not be had: every case ERRORs

    # ------------------------------------------------------------------ life cycle

    def open(self) -> RunSession:
        if self.run_id is not None:
            return self
        outbox_dir, evidence_dir = results_dirs(self.rig)
        self.outbox = Outbox(self._outbox_dir or outbox_dir)
        self.run_id = new_run_id()
        self._lock = self.outbox.hold(self.run_id)  # not shipped while this run writes it
        self.started_utc = iso_utc(utc_now())
        self._t0 = time.monotonic()
        self.evidence = Evidence(evidence_dir, self.run_id, rig_path=self.rig_path,
                                 rig_name=self.rig.name)
        if self.place_request is not None:
            self._hold_place(self.place_request, self.run_id)
        log.info("run %s opened on rig %s (%s)%s; outbox %s, evidence %s", self.run_id,
                 self.rig.name, self.rig_path, ", devices required" if self.require_devices else "",
                 self.outbox.file_for(self.run_id), self.evidence.path)
        return self

    def _hold_place(self, request: PlaceRequest, run_id: str) -> None:
        """Reserve and acquire the place; its devices become the rig's. A place that cannot
        be had is remembered: every case of the run is then an ERROR saying why."""
        try:
            from .lab.reserve import hold_place
        except ImportError as exc:   # labgrid (the lab extra) is not installed
            self.place_error = ConfigError(f"a run on a lab place needs labgrid: pip install 'hilrig[lab]' ({exc})")
            self.say(f"hilrig lab: {self.place_error}")
            return
        self.say(f"hilrig lab: reserving {request.describe()} at {request.coordinator} "
                 f"(deadline {request.timeout_s:g} s)")
        try:
            held = hold_place(request, run_id, self.say)
        except (LabError, ConfigError) as exc:
            self.place_error = exc
            self.say(f"hilrig lab: {exc}")
            return
        self.held_place = held
        self.rig = dataclasses.replace(self.rig, name=held.rig_name, devices=held.devices)
        self.say(f"hilrig lab: place {held.name} on {held.rig_host} held as {held.holder} "
                 f"after {held.waited_s:.1f} s"
                 + (f"; its cases run on {held.runs_on}" if held.runs_on is not None else ""))

    @property
    def place_name(self) -> str | None:
        if self.held_place is not None:
            return self.held_place.name
        if self.place_request is None:
            return None
        failed = self.place_error.place if isinstance(self.place_error, PlaceUnavailable) else None
        return failed or self.place_request.name

    def _release_place(self) -> None:
        """Give the place back (never raises); its `hilrig_place` row goes to the outbox."""
        held = self.held_place
        if held is None or held.released:
            return
        held_s = time.monotonic() - self._t0
        for line in held.release():
            self.say(line)
        if self.run_id is None or self.outbox is None:
            return
        from .lab.status import PlaceRow, place_point

        row = PlaceRow(name=held.name, rig_host=held.rig_host, tags=held.tags, holder=held.holder,
                       since_utc=held.heartbeat.record.since.isoformat(timespec="seconds"),
                       heartbeat_age_s=held.heartbeat.record.age_s(), available=True, why_unavailable=None,
                       reserved_by=None)
        try:
            self.outbox.append_points(self.run_id, [place_point(row, reservation_wait_s=held.waited_s,
                                                                held_s=held_s, run_id=self.run_id)])
        except InfrastructureError as exc:
            self.say(f"hilrig results: {exc}")

    def __enter__(self) -> RunSession:
        try:
            return self.open()
        except BaseException:   # a Ctrl-C once the place is held: __exit__ will not run
            self._release_place()
            raise

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        # After an interrupt nothing is shipped (no waiting on a server); the next run or
        # `hilrig results push` does it. The verdicts are final either way.
        if exc_type is None:
            self.close()
        else:
            self.finish(report=not issubclass(exc_type, KeyboardInterrupt))

    def close(self) -> None:
        """The end of a run that was not interrupted: finish(), then ship and say how it went."""
        self.finish()
        for line in self.ship():
            self.say(line)

    def finish(self, *, report: bool = True) -> None:
        """Stamp the evidence, append the run row, release the outbox file, write the HTML
        report. Idempotent. report=False (Ctrl-C, SIGTERM: the prompt comes back at once,
        not after seconds of plotting) leaves the report to `hilrig report <run_id>`, which
        writes the same page from the evidence, and says so."""
        if self._finished or self.run_id is None:
            return
        self._finished = True
        self.wall_s = time.monotonic() - self._t0
        log.info("run %s finished: %s", self.run_id, self.tally())
        try:
            if self.results:
                # Each sink on its own: a full evidence disk must not cost the run row, nor the reverse.
                for write in (self._append_run_row, self._finish_evidence):
                    try:
                        write()
                    except InfrastructureError as exc:
                        self.say(f"hilrig results: {exc}")
        finally:
            self._release_place()
            if self._lock is not None:
                self._lock.release()
        if self.results and self.evidence is not None and self.evidence.path.is_file():
            if report:
                self.write_report()
            else:
                self.report_problem = "interrupted"
                self.say(f"hilrig report: not written (interrupted); `hilrig report {self.run_id}` "
                         "writes it from the evidence")

    # A run this big says that its report takes a moment (one plot per case, ~0.1 s each).
    SLOW_REPORT_CASES = 50

    def write_report(self) -> Path | None:
        """Write the HTML run report of the finished evidence file; its path, or None with
        `report_problem` set and printed. Never raises: the verdicts and results stand."""
        n = len(self.results)
        if n >= self.SLOW_REPORT_CASES:
            self.say(f"hilrig report: writing the HTML report of {n} cases (a plot each) ...")
        t0 = time.monotonic()
        try:
            from .reports import write_run_report
            from .reports.html import default_report_path

            run_id, _, evidence = self._opened()
            out = default_report_path(evidence.path, run_id)
            links = {label: os.path.relpath(Path(target).resolve(), out.parent)
                     for label, target in self.report_links.items()}
            self.report_path = write_run_report(evidence.path, out, links=links)
        except Exception as exc:  # any problem of the report (templates, plots, disk) is only the report's
            log.debug("run %s: the HTML report was not written", self.run_id, exc_info=True)
            self.report_problem = f"{type(exc).__name__}: {exc}"
            self.say(f"hilrig report: not written ({self.report_problem}); "
                     f"`hilrig report {self.run_id}` retries it from the evidence")
            return None
        took_s = time.monotonic() - t0
        log.info("run %s: HTML report %s written in %.1f s", self.run_id, self.report_path, took_s)
        if took_s > 5:
            self.say(f"hilrig report: the HTML report took {took_s:.0f} s")
        return self.report_path

    def _opened(self) -> tuple[str, Outbox, Evidence]:
        """The open run's id, outbox and evidence (open() makes them)."""
        if self.run_id is None or self.outbox is None or self.evidence is None:
            raise InfrastructureError("the run session is not open")
        return self.run_id, self.outbox, self.evidence

    def _append_run_row(self) -> None:
        run_id, outbox, _ = self._opened()
        outbox.append_run_summary(run_id, self.rig.name, [r.verdict for r in self.results], self.started_utc,
                                  iso_utc(utc_now()), place=self.place_name)

    def _finish_evidence(self) -> None:
        _, _, evidence = self._opened()
        evidence.finish(nothing_tested=self.nothing_tested)

    def ship(self) -> list[str]:
        """Ship the outbox if the rig names a server; console lines, never raises."""
        from .results.influx import ship_after_run

        return ship_after_run(self.rig, self.outbox.path) if self.outbox is not None else []

    # ------------------------------------------------------------------ cases

    def select(self, cases: Sequence[Case], selection: Selection | None = None) -> list[Case]:
        """The cases of `cases` that `selection` takes; counted as this run's selection."""
        chosen = (selection or Selection()).apply(cases)
        self.selected += len(chosen)
        return chosen

    def run(self, case: Case, progress: Callable[[dict[str, float]], None] | None = None) -> CaseResult:
        """Run one case on the rig and record it in the outbox and evidence."""
        from . import engine  # looked up per call: tests stand in for engine.run_case

        self.open()
        started = iso_utc(utc_now())
        if self.place_error is not None:   # no place, no devices: nothing was measured
            kind = ErrorKind.CONFIG if isinstance(self.place_error, ConfigError) else ErrorKind.INFRASTRUCTURE
            return self.record(self.error_result(case, started, kind, str(self.place_error)))
        log.debug("case %s (%s) on device %s", case.test_name, case.location, case.device)
        runs_on = self.held_place.runs_on if self.held_place is not None else None
        if runs_on is not None:
            return self.record(self._run_on(runs_on, case, started, progress))
        try:
            # run_case turns every device, rig and set-up problem into the verdict itself;
            # what escapes it is a bug: recorded as an ERROR, then raised for the front-end.
            search_say = {"say": self.say} if case.search is not None else {}  # a search tells its steps
            result = engine.run_case(case, self.rig, run_id=self._opened()[0], progress=progress,
                                     require_devices=self.require_devices, **search_say)
        except Exception as exc:
            self.record(self.error_result(case, started, ErrorKind.INFRASTRUCTURE,
                                          f"internal: {type(exc).__name__}: {exc}"))
            raise
        return self.record(result)

    def _run_on(self, host: RigHost, case: Case, started: str,
                progress: Callable[[dict[str, float]], None] | None) -> CaseResult:
        """The case run by the place's rig host (hostlib.lab.remote); a host that gives no
        result is an ERROR naming it, with where it keeps what it measured."""
        try:
            return host.run_case(case, self._opened()[0], require_devices=self.require_devices,
                                 progress=progress, say=self.say)
        except ConfigError as exc:
            return self.error_result(case, started, ErrorKind.CONFIG, str(exc))
        except RigHostError as exc:
            return self.error_result(case, started, ErrorKind.INFRASTRUCTURE, str(exc))

    def record(self, result: CaseResult) -> CaseResult:
        """Save a result to the outbox and evidence. A result that cannot be saved is an
        ERROR (infrastructure): a run whose results are lost is not a pass."""
        self.open()
        if self.place_request is not None:
            result.place = self.place_name
            result.rig_host = self.held_place.rig_host if self.held_place is not None else None
        self._save_rf_capture(result)
        try:
            save_result(result, outbox=self.outbox, evidence=self.evidence)
        except InfrastructureError as exc:
            result.set_error(ErrorKind.INFRASTRUCTURE, f"{exc} (measured: {result.message})")
            result.message = summary_line(result)
        if not result.verdict.failure:
            result.rf_capture = None   # a pass's capture is not kept (its spectrum is in the evidence)
        self.results.append(result)
        log.info("%s: %s", result.case.test_name, result.message)
        return result

    def _save_rf_capture(self, result: CaseResult) -> None:
        """A FAIL or ERROR that has an RF capture: the capture as a SigMF recording in the
        run's folder beside its evidence file (`<evidence dir>/<run_id>/`), said on the
        console and named in the evidence (rf_sigmf, relative to the evidence folder). A
        recording that cannot be written is said and costs nothing else."""
        if result.rf_capture is None or not result.verdict.failure or self.evidence is None:
            return
        from .results.sigmf import write_capture_sigmf

        folder = self.evidence.directory
        try:
            path = write_capture_sigmf(result, folder / self._opened()[0])
        except InfrastructureError as exc:
            self.say(f"hilrig rf: {result.case.test_name}: SigMF recording not written ({exc})")
            return
        result.rf_sigmf = path.relative_to(folder).as_posix()
        self.say(f"hilrig rf: {result.case.test_name}: capture saved as SigMF {path}")

    def error_result(self, case: Case, started: str, kind: ErrorKind, text: str) -> CaseResult:
        device = self.rig.devices.get(case.device)
        result = CaseResult(
            case=case, rig_name=self.rig.name, device=case.device,
            driver=device.driver if device is not None else "", run_id=self.run_id or "", started_utc=started,
            ended_utc=iso_utc(utc_now()), verdict=Verdict.ERROR, error=text, error_kind=kind,
        )
        result.message = summary_line(result)
        return result

    # ------------------------------------------------------------------ summary

    def counts(self) -> Counter:
        return Counter(r.verdict for r in self.results)

    @property
    def nothing_tested(self) -> bool:
        """No case executed: none selected, or every one SKIPped."""
        return not any(r.verdict.executed for r in self.results)

    def nothing_tested_reason(self) -> str:
        if not self.results:
            return ("nothing was tested: no case selected" if not self.selected
                    else f"nothing was tested: {self.selected} case(s) selected, none ran")
        skips = [r for r in self.results if r.verdict is Verdict.SKIP]
        first = skips[0].message if skips else ""
        return (f"nothing was tested: all {len(skips)} selected case(s) SKIPped "
                f"(first: {first})")

    @property
    def exit_code(self) -> int:
        worst = max((r.exit_code for r in self.results), default=0)
        if worst == 0 and self.nothing_tested:
            return EXIT_NOTHING_TESTED
        return worst

    def tally(self) -> str:
        """'3 PASS, 1 MARGINAL, 0 FAIL, 0 ERROR, 2 SKIP in 12.3 s'."""
        counts = self.counts()
        wall = self.wall_s or (time.monotonic() - self._t0 if self._t0 else 0.0)
        return ", ".join(f"{counts.get(v, 0)} {v.value}" for v in TALLY_ORDER) + f" in {wall:.1f} s"

    def result_paths(self) -> str:
        if self.run_id is None or self.outbox is None or self.evidence is None:
            return "no results written"
        return f"{self.outbox.file_for(self.run_id)} (outbox), {self.evidence.path} (evidence)"

    def report_line(self) -> str | None:
        """'hilrig report: <path>' once the run's HTML report is written (None before, when the
        run wrote no result, or when it failed: write_report said why). Printed after the result paths."""
        return f"hilrig report: {self.report_path}" if self.report_path is not None else None
