"""hilrig host library: YAML cases -> device streams -> verdicts and results.

The public surface is what `__all__` lists; everything else is internal.
"""
from ._exceptions import (
    ConfigError,
    ConfigIssue,
    DeviceAbsent,
    DeviceError,
    DeviceNotAttached,
    HilrigError,
    InfrastructureError,
)

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "ConfigIssue",
    "DeviceAbsent",
    "DeviceError",
    "DeviceNotAttached",
    "ErrorKind",
    "HilrigError",
    "InfrastructureError",
    "RunSession",
    "Selection",
    "Verdict",
    "__version__",
    "load_cases",
    "load_rig",
    "run_case",
]


def __getattr__(name: str):
    # Lazy so that `import hostlib` stays cheap and works before the native core is built.
    if name == "load_cases":
        from .dsl import load_cases
        return load_cases
    if name == "load_rig":
        from .rig import load_rig
        return load_rig
    if name == "RunSession":
        from .session import RunSession
        return RunSession
    if name == "Selection":
        from .selection import Selection
        return Selection
    if name in ("Verdict", "ErrorKind"):
        from .results import record
        return getattr(record, name)
    if name == "run_case":
        from .engine import run_case
        return run_case
    raise AttributeError(f"module 'hostlib' has no attribute {name!r}")
