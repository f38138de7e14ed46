"""The broken-YAML corpus: every file yields no case and issues at the right file, line and field."""
from pathlib import Path

import pytest

from hostlib._exceptions import ConfigError
from hostlib.dsl import load_cases, validate_paths

CORPUS = Path(__file__).parent / "yaml_corpus"

# file -> every expected (line, field, a word of the message); "" field = file-level (syntax).
EXPECTED = {
    "bad_indentation.yaml": [(8, "", "syntax")],
    "bad_syntax_unclosed.yaml": [(7, "", "syntax")],
    "duplicate_key.yaml": [(6, "", "duplicate key")],
    # ruamel cannot build a key holding a mapping (unhashable, no position): the loader finds its line
    "mapping_in_key.yaml": [(4, "", "keys are plain names")],
    "unknown_field_typo.yaml": [(5, "decimaton", "did you mean 'decimation'")],
    "wrong_unit.yaml": [(4, "master_clock", "MHz")],
    "negative_duration.yaml": [(7, "duration", "greater than 0")],
    "decimation_on_tx.yaml": [(6, "decimation", "interpolation")],
    "bad_threshold_metric.yaml": [(10, "thresholds.dropped_sample", "did you mean 'dropped_samples'")],
    "bad_threshold_syntax.yaml": [(10, "thresholds.overruns", "does not parse")],
    "threshold_unit_mismatch.yaml": [(10, "thresholds.latency_p99", "time")],
    "percent_of_wrong_dimension.yaml": [(9, "thresholds.latency_p99", "cannot limit")],
    "bad_sweep_key.yaml": [(10, "sweep.transport.frame_byte", "did you mean 'transport.frame_bytes'")],
    "frame_too_big.yaml": [(8, "transport.frame_bytes", "65504")],
    "frame_not_multiple.yaml": [(7, "transport.frame_bytes", "nearest 8000 or 8008")],
    "knob_of_other_transport.yaml": [(9, "transport.slots", "not a udp setting")],
    # the core's parser refuses the name; the loader places it and suggests one
    "unknown_ring_publish.yaml": [(9, "transport.publish", "did you mean 'adaptive'")],
    "missing_required.yaml": [(1, "direction", "required")],
    "timeout_too_short.yaml": [(9, "timeout", "duration + warmup")],
    "sweep_bad_point.yaml": [(10, "transport.frame_bytes", "sweep point [transport.frame_bytes=1400]")],
    "duplicate_names.yaml": [(9, "name", "already used")],
    "two_errors.yaml": [(7, "duration", "parsecs"), (10, "thresholds.througput", "unknown metric")],
}


def test_corpus_is_complete():
    on_disk = {p.name for p in CORPUS.glob("*.yaml")}
    assert on_disk == set(EXPECTED), "every corpus file needs its expected errors (and vice versa)"
    assert len(on_disk) >= 12


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_error_names_file_line_and_field(name):
    path = CORPUS / name
    cases, issues = validate_paths([path])
    assert cases == [], "a file with an error must yield no case"
    got = [(i.line, i.field) for i in issues]
    assert got == [(line, field) for line, field, _ in EXPECTED[name]], [str(i) for i in issues]
    for issue, (_, _, word) in zip(issues, EXPECTED[name]):
        assert issue.file == str(path)
        assert word in issue.message, issue.message
        # The printed form is what `hilrig validate` shows: file:line: field: message
        assert str(issue).startswith(f"{path}:{issue.line}:")


def test_two_error_file_reports_both_at_once():
    with pytest.raises(ConfigError) as e:
        load_cases([CORPUS / "two_errors.yaml"])
    assert [i.line for i in e.value.issues] == [7, 10]
    assert "two_errors.yaml:7" in str(e.value) and "two_errors.yaml:10" in str(e.value)


def test_whole_corpus_directory_collects_every_file():
    cases, issues = validate_paths([CORPUS])
    assert cases == []
    assert {Path(i.file).name for i in issues} == set(EXPECTED)
    assert len(issues) == sum(len(v) for v in EXPECTED.values())
