"""firmware/images.yaml and `hilrig rig check` comparing devices with it."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from hostlib.reference import FRAME_VERSION
from hostlib.rig import load_rig
from hostlib.rig.images import MANIFEST_NAME, compare_images, load_images, rtl_tree_hash
from hostlib.rig.probe import Found

REPO = Path(__file__).resolve().parents[2]


def test_manifest_names_the_current_rtl():
    fpga = [im for im in load_images() if im.rtl_git_hash]
    assert fpga, "an FPGA image is listed"
    assert fpga[0].rtl_git_hash == rtl_tree_hash(), \
        "firmware/rtl changed: run `python -m hostlib.rig.images --update` and bump the image version"
    assert all(im.frame_format_version == FRAME_VERSION for im in load_images())


def test_image_parameters_are_loopback_top_defaults():
    src = (REPO / "firmware" / "rtl" / "loopback_top.v").read_text()
    defaults = dict(re.findall(r"parameter integer (\w+) = (\d+)", src))
    image = next(im for im in load_images() if im.image == "hilrig-loopback-ice40")
    fmt = {"sc16": "1", "sc8": "2"}
    assert {k: fmt.get(str(v), str(v)) for k, v in image.parameters.items()} == defaults


def test_compare_says_what_differs(tmp_path):
    rig_file = tmp_path / "fpga.yaml"
    rig_file.write_text("name: fpga\ndevices:\n"
                        "  old: {driver: soapy, args: {driver: hilrig-fpga, serial: A}, max_rate: 1 GS/s}\n"
                        "  mute: {driver: soapy, args: {driver: hilrig-fpga, serial: B}, max_rate: 1 GS/s}\n"
                        "  good: {driver: soapy, args: {driver: hilrig-fpga, serial: C}, max_rate: 1 GS/s}\n")
    rig = load_rig(rig_file)
    found = {"old": Found("soapy", {"driver": "hilrig-fpga", "serial": "A", "fpga_version": "0.0.9"}),
             "mute": Found("soapy", {"driver": "hilrig-fpga", "serial": "B"}),
             "good": Found("soapy", {"driver": "hilrig-fpga", "serial": "C", "fpga_version": "0.1.0"})}
    rows = {r.alias: r for r in compare_images(rig, found, load_images())}
    assert not rows["old"].ok and "expects hilrig-loopback-ice40 0.1.0" in rows["old"].detail
    assert "the device reports fpga_version=0.0.9" in rows["old"].detail
    assert not rows["mute"].ok and "reports no fpga_version" in rows["mute"].detail
    assert rows["good"].ok and "frame format v1" in rows["good"].detail


def test_rig_check_reports_the_simulator_image(tmp_path):
    rig = tmp_path / "sim_only.yaml"
    rig.write_text("name: sim_only\ndevices:\n  a: {driver: sim, max_rate: 1 GS/s}\n")
    py = str(REPO / ".venv" / "bin" / "python") if (REPO / ".venv").exists() else sys.executable
    res = subprocess.run([py, "-m", "hostlib", "rig", "check", str(rig)], cwd=REPO, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "IMAGE OK a: runs hilrig-sim 0.1.0 (frame format v1)" in res.stdout, res.stdout
    assert f"{MANIFEST_NAME}: 1 of 1 device(s) run the listed image" in res.stdout
