"""hostlib.dsl loader: layouts, defaults, derived values, semantic checks, sweeps, CLI output."""
import io
import textwrap
from pathlib import Path

import pytest

from hostlib._exceptions import ConfigError
from hostlib.cli.validate import validate_command
from hostlib.dsl import load_cases, validate_paths
from hostlib.transports.config import Faults, Pacing, RingPublish, ShmTransport, UdpTransport

REPO = Path(__file__).resolve().parents[2]

BASE = """\
name: {name}
device: dut
direction: rx
master_clock: 200 MHz
decimation: 20
transport: {{kind: udp, frame_size: 8000}}
duration: 2 s
"""


def write(tmp_path, name, text):
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(textwrap.dedent(text))
    return p


def issues_of(path):
    cases, issues = validate_paths([path])
    assert cases == []
    return [(i.line, i.field, i.message) for i in issues]


def test_single_case_defaults_and_derived_values(tmp_path):
    p = write(tmp_path, "a.yaml", BASE.format(name="one"))
    [c] = load_cases([p])
    assert c.name == c.test_name == "one"
    assert (c.source_file, c.source_line) == (str(p), 1)
    assert c.rate_sps == 10e6 and c.master_clock_hz == 200e6 and c.decimation == 20 and c.interpolation is None
    assert c.channels == 1 and c.sample_format == "sc16" and c.pattern == "counter"
    assert c.transport.kind == "udp" and c.frame_bytes == 8000   # frame_size is an alias
    assert c.transport == UdpTransport(host="127.0.0.1", port=0, socket_buffer_bytes=4 * 1024**2,
                                       gso=True, gro=True, busy_poll=False,
                                       pacing=Pacing(gap_ns=0, period_ns=0, rate_bps=0))
    assert c.duration_s == 2.0 and c.warmup_s == 0.0 and c.timeout_s == 32.0
    assert c.faults == Faults(seed=1, drop_frames=0, corrupt_samples=0, duplicate_frames=0, reorder_frames=0,
                              stall_ms=0, window_frames=0, die_after_ms=0)
    assert c.samples_per_frame == (8000 - 48) // 4
    assert c.fifo_frames is None and c.sweep_point == {}
    from hostlib.transports import stream_config

    cfg = stream_config(c)
    assert cfg["rate_sps"] == 10e6 and cfg["frame_bytes"] == 8000 and cfg["transport"]["kind"] == "udp"


def test_tx_shm_with_units_everywhere(tmp_path):
    p = write(tmp_path, "tx.yaml", """\
        name: tx
        device: dut
        direction: tx
        channels: 2
        format: sc8
        master_clock: 30.72 MHz
        interpolation: 4
        transport: {kind: shm, frame_bytes: 8 KiB, slots: 64}
        duration: 1500 ms
        warmup: 0.25
        timeout: 1 min
        fifo_frames: 16
        tags: [nightly, tx]
        faults: {seed: 7, drop_frames: 3}
        thresholds:
          underruns: "== 0"
        """)
    [c] = load_cases([p])
    assert c.rate_sps == 30.72e6 / 4 and c.interpolation == 4 and c.decimation is None
    # The 64 slots asked for, kept (unasked, the ring holds 50 ms of the stream).
    assert c.frame_bytes == 8192 and c.transport == ShmTransport(path="", slots=64, publish=RingPublish.ADAPTIVE)
    assert c.samples_per_frame == (8192 - 48) // (2 * 2)
    assert (c.duration_s, c.warmup_s, c.timeout_s) == (1.5, 0.25, 60.0)
    assert c.fifo_frames == 16 and c.tags == ("nightly", "tx")
    assert c.faults.seed == 7 and c.faults.drop_frames == 3 and c.faults.reorder_frames == 0
    assert [t.metric for t in c.thresholds] == ["underruns"]


def test_file_layouts_list_and_cases_key(tmp_path):
    def indent(text, pad):
        return text.replace("\n", "\n" + pad).rstrip() + "\n"

    write(tmp_path, "list.yaml", "- " + indent(BASE.format(name="l1"), "  ") + "- " + indent(BASE.format(name="l2"), "  "))
    write(tmp_path, "key.yaml", "cases:\n  - " + indent(BASE.format(name="k1"), "    "))
    cases = load_cases([tmp_path])
    assert [c.name for c in cases] == ["k1", "l1", "l2"]   # files sorted, order kept inside a file
    assert [c.source_line for c in cases] == [2, 1, 8]


