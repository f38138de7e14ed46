"""Versions recorded with every result: hilrig, Python, git sha of the tree, Robot."""
from __future__ import annotations

import functools
import platform
import subprocess
from importlib import metadata
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # hostlib/ itself, not a repo root


@functools.cache
def git_sha(package_dir: Path = PACKAGE_DIR) -> str | None:
    """HEAD of the git tree hostlib runs from, with "-dirty" if the tree has changes;
    None when hostlib is not part of a git tree (an installed wheel, even in a venv
    that sits inside some checkout: its __init__.py must be a tracked file)."""
    repo = package_dir
    try:
        tracked = subprocess.run(["git", "ls-files", "--error-unmatch", "__init__.py"], cwd=repo,
                                 capture_output=True, text=True, timeout=10)
        if tracked.returncode != 0:
            return None
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, timeout=10)
        if sha.returncode != 0:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=repo,
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return sha.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def versions() -> dict[str, str | None]:
    try:
        hilrig = metadata.version("hilrig")
    except metadata.PackageNotFoundError:
        from .. import __version__ as hilrig  # a source tree that is not pip-installed
    try:
        from robot.version import VERSION as robot
    except ImportError:
        robot = None
    return {"hilrig": hilrig, "python": platform.python_version(), "git_sha": git_sha(), "robot": robot}
