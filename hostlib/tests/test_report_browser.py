"""The HTML report and Robot's log.html of a real run, opened in headless Chromium.

A real Robot run on the simulator rig (a 5 x 2 UDP sweep and a case with injected
drops that FAILs) that writes its HTML report at its end; Debian's chromium driven by
Playwright (executable_path: Playwright cannot download its own browser here).
The screenshots are kept as test artifacts in results/test-artifacts/.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hostlib.tests.conftest import requires_native, skip_unless_required, thin_robot_suite

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = REPO / "results" / "test-artifacts"
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]

SWEEP_CASE = """\
name: Browser sweep
device: dut
direction: rx
master_clock: 10 GHz
decimation: 1
transport: {kind: udp, frame_bytes: 8000}
warmup: 50 ms
duration: 200 ms
thresholds:
  pattern_errors: "== 0"
sweep:
  transport.frame_bytes: [16000, 1392, 64992, 4000, 32000]
  channels: [1, 2]
"""
FAIL_CASE = """\
name: Browser drops
device: dut
direction: rx
master_clock: 100 MHz
decimation: 10
transport: {kind: udp, frame_bytes: 8000}
duration: 2 s
faults: {seed: 3, drop_frames: 20}
thresholds:
  missing_frames: "== 0"
"""


@pytest.fixture(scope="module")
def real_run(tmp_path_factory):
    if not CHROMIUM.exists():
        skip_unless_required(f"{CHROMIUM} is absent (apt-get install chromium)")
    tmp = tmp_path_factory.mktemp("browser")
    suite = tmp / "suite"
    suite.mkdir()
    thin_robot_suite(suite)
    (suite / "sweep.yaml").write_text(SWEEP_CASE)
    (suite / "drops.yaml").write_text(FAIL_CASE)
    rig = tmp / "rig.yaml"
    rig.write_text(textwrap.dedent(f"""\
        name: browser
        devices:
          dut: {{driver: sim, channels: 4, max_rate: 10 GS/s}}
        results:
          outbox: {tmp / 'outbox'}
          evidence: {tmp / 'evidence'}
        """))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    # No --expandkeywords: each case's view must be visible in log.html as Robot writes it.
    proc = subprocess.run([sys.executable, "-m", "robot", "--outputdir", str(tmp / "robot"), "--variable",
                           f"RIG:{rig}", str(suite)], cwd=tmp, env=env, text=True, capture_output=True, timeout=300)
    assert re.search(r"\b11 tests?, ", proc.stdout), proc.stdout[-3000:]
    # The run session wrote the HTML report at the run's end and printed its path.
    (evidence,) = (tmp / "evidence").glob("*.json")
    report = (tmp / "reports" / f"{evidence.stem}.html").resolve()
    assert f"hilrig report: {report}" in proc.stdout, proc.stdout[-3000:]
    return {"report": report, "evidence": json.loads(evidence.read_text()), "log": tmp / "robot" / "log.html"}


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def open_page(browser, path: Path):
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return page, errors


@requires_native
def test_report_in_chromium_shows_tally_sweep_table_and_plots(real_run, browser):
    page, errors = open_page(browser, real_run["report"])
    cases = real_run["evidence"]["cases"]
    verdicts = [c["verdict"] for c in cases]
    # the tally, FAIL first
    tally = page.locator("#tally span[data-verdict]").all_inner_texts()
    assert tally[0] == "1 FAIL" and f"{verdicts.count('PASS')} PASS" in tally, tally
    # the sweep table: rows in numeric order, cells = the evidence's numbers
    table = page.locator('section[data-sweep="Browser sweep"] table[data-metric="throughput_Bps"]')
    assert table.locator("caption").inner_text() == "MB/s"
    rows = table.locator("tr").all()
    assert [r.locator("th").first.inner_text() for r in rows[1:]] == ["1392", "4000", "16000", "32000", "64992"]
    assert rows[0].locator("th").all_inner_texts()[1:] == ["1", "2"]
    by_point = {(c["case"]["sweep_point"]["transport.frame_bytes"], c["case"]["sweep_point"]["channels"]): c
                for c in cases if c["case"]["sweep_point"]}
    for i, fb in enumerate((1392, 4000, 16000, 32000, 64992)):
        cells = rows[i + 1].locator("td").all_inner_texts()
        for j, ch in enumerate((1, 2)):
            assert cells[j] == f"{by_point[(fb, ch)]['metrics']['throughput_Bps'] / 1e6:,.1f}", (fb, ch)
    # every plot is there and rendered (non-zero size)
    labels = page.locator("svg.plot").evaluate_all("els => els.map(e => [e.getAttribute('aria-label'), "
                                                   "e.getBoundingClientRect().width])")
    names = [n for n, _ in labels]
    assert "achieved vs asked rate" in names and "latency percentiles per case" in names
    assert any(n.startswith("sweep Browser sweep") for n in names)
    assert sum(n.startswith("per-second series") for n in names) >= 1
    assert all(w > 100 for _, w in labels), labels
    # the failing case: first in the list, its failure marked on its per-second plot
    first = page.locator("section.case").first
    assert "Browser drops" in first.locator("h3").inner_text() and "FAIL" in first.locator("h3").inner_text()
    assert "failure at" in first.locator("svg.plot").inner_html()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
    assert errors == []


@requires_native
def test_robot_log_opens_without_errors_and_shows_metrics(real_run, browser):
    page, errors = open_page(browser, real_run["log"])
    test_id = page.evaluate("() => { const h = [...document.querySelectorAll('.test .name')]"
                            ".find(e => e.textContent.includes('Browser drops')); "
                            "return h ? h.closest('.test').id : null; }")
    if test_id is None:  # the suite's tests are collapsed: open it by its id
        page.goto(real_run["log"].as_uri() + "#s1-t1")
    page.wait_for_selector("text=missing_frames == 0", timeout=15_000)
    cell = page.locator("td", has_text=re.compile(r"^missing_frames == 0$")).first
    assert cell.is_visible()  # the thresholds, outside the collapsed keyword
    # The key metrics come first, visible, with the evidence's figures.
    key = page.locator("table.key-metrics").first
    assert key.is_visible()
    assert key.locator("th").all_inner_texts()[:4] == ["achieved rate", "of asked rate", "data rate", "frames/s"]
    order = page.evaluate("() => [...document.querySelectorAll('table.key-metrics, table.thresholds')]"
                          ".slice(0, 2).map(e => e.className)")
    assert order == ["key-metrics", "thresholds"], order
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "log.png"), full_page=True)
    assert errors == []


FRAGMENT_LIB = '''\
from robot.api import logger

from hostlib.reports import case_log_html, load_run


class FragmentLib:
    """Logs a case of an evidence file the way the hilrig library logs a finished case."""

    def __init__(self, evidence):
        self.run = load_run(evidence)

    def log_case(self, name):
        case = next(c for c in self.run.cases if c.test_name == name)
        logger.info(case_log_html(case.record), html=True)
'''
FRAGMENT_SUITE = """\
*** Settings ***
Library    FragmentLib.py    ${EVIDENCE}