def test_loopback_rate_and_divider_rules(tmp_path):
    p = write(tmp_path, "lb.yaml", BASE.format(name="lb").replace("direction: rx", "direction: loopback"))
    [c] = load_cases([p])
    assert c.rate_sps == 10e6
    bad = write(tmp_path, "lb2.yaml", BASE.format(name="lb2").replace("direction: rx", "direction: loopback")
                + "interpolation: 10\n")
    [(line, field, msg)] = issues_of(bad)
    assert (line, field) == (8, "interpolation") and "must equal decimation" in msg


def test_rx_with_interpolation_and_tx_without(tmp_path):
    p = write(tmp_path, "x.yaml", BASE.format(name="x") + "interpolation: 4\n")
    assert [(i[0], i[1]) for i in issues_of(p)] == [(8, "interpolation")]
    tx = write(tmp_path, "tx.yaml", BASE.format(name="tx").replace("direction: rx", "direction: tx")
               .replace("decimation: 20\n", ""))
    [(line, field, msg)] = issues_of(tx)
    assert field == "interpolation" and "needs interpolation" in msg and line == 1


@pytest.mark.parametrize("frame, ok", [(52, True), (51, False), (65504, True), (65508, False), (1402, False)])
def test_udp_frame_limits(tmp_path, frame, ok):
    p = write(tmp_path, "f.yaml", BASE.format(name="f").replace("frame_size: 8000", f"frame_bytes: {frame}"))
    cases, issues = validate_paths([p])
    assert bool(cases) is ok and bool(issues) is not ok
    if not ok:
        assert issues[0].field == "transport.frame_bytes" and issues[0].line == 6


def test_all_errors_of_a_file_at_once_and_no_half_config(tmp_path):
    p = write(tmp_path, "many.yaml", """\
        - name: good
          device: dut
          direction: rx
          master_clock: 200 MHz
          decimation: 20
          transport: {kind: udp}
          duration: 1 s
        - name: bad
          device: dut
          direction: sideways
          channels: 0
          master_clock: 10 MSPS
          decimation: 20
          transport: {kind: sctp}
          duration: 1 s
          warmup: -1 s
          thresholds: {overruns: "= 0"}
        """)
    cases, issues = validate_paths([p])
    assert cases == []   # the good case of the file does not run either
    got = {(i.line, i.field) for i in issues}
    assert got == {(10, "direction"), (11, "channels"), (12, "master_clock"), (14, "transport.kind"),
                   (16, "warmup"), (17, "thresholds.overruns")}
    assert all(i.file == str(p) for i in issues)
    assert any("'rx', 'tx', 'loopback' or 'rx+tx'" in i.message for i in issues)


def test_sweep_expansion(tmp_path):
    p = write(tmp_path, "s.yaml", BASE.format(name="S") + textwrap.dedent("""\
        thresholds: {throughput: ">= 99.9% of rate"}
        sweep:
          decimation: [20, 10, 4, 2]
          transport.frame_size: [1400, 8000]
        """))
    cases = load_cases([p])
    assert len(cases) == 8
    assert cases[0].test_name == "S [decimation=20, transport.frame_bytes=1400]"
    assert len({c.test_name for c in cases}) == 8
    rates = sorted({c.rate_sps for c in cases})
    assert rates == [10e6, 20e6, 50e6, 100e6]
    for c in cases:
        assert c.rate_sps == 200e6 / c.sweep_point["decimation"]
        assert c.frame_bytes == c.sweep_point["transport.frame_bytes"]
        assert c.raw["decimation"] == c.decimation and "sweep" not in c.raw
        # thresholds follow each point's own rate
        assert c.thresholds[0].evaluate({}, c.threshold_params()).limit == pytest.approx(0.999 * c.rate_sps)


