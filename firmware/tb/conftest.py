"""pytest for the cocotb testbenches: the shared helpers (hilrig_tb) and the repo importable."""
import sys
from pathlib import Path

_TB = Path(__file__).resolve().parent
for p in (str(_TB), str(_TB.parents[1])):
    if p not in sys.path:
        sys.path.insert(0, p)
