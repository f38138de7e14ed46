"""`hilrig lab ...`: many rigs, one lab (docs/scale-out.md).

    hilrig lab exporter-config rigs/b210.yaml --place b210-1 [--ssh hilrig@righost1] -o exporter.yaml
    hilrig lab register rigs/b210.yaml --place b210-1 --exporter righost1
    hilrig lab exporter -c COORDINATOR:20408 -n righost1 exporter.yaml
    hilrig lab status              # places, holders, what is unavailable
    hilrig lab janitor             # free the places whose holder's heartbeat is older than its lease
    hilrig lab nightly --places b210-1 x310-1 testcases/    # the suite once per place, in parallel (pabot)

And `hilrig run --place NAME | --place-tags k=v,channels>=2 [--place-timeout S]`.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..lab.place import DEFAULT_LEASE_S, DEFAULT_PLACE_TIMEOUT_S, PlaceRequest, place_request

if TYPE_CHECKING:   # the gRPC client is imported only by the commands that talk to the lab
    from ..lab.coordinator import LabClient

COORDINATOR_HELP = "labgrid coordinator HOST:PORT (default: $LG_COORDINATOR, else 127.0.0.1:20408)"


def add_place_options(p: argparse.ArgumentParser) -> None:
    """The options that run a front-end on a lab place (hilrig run; pytest and Robot have their own names)."""
    p.add_argument("--place", help="run on this labgrid place (reserved, locked, released at the end)")
    p.add_argument("--place-tags", metavar="TERMS",
                   help="run on a place that has these: driver=sim,channels>=2,max_rate>=61.44 MS/s,"
                        "transport=usb3 (capabilities), or any labgrid tag key=value")
    p.add_argument("--place-timeout", type=float, metavar="S",
                   help=f"give up reserving after S seconds: ERROR (infrastructure) naming the holder "
                        f"(default {DEFAULT_PLACE_TIMEOUT_S:g})")
    p.add_argument("--lease", type=float, metavar="S", dest="lease_s",
                   help=f"the lease: the janitor frees the place when our heartbeat is older "
                        f"(default {DEFAULT_LEASE_S:g})")
    p.add_argument("--coordinator", help=COORDINATOR_HELP)


def place_request_of(args: argparse.Namespace) -> PlaceRequest | None:
    return place_request(args.place, args.place_tags, timeout_s=args.place_timeout,
                         coordinator=args.coordinator, lease_s=args.lease_s)


def add_parser(sub: argparse._SubParsersAction) -> None:
    lab = sub.add_parser("lab", help="many rigs, one lab: exporters, places, status, janitor, nightly (labgrid)")
    lsub = lab.add_subparsers(dest="lab_command", required=True)

    cfg = lsub.add_parser("exporter-config", help="write the labgrid exporter YAML of a rig file's devices")
    cfg.add_argument("rig", help="rig name (rigs/<name>.yaml) or path")
    cfg.add_argument("--place", required=True, help="the place (labgrid group) the devices make")
    cfg.add_argument("--devices", help="comma-separated aliases (default: every device of the rig)")
    cfg.add_argument("--probe-interval", type=float, default=1.0, metavar="S",
                     help="ask the driver whether each device is attached at most every S seconds (default 1)")
    cfg.add_argument("--ssh", metavar="DEST",
                     help="runs on this place execute on this host: clients reach it with `ssh DEST` "
                          "([user@]host or a Host of their ssh config; keys, never a password)")
    cfg.add_argument("--hilrig", metavar="CMD", default="",
                     help="with --ssh: the command that runs hilrig here (default: this Python -m hostlib)")
    cfg.add_argument("--checkout", metavar="DIR", default="",
                     help="with --ssh: the checkout case files are found in (default: the working directory)")
    cfg.add_argument("-o", "--output", help="write here (default: standard output)")

    rc = lsub.add_parser("run-case", help="run one case here for a client that holds the place "
                                          "(what a client runs over ssh; JSON lines on stdout)")
    rc.add_argument("--rig", required=True, help="the rig file here")
    rc.add_argument("--run-id", required=True, help="the client's run id")
    rc.add_argument("--file", required=True, help="the case file, relative to this checkout")
    rc.add_argument("--sha256", default="", help="refuse a case file that differs from the client's")
    rc.add_argument("--case", required=True, help="the case's test name, with its [sweep point]")
    rc.add_argument("--require-devices", action="store_true")

    reg = lsub.add_parser("register", help="create the place on the coordinator, match its exporter's devices, "
                                          "tag it with what they offer (idempotent)")
    reg.add_argument("rig", help="rig name (rigs/<name>.yaml) or path")
    reg.add_argument("--place", required=True)
    reg.add_argument("--exporter", required=True, help="the exporter's name (labgrid-exporter -n)")
    reg.add_argument("--devices", help="comma-separated aliases (default: every device of the rig)")
    reg.add_argument("--tag", action="append", default=[], metavar="KEY=VALUE", help="a further labgrid tag")
    reg.add_argument("--coordinator", help=COORDINATOR_HELP)

    exp = lsub.add_parser("exporter", help="run labgrid's exporter with hilrig devices (labgrid-exporter's options)")
    exp.add_argument("exporter_args", nargs=argparse.REMAINDER,
                     help="-c COORDINATOR:PORT -n NAME [--hostname H] EXPORTER.yaml")

    st = lsub.add_parser("status", help="the places at a glance: holder, since, heartbeat, availability")
    st.add_argument("--coordinator", help=COORDINATOR_HELP)
    st.add_argument("--outbox", help="also append a hilrig_place row per place to this outbox folder")

    jan = lsub.add_parser("janitor", help="release every place whose holder's heartbeat is older than its lease "
                                          "(for cron or a systemd timer)")
    jan.add_argument("--coordinator", help=COORDINATOR_HELP)
    jan.add_argument("--lease", type=float, metavar="S", dest="lease_s",
                     help="judge every lease by S seconds (default: each holder's own lease)")

    ngt = lsub.add_parser("nightly", help="run the Robot suite once per place in parallel with pabot")
    ngt.add_argument("suite", nargs="*", default=["testcases/"], help="Robot suite(s) (default testcases/)")
    ngt.add_argument("--places", nargs="+", default=[], help="place names")
    ngt.add_argument("--places-file", help="a file with one place name a line (# comments)")
    ngt.add_argument("--coordinator", help=COORDINATOR_HELP)
    ngt.add_argument("--rig", help="the rig file whose results section the runs use (default: $HILRIG_RIG, sim)")
    ngt.add_argument("--place-timeout", type=float, default=DEFAULT_PLACE_TIMEOUT_S, metavar="S")
    ngt.add_argument("--process-timeout", type=float, default=4 * 3600.0, metavar="S",
                     help="pabot kills a place's run after S seconds (a hung rig cannot hold the night)")
    ngt.add_argument("--outputdir", default="results/nightly-lab")
    ngt.add_argument("robot_args", nargs=argparse.REMAINDER, help="after --: more robot options for every place")


def lab_command(args: argparse.Namespace) -> int:
    cmd = args.lab_command
    if cmd == "exporter-config":
        return _exporter_config(args)
    if cmd == "run-case":
        from ..lab.remote import run_case_here

        return run_case_here(args.rig, args.run_id, args.file, args.sha256, args.case, args.require_devices)
    if cmd == "nightly":
        from ..lab.nightly import NightlyOptions, read_places_file, run_nightly

        places = [*args.places, *(read_places_file(Path(args.places_file)) if args.places_file else [])]
        out = Path(args.outputdir)
        code, night = run_nightly(NightlyOptions(places=tuple(places), suites=tuple(args.suite),
                                                 coordinator=args.coordinator, rig=args.rig,
                                                 place_timeout_s=args.place_timeout,
                                                 process_timeout_s=args.process_timeout, outputdir=out,
                                                 robot_args=tuple(a for a in args.robot_args if a != "--")), print)
        return _night_report(out, night, code)
    from ..lab.coordinator import LabClient

    with LabClient(args.coordinator) as lab:
        if cmd == "register":
            return _register(lab, args)
        if cmd == "status":
            return _status(lab, args)
        if cmd == "janitor":
            from ..lab.janitor import Outcome, sweep

            actions = sweep(lab, args.lease_s)
            for action in actions:
                print(action.line())
            if not actions:
                print("no place carries a hilrig lease")
            return 1 if any(a.outcome is Outcome.FAILED for a in actions) else 0
    return 2


def _night_report(out: Path, night: str, code: int) -> int:
    """The night's one report from pabot's merged output; the runs' own reports and the
    outbox stand without it, so a report that cannot be written is said, not raised."""
    from .._exceptions import HilrigError
    from ..reports.night import write_night_report

    try:
        report = write_night_report(out / "output.xml", out / f"night-{night}.html")
    except HilrigError as exc:
        print(f"hilrig lab nightly: the night's report was not written: {exc}")
        return code or 1
    print(f"hilrig report: {report}")
    return code


def _devices(text: str | None) -> list[str]:
    return [d.strip() for d in (text or "").split(",") if d.strip()]


def _exporter_config(args: argparse.Namespace) -> int:
    from ..lab.exporter import exporter_config
    from ..lab.place import RunsOn
    from ..rig import load_rig, resolve_rig_path

    if (args.hilrig or args.checkout) and not args.ssh:
        print("hilrig lab exporter-config: --hilrig and --checkout go with --ssh", file=sys.stderr)
        return 2
    runs_on = RunsOn(args.ssh, args.hilrig, str(Path(args.checkout).resolve()) if args.checkout else "") \
        if args.ssh else None
    text = exporter_config(load_rig(resolve_rig_path(args.rig)), args.place, _devices(args.devices),
                           args.probe_interval, runs_on)
    if args.output:
        Path(args.output).write_text(text)
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _register(lab: LabClient, args: argparse.Namespace) -> int:
    from ..lab.exporter import place_matches
    from ..lab.place import Capabilities, ExportedDevice, parse_place_tags
    from ..rig import load_rig, resolve_rig_path

    rig = load_rig(resolve_rig_path(args.rig))
    aliases = _devices(args.devices) or sorted(rig.devices)
    rig_file = str(Path(rig.file).resolve())
    tags = Capabilities.of(ExportedDevice.of(rig_file, rig.devices[a]) for a in aliases if a in rig.devices).tags()
    for term in parse_place_tags(",".join(args.tag), "--tag") if args.tag else ():
        tags[term.key] = term.text
    lab.ensure_place(args.place, place_matches(args.exporter, args.place), {k: v for k, v in tags.items() if v})
    print(f"place {args.place}: matches {', '.join(place_matches(args.exporter, args.place))}; "
          f"tags {', '.join(f'{k}={v}' for k, v in sorted(tags.items()) if v)}")
    return 0


def _status(lab: LabClient, args: argparse.Namespace) -> int:
    from ..lab.status import place_point, status_rows

    rows = status_rows(lab)
    for row in rows:
        print(row.line())
    if not rows:
        print(f"the coordinator {lab.address} has no places")
    held = sum(r.holder is not None for r in rows)
    down = sum(not r.available for r in rows)
    print(f"{len(rows)} place(s): {held} held, {len(rows) - held} free, {down} unavailable")
    if args.outbox:
        from ..results import Outbox, new_run_id

        path = Outbox(args.outbox).append_points(new_run_id(), [place_point(r) for r in rows])
        print(f"hilrig_place rows: {path}")
    return 0
