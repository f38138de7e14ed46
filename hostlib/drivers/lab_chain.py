"""A lab's own receive chain in a `host: gnuradio` case (`flowgraph:`, docs/gnuradio.md).

The convention is GNU Radio's own for a reusable chain: a hierarchical block with one
input and one output per channel. hilrig connects the device's source to its inputs
and pattern_check to its outputs, so the chain runs between the radio and the check.

- `.grc`: Options -> Generate Options "Hier Block", one Pad Source and one Pad Sink
  (num_streams = channels, or one pad per channel). hilrig compiles it headlessly
  with `grcc` into a temporary directory and imports the class grcc writes.
- `.py`: a module defining one `gr.hier_block2` subclass whose constructor needs no
  arguments (`chain.py:ClassName` picks one of several).

The item size at the pads picks the formats: 8-byte items are complex float (fc32,
the source scales by 1/32768, exact; sc16 cases only: pattern_check checks fc32 as
sc16 words), 4-byte items complex int16 (sc16 cases), 2-byte complex int8 (sc8).
pattern_check passes only when the chain hands on every sample unchanged and in
order: one output item per input item, no delay, no rescaling (e.g. a FIR with the
single tap 1.0, a copy, a multiply by 1; a decimating or delaying chain does not).
"""
from __future__ import annotations

import importlib.util
import inspect
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Protocol

from .._exceptions import ConfigError, InfrastructureError

# item bytes at a pad -> cpu format of the source/check on that side
FORMAT_OF_ITEM_BYTES = {8: "fc32", 4: "sc16", 2: "sc8"}
GRCC_TIMEOUT_S = 60.0


@dataclass
class LabChain:
    """The lab's hier block, made, with where it came from (for messages)."""

    block: object       # the lab's gr.hier_block2 (GNU Radio's bindings are untyped)
    where: str          # file:line of the class (or of the .grc's options block)
    in_format: str      # cpu format the chain takes (the source's output)
    out_format: str     # cpu format the chain gives (pattern_check's input)


def split_spec(spec: str) -> tuple[Path, str | None]:
    """"dir/chain.py:Name" -> (path, "Name"); "dir/chain.grc" -> (path, None)."""
    path, _, name = spec.partition(".py:")
    if name:
        return Path(path + ".py"), name
    return Path(spec), None


def _grc_line(grc: Path, block_id: str | None) -> int | None:
    """The line of the first block with GRC id `block_id` (None: the options) in a .grc."""
    try:
        from ruamel.yaml import YAML

        tree = YAML().load(grc.read_text())
        if block_id is None:
            return int(tree["options"].lc.line) + 1
        for item in tree.get("blocks") or []:
            if item.get("id") == block_id:
                return int(item.lc.line) + 1
    except Exception:  # noqa: BLE001  a line number is a courtesy: never fail for it
        return None
    return None


def _where(path: Path, line: int | None) -> str:
    return f"{path}:{line}" if line else str(path)


def _compile_grc(grc: Path, out_dir: Path) -> Path:
    """grcc (headless) -> the generated .py; a flowgraph that is not a hier block is refused."""
    try:
        from ruamel.yaml import YAML

        options = (YAML().load(grc.read_text()) or {}).get("options", {}).get("parameters", {})
    except Exception as exc:  # noqa: BLE001  the YAML parser's message says what is wrong
        raise ConfigError(f"{grc}: flowgraph is not a readable .grc file: {exc}") from None
    generate = options.get("generate_options", "qt_gui")
    if generate != "hb":
        raise ConfigError(
            f"{_where(grc, _grc_line(grc, None))}: flowgraph generate_options is {generate!r}; hilrig runs a "
            "lab's chain as a hier block: set Options -> Generate Options to 'Hier Block' with one Pad "
            "Source and one Pad Sink per channel (docs/gnuradio.md)")
    grcc = shutil.which("grcc")
    if grcc is None:
        raise InfrastructureError("grcc (GNU Radio Companion's compiler) is not on PATH: apt-get install gnuradio")
    proc = subprocess.run([grcc, "-o", str(out_dir), str(grc)], capture_output=True, text=True,
                          timeout=GRCC_TIMEOUT_S, stdin=subprocess.DEVNULL)
    generated = sorted(out_dir.glob("*.py"))
    if proc.returncode != 0 or not generated:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise ConfigError(f"{grc}: grcc could not compile the flowgraph: {' | '.join(tail)}")
    return generated[0]


