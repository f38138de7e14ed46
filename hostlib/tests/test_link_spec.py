"""The link spec without a link: `link:` in the DSL (units, bounds, up/down, file:line
errors), the netem realisation's command lines, the metrics from an emulator report,
and a case with `link:` SKIPping where no link can be built (no root)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from hostlib._exceptions import ConfigError
from hostlib.link.netem import direction_stats, netem_args, netem_unsupported, setup_commands, spec_unfit, tbf_args
from hostlib.link.report import link_metrics
from hostlib.link.session import choose_realisation
from hostlib.link.spec import DEFAULT_QUEUE_BYTES, LinkDirection, LinkSpec
from hostlib.tests.conftest import REPO, requires_native

BASE = """
name: linked
device: dut
direction: rx
format: sc8
master_clock: 100 MHz
decimation: 100
transport: {kind: udp, frame_bytes: 1430}
duration: 1 s
"""


def errors_of(write_case, link_yaml: str, base: str = BASE) -> str:
    with pytest.raises(ConfigError) as err:
        write_case(base + link_yaml)
    return str(err.value)


@requires_native
def test_link_is_parsed_with_units_per_direction(write_case) -> None:
    (case,) = write_case(BASE + textwrap.dedent("""
        link:
          rate: 500 Mbit/s
          delay: 125 ms
          jitter: 0.2 ms
          queue: 16 MiB
          loss: 0.01 %
          burst_loss: {p: 0.5 %, r: 25 %}
          duplicate: 0.1 %
          seed: 42
          down: {rate: 1 Gbit/s, loss: 0, reorder: 1 %}
        """))
    spec = case.link
    assert spec is not None and spec.seed == 42
    assert spec.up == LinkDirection(rate_bps=500e6, delay_s=0.125, jitter_s=0.0002, queue_bytes=16 * 1024**2,
                                    loss=pytest.approx(1e-4), burst_p=0.005, burst_r=0.25, duplicate=0.001)
    assert spec.down.rate_bps == 1e9 and spec.down.loss == 0 and spec.down.reorder == 0.01
    assert spec.down.delay_s == 0.125 and spec.down.burst_p == 0.005   # the rest from the top level
    assert spec.core_json("up")["delay_ns"] == 125_000_000 and spec.core_json("down")["seed"] == 43
    (plain,) = write_case(BASE)
    assert plain.link is None


@requires_native
def test_link_defaults(write_case) -> None:
    (case,) = write_case(BASE + "link: {delay: 1 ms}\n")
    assert case.link == LinkSpec(up=LinkDirection(delay_s=0.001), down=LinkDirection(delay_s=0.001), seed=1)
    assert case.link.up.queue_bytes == DEFAULT_QUEUE_BYTES and case.link.up.rate_bps == 0


@requires_native
def test_link_errors_name_the_line_the_field_and_what_is_allowed(write_case) -> None:
    text = errors_of(write_case, textwrap.dedent("""
        link:
          rate: 100 MHz
          delai: 10 ms
          loss: 120 %
          up: {burst_loss: {p: 1 %}}
        """))
    assert ":12: link.rate: 'MHz' is a frequency unit, not a data rate" in text
    assert ":13: link.delai: unknown field 'delai'; did you mean 'delay'?" in text
    assert ":14: link.loss: '120 %' is 1.2; at most 1 is allowed" in text
    assert ":15: link.up.burst_loss.r: required field is missing" in text


@requires_native
def test_link_cross_field_rules(write_case) -> None:
    text = errors_of(write_case, "link: {reorder: 1 %, jitter: 2 ms, up: {delay: 1 ms}}\n")
    assert ":10: link.reorder: reorder needs a delay in the down direction" in text
    assert "link.up.jitter" not in text and ":10: link.jitter: jitter 0.002 s is more than the up delay" in text
    shm = BASE.replace("{kind: udp, frame_bytes: 1430}", "{kind: shm}")
    assert "transport shm never leaves the host" in errors_of(write_case, "link: {delay: 1 ms}\n", shm)


def test_netem_command_lines() -> None:
    wan = LinkDirection(rate_bps=500e6, delay_s=0.125, jitter_s=0.0002, queue_bytes=16 * 1024**2, loss=1e-4,
                        reorder=0.01, duplicate=0.001)
    assert netem_args(wan) == ["delay", "125000us", "200us", "loss", "random", "0.01%", "reorder", "1%",
                               "duplicate", "0.1%"]
    assert tbf_args(wan) == ["rate", "500000000bit", "burst", "62500", "limit", str(16 * 1024**2)]
    bursts = LinkDirection(burst_p=0.005, burst_r=0.25, burst_loss_bad=0.9)
    assert netem_args(bursts) == ["loss", "gemodel", "0.5%", "25%", "90%", "0%"]
    assert tbf_args(LinkDirection()) == []
    spec = LinkSpec(up=wan, down=LinkDirection(rate_bps=1e6))
    cmds = [" ".join(c) for c in setup_commands(spec, "nd", "vd", "10.0.0.1", "nh", "vh", "10.0.0.2", 30)]
    assert cmds == [
        "ip -n nd link add vd type veth peer name vh netns nh",
        "ip -n nd addr add 10.0.0.1/30 dev vd",
        "ip -n nh addr add 10.0.0.2/30 dev vh",
        "ip -n nd link set vd up",
        "ip -n nh link set vh up",
        "tc -n nd qdisc add dev vd root handle 1: netem limit 1000000 delay 125000us 200us loss random 0.01% "
        "reorder 1% duplicate 0.1%",
        f"tc -n nd qdisc add dev vd parent 1:1 handle 10: stab overhead -14 tbf rate 500000000bit burst 62500 "
        f"limit {16 * 1024**2}",
        f"tc -n nh qdisc add dev vh root handle 10: stab overhead -14 tbf rate 1000000bit burst 1600 "
        f"limit {DEFAULT_QUEUE_BYTES}",
    ]
    both = LinkSpec(up=LinkDirection(loss=0.01, burst_p=0.01, burst_r=0.5), down=LinkDirection())
    assert spec_unfit(both) == "up: netem takes one loss model, the spec gives loss and burst_loss"
    assert spec_unfit(spec) is None


def test_netem_counters_in_the_emulators_terms() -> None:
    # A rate-only end: tbf at the root (the shape `tc -s -j qdisc show` prints, as on this host).
    tbf = {"kind": "tbf", "handle": "10:", "root": True, "bytes": 1_458_000, "packets": 1000, "drops": 250,
           "overlimits": 900, "requeues": 0, "backlog": 2916, "qlen": 2}
    assert direction_stats([tbf]) == {"packets_in": 1252, "packets_out": 1000, "bytes_out": 1_458_000,
                                      "dropped_queue": 250, "dropped_loss": 0}
    # netem at the root with tbf as its child: netem's drops hold its losses and its child's drops.
    netem = {"kind": "netem", "handle": "1:", "root": True, "bytes": 1_458_000, "packets": 1000, "drops": 260,
             "backlog": 0, "qlen": 40}
    child = {**tbf, "root": False, "parent": "1:1", "packets": 1000, "drops": 250, "qlen": 3}
    assert direction_stats([netem, child]) == {"packets_in": 1300, "packets_out": 1000, "bytes_out": 1_458_000,
                                               "dropped_queue": 250, "dropped_loss": 10}
    # An end with nothing configured keeps the kernel's default qdisc: no counters of the link's.
    assert direction_stats([{"kind": "noqueue", "root": True, "packets": 0}]) == {}
    assert direction_stats([]) == {}


def test_the_realisation_is_chosen_automatically_or_forced(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = LinkSpec(up=LinkDirection(delay_s=0.01), down=LinkDirection())
    monkeypatch.delenv("HILRIG_LINK", raising=False)
    missing = netem_unsupported()
    which, why = choose_realisation(spec)
    assert (which, why) == (("hilrig-link", missing) if missing else ("netem", "the kernel has netem"))
    monkeypatch.setenv("HILRIG_LINK", "emulator")
    assert choose_realisation(spec)[0] == "hilrig-link"
    monkeypatch.setenv("HILRIG_LINK", "netem")
    assert choose_realisation(spec)[0] == "netem"


def test_link_metrics_are_configured_beside_delivered() -> None:
    from hostlib.metrics import METRICS

    spec = LinkSpec(up=LinkDirection(rate_bps=80e6, delay_s=0.01, loss=0.01), down=LinkDirection())
    hist = {"count": 10, "p50": 10_000_000, "p90": 0, "p99": 12_000_000, "p999": 0, "max": 13_000_000}
    start = {"up": {"packets_in": 100, "bytes_out": 1000, "dropped_loss": 1}}
    end = {"up": {"packets_in": 1100, "bytes_out": 2_001_000, "dropped_loss": 11, "delay_ns": hist, "late_ns": hist,
                  "read_wait_ns": hist}}
    m = link_metrics(spec, start, end, 2.0)   # type: ignore[arg-type]
    assert m["link_configured_rate_Bps"] == 10e6 and m["link_rate_Bps"] == 1e6
    assert m["link_packets_in"] == 1000 and m["link_dropped_loss"] == 10 and m["link_loss_ratio"] == 0.01
    assert m["link_delay_p50_s"] == 0.01 and m["link_delay_p99_s"] == 0.012
    assert m["link_late_p99_s"] == 0.012 and m["link_read_wait_p99_s"] == 0.012
    assert m["link_configured_loss"] == pytest.approx(0.01)
    assert set(m) <= set(METRICS)
    assert set(link_metrics(spec, {}, {}, 1.0)) == {"link_configured_rate_Bps", "link_configured_delay_s",
                                                   "link_configured_loss"}


@requires_native
def test_without_root_a_link_case_skips_with_the_reason() -> None:
    """As an unprivileged user (setpriv to nobody when this runs as root)."""
    with tempfile.TemporaryDirectory(prefix="hilrig-noroot-") as tmp:
        _skips_without_root(Path(tmp))


def _skips_without_root(tmp_path: Path) -> None:
    tmp_path.chmod(0o777)   # pytest's own tmp_path sits in a 0700 folder nobody cannot read
    case = tmp_path / "link.yaml"
    case.write_text(BASE + "link: {delay: 1 ms}\n")
    case.chmod(0o644)
    script = textwrap.dedent(f"""
        from hostlib.dsl import load_cases
        from hostlib.engine import run_case
        from hostlib.rig import load_rig
        (c,) = load_cases([{str(case)!r}])
        r = run_case(c, load_rig({str(REPO / "rigs" / "sim.yaml")!r}), run_id="noroot")
        print(r.verdict.value, r.error)
    """)
    argv = [sys.executable, "-c", script]
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("setpriv (util-linux) is needed to run as an unprivileged user")
        argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=tmp_path, check=False)
    if "PermissionError" in done.stderr:
        pytest.skip(f"the checkout is not readable by an unprivileged user: {done.stderr.strip()[-200:]}")
    assert done.stdout.strip() == ("SKIP an emulated link needs root (network namespaces and TUN devices); "
                                   "run as root"), done.stderr
