"""pytest for firmware/: the testbench helpers (tb/hilrig_tb.py), the synthesis flow
(synth/flow.py), the BMC runner (formal/run_bmc.py) and the repo root importable."""
import sys
from pathlib import Path

_FW = Path(__file__).resolve().parent
for p in (_FW / "tb", _FW / "synth", _FW / "formal", _FW.parent):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))
