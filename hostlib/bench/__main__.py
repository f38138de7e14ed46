"""python -m hostlib.bench  (make bench): one table, rig vs peer, same run.

The zero-loss searches (hostlib/bench/search.py) run --window-s windows (1 s) and their
answer is then confirmed over --confirm-s (10 s, the issue's window; stepping down per
failed try); --long searches with 10 s windows too and runs the simulator for 30 s
(default 3 s); --repeats (5) interleaved shm/memcpy runs per size, median shown with the
range. --only picks row groups (default: all but soapyremote, which soapy includes):
udp, iperf3, shm, spsc (the lab's SPSC strategy table, hostlib/bench/spsc.py), pymmap,
sim, soapy (SoapySDRUtil --rate through the module
driver=hilrig beside the native RxStream at the same rate and frame size, and
SoapyRemote serving driver=hilrig beside the UDP path, hostlib/bench/soapyremote.py),
soapyremote (that alone), gnuradio (gr-hilrig beside GNU Radio's own blocks,
hostlib/bench/gnuradio.py), usb (the USB engine over the simulated links and umockdev),
rtl (RTL in the loop beside the C++ simulator core, hostlib/bench/rtl_loop.py), lab
(`hilrig run --place-tags` on a loopback labgrid lab beside a plain local run:
launch to first sample, and the lease heartbeat's cost, hostlib/bench/lab.py), link
(hilrig-link carrying 1430-byte datagrams both ways at once against its configured
rate and timing; then hilrig's paced UDP and TCP beside iperf3 and iperf2 across the
same emulated link, with the pacers' burstiness, hostlib/bench/link.py; root).

Environment (each the default of its option): BENCH_ONLY=udp,shm (--only),
BENCH_LONG=1 (--long), BENCH_CONFIRM_S (--confirm-s), BENCH_REPEATS (--repeats);
HILRIG_BENCH_BIN overrides hostlib/bin/hilrig-bench (a link to build/bin/hilrig-bench).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from .._installed import packaged_executable
from .._process import stop_process
from ..transports.config import UsbLink
from . import pymmap, spsc, usb_link, usb_umockdev
from .record import BenchRow, write_bench_results
from .search import CEILING_HEADROOM, SEARCH_STEPS, Point, held, zero_loss_rate

UDP_SIZES = (1472, 8000, 65000)
SHM_SIZES = (256, 8 * 1024, 1024 * 1024)
PYMMAP_SIZES = (84, 13_500, 1_320_000)


def bench_binary() -> str:
    env = os.environ.get("HILRIG_BENCH_BIN")
    packaged = packaged_executable("hilrig-bench")
    for cand in (env, str(packaged) if packaged else None):
        if cand and Path(cand).is_file():
            return cand
    sys.exit("hilrig-bench not found: build first (make build) or set HILRIG_BENCH_BIN")


def native(cmd: str, *, timeout_s: float = 120, **kw) -> dict:
    args = [bench_binary(), cmd]
    for k, v in kw.items():
        if v is True:
            args.append("--" + k.replace("_", "-"))
        elif v is not False and v is not None:
            args += ["--" + k.replace("_", "-"), str(v)]
    out = subprocess.run(args, capture_output=True, text=True, timeout=timeout_s)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed: {out.stderr.strip()}")
    return json.loads(out.stdout)


def udp_rig(size: int, window_s: float, confirm_s: float, offload: bool) -> Point:
    flags = {} if offload else {"no_gso": True, "no_gro": True}

    def run_at(fps: float, seconds: float) -> Point:
        r = native("udp", frame_bytes=size, rate_fps=round(fps), seconds=seconds, **flags)
        requested = fps * r["seconds"]
        ok = (r["lost_frames"] == 0 and r["missing_frames"] == 0 and r["pattern_errors"] == 0
              and r["frames_sent"] >= 0.99 * requested                 # the pacer delivered the rate
              and r["frames_received_at_stop"] >= 0.98 * r["frames_sent"])  # not just buffered
        return Point(ok, r["received_fps"], r["cpu_percent"], r)

    ceiling = native("udp", frame_bytes=size, rate_fps=0, seconds=min(window_s, 1.0), **flags)["received_fps"]
    return held(zero_loss_rate(run_at, CEILING_HEADROOM * ceiling, window_s, confirm_s=confirm_s))


LIMIT_RUNS = 3   # a limit is the best of this many short runs: what the machine can do at most


def udp_blast_fps(size: int) -> float:
    """The UDP rows' limit: the frame I/O layer alone over loopback (GSO/GRO where they
    pay), unpaced, nothing built or checked; frames/s received, best of LIMIT_RUNS."""
    return max(native("blast", frame_bytes=size, seconds=0.5)["received_fps"] for _ in range(LIMIT_RUNS))


def check_only_fps(size: int) -> float:
    """The shm rows' limit: the pattern check of one core over one frame of this size
    (the consumer checks every sample, so it cannot take frames faster); best of LIMIT_RUNS."""
    return max(native("check", frame_bytes=size, seconds=0.2)["frames_per_s"] for _ in range(LIMIT_RUNS))


def generate_only_sps(size: int) -> float:
    """The simulator row's limit: PatternFramer::build alone, one core, samples/s."""
    return max(native("generate", frame_bytes=size, seconds=0.2)["samples_per_s"] for _ in range(LIMIT_RUNS))


