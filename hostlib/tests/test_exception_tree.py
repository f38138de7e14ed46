"""One exception tree (hostlib/_exceptions.py), low-level errors mapped once per sink, and
the result/threshold modules import downwards only."""
from __future__ import annotations

import ast
import socket
from pathlib import Path

import pytest

from hostlib import _exceptions as tree
from hostlib.results.influx import InfluxTarget
from hostlib.results.query import rows_from_influx

PACKAGE = Path(__file__).resolve().parents[1]
# pytest's own failure outcome for a case item, not an error hostlib raises.
NOT_HILRIG_ERRORS = {("pytest_plugin.py", "CaseFailed")}


def _product_files() -> list[Path]:
    return [p for p in PACKAGE.rglob("*.py") if "tests" not in p.relative_to(PACKAGE).parts
            and "native" not in p.relative_to(PACKAGE).parts]


def _raised_classes(path: Path) -> list[str]:
    """Classes in `path` whose bases name an exception (…Error, …Exception, …Absent …)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ClassDef):
            bases = [b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else ""
                     for b in node.bases]
            if any(b.endswith(("Error", "Exception")) or b in ("DeviceAbsent", "HilrigError") for b in bases):
                out.append(node.name)
    return out


def test_every_exception_class_lives_in_the_one_tree():
    outside = [(str(p.relative_to(PACKAGE)), name) for p in _product_files() if p.name != "_exceptions.py"
               for name in _raised_classes(p)]
    assert [o for o in outside if o not in NOT_HILRIG_ERRORS] == []
    for name in ("UnitError", "ThresholdError", "FrameError"):   # still ValueErrors for pydantic validators
        cls = getattr(tree, name)
        assert issubclass(cls, tree.InputError) and issubclass(cls, ValueError)
    assert issubclass(tree.DeviceLocked, tree.InfrastructureError)
    for cls in (tree.InfluxSetupError, tree.InfluxUnavailable, tree.InfluxRejected):
        assert issubclass(cls, tree.ResultServerError) and issubclass(cls, tree.InfrastructureError)


def test_the_old_names_still_import():
    from hostlib.dsl import ThresholdError
    from hostlib.reference import FrameError
    from hostlib.results.influx import InfluxSetupError
    from hostlib.rig.lock import DeviceLocked
    from hostlib.units import UnitError

    assert (ThresholdError, FrameError, InfluxSetupError, DeviceLocked, UnitError) == (
        tree.ThresholdError, tree.FrameError, tree.InfluxSetupError, tree.DeviceLocked, tree.UnitError)


def test_reading_back_from_an_unreachable_server_is_one_infrastructure_error():
    with socket.socket() as s:   # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    target = InfluxTarget(url=f"http://127.0.0.1:{port}", api="v1", database="x", timeout_s=2.0)
    with pytest.raises(tree.InfluxUnavailable, match="unreachable: connection refused") as e:
        rows_from_influx(target, rig_name="sim", run_id=None, last=1)
    assert isinstance(e.value, tree.InfrastructureError)


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(("." * node.level) + node.module)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def test_results_and_thresholds_import_downwards():
    # thresholds get the case's parameters as data: no import of the case
    assert not {n for n in _imports(PACKAGE / "dsl" / "thresholds.py") if n.endswith("case")}
    # the trend history reads rows through results.query, not through the CLI
    assert not {n for n in _imports(PACKAGE / "reports" / "history.py") if "cli" in n}
    # the evidence schema builds on the outcome types alone (a leaf below every layer)
    assert {n for n in _imports(PACKAGE / "results" / "schema.py") if n.startswith((".", "hostlib"))} == {
        "hostlib.verdicts"}
