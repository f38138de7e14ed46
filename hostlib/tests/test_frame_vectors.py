"""docs/vectors checked by the Python reference and by hostlib._native (the C++ gtests
check the same files), plus reference <-> native agreement on random frames."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from hostlib import reference as ref

VECTORS = Path(__file__).resolve().parents[2] / "docs" / "vectors"
INDEX = json.loads((VECTORS / "index.json").read_text())["vectors"]
native = pytest.importorskip("hostlib._native", reason="build the native core first (cmake --build build)")


def _ids(v):
    return v["file"]


@pytest.mark.parametrize("vec", [v for v in INDEX if v["valid"]], ids=_ids)
@pytest.mark.parametrize("impl", ["reference", "native"])
def test_valid_vector_decodes(vec, impl):
    frame = (VECTORS / vec["file"]).read_bytes()
    mod = ref if impl == "reference" else native
    header, payload = mod.decode_frame(frame)
    for key, value in vec["header"].items():
        assert header[key] == value, key
    fmt = ref.SAMPLE_FORMATS[header["sample_format"]][0]
    assert mod.pattern_check(vec["pattern_first_word"], payload, fmt) == vec["pattern_errors"]
    assert mod.encode_frame(header, payload) == frame


@pytest.mark.parametrize("vec", [v for v in INDEX if not v["valid"]], ids=_ids)
@pytest.mark.parametrize("impl", ["reference", "native"])
def test_broken_vector_is_rejected(vec, impl):
    frame = (VECTORS / vec["file"]).read_bytes()
    mod = ref if impl == "reference" else native
    with pytest.raises(ValueError, match=vec["error"]):
        mod.decode_frame(frame)


def test_vectors_are_what_the_reference_generates():
    from hostlib.reference.gen_vectors import build

    built = {name + ".bin": frame for name, frame, _ in build()}
    assert set(built) == {v["file"] for v in INDEX}
    for name, frame in built.items():
        assert (VECTORS / name).read_bytes() == frame, name


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_reference_and_native_agree_on_random_frames(seed):
    rng = random.Random(seed)
    for _ in range(50):
        fmt_code = rng.choice([1, 2])
        fmt, word_bytes = ref.SAMPLE_FORMATS[fmt_code]
        channels = rng.randint(1, 4)
        tick = rng.randrange(2**40)
        n_words = rng.randint(0, 64) * channels
        payload = bytearray(ref.pattern_fill(tick * channels, n_words, fmt))
        assert bytes(payload) == native.pattern_fill(tick * channels, n_words, fmt)
        corrupt = rng.sample(range(n_words), min(n_words, rng.randint(0, 5)))
        for w in corrupt:
            payload[w * word_bytes] ^= 0x5A
        header = {"flags": rng.randrange(64), "stream_id": rng.randrange(65536), "sample_format": fmt_code,
                  "channels": channels, "seq": rng.randrange(2**64), "sample_tick": tick,
                  "send_time_ns": rng.randrange(2**64)}
        frame = ref.encode_frame(header, bytes(payload))
        assert native.encode_frame(header, bytes(payload)) == frame
        assert native.decode_frame(frame) == ref.decode_frame(frame)
        assert native.pattern_check(tick * channels, bytes(payload), fmt) == len(corrupt)
        assert ref.pattern_check(tick * channels, bytes(payload), fmt) == len(corrupt)
        assert native.crc32c(bytes(payload)) == ref.crc32c(bytes(payload))


def test_crc32c_check_value():
    assert ref.crc32c(b"123456789") == native.crc32c(b"123456789") == 0xE3069283
