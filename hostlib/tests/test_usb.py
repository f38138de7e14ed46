"""USB transport (docs/usb.md): `transport: {kind: usb}` in cases, `driver: usb` rig
entries with their fix-it validation, UHD's frame args from the transport keys and
the B2xx rules, and the usb driver's SKIP when no board is plugged in. The libusb
path itself streams through umockdev in ctest (usb.umockdev.*)."""
from __future__ import annotations

import textwrap

import pytest

from hostlib._exceptions import ConfigError
from hostlib.rig.args import UsbArgs
from hostlib.tests.conftest import REPO, requires_native

USB_RIG = """
name: usb-bench
devices:
  board:
    driver: usb
    args: {vid_pid: "1209:4852", interface: 0, endpoint_in: 0x81, endpoint_out: 0x01}
    max_rate: 20 MS/s
    directions: [rx, tx, loopback]
  b210:
    driver: uhd
    args: {type: b200}
    channels: 2
    max_rate: 61.44 MS/s
    transports: [usb]
"""


@pytest.fixture
def usb_rig(tmp_path):
    from hostlib.rig import load_rig
    path = tmp_path / "usb.yaml"
    path.write_text(textwrap.dedent(USB_RIG))
    return load_rig(path)


def usb_case(write_case, device="board", direction="rx", transport="transfer_bytes: 16 KiB, transfers: 16",
             frame_bytes=8192):
    divider = "decimation" if direction != "tx" else "interpolation"
    return write_case(f"""
        name: usb {direction}
        device: {device}
        direction: {direction}
        master_clock: 64 MHz
        {divider}: 16
        transport: {{kind: usb, frame_bytes: {frame_bytes}, {transport}}}
        duration: 1 s
        thresholds: {{missing_frames: "== 0"}}
    """)[0]


# ------------------------------------------------------------------ the case's transport

def test_usb_transport_knobs_and_buffer_bytes(write_case):
    case = usb_case(write_case, transport="transfer_bytes: 16 KiB, buffer_bytes: 2 MiB, link: usb2")
    t = case.transport
    assert (t.kind, t.transfer_bytes, t.transfers, t.link, t.buffer_bytes) == ("usb", 16384, 128, "usb2", 2 * 1024**2)
    # What the case leaves out is the core's default (hilrig/config.hpp), not a second table.
    from hostlib import _native
    core = _native.default_stream_config("usb", 8192)["transport"]
    default = usb_case(write_case, transport="link: usb3")
    assert (default.transport.transfer_bytes, default.transport.transfers) == (core["transfer_bytes"], core["transfers"])
    assert default.transport_given == ("kind", "frame_bytes", "link")


@pytest.mark.parametrize("transport, field, text", [
    ("transfer_bytes: 16 KiB, buffer_bytes: 40000", "transport.buffer_bytes", "use 32768 or 49152"),
    ("transfer_bytes: 16 KiB, transfers: 4, buffer_bytes: 2 MiB", "transport.buffer_bytes", "give two of the three"),
    ("slots: 64", "transport.slots", "usb takes: frame_bytes, transfer_bytes, transfers, buffer_bytes, link"),
    ("link: usb4", "transport.link", "usb2"),
])
def test_usb_transport_mistakes_name_the_fix(write_case, transport, field, text):
    with pytest.raises(ConfigError) as exc:
        usb_case(write_case, transport=transport)
    assert field in str(exc.value) and text in str(exc.value), str(exc.value)


# ------------------------------------------------------------------ rig entries

def test_usb_rig_entry_defaults(usb_rig):
    board = usb_rig.devices["board"]
    assert board.driver == "usb" and board.transports == ("usb",)
    assert board.args == UsbArgs(vid_pid="1209:4852", interface=0, endpoint_in=0x81, endpoint_out=0x01,
                                 framing="packed", speed="high")


@pytest.mark.parametrize("args, text", [
    ("{interface: 0}", "needs args.vid_pid ('VVVV:PPPP', as lsusb shows it) or serial"),
    ('{vid_pid: "1209-4852"}', "args.vid_pid: VID:PID in hex as lsusb shows it"),
    ('{vid_pid: "1209:4852", endpoint_in: 0x01}', "args.endpoint_in: an IN endpoint address, 0x81..0x8f (bit 7 set)"),
    ('{vid_pid: "1209:4852", framing: zlp}', "args.framing"),
    ('{vid_pid: "1209:4852", vid: 1}', "args.vid: unknown field 'vid'; did you mean 'vid_pid'?"),
])
def test_usb_rig_entry_mistakes(tmp_path, args, text):
    from hostlib.rig import load_rig
    path = tmp_path / "bad.yaml"
    path.write_text(f"name: bad\ndevices:\n  board:\n    driver: usb\n    args: {args}\n    max_rate: 1 MS/s\n")
    with pytest.raises(ConfigError) as exc:
        load_rig(path)
    line = 3 if "needs" in text else 5   # the entry, or the key in its args
    assert f"{path}:{line}" in str(exc.value) and text in str(exc.value), str(exc.value)


