"""The GNU Radio module gr-hilrig (gr_blocks/, built and installed by `make build`)
imports in the project's venv with no environment variables: a .pth names its prefix,
RPATH finds its libraries."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .conftest import REPO, skip_unless_required

PREFIX = REPO / "build" / "gr-prefix"


def test_from_gnuradio_import_hilrig_in_the_venv(tmp_path):
    if not PREFIX.is_dir():
        skip_unless_required("gr-hilrig not installed (make build installs it into build/gr-prefix)")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_LIBRARY_PATH")}
    probe = subprocess.run(
        [sys.executable, "-c",
         "from gnuradio import gr, hilrig; "
         "src = hilrig.pattern_source('sc16', 1); chk = hilrig.pattern_check('sc16', 1, 10000); "
         "tb = gr.top_block(); tb.connect(src, chk); tb.run(); "
         "print(hilrig.__file__); print(chk.samples(), chk.pattern_errors())"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert probe.returncode == 0, probe.stderr
    module_file, counts = probe.stdout.split("\n")[:2]
    assert Path(module_file).is_relative_to(PREFIX), module_file
    assert counts == "10000 0"
