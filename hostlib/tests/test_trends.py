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
