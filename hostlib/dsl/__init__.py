"""YAML test-case language (DSL v1): schema, loader with line numbers, thresholds, sweeps.

    from hostlib.dsl import load_cases
    cases = load_cases(["testcases"])      # list[Case], sweeps expanded; ConfigError on any problem

See docs/dsl.md for the language and docs/architecture.md for the Case contract.
"""
from hostlib.dsl.case import Case, Requirements, SearchSpec
from hostlib.dsl.loader import load_cases, load_file, validate_paths
from hostlib.dsl.thresholds import Threshold, ThresholdError, ThresholdResult, parse_threshold

__all__ = [
    "Case",
    "Requirements",
    "SearchSpec",
    "Threshold",
    "ThresholdError",
    "ThresholdResult",
    "load_cases",
    "load_file",
    "parse_threshold",
    "validate_paths",
]
