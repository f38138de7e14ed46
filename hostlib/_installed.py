"""Files the hostlib package carries beside its modules, found relative to the package
itself (never to a repository checkout): an installed wheel and the dev tree have the
same layout (docs/architecture.md, "Build outputs").

    hostlib/_native*.so         the pybind11 module
    hostlib/bin/hilrig-sim      the simulator; hilrig-bench, the bench's native half
    hostlib/rigs/sim.yaml       the default rig
    hostlib/report_templates/   the HTML report's Jinja2 templates (reports/templates)
    hostlib/soapy_modules/      the SoapySDR module driver=hilrig (wheel only)
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def packaged_executable(name: str) -> Path | None:
    """hostlib/bin/<name> if it is there and executable."""
    path = PACKAGE_DIR / "bin" / name
    return path if path.is_file() and os.access(path, os.X_OK) else None


def find_executable(name: str, env_var: str) -> tuple[str | None, str]:
    """One of the package's executables: $env_var, then hostlib/bin/<name> (the wheel's,
    or a link into build/bin in the dev tree), then PATH. (path or None, why not: an
    $env_var that is not executable, or where it looked)."""
    env = os.environ.get(env_var)
    if env:
        if os.access(env, os.X_OK):
            return env, ""
        return None, f"{env_var}={env} is not an executable file"
    packaged = packaged_executable(name)
    if packaged:
        return str(packaged), ""
    found = shutil.which(name)
    if found:
        return found, ""
    return None, f"{name} not found (looked at ${env_var}, {PACKAGE_DIR / 'bin'}, PATH)"


def packaged_rig(name: str) -> Path:
    """hostlib/rigs/<name>.yaml (may not exist: only the simulator rig is packaged)."""
    return PACKAGE_DIR / "rigs" / f"{name}.yaml"


def packaged_soapy_modules() -> Path | None:
    path = PACKAGE_DIR / "soapy_modules"
    return path if path.is_dir() else None


def packaged_report_templates() -> Path:
    """hostlib/report_templates (may be missing in a tree that was never built)."""
    return PACKAGE_DIR / "report_templates"
