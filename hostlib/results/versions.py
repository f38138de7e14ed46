"""Versions recorded with every result: hilrig, Python, git sha of the tree, Robot."""
from __future__ import annotations

import functools
import platform
import subprocess
from importlib import metadata
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parents[2]


@functools.lru_cache(maxsize=None)
def git_sha(repo: Path = REPO_DIR) -> str | None:
    """HEAD of the repo this hostlib runs from, with "-dirty" if the tree has changes; None outside git."""
    try:
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
