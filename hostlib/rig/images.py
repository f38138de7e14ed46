"""The firmware image manifest (firmware/images.yaml) and how `hilrig rig check` compares a
rig's devices with it: the version each device reports against the image for its driver."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ruamel.yaml import YAML

from .._exceptions import ConfigError
from .inventory import DeviceEntry, Rig
from .probe import Found

__all__ = [
    "MANIFEST_NAME",
    "Image",
    "ImageRow",
    "compare_images",
    "image_rows",
    "load_images",
    "manifest_path",
    "reported_version",
    "rtl_tree_hash",
    "sim_hello",
]

MANIFEST_NAME = "images.yaml"
# keys a driver may report the running image's version under, most specific first
VERSION_KEYS = ("fpga_version", "fpga", "fw_version", "firmware_version", "version")


def manifest_path() -> Path | None:
    """The lab checkout's manifest: $HILRIG_FIRMWARE_MANIFEST, else ./firmware/images.yaml;
    None outside a checkout (an installed hilrig has no firmware tree to compare with)."""
    env = os.environ.get("HILRIG_FIRMWARE_MANIFEST")
    path = Path(env) if env else Path.cwd() / "firmware" / MANIFEST_NAME
    return path if path.is_file() else None


def _required_manifest() -> Path:
    path = manifest_path()
    if path is None:
        raise ConfigError("no firmware/images.yaml here: run from the hilrig checkout or set $HILRIG_FIRMWARE_MANIFEST")
    return path


@dataclass(frozen=True)
class Image:
    image: str
    version: str
    frame_format_version: int
    devices: dict[str, object]            # {driver: ..., args: {...}}: which rig devices run it
    reported_as: str                      # the key the device reports the version under
    rtl_git_hash: str | None = None
    parameters: dict[str, object] = field(default_factory=dict)

    def applies_to(self, entry: DeviceEntry) -> bool:
        if self.devices.get("driver") != entry.driver:
            return False
        if self.devices.get("firmware") != entry.firmware:   # the simulator's device core
            return False
        want = self.devices.get("args") or {}
        if not isinstance(want, dict):
            return False
        given = {k: str(v) for k, v in entry.args.given().items()}
        return all(given.get(k) == str(v) for k, v in want.items())


def load_images(path: Path | None = None) -> list[Image]:
    path = path or _required_manifest()
    data = YAML(typ="safe").load(Path(path).read_text())
    images = []
    for i, raw in enumerate((data or {}).get("images") or []):
        missing = [k for k in ("image", "version", "frame_format_version", "devices", "reported_as") if k not in raw]
        if missing:
            raise ConfigError(f"{path}: images[{i}]: missing {', '.join(missing)}")
        images.append(Image(image=str(raw["image"]), version=str(raw["version"]),
                            frame_format_version=int(raw["frame_format_version"]), devices=dict(raw["devices"]),
                            reported_as=str(raw["reported_as"]), rtl_git_hash=raw.get("rtl_git_hash"),
                            parameters=dict(raw.get("parameters") or {})))
    return images


def rtl_tree_hash(rtl_dir: Path | None = None) -> str:
    """The git tree hash of a flat directory of regular files, from the working copy
    (equals `git rev-parse HEAD:firmware/rtl` once committed); default: rtl/ beside the manifest."""
    rtl_dir = rtl_dir or _required_manifest().parent / "rtl"
    entries = b""
    for p in sorted(Path(rtl_dir).iterdir(), key=lambda p: p.name):
        data = p.read_bytes()
        blob = hashlib.sha1(b"blob %d\0" % len(data) + data).digest()
        entries += b"100644 " + p.name.encode() + b"\0" + blob
    return hashlib.sha1(b"tree %d\0" % len(entries) + entries).hexdigest()


def reported_version(found: Found, firmware: str | None = None, key: str = "version") -> tuple[str, str] | None:
    """(key, version) the device reports, or None. The simulator is asked (`hello`, run with
    --firmware when the rig entry names its device core; key: the image's reported_as)."""
    if found.kind == "sim":
        hello = sim_hello(found, firmware)
        return (key, str(hello[key])) if hello and key in hello else None
    for k in VERSION_KEYS:
        if found.args.get(k) not in (None, ""):
            return k, str(found.args[k])
    return None


def sim_hello(found: Found, firmware: str | None = None) -> dict[str, object] | None:
    """The simulator's `hello` answer (its version, and the RTL image it runs), None if it cannot say."""
    try:
        out = subprocess.run([found.args["binary"], *(["--firmware", firmware] if firmware else [])],
                             input='{"cmd": "hello"}\n', capture_output=True, text=True, timeout=10)
        hello = json.loads(out.stdout.splitlines()[0])
        return hello if isinstance(hello, dict) else None
    except (OSError, subprocess.SubprocessError, ValueError, KeyError, IndexError):
        return None


@dataclass
class ImageRow:
    alias: str
    ok: bool
    detail: str


def image_rows(rig: Rig, found_by_alias: dict[str, Found], manifest: Path | None = None) -> list[ImageRow]:
    """`hilrig rig check`: the attached devices (each rig device's match, as check_rig found
    it) against the manifest; none without a manifest (manifest_path())."""
    manifest = manifest or manifest_path()
    if manifest is None:
        return []
    return compare_images(rig, found_by_alias, load_images(manifest))


def compare_images(rig: Rig, found_by_alias: dict[str, Found], images: list[Image]) -> list[ImageRow]:
    """One row per attached rig device that an image applies to."""
    rows = []
    for alias, entry in sorted(rig.devices.items()):
        image = next((im for im in images if im.applies_to(entry)), None)
        found = found_by_alias.get(alias)
        if image is None or found is None:
            continue
        firmware = entry.firmware
        got = reported_version(found, firmware, image.reported_as) if found.kind == "sim" else reported_version(found)
        want = f"{image.image} {image.version} (frame format v{image.frame_format_version}"
        want += f", rtl {image.rtl_git_hash[:12]})" if image.rtl_git_hash else ")"
        # The RTL in the simulator also says which RTL it was built from.
        hello = sim_hello(found, firmware) if found.kind == "sim" and firmware == "rtl" else None
        rtl_hash = str((hello or {}).get("rtl_git_hash") or "")
        if got is None:
            rows.append(ImageRow(alias, False, f"expects {want}; the device reports no {image.reported_as}"))
        elif got[1] != image.version:
            rows.append(ImageRow(alias, False, f"expects {want}; the device reports {got[0]}={got[1]}"))
        elif image.rtl_git_hash and rtl_hash and rtl_hash != image.rtl_git_hash:
            rows.append(ImageRow(alias, False,
                                 f"expects {want}; the device reports rtl_git_hash={rtl_hash[:12]}"))
        else:
            rows.append(ImageRow(alias, True, f"runs {want}"))
    return rows


def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(description="firmware/images.yaml: show, or --update the RTL hash")
    ap.add_argument("--update", action="store_true", help="write the current firmware/rtl tree hash")
    args = ap.parse_args(argv)
    manifest = _required_manifest()
    current = rtl_tree_hash()
    text = manifest.read_text()
    if args.update:
        import re
        manifest.write_text(re.sub(r"(rtl_git_hash: )[0-9a-f]{40}", rf"\g<1>{current}", text))
        print(f"{manifest}: rtl_git_hash {current}")
        return 0
    for im in load_images():
        print(f"{im.image} {im.version} frame format v{im.frame_format_version} "
              f"rtl {im.rtl_git_hash or '-'}{' (current)' if im.rtl_git_hash == current else ''}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