def limit_cells(rig: float, limit: float, what: str) -> tuple[str, str]:
    return what, (f"{rig / limit:.2f}" if limit > 0 else "n/a")


IPERF3_WINDOW = os.environ.get("BENCH_IPERF3_WINDOW", "4M")


class Iperf3:
    """iperf3 -s on a free port for the whole series; clients at -u -l SIZE -b RATE."""

    def __init__(self):
        self.exe = shutil.which("iperf3") or ""  # "" when not installed
        self.proc = None
        if self.exe:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                self.port = s.getsockname()[1]
            self.proc = subprocess.Popen([self.exe, "-s", "-B", "127.0.0.1", "-p", str(self.port)],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def close(self) -> None:
        if self.proc is not None:
            stop_process(self.proc, 5)

    def run(self, size: int, bits_per_s: float, seconds: int) -> Point:
        # -w: the largest socket buffer iperf3 can get (it uses plain SO_RCVBUF, capped by
        # net.core.rmem_max, 4 MiB here; the rig, as root, may force larger). Without it
        # iperf3 loses datagrams at a tenth of its real rate and the ratio would flatter us.
        args = [self.exe, "-c", "127.0.0.1", "-p", str(self.port), "-u", "-l", str(size),
                "-b", str(int(bits_per_s)), "-t", str(seconds), "-w", IPERF3_WINDOW, "-J"]
        for _ in range(5):  # the server takes one test at a time; retry while it resets
            out = subprocess.run(args, capture_output=True, text=True, timeout=seconds + 30)
            try:
                j = json.loads(out.stdout)
            except json.JSONDecodeError:
                j = {}
            if "end" in j and "sum" in j["end"]:
                break
            time.sleep(0.3)
        else:
            raise RuntimeError(f"iperf3 gave no result: {out.stdout[-300:]} {out.stderr[-300:]}")
        s = j["end"]["sum"]
        packets, lost = s.get("packets", 0), s.get("lost_packets", 0)
        secs = s.get("seconds") or seconds
        cpu = j["end"].get("cpu_utilization_percent", {})
        # sender + receiver process CPU, to compare with the rig's single process
        cpu_total = (cpu.get("host_total") or 0) + (cpu.get("remote_total") or 0)
        return Point(lost == 0 and packets > 0, (packets - lost) / secs, cpu_total, s)

    def search(self, size: int, window_s: float, confirm_s: float) -> Point:
        ceiling = self.run(size, 0, 1).fps  # -b 0: unlimited

        def run_at(fps: float, seconds: float) -> Point:
            p = self.run(size, fps * size * 8, max(1, round(seconds)))  # iperf3 takes whole seconds
            p.ok = p.ok and p.fps >= 0.97 * fps  # iperf3 itself reached the rate
            return p

        return held(zero_loss_rate(run_at, CEILING_HEADROOM * ceiling, window_s, confirm_s=confirm_s))


SIM_RX_CASE = Path(__file__).resolve().parent / "cases" / "sim_rx_1gsps_shm.yaml"


def sim_rx(seconds: float) -> dict:
    """Simulator RX at 1 GS/s sc16 over shm through the real engine: the case file
    a lab runs with `hilrig run`, for `seconds` instead of its 30 s."""
    import dataclasses

    from ..dsl import load_cases
    from ..engine import run_case
    from ..rig import default_rig_path, load_rig

    case = dataclasses.replace(load_cases([SIM_RX_CASE])[0], duration_s=seconds)
    rig = load_rig(default_rig_path("sim"))
    res = run_case(case, rig, run_id="bench")
    return {"verdict": res.verdict, "message": res.message, **res.metrics}


SIM_MAX_CASE = Path(__file__).resolve().parent / "cases" / "sim_rx_max_shm.yaml"
SIM_MAX_SLOTS = 1024  # the case's ring (64 MiB of 64 KiB frames)


def sim_rx_max(seconds: float) -> dict:
    """The simulator over shm at the most it holds: the case's rate search (1-8 GS/s sc16,
    every sample checked), its confirmation `seconds` long instead of the file's 30 s."""
    import dataclasses

    from ..dsl import load_cases
    from ..engine import run_case
    from ..rig import default_rig_path, load_rig

    case = dataclasses.replace(load_cases([SIM_MAX_CASE])[0], duration_s=seconds)
    res = run_case(case, load_rig(default_rig_path("sim")), run_id="bench", say=lambda line: print(line, flush=True))
    return {"verdict": res.verdict, **res.metrics}


def ring_only_sps(size: int, slots: int) -> float:
    """The sim-max row's limit: the same ring, producer and checker without the simulator
    or the engine (hilrig-bench shm), samples/s of sc16; best of LIMIT_RUNS."""
    return max(native("shm", frame_bytes=size, slots=slots, seconds=0.5)["payload_GBps"] * 1e9 / 4
               for _ in range(LIMIT_RUNS))


SOAPY_RATE_SPS = 100e6
SOAPY_RATE_S = 6.0   # SoapySDRUtil prints its rate every ~5 s


def soapy_util_rate(rate_sps: float, seconds: float) -> float:
    """Samples/s SoapySDRUtil --rate received through the module driver=hilrig (its
    defaults: udp, the core's frame size, CS16), 0 if it printed none."""
    import re
    import signal

    from ..drivers.sim import find_sim_binary
    from ..drivers.soapy import ensure_plugin_path
    exe = shutil.which("SoapySDRUtil")
    if exe is None:
        return 0.0
    ensure_plugin_path()
    proc = subprocess.Popen([exe, "--args=driver=hilrig", f"--rate={rate_sps:g}", "--direction=RX"],
                            env={**os.environ, "HILRIG_SIM_BIN": find_sim_binary()},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = proc.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=10)
    rates = re.findall(r"([0-9.]+) Msps\s", out)
    return float(rates[-1]) * 1e6 if rates else 0.0


def native_rx_rate(rate_sps: float, seconds: float) -> float:
    """Samples/s the native RxStream receives from the simulator at this rate over
    udp with the core's default frame size: the sim driver through the engine."""
    import dataclasses

    from ..dsl import load_cases
    from ..engine import run_case
    from ..rig import load_rig, resolve_rig_path

    case = dataclasses.replace(load_cases([SOAPY_RX_CASE])[0], duration_s=seconds)
    res = run_case(case, load_rig(resolve_rig_path("sim")), run_id="bench")
    return float(res.metrics.get("throughput_sps", 0.0))


SOAPY_RX_CASE = Path(__file__).resolve().parent / "cases" / "sim_rx_100msps_udp.yaml"


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else 0.0


def spread(fps: list[float], size: int) -> str:
    """Median GB/s and Mf/s, then the Mf/s range of the repeats."""
    m = median(fps)
    return f"{m * size / 1e9:6.2f} GB/s {m / 1e6:7.2f} Mf/s [{min(fps) / 1e6:.1f}-{max(fps) / 1e6:.1f}]"


def fmt_rate(fps: float, size: int) -> str:
    return f"{fps * size / 1e9:6.2f} GB/s  {fps / 1e3:8.1f} kf/s"


GROUPS = ("udp", "iperf3", "shm", "spsc", "pymmap", "sim", "soapy", "soapyremote", "gnuradio", "usb", "rtl", "lab",
          "link", "rf")
DEFAULT_GROUPS = tuple(g for g in GROUPS if g != "soapyremote")   # soapy runs the SoapyRemote rows too


@dataclass(frozen=True)
class Options:
    only: frozenset[str]      # row groups (GROUPS)
    long: bool
    window_s: float
    confirm_s: float
    sim_s: float
    repeats: int
    spsc_s: float             # one spsc run, seconds (the lab's: 3)


def parse_args(argv: list[str] | None = None) -> Options:
    env = os.environ
    ap = argparse.ArgumentParser(prog="python -m hostlib.bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default=env.get("BENCH_ONLY", ",".join(DEFAULT_GROUPS)), metavar="GROUP,...",
                    help=f"row groups, comma-separated: {', '.join(GROUPS)} (env BENCH_ONLY)")
    ap.add_argument("--long", action="store_true", default=env.get("BENCH_LONG") == "1",
                    help="10 s search windows and a 30 s simulator run (env BENCH_LONG=1)")
    ap.add_argument("--window-s", type=float, default=None,
                    help="search and repeat window, seconds (default 1, 10 with --long)")
    ap.add_argument("--confirm-s", type=float, default=float(env.get("BENCH_CONFIRM_S", "10")),
                    help="confirmation window of a searched rate, seconds; not longer than --window-s: "
                         "no confirmation (env BENCH_CONFIRM_S, default 10)")
    ap.add_argument("--sim-s", type=float, default=None, help="simulator RX run, seconds (default 3, 30 with --long)")
    ap.add_argument("--repeats", type=int, default=int(env.get("BENCH_REPEATS", "5")),
                    help="interleaved shm/memcpy runs per size (env BENCH_REPEATS, default 5)")
    ap.add_argument("--spsc-s", type=float, default=float(env.get("BENCH_SPSC_S", "0.5")),
                    help="one run of the spsc group, seconds (--repeats runs; the lab's: 3; env BENCH_SPSC_S)")
    args = ap.parse_args(argv)
    only = frozenset(filter(None, (g.strip() for g in args.only.split(","))))
    unknown = sorted(only - set(GROUPS))
    if unknown:
        ap.error(f"--only / BENCH_ONLY: unknown row group(s) {', '.join(unknown)}; known: {', '.join(GROUPS)}")
    window_s = (10.0 if args.long else 1.0) if args.window_s is None else args.window_s
    sim_s = (30.0 if args.long else 3.0) if args.sim_s is None else args.sim_s
    opts = Options(only, args.long, window_s, args.confirm_s, sim_s, args.repeats, args.spsc_s)
    for flag, seconds in (("--window-s", opts.window_s), ("--confirm-s", opts.confirm_s), ("--sim-s", opts.sim_s),
                          ("--spsc-s", opts.spsc_s)):
        if seconds <= 0:
            ap.error(f"{flag} must be > 0 seconds, got {seconds:g}")
    if opts.repeats < 1:
        ap.error(f"--repeats must be >= 1, got {opts.repeats}")
    return opts


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    long, window_s, confirm_s, sim_s = opts.long, opts.window_s, opts.confirm_s, opts.sim_s
    repeats, only = opts.repeats, opts.only
    console = Console(stderr=True)
    title = (f"hilrig bench ({'long: ' if long else ''}zero-loss: {window_s:g} s windows, halving + bisection "
             f"{SEARCH_STEPS} steps, then confirmed over {max(confirm_s, window_s):g} s; shm/memcpy: median "
             f"and range of {repeats} interleaved {window_s:g} s runs; {os.cpu_count()} CPUs; "
             "every rig sample verified)")
    table = Table(title=title, show_lines=False)
    for col in ("row", "size", "rig", "rig CPU %", "peer", "peer", "ratio rig/peer", "limit", "rig/limit"):
        table.add_column(col, justify="right" if col not in ("row", "peer", "limit") else "left")
    rows: list[tuple] = []

    records: list[BenchRow] = []  # the same rows as numbers: JSON + line protocol (hilrig_bench)

    def add(*r, limit: tuple[str, str] = ("-", "-"), data: BenchRow | None = None):
        r = r + limit
        rows.append(r)
        if data is not None:
            records.append(data)
        console.log(" | ".join(str(x) for x in r))

    placement_notes: list[str] = []
    spsc_results: list[dict] = []
    peer = Iperf3() if ("iperf3" in only and "udp" in only) else None
    udp_found: dict[int, Point] = {}  # the UDP rows' zero-loss rates (offload on), by frame size
    try:
        if "udp" in only:
            blast = {size: udp_blast_fps(size) for size in UDP_SIZES}
            for size in UDP_SIZES:
                add("UDP blast (the UDP rows' limit)", f"{size} B", fmt_rate(blast[size], size), "-",
                    "frame I/O alone: unpaced, unchecked", "-", "-",
                    data=BenchRow("UDP blast", size, blast[size] * size, blast[size]))
            for offload in (True, False):
                for size in UDP_SIZES:
                    rig = udp_rig(size, window_s, confirm_s, offload)
                    if offload:
                        udp_found[size] = rig
                    label = "UDP zero-loss" + ("" if offload else " (GSO/GRO off)")
                    lim = limit_cells(rig.fps, blast[size], f"blast {blast[size] * size / 1e9:.2f} GB/s")
                    lim_Bps, lim_ratio = blast[size] * size, (rig.fps / blast[size] if blast[size] else None)
                    if peer is not None and peer.exe and offload:
                        ip = peer.search(size, window_s, confirm_s)
                        add(label, f"{size} B", fmt_rate(rig.fps, size), f"{rig.cpu:.0f}",
                            f"iperf3 -u -w {IPERF3_WINDOW}",
                            (fmt_rate(ip.fps, size) + f"  CPU {ip.cpu:.0f} %") if ip.fps else "no clean window",
                            f"{rig.fps / ip.fps:.2f}" if ip.fps else "n/a", limit=lim,
                            data=BenchRow(label, size, rig.fps * size, rig.fps, rig.cpu, "iperf3", ip.fps * size,
                                          ip.fps, rig.fps / ip.fps if ip.fps else None, "UDP blast", lim_Bps,
                                          lim_ratio))
                    else:
                        add(label, f"{size} B", fmt_rate(rig.fps, size), f"{rig.cpu:.0f}", "-", "-", "-", limit=lim,
                            data=BenchRow(label, size, rig.fps * size, rig.fps, rig.cpu, limit="UDP blast",
                                          limit_Bps=lim_Bps, limit_ratio=lim_ratio))
    finally:
        if peer is not None:
            peer.close()
    if "shm" in only:
        for size in SHM_SIZES:
            # Interleaved repeats, median shown with the spread: on a shared VM one
            # window swings 2-4x, and a single run would report the neighbours' load.
            rs, ms = [], []
            for _ in range(repeats):
                line_ns = native("pingpong")["one_way_ns"]
                rs.append(native("shm", frame_bytes=size, seconds=window_s))
                rs[-1]["line_ns"] = line_ns
                ms.append(native("memcpy", frame_bytes=size, seconds=window_s))
            if size == SHM_SIZES[0]:
                placement_notes.append(
                    f"shm {size} B per run, M frames/s @ one-way cache-line transfer between the two threads "
                    "(where the VM's host put the vCPUs just before the run): "
                    + ", ".join(f"{r['frames_per_s'] / 1e6:.1f} @ {r['line_ns']:.0f} ns" for r in rs))
            ok = all(r["pattern_errors"] == 0 and r["missing_frames"] == 0
                     and r["frames_received"] == r["frames_produced"] for r in rs)
            r_gbps, m_gbps = median([r["frame_GBps"] for r in rs]), median([m["frame_GBps"] for m in ms])
            r_fps, check_fps = median([r["frames_per_s"] for r in rs]), check_only_fps(size)
            add("shm ring, checked" + ("" if ok else " (ERRORS!)"), f"{size} B",
                spread([r["frames_per_s"] for r in rs], size), f"{median([r['cpu_percent'] for r in rs]):.0f}",
                "memcpy in+out", spread([m["frames_per_s"] for m in ms], size), f"{r_gbps / m_gbps:.2f}",
                limit=limit_cells(r_fps, check_fps, f"check only {check_fps / 1e6:.2f} Mf/s"),
                data=BenchRow("shm ring, checked", size, r_gbps * 1e9, r_fps,
                              median([r["cpu_percent"] for r in rs]), "memcpy in+out", m_gbps * 1e9,
                              median([m["frames_per_s"] for m in ms]), r_gbps / m_gbps, "pattern check only",
                              check_fps * size, r_fps / check_fps if check_fps else None))
        c = native("check", frame_bytes=8 * 1024)
        add("pattern check only", "8192 B", f"{c['payload_GBps']:6.2f} GB/s", "-", "-", "-", "-",
            data=BenchRow("pattern check only", 8192, c["payload_GBps"] * 1e9))
    if "spsc" in only:
        spsc_results = spsc.run(native, repeats, opts.spsc_s)
    if "pymmap" in only:
        for size in PYMMAP_SIZES:
            r = native("shm", frame_bytes=size, seconds=window_s)
            p = pymmap.run(size, window_s)
            add("shm vs Python mmap", f"{size} B",
                f"{r['frame_GBps']:6.2f} GB/s {r['frames_per_s'] / 1e6:7.2f} Mf/s", f"{r['cpu_percent']:.0f}",
                "Python mmap ref", f"{p['GBps']:6.2f} GB/s {p['frames_per_s'] / 1e6:7.2f} Mf/s",
                f"{r['frame_GBps'] / p['GBps']:.1f}",
                data=BenchRow("shm vs Python mmap", size, r["frame_GBps"] * 1e9, r["frames_per_s"], r["cpu_percent"],
                              "Python mmap ref", p["GBps"] * 1e9, p["frames_per_s"], r["frame_GBps"] / p["GBps"]))
    if "sim" in only:
        s = sim_rx(sim_s)
        gen_sps, sim_sps = generate_only_sps(65584), float(s.get("throughput_sps", 0.0))
        add(f"sim RX 1 GS/s sc16 shm {sim_s:g} s", "65584 B",
            f"{s.get('throughput_Bps', 0) / 1e9:6.2f} GB/s missing={s.get('missing_frames', 0):.0f} "
            f"pattern_err={s.get('pattern_errors', 0):.0f} {s['verdict']}",
            f"{s.get('host_cpu_percent', 0):.0f}", "-", "-", "-",
            limit=limit_cells(sim_sps, gen_sps, f"generate only {gen_sps / 1e9:.2f} GS/s"),
            data=BenchRow("sim RX 1 GS/s sc16 shm", 65584, s.get("throughput_Bps"), s.get("frames_per_s"),
                          s.get("host_cpu_percent"), limit="simulator generate only", limit_Bps=gen_sps * 4,
                          limit_ratio=sim_sps / gen_sps if gen_sps else None))
        m = sim_rx_max(sim_s)
        ring_sps, max_sps = ring_only_sps(65584, SIM_MAX_SLOTS), float(m.get("max_rate_sps") or 0.0)
        add(f"sim RX max zero-loss sc16 shm {sim_s:g} s", "65584 B",
            f"{max_sps / 1e9:6.2f} GS/s held ({m['verdict']})", "-", "-", "-", "-",
            limit=limit_cells(max_sps, ring_sps, f"ring alone {ring_sps / 1e9:.2f} GS/s ({SIM_MAX_SLOTS} slots)"),
            data=BenchRow("sim RX max zero-loss sc16 shm", 65584, max_sps * 4, limit="ring alone, same slots",
                          limit_Bps=ring_sps * 4, limit_ratio=max_sps / ring_sps if ring_sps else None))
    if "soapy" in only:
        soapy_sps = soapy_util_rate(SOAPY_RATE_SPS, SOAPY_RATE_S)
        native_sps = native_rx_rate(SOAPY_RATE_SPS, SOAPY_RATE_S - 1)
        add(f"SoapySDRUtil --rate {SOAPY_RATE_SPS / 1e6:g} MS/s RX, driver=hilrig", "8000 B",
            f"{soapy_sps / 1e6:7.2f} MS/s", "-", "native RxStream (sim driver), same rate",
            f"{native_sps / 1e6:7.2f} MS/s", f"{soapy_sps / native_sps:.2f}" if native_sps else "n/a")
    if "soapy" in only or "soapyremote" in only:
        # SoapyRemote (the peer a lab would pick over a network) beside hilrig's UDP path
        from . import soapyremote

        def udp_point(size: int) -> Point:
            return udp_found.get(size) or udp_rig(size, window_s, confirm_s, True)

        for row, data in soapyremote.rows(window_s, confirm_s, udp_point):
            add(*row, data=data)
    if "gnuradio" in only:
        from .gnuradio import rows as gnuradio_rows
        for row, data in gnuradio_rows(window_s, repeats):
            add(*row, data=data)
    if "usb" in only:
        # The host engine over the simulated USB links (in-process device, bus model).
        B210_MAX_BPS = 245.76e6  # 61.44 MS/s sc16
        u3 = usb_link.run(UsbLink.USB3, "loopback", 64 * 1024, 16, window_s)
        both = u3["rx_Bps"] + u3["tx_Bps"]
        add("USB engine, sim usb3 link, rx+tx" + ("" if u3["ok"] else " (ERRORS!)"), "64 KiB x 16",
            f"{both / 1e6:6.1f} MB/s (rx {u3['rx_Bps'] / 1e6:.1f} + tx {u3['tx_Bps'] / 1e6:.1f})",
            f"{u3['cpu_percent']:.0f}", "2 x B210 max", f"{2 * B210_MAX_BPS / 1e6:.2f} MB/s",
            f"{both / (2 * B210_MAX_BPS):.2f}",
            data=BenchRow("USB engine, sim usb3 link, rx+tx", 64 * 1024, both, None, u3["cpu_percent"],
                          "2 x B210 max", 2 * B210_MAX_BPS, None, both / (2 * B210_MAX_BPS)))
        b210 = usb_link.run(UsbLink.USB3, "rx", 64 * 1024, 16, window_s, rate_sps=B210_MAX_BPS / 4, fifo_bytes=1 << 20)
        add("USB engine, sim usb3 link, rx at B210 max" + ("" if b210["ok"] else " (ERRORS!)"), "64 KiB x 16",
            f"{b210['rx_Bps'] / 1e6:6.1f} MB/s", f"{b210['cpu_percent']:.0f}", "target: CPU <= 25 %",
            f"{B210_MAX_BPS / 1e6:.2f} MB/s", f"{b210['rx_Bps'] / B210_MAX_BPS:.2f}",
            data=BenchRow("USB engine, sim usb3 link, rx at B210 max", 64 * 1024, b210["rx_Bps"], None,
                          b210["cpu_percent"], "B210 max", B210_MAX_BPS, None, b210["rx_Bps"] / B210_MAX_BPS))
        u2 = usb_link.run(UsbLink.USB2, "rx", 16 * 1024, 16, window_s)
        add("USB engine, sim usb2 link, rx" + ("" if u2["ok"] else " (ERRORS!)"), "16 KiB x 16",
            f"{u2['rx_Bps'] / 1e6:6.1f} MB/s", f"{u2['cpu_percent']:.0f}", "USB 2 bus ceiling", "53.25 MB/s",
            f"{u2['rx_Bps'] / 53.248e6:.2f}",
            data=BenchRow("USB engine, sim usb2 link, rx", 16 * 1024, u2["rx_Bps"], None, u2["cpu_percent"],
                          "USB 2 bus ceiling", 53.248e6, None, u2["rx_Bps"] / 53.248e6))
        # The libusb path against umockdev's emulated board: umockdev is the ceiling (docs/usb.md).
        for transfer_bytes, transfers in ((16 * 1024, 16), (256 * 1024, 16)):
            u = usb_umockdev.run(transfer_bytes, transfers, window_s * 2)
            if u.get("error") or "bytes_per_s" not in u:
                add("USB libusb via umockdev", f"{transfer_bytes // 1024} KiB x {transfers}",
                    f"error: {u.get('error')}", "-", "-", "-", "-")
                continue
            ok = u["pattern_errors"] == 0 and u["missing_frames"] == 0
            add("USB libusb via umockdev, checked" + ("" if ok else " (ERRORS!)"),
                f"{transfer_bytes // 1024} KiB x {transfers}",
                f"{u['bytes_per_s'] / 1e6:6.1f} MB/s {u['transfers_per_s']:6.0f} transfers/s",
                f"{u['process_cpu_percent']:.0f}", "umockdev is the ceiling", "-", "-",
                data=BenchRow("USB libusb via umockdev, checked", transfer_bytes, u["bytes_per_s"], None,
                              u["process_cpu_percent"], "umockdev is the ceiling"))
    if "rtl" in only:
        from .rtl_loop import rows as rtl_rows
        for rtl_row, rtl_data in rtl_rows(window_s):
            add(*rtl_row, data=rtl_data)
    if "lab" in only:
        from .lab import rows as lab_rows
        for lab_row, lab_data in lab_rows(repeats):
            add(*lab_row, data=lab_data)
    if "link" in only:
        from .link import pacer_rows, peer_rows, sink_pacer_rows
        from .link import rows as link_rows
        for link_row, link_data in link_rows(window_s):
            add(*link_row, data=link_data)
        # hilrig's paced UDP and TCP beside iperf3 and iperf2 across the same emulated link.
        for peer_row, peer_limit, peer_data in [*peer_rows(window_s), *pacer_rows(), *sink_pacer_rows()]:
            add(*peer_row, limit=peer_limit, data=peer_data)
    if "rf" in only:
        from .rf import rows as rf_rows
        for rf_row, rf_data in rf_rows():
            add(*rf_row[:7], limit=rf_row[7:], data=rf_data)
    for row in rows:
        table.add_row(*row)
    out = Console(width=200)
    if rows:
        out.print(table)
    for note in placement_notes:
        out.print(note, markup=False)
    if spsc_results:
        spsc_table, spsc_notes = spsc.table(spsc_results)
        out.print(spsc_table)
        for note in spsc_notes:
            out.print(note, markup=False)
    if records:
        jpath, lpath = save_records(records, {"title": title, "long": long, "window_s": window_s})
        out.print(f"bench results: {jpath} (JSON), {lpath} (line protocol, measurement hilrig_bench; "
                  "shipped with the outbox)", markup=False, highlight=False)
    return 0


def save_records(records: list[BenchRow], meta: dict) -> tuple[Path, Path]:
    """results/bench/<run_id>.json and the line protocol into the default rig's outbox."""
    from ..results import git_sha, new_run_id, results_dirs
    from ..rig import default_rig_path, load_rig

    outbox_dir, _ = results_dirs(load_rig(default_rig_path(None)))
    return write_bench_results(records, run_id=new_run_id(), time_ns=time.time_ns(),
                               json_dir=outbox_dir.parent / "bench", outbox_dir=outbox_dir, git_sha=git_sha(),
                               meta=meta)


if __name__ == "__main__":
    sys.exit(main())
