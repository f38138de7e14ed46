"""No input crashes the case and rig loaders (issue 11): property-based fuzzing.

Generated and mutated case and rig YAML (random keys incl. null/empty/non-string
ones, huge and tiny numbers, wrong types, invalid UTF-8, NUL, anchors/aliases, deep
nesting) must each give either a clean load or errors that are all located
(file:line; byte offset where the problem is a byte), never an exception, never a
library warning, never the loader's last-resort "could not check" net. Together
the tests below run well over 2000 examples (MAX_EXAMPLES) in a few seconds.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
import warnings
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from ruamel.yaml import YAML  # noqa: E402

from hostlib._exceptions import ConfigError  # noqa: E402
from hostlib.dsl.loader import UNFORESEEN, validate_paths  # noqa: E402
from hostlib.rig import load_rig  # noqa: E402

from .conftest import REPO  # noqa: E402

# 1100 examples per `make test` (hypothesis draws new ones every run); `make fuzz` runs
# HILRIG_FUZZ_SCALE (default 10) times as many.
_SCALE = float(os.environ.get("HILRIG_FUZZ_SCALE", "1"))
MAX_EXAMPLES = {kind: max(1, int(n * _SCALE)) for kind, n in
                {"case_tree": 450, "case_bytes": 350, "rig_tree": 150, "rig_bytes": 150}.items()}
def fuzz(kind: str) -> settings:
    return settings(max_examples=MAX_EXAMPLES[kind], deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))

BASE_CASE = {
    "name": "fuzz", "device": "dut", "direction": "rx", "master_clock": "100 MHz", "decimation": 4,
    "transport": {"kind": "udp", "frame_bytes": 8000}, "duration": "1 s", "warmup": "100 ms",
    "thresholds": {"throughput": ">= 99% of rate", "missing_frames": "== 0"},
    "faults": {"seed": 1, "drop_frames": 2}, "sweep": {"decimation": [4, 8]},
}
BASE_RIG = {
    "name": "fuzzrig",
    "devices": {"dut": {"driver": "sim", "channels": 2, "max_rate": "1 GS/s", "transports": ["udp", "shm"]},
                "radio": {"driver": "soapy", "args": {"driver": "hilrig"}, "max_rate": "10 MS/s"}},
    "results": {"outbox": "results/outbox"},
}

# ----------------------------------------------------------------------------- strategies

numbers = st.one_of(
    st.integers(), st.integers(min_value=-(10**400), max_value=10**400),
    st.sampled_from([0, -1, 1, 2**63, 2**64, 10**308, 10**309, 10**4000]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([5e-324, 1e-300, 1e300, 1.7976931348623157e308, -0.0]),
)
unit_texts = st.builds(lambda n, u: f"{n} {u}".strip(), st.sampled_from(["1e300", "1e25", "-5", "0", "1e-30", "nan", "inf",
                                                                          "3", "99.9", "1" + "0" * 400, "0x10", ""]),
                       st.sampled_from(["Hz", "MHz", "GHz", "s", "ms", "MS/s", "%", "KiB", "B", "bogus", ""]))
scalars = st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=20), unit_texts)
keys = st.one_of(st.sampled_from(["name", "device", "direction", "master_clock", "decimation", "interpolation",
                                  "transport", "duration", "warmup", "faults", "sweep", "thresholds", "kind",
                                  "frame_bytes", "slots", "seed", "drop_frames", "cases", "devices", "driver",
                                  "max_rate", "args", "results", "influxdb", "", " "]),
                 st.text(max_size=8), st.none(), st.integers(), st.booleans(), st.floats(allow_nan=False))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(keys, inner, max_size=4)), max_leaves=12)


@st.composite
def mutated_tree(draw, base: dict):
    """The base document with random fields replaced, added, removed or retyped, at any depth."""
    doc = _copy(base)
    for _ in range(draw(st.integers(1, 6))):
        path = [doc]
        node = doc
        while isinstance(node, dict) and node and draw(st.booleans()):
            key = draw(st.sampled_from(sorted(node, key=repr)))
            if not isinstance(node[key], dict):
                break
            node = node[key]
        action = draw(st.sampled_from(["set", "add", "del", "wrap"]))
        if action == "del" and node:
            node.pop(draw(st.sampled_from(sorted(node, key=repr))))
        elif action == "wrap" and node:
            key = draw(st.sampled_from(sorted(node, key=repr)))
            node[key] = draw(st.sampled_from([[node[key]], {"x": node[key]}, None]))
        elif action == "set" and node:
            node[draw(st.sampled_from(sorted(node, key=repr)))] = draw(values)
        else:
            node[draw(keys)] = draw(values)
        del path
    return doc


def _copy(node):
    if isinstance(node, dict):
        return {k: _copy(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_copy(v) for v in node]
    return node


def dump(doc) -> bytes:
    import io
    out = io.StringIO()
    y = YAML(typ="safe", pure=True)
    y.default_flow_style = False
    y.dump(doc, out)
    return out.getvalue().encode("utf-8")


SNIPPETS = [b"\x00", b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x1b", b"\t", b"&a ", b"*a", b"&a 1\nz: *a\n",
            b"<<: *a\n", b"? [x, y]\n: 1\n", b"null: 1\n", b"~: 2\n", b"1: x\n", b"[" * 200 + b"]" * 200,
            b"- " * 120 + b"x\n", b"!!binary aGk=", b"!!set {a, b}", b"!custom 3", b"2001-13-45", b"%YAML 1.1\n---\n",
            b"---\n", b"...\n", b"'", b'"', b": ", b"\n  ", b"{", b"9" * 5000, b"1e999", b"0x1F", b".nan", b"\xef\xbb\xbf"]
BILLION_LAUGHS = b"a: &a [x, x, x, x, x, x, x, x, x, x]\n" + b"".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n".encode() for i in range(8))


@st.composite
def mutated_bytes(draw, base: dict):
    data = bytearray(dump(draw(mutated_tree(base))) if draw(st.booleans()) else dump(base))
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, len(data)))
        op = draw(st.sampled_from(["insert", "delete", "replace", "dupline"]))
        if op == "insert":
            data[pos:pos] = draw(st.one_of(st.sampled_from(SNIPPETS), st.binary(max_size=6)))
        elif op == "delete":
            del data[pos:pos + draw(st.integers(1, 20))]
        elif op == "replace" and pos < len(data):
            data[pos] = draw(st.integers(0, 255))
        else:
            lines = bytes(data).split(b"\n")
            i = draw(st.integers(0, max(len(lines) - 1, 0)))
            lines.insert(i, lines[i] if lines else b"")
            data = bytearray(b"\n".join(lines))
    if draw(st.integers(0, 20)) == 0:
        data += b"\n" + BILLION_LAUGHS
    return bytes(data)


# ----------------------------------------------------------------------------- the properties

def _located(issue, file: str) -> bool:
    return issue.file == file and issue.line is not None and issue.line >= 1


def check_case_file(path: Path, data: bytes) -> None:
    path.write_bytes(data)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cases, issues = validate_paths([path])
    assert not [str(w.message) for w in caught], "library warning reached the console"
    assert bool(cases) != bool(issues) or (not cases and issues), (cases, issues)
    for issue in issues:
        assert _located(issue, str(path)), (str(issue), data[:300])
        assert UNFORESEEN not in issue.message, (str(issue), data[:300])
    for case in cases:   # whatever loads is inside the documented bounds
        assert 1e3 <= case.rate_sps <= 10e9 and 0 < case.duration_s <= 86400, case


def check_rig_file(path: Path, data: bytes) -> None:
    path.write_bytes(data)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            rig = load_rig(path)
        except ConfigError as exc:
            for issue in exc.issues:
                assert _located(issue, str(path)), (str(issue), data[:300])
        else:
            assert rig.devices, rig
    assert not [str(w.message) for w in caught], "library warning reached the console"


@pytest.fixture(scope="module")
def scratch():
    with tempfile.TemporaryDirectory(prefix="hilrig-fuzz-") as d:
        yield Path(d)


@fuzz("case_tree")
@given(doc=mutated_tree(BASE_CASE))
def test_mutated_case_trees_never_crash(scratch, doc):
    check_case_file(scratch / "case.yaml", dump(doc))


@fuzz("case_bytes")
@given(data=mutated_bytes(BASE_CASE))
def test_mutated_case_bytes_never_crash(scratch, data):
    check_case_file(scratch / "case.yaml", data)


@fuzz("rig_tree")
@given(doc=mutated_tree(BASE_RIG))
def test_mutated_rig_trees_never_crash(scratch, doc):
    check_rig_file(scratch / "rig.yaml", dump(doc))


@fuzz("rig_bytes")
@given(data=mutated_bytes(BASE_RIG))
def test_mutated_rig_bytes_never_crash(scratch, data):
    check_rig_file(scratch / "rig.yaml", data)


def test_the_base_documents_load(scratch):
    """The fuzz starts from valid documents (else it would only test the error path)."""
    check_case_file(scratch / "case.yaml", dump(BASE_CASE))
    assert len(validate_paths([scratch / "case.yaml"])[0]) == 2
    check_rig_file(scratch / "rig.yaml", dump(BASE_RIG))


# ----------------------------------------------------------------------------- the issue's examples, end to end

CASE_HEAD = """\
name: x
device: dut
direction: rx
decimation: 4
transport: {kind: udp}
duration: 1 s
"""
EXAMPLES = {   # file -> (contents, what its one error line must say)
    "nullkey.yaml": (CASE_HEAD + "master_clock: 100 MHz\nnull: 3\n", ":8: key null is a null"),
    "hugeint.yaml": (CASE_HEAD + "master_clock: 100 MHz\ntimeout: 1" + "0" * 400 + "\n", ":8: timeout: "),
    "badutf8.yaml": (CASE_HEAD.encode() + b"master_clock: 100 MHz\nname2: \"\xff\"\n",
                     f":8: byte offset {len(CASE_HEAD) + 30}: byte 0xff"),
    "nul.yaml": (CASE_HEAD + "master_clock: 100 MHz\ndescription: \"a\x00b\"\n",
                 f":8: byte offset {len(CASE_HEAD) + 37}: character U+0000"),
    "anchor.yaml": ("name: &a x\ndevice: dut\ndirection: rx\ndecimation: 4\ntransport: &a {kind: udp}\n"
                    "duration: 1 s\nmaster_clock: 100 MHz\n", ":5: anchor &a defined again (first at line 1)"),
    "clock.yaml": (CASE_HEAD + "master_clock: 1e300 Hz\n", ":7: master_clock: '1e300 Hz' is 1e+300 Hz; at most 2e+10 Hz"),
    "clock25.yaml": (CASE_HEAD + "master_clock: 1e25 Hz\n", ":7: master_clock: "),
    "short_faults.yaml": (CASE_HEAD.replace("decimation: 4", "decimation: 100").replace("1 s", "500 ms")
                          .replace("{kind: udp}", "{kind: udp, frame_bytes: 8000}")
                          + "master_clock: 100 MHz\nfaults: {drop_frames: 137}\n",
                          ":8: faults: the faults take 137 frame(s), but a 0.5 s run (duration + warmup) at 1 MS/s "
                          "carries 251 frames of 1988 samples, which places at most 29"),
}


def test_hilrig_validate_reports_each_located_without_traceback_or_warning(tmp_path):
    paths = []
    for name, (text, _) in EXAMPLES.items():
        p = tmp_path / name
        p.write_bytes(text if isinstance(text, bytes) else text.encode())
        paths.append(str(p))
    env = {**os.environ, "PYTHONWARNINGS": "default"}
    proc = subprocess.run([sys.executable, "-m", "hostlib", "validate", *paths], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "Warning" not in proc.stderr, proc.stderr
    lines = proc.stdout.splitlines()
    for name, (_, expected) in EXAMPLES.items():
        mine = [ln for ln in lines if ln.startswith(str(tmp_path / name) + ":")]
        assert len(mine) == 1, (name, mine)
        assert expected in mine[0], (name, mine[0])


def test_documented_bounds_are_inclusive(tmp_path):
    """The bounds of docs/dsl.md hold at their edges: 10 GS/s and 1 kS/s load."""
    p = tmp_path / "edges.yaml"
    p.write_text(textwrap.dedent("""\
        - {name: fast, device: dut, direction: rx, master_clock: 20 GHz, decimation: 2,
           transport: {kind: udp}, duration: 1 s}
        - {name: slow, device: dut, direction: rx, master_clock: 65.536 MHz, decimation: 65536,
           transport: {kind: udp}, duration: 24 h}
        """).replace("24 h", "86400 s"))
    cases, issues = validate_paths([p])
    assert not issues, [str(i) for i in issues]
    assert [c.rate_sps for c in cases] == [10e9, 1e3]