*** Test Cases ***
Browser drops
    Log Case    Browser drops
"""


@requires_native
def test_case_fragment_in_robot_log(real_run, browser, tmp_path):
    """case_log_html in a real log.html: key metrics first, thresholds, the per-second plot, visible."""
    (tmp_path / "FragmentLib.py").write_text(FRAGMENT_LIB)
    (tmp_path / "fragment.robot").write_text(FRAGMENT_SUITE)
    evidence = tmp_path / "evidence.json"
    evidence.write_text(json.dumps(real_run["evidence"]))
    proc = subprocess.run([sys.executable, "-m", "robot", "--outputdir", str(tmp_path / "out"), "--expandkeywords",
                           "name:FragmentLib.Log Case", "--variable", f"EVIDENCE:{evidence}", str(tmp_path / "fragment.robot")],
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": f"{REPO}:{tmp_path}"}, text=True,
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:]
    page, errors = open_page(browser, tmp_path / "out" / "log.html")
    page.goto((tmp_path / "out" / "log.html").as_uri() + "#s1-t1")
    page.wait_for_selector("table.key-metrics", state="visible", timeout=15_000)
    order = page.evaluate("() => [...document.querySelectorAll('table.key-metrics, table.thresholds, svg.plot')]"
                          ".map(e => e.tagName.toLowerCase() === 'svg' ? 'plot' : e.className)")
    assert order == ["key-metrics", "thresholds", "plot"], order
    heads = page.locator("table.key-metrics th").all_inner_texts()
    assert heads[:4] == ["achieved rate", "of asked rate", "data rate", "frames/s"]
    plot = page.locator("svg.plot").first
    assert plot.get_attribute("aria-label") == "per-second series Browser drops"
    assert plot.bounding_box()["width"] > 100 and "failure at" in plot.inner_html()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "log-fragment.png"), full_page=True)
    assert errors == []
