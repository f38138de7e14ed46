"""The package's layers point down: no module imports a layer above its own, and no
modules import each other in a circle. The package's lazy face (hostlib/__init__.py)
is the one module allowed to reach up (it is what users import)."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]

# Top to bottom; modules on one floor may import each other (never in a circle).
FLOORS = (
    ("hostlib.__main__", "hostlib.cli", "hostlib.robot", "hostlib.pytest_plugin"),
    ("hostlib.session",),
    ("hostlib.reports",),
    ("hostlib.bench", "hostlib.lab"),
    ("hostlib.engine",),
    ("hostlib.drivers", "hostlib.results"),
    ("hostlib.rig", "hostlib.selection"),
    ("hostlib.dsl",),
    ("hostlib.transports", "hostlib.link"),
    ("hostlib.units", "hostlib.reference"),
    ("hostlib.counters", "hostlib.verdicts", "hostlib.metrics", "hostlib._exceptions", "hostlib._installed",
     "hostlib._process", "hostlib._native"),
)
LAZY_FACE = "hostlib"


def floor_of(module: str) -> int | None:
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        prefix = ".".join(parts[:n])
        for i, floor in enumerate(FLOORS):
            if prefix in floor:
                return i
    return None


def modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent)
        if rel.parts[1] in ("tests", "native", "report_templates"):
            continue
        name = ".".join(rel.with_suffix("").parts)
        out[name.removesuffix(".__init__")] = path
    return out


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package modules `name` imports (a submodule where it names one, else its package)."""
    base = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        stems: list[str] = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = base.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                stem = ".".join(parts + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            subs = [f"{stem}.{a.name}" for a in node.names if f"{stem}.{a.name}" in known]
            stems = subs if len(subs) == len(node.names) else [*subs, stem]
        elif isinstance(node, ast.Import):
            stems = [a.name for a in node.names]
        for stem in stems:
            while stem and stem not in known:
                stem = stem.rpartition(".")[0]
            if stem and stem != name and stem != LAZY_FACE:
                found.add(stem)
    return found


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def test_every_module_has_a_floor():
    assert [m for m in modules() if m != LAZY_FACE and floor_of(m) is None] == []


def test_no_module_imports_a_layer_above_its_own():
    upward = [f"{m} -> {t}" for m, targets in graph().items() if m != LAZY_FACE
              for t in targets if floor_of(t) < floor_of(m)]
    assert upward == []


def test_no_import_circles():
    g = graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(v: str) -> None:   # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    for v in g:
        if v not in index:
            visit(v)
    assert circles == []
