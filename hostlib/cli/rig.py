"""`hilrig rig probe` and `hilrig rig check RIG`."""
from __future__ import annotations

import argparse

from ..drivers.probe import check_rig, found_by_alias, probe_all
from ..rig import load_rig, resolve_rig_path


def add_parser(sub) -> None:
    rig = sub.add_parser("rig", help="what is attached (probe) and whether it matches a rig file (check)")
    rsub = rig.add_subparsers(dest="rig_command", required=True)
    rsub.add_parser("probe", help="list UHD devices, SoapySDR devices and the simulator on this host")
    chk = rsub.add_parser("check", help="compare what is attached with a rig file and firmware/images.yaml; "
                                        "exit 1 if a device runs another image, or is missing on a rig with "
                                        "require_devices: true")
    chk.add_argument("rig", help="rig name (rigs/<name>.yaml) or path")


def rig_command(args: argparse.Namespace) -> int:
    found = probe_all()
    if args.rig_command == "probe":
        for f in found.found:
            print(f.line())
        for p in found.problems:
            print(f"note: {p}")
        for kind, library in (("uhd", "UHD"), ("soapy", "SoapySDR")):
            if not any(f.kind == kind for f in found.found) and not any(library in p for p in found.problems):
                print(f"{kind:5s} no {library} device found")
        return 0
    rig = load_rig(resolve_rig_path(args.rig))
    rows = check_rig(rig, found)
    for r in rows:
        print(f"{'OK     ' if r.ok else 'MISSING'} {r.alias} ({r.driver}): {r.detail}")
    for p in found.problems:
        print(f"note: {p}")
    missing = sum(not r.ok for r in rows)
    print(f"{rig.file}: {len(rows) - missing} of {len(rows)} device(s) attached")
    from ..rig.images import MANIFEST_NAME, image_rows
    images = image_rows(rig, found_by_alias(rows))
    for image in images:
        print(f"{'IMAGE OK' if image.ok else 'IMAGE DIFFERS'} {image.alias}: {image.detail}")
    differs = sum(not image.ok for image in images)
    if images:
        print(f"{MANIFEST_NAME}: {len(images) - differs} of {len(images)} device(s) run the listed image")
    if missing and not rig.require_devices:
        # A rig that does not require its devices (the simulator rig lists a USRP that CI has
        # not got) runs fine without them: their cases SKIP. Only a hardware bench fails here.
        print("the rig does not set require_devices: cases on missing devices SKIP; not a failure")
        missing = 0
    return 1 if missing or differs else 0
