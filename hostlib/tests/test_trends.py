"""Nightly trends: regression flags over outbox history, and the seeded detection benchmark."""
from __future__ import annotations

import random
import textwrap
from pathlib import Path

from hostlib.cli import main as cli_main
from hostlib.reports.detection import RobustGate, benchmark_table, run_benchmark

NIGHTS = 30
STEP_NIGHT = 24


def run_id(night: int) -> str:
    return f"2026{10 + night // 28:02d}{1 + night % 28:02d}T210000Z-{night:06x}"


def write_outbox(folder: Path, rig: str = "nightly") -> list[str]:
    """30 nights of two cases: 'RX steady' with 2 % noise, 'RX slower' 8 % slower from night 24."""
    rng = random.Random(7)
    folder.mkdir(parents=True)
    ids = []
    for night in range(NIGHTS):
        rid = run_id(night)
        ids.append(rid)
        ts = 1_790_000_000_000_000_000 + night * 86_400_000_000_000
        lines = []
        for name, drop in (("RX steady", 0.0), ("RX slower", 0.08 if night >= STEP_NIGHT else 0.0)):
            rate = 1e7 * (1 + 0.02 * rng.gauss(0, 1)) * (1 - drop)
            lines.append(f'hilrig_case,rig={rig},testcase={name.replace(" ", chr(92) + " ")},verdict=PASS '
                         f'throughput_sps={rate},missing_frames=0,latency_p99_s={0.001 * (1 + 0.02 * rng.gauss(0, 1))},'
                         f'run_id="{rid}" {ts}')
        (folder / f"{rid}.lp").write_text("\n".join(lines) + "\n")
    return ids


def test_gate_flags_a_step_and_not_an_outlier():
    rng = random.Random(3)
    flat = [100 * (1 + 0.02 * rng.gauss(0, 1)) for _ in range(40)]
    assert RobustGate().first_flag(flat) is None
    spiky = list(flat)
    spiky[30] *= 0.85                                  # one bad night
    assert RobustGate().first_flag(spiky) is None
    stepped = flat[:30] + [v * 0.9 for v in flat[30:]]
    flag = RobustGate().first_flag(stepped)
    assert flag is not None and 30 <= flag.night <= 34 and flag.since >= 30
    assert flag.relative < -0.05
    # latency: higher is worse
    assert RobustGate().first_flag([v * (1.1 if i >= 30 else 1) for i, v in enumerate(flat)], higher_is_better=False)


def test_detection_benchmark_meets_the_issue_figures():
    text, ok = benchmark_table(seed=1)
    assert ok, text
    gate, naive = run_benchmark(seed=1)
    assert gate.detected >= 36 and gate.false_alarms == 0
    assert max(gate.nights_to_detect) <= 5
    assert naive.false_alarms > 0                       # the rule the issue rules out does not cope


def test_trends_cli_flags_the_regression_from_outbox_history(tmp_path, capsys):
    outbox = tmp_path / "outbox"
    ids = write_outbox(outbox)
    rig = tmp_path / "nightly.yaml"
    rig.write_text(textwrap.dedent(f"""\
        name: nightly
        devices:
          dut: {{driver: sim, max_rate: 1 GS/s}}
        results:
          outbox: {outbox}
        """))
    out = tmp_path / "trends.html"
    rc = cli_main(["trends", "--rig", str(rig), "--nights", "30", "--output", str(out)])
    text = capsys.readouterr().out
    assert rc == 1, text
    flagged = [line for line in text.splitlines() if line.startswith("REGRESSION")]
    assert len(flagged) == 1 and flagged[0].startswith("REGRESSION RX slower: throughput_sps 10.")
    since = flagged[0].rsplit("since night ", 1)[1]
    assert since in ids[STEP_NIGHT:STEP_NIGHT + 2]
    page = out.read_text()
    assert 'id="regressions"><span class="fail">1 regressions' in page
    assert page.count('class="spark"') == 6              # 2 cases x 3 metrics
    # the nights before the step: nothing flagged, exit 0
    for rid in ids[STEP_NIGHT:]:
        (outbox / f"{rid}.lp").unlink()
    assert cli_main(["trends", "--rig", str(rig), "--output", str(out)]) == 0
    assert "no regression in 6 case/metric trends over 24 nights" in capsys.readouterr().out


def test_trends_flag_the_rig_getting_slower_from_bench_files(tmp_path, capsys):
    """`make bench` files (hilrig_bench) in the outbox and in sent/: the ratio of the shm ring to
    memcpy drops 10 % from night 24 on; the UDP row stays."""
    from hostlib.bench.record import BenchRow, write_bench_results

    outbox = tmp_path / "outbox"
    ids = write_outbox(outbox)
    rng = random.Random(11)
    for night, rid in enumerate(ids):
        slow = 0.9 if night >= STEP_NIGHT else 1.0
        rows = [BenchRow("shm ring, checked", 8192, 5.4e10 * slow, 6.6e6, 100.0, "memcpy in+out", 3.4e10, 4.2e6,
                         1.58 * slow * (1 + 0.02 * rng.gauss(0, 1))),
                BenchRow("UDP zero-loss", 1472, 2.5e9, 1.7e6, 95.0, "iperf3", 2.5e8, 1.7e5,
                         10.0 * (1 + 0.02 * rng.gauss(0, 1)))]
        write_bench_results(rows, run_id=rid, time_ns=1_790_000_000_000_000_000 + night * 86_400_000_000_000,
                            json_dir=tmp_path / "bench", outbox_dir=outbox if night % 2 else outbox / "sent")
    rig = tmp_path / "nightly.yaml"
    rig.write_text(f"name: nightly\ndevices:\n  dut: {{driver: sim, max_rate: 1 GS/s}}\nresults:\n  outbox: {outbox}\n")
    assert cli_main(["trends", "--rig", str(rig), "--output", str(tmp_path / "t.html")]) == 1
    flagged = [line for line in capsys.readouterr().out.splitlines() if line.startswith("REGRESSION")]
    assert len(flagged) == 3, flagged
    assert any(line.startswith("REGRESSION bench shm ring, checked 8192 B: ratio 1.5") for line in flagged)
    assert "REGRESSION bench shm ring, checked 8192 B: rig_Bps 54 GB/s -> 48.6 GB/s (-10.0 %)" in "\n".join(flagged)
    assert any(line.startswith("REGRESSION RX slower: throughput_sps") for line in flagged)