@requires_native
def test_rig_check_of_a_usb_rig_says_what_is_missing():
    """`hilrig rig check usb_board` (a usb board, not plugged in here) answers with a row,
    not a traceback: the usb driver finds its board by the entry's match."""
    import subprocess
    import sys
    check = subprocess.run([sys.executable, "-m", "hostlib", "rig", "check", "usb_board"], cwd=REPO,
                           capture_output=True, text=True, timeout=120)
    assert "Traceback" not in check.stderr, check.stderr
    assert "MISSING board (usb): no usb device matching vid_pid=1209:4852" in check.stdout, check.stdout
    assert check.returncode == 0, check.stdout + check.stderr   # the rig does not require its devices


# ------------------------------------------------------------------ the usb driver

@requires_native
@pytest.mark.parametrize("transport, frame_bytes, direction, text", [
    ("transfer_bytes: 10000, transfers: 16", 5000, "rx",
     "not a multiple of the endpoint's max packet size 512 (a transfer that ends inside a packet ends the stream "
     "with a short packet): use 9728 or 10240"),
    ("transfer_bytes: 16 KiB, transfers: 16", 5000, "rx", "use frame_bytes 4096"),
    ("transfer_bytes: 1 MiB, transfers: 16", 8192, "loopback",
     "exceed the kernel's usbfs limit"),
])
def test_usb_driver_checks_geometry_before_looking_for_the_board(write_case, usb_rig, transport, frame_bytes,
                                                                  direction, text):
    from hostlib.drivers.usb import UsbDriver
    case = usb_case(write_case, transport=transport, frame_bytes=frame_bytes, direction=direction)
    driver = UsbDriver(usb_rig.devices["board"])
    driver.open()
    with pytest.raises(ConfigError) as exc:
        driver.configure(case)
    assert text in str(exc.value) and "usb device 'board'" in str(exc.value), str(exc.value)


@requires_native
def test_usb_case_without_the_board_skips_naming_it(write_case, usb_rig):
    from hostlib.engine import run_case
    result = run_case(usb_case(write_case), usb_rig, run_id="t")
    assert result.verdict == "SKIP", (result.verdict, result.message, result.error)
    assert "no USB device 1209:4852 on this host" in result.message


# ------------------------------------------------------------------ UHD over USB

@pytest.mark.parametrize("direction, expected", [
    ("rx", {"recv_frame_size": 8176, "num_recv_frames": 32}),
    ("tx", {"send_frame_size": 8176, "num_send_frames": 32}),
    ("loopback", {"recv_frame_size": 8176, "num_recv_frames": 32, "send_frame_size": 8176, "num_send_frames": 32}),
])
def test_uhd_usb_transport_keys_map_to_frame_args(write_case, usb_rig, direction, expected):
    from hostlib.drivers.uhd import uhd_args, uhd_device_args
    case = usb_case(write_case, device="b210", direction=direction, transport="transfer_bytes: 8176, transfers: 32")
    args = uhd_device_args(usb_rig.devices["b210"], case)
    assert {k: int(v) for k, v in args.items() if k != "type"} == expected   # device args are text
    assert uhd_args(usb_rig.devices["b210"], case).startswith("type=b200,")


def test_uhd_keeps_its_defaults_for_keys_the_case_did_not_give(write_case, usb_rig):
    from hostlib.drivers.uhd import uhd_device_args
    case = usb_case(write_case, device="b210", transport="transfers: 64")
    assert uhd_device_args(usb_rig.devices["b210"], case) == {"type": "b200", "num_recv_frames": "64"}


@pytest.mark.parametrize("transfer_bytes, text", [
    (8192, "recv_frame_size 8192 is a multiple of the USB max packet size (512 at USB 2, 1024 at USB 3), "
           "so no short packet ends a frame: use 8176 or 8208"),
    (32768, "recv_frame_size 32768 is outside what a B2xx takes (40..16360 bytes): use 8176 (UHD's default) or 16360"),
])
def test_b2xx_frame_rules_are_checked_before_the_device_is_made(write_case, usb_rig, transfer_bytes, text):
    from hostlib.drivers.uhd import UhdDriver
    case = usb_case(write_case, device="b210", transport=f"transfer_bytes: {transfer_bytes}")
    with pytest.raises(ConfigError) as exc:
        UhdDriver(usb_rig.devices["b210"]).configure(case)
    assert "B2xx over USB" in str(exc.value) and text in str(exc.value), str(exc.value)


@requires_native
def test_b210_usb_case_skips_here_with_a_clear_reason(usb_rig):
    from hostlib.dsl import load_cases
    from hostlib.engine import run_case
    from hostlib.rig import load_rig
    case, = load_cases([REPO / "testcases" / "devices" / "rx_b210_usb.yaml"])
    result = run_case(case, load_rig(REPO / "rigs" / "sim.yaml"), run_id="t")
    assert result.verdict == "SKIP", (result.verdict, result.message, result.error)
    assert "no UHD device matching 'type=b200'" in result.message, result.message
    # What it would open on a rig with the board: the transport keys as UHD frame args.
    from hostlib.drivers.uhd import uhd_args
    assert uhd_args(usb_rig.devices["b210"], case) == "type=b200,recv_frame_size=8176,num_recv_frames=16"