def test_sweep_of_units_and_values_errors(tmp_path):
    p = write(tmp_path, "su.yaml", BASE.format(name="U") + "sweep:\n  duration: [1 s, 500 ms]\n")
    assert [c.duration_s for c in load_cases([p])] == [1.0, 0.5]
    bad = write(tmp_path, "sb.yaml", BASE.format(name="B") + "sweep:\n  decimation: [20, 20]\n  channels: []\n")
    got = [(i[0], i[1]) for i in issues_of(bad)]
    assert got == [(9, "sweep.decimation"), (10, "sweep.channels")]


def test_sweep_invalid_point_names_point_and_sweep_line(tmp_path):
    p = write(tmp_path, "sp.yaml", BASE.format(name="P") + "sweep:\n  decimation: [20, 0, -1]\n")
    issues = issues_of(p)
    assert [(i[0], i[1]) for i in issues] == [(9, "decimation"), (9, "decimation")]
    assert "sweep point [decimation=0]" in issues[0][2] and "sweep point [decimation=-1]" in issues[1][2]
    # a point that breaks a field the sweep does not name: the sweep line and the field's own line
    q = write(tmp_path, "sq.yaml", BASE.format(name="Q") + "sweep:\n  channels: [1, 3]\n")
    [(line, field, msg)] = issues_of(q)
    assert line == 8 and field == "transport.frame_bytes" and "channels=3" in msg   # the `sweep:` line
    assert "transport.frame_bytes is at line 6" in msg


def test_duplicate_test_names_across_files(tmp_path):
    write(tmp_path, "a.yaml", BASE.format(name="same"))
    b = write(tmp_path, "b.yaml", BASE.format(name="same"))
    cases, issues = validate_paths([tmp_path])
    assert [c.source_file for c in cases] == [str(tmp_path / "a.yaml")]
    [issue] = issues
    assert issue.file == str(b) and issue.field == "name" and "a.yaml:1" in issue.message


def test_missing_paths_and_empty_file(tmp_path):
    empty = write(tmp_path, "e.yaml", "# nothing\n")
    cases, issues = validate_paths([tmp_path / "nope", empty])
    assert cases == [] and [i.file for i in issues] == [str(tmp_path / "nope"), str(empty)]
    assert "no such file" in issues[0].message and "empty" in issues[1].message
    with pytest.raises(ConfigError) as e:
        load_cases([empty])
    assert e.value.issues == issues[1:] and e.value.exit_code == 2


def test_validate_command_output(tmp_path):
    good = write(tmp_path / "good", "g.yaml", BASE.format(name="G") + "sweep: {decimation: [20, 10]}\n")
    out = io.StringIO()
    assert validate_command([str(good.parent)], out=out) == 0
    text = out.getvalue()
    assert text.startswith("OK: 1 file(s), 1 case(s), 1 sweep(s) with 2 point(s), 2 run(s)")
    bad = write(tmp_path / "bad", "b.yaml", BASE.format(name="B").replace("2 s", "2 parsecs"))
    out = io.StringIO()
    assert validate_command([str(bad.parent)], out=out) == 2
    first = out.getvalue().splitlines()[0]
    assert first.startswith(f"{bad}:7: duration: ")


def test_starter_cases_are_valid_and_fit_the_sim_rig():
    from hostlib.rig import load_rig
    cases = load_cases([REPO / "testcases"])
    rig = load_rig(REPO / "rigs" / "sim.yaml")
    assert {c.direction for c in cases} == {"rx", "tx", "loopback", "rx+tx"}
    assert {c.transport.kind for c in cases} >= {"udp", "shm"}  # usb: a radio's own link (rx_b210_usb.yaml)
    rx_rates = {(c.transport.kind, c.rate_sps) for c in cases if c.direction == "rx"}
    for kind in ("udp", "shm"):
        assert len({r for k, r in rx_rates if k == kind}) >= 3
    assert {c.frame_bytes for c in cases if c.sweep_point.get("transport.frame_bytes")} >= {1400, 8000}
    for c in cases:
        if "study" not in c.tags:   # studies run by make study, never in the suite
            assert c.duration_s + c.warmup_s <= 2.5, c.test_name   # short: the suite runs on 2 shared cores
        assert c.thresholds, c.test_name
        entry = rig.devices.get(c.device)
        assert entry is not None and entry.can_run(c), c.test_name