def _import(py: Path, module_name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(module_name, py)
    if spec is None or spec.loader is None:
        raise ConfigError(f"{py}: not an importable Python file")
    module = importlib.util.module_from_spec(spec)
    # Registered as GNU Radio's own generated modules are: inspect (class lines) and
    # anything inside the module that looks itself up find it.
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001  the lab's own code: say where it failed
        sys.modules.pop(module_name, None)
        frames = [f for f in inspect.trace() if f.filename == str(py)]
        line = frames[-1].lineno if frames else None
        raise ConfigError(f"{_where(py, line)}: importing the flowgraph failed: {type(exc).__name__}: {exc}") from None
    return module


def _hier_class(module: ModuleType, py: Path, name: str | None, shown: Path) -> type:
    from gnuradio import gr

    found = {n: c for n, c in vars(module).items()
             if inspect.isclass(c) and issubclass(c, gr.hier_block2) and c.__module__ == module.__name__}
    if name is not None:
        if name not in found:
            raise ConfigError(f"{shown}: no gr.hier_block2 subclass {name!r} "
                              f"(it defines: {', '.join(sorted(found)) or 'none'})")
        return found[name]
    if len(found) != 1:
        what = ", ".join(sorted(found)) or "none"
        raise ConfigError(f"{shown}: expected exactly one gr.hier_block2 subclass (the lab's chain, one input "
                          f"and one output per channel), found {what}; name one as {shown}:<ClassName>")
    return next(iter(found.values()))


class IoSignature(Protocol):
    """gr.io_signature, as far as the chain's check reads it."""

    def min_streams(self) -> int: ...
    def max_streams(self) -> int: ...
    def sizeof_stream_item(self, index: int) -> int: ...


def _check_side(sig: IoSignature, side: str, channels: int, wire_format: str, where: str, what: str) -> str:
    """One side of the chain (its io signature) against the case: a port per channel,
    an item size the case's format allows; returns the cpu format on that side."""
    lo, hi = sig.min_streams(), sig.max_streams()
    if not (lo <= channels and (hi < 0 or channels <= hi)):
        have = str(lo) if lo == hi else f"{lo}..{hi}"
        raise ConfigError(f"{where}: {what} has {have} {side} port(s); the case streams {channels} "
                          f"channel(s): one {side} per channel")
    size = sig.sizeof_stream_item(0)
    fmt = FORMAT_OF_ITEM_BYTES.get(size)
    if fmt is None or (fmt != "fc32" and fmt != wire_format) or (fmt == "fc32" and wire_format != "sc16"):
        allowed = "8 (complex float) or 4 (complex int16)" if wire_format == "sc16" else "2 (complex int8)"
        raise ConfigError(f"{where}: {what} carries {size}-byte {side} items; a case of format "
                          f"{wire_format} needs {allowed}-byte items")
    return fmt


def load_chain(spec: str, channels: int, wire_format: str) -> LabChain:
    """Make the lab's chain named by a case's `flowgraph:` (an absolute path, resolved
    by the loader); ConfigError with file:line when it cannot be used."""
    path, name = split_spec(spec)
    if not path.is_file():
        raise ConfigError(f"{path}: flowgraph file not found")
    if path.suffix not in (".py", ".grc"):
        raise ConfigError(f"{path}: a flowgraph is a .grc or a .py file")
    try:
        from gnuradio import gr  # noqa: F401
    except ImportError as exc:
        raise InfrastructureError(f"flowgraph {path}: GNU Radio does not import: {exc}") from None
    with tempfile.TemporaryDirectory(prefix="hilrig-grcc-") as tmp:
        py = _compile_grc(path, Path(tmp)) if path.suffix == ".grc" else path
        module = _import(py, f"hilrig_lab_chain_{abs(hash(str(py)))}")
        cls = _hier_class(module, py, name, path)
    if path.suffix == ".grc":
        where = _where(path, _grc_line(path, "pad_source"))
        out_where, what_in, what_out = _where(path, _grc_line(path, "pad_sink")), "the Pad Source", "the Pad Sink"
    else:
        try:
            line: int | None = inspect.getsourcelines(cls)[1]
        except (OSError, TypeError):
            line = None
        where = out_where = _where(path, line)
        what_in = what_out = f"class {cls.__name__}"
    try:
        block = cls()
    except TypeError as exc:
        raise ConfigError(f"{where}: the chain's class {cls.__name__} must be made without arguments: {exc}") from None
    except Exception as exc:  # noqa: BLE001  the lab's constructor: say where it failed
        raise ConfigError(f"{where}: making {cls.__name__} failed: {type(exc).__name__}: {exc}") from None
    in_fmt = _check_side(block.input_signature(), "input", channels, wire_format, where, what_in)
    out_fmt = _check_side(block.output_signature(), "output", channels, wire_format, out_where, what_out)
    return LabChain(block=block, where=where, in_format=in_fmt, out_format=out_fmt)
