"""The run engine: one case on one rig -> one CaseResult."""
from .runner import run_case

__all__ = ["run_case"]
