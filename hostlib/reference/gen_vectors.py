"""Writes docs/vectors/*.bin and docs/vectors/index.json from this reference.

    python -m hostlib.reference.gen_vectors [--out docs/vectors]

Each vector is one whole frame. index.json lists, per file, the header fields,
the payload description (pattern start word or corruption), the expected
pattern_check result and, for malformed vectors, the expected error text.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from .frame import (
    FLAG_CRC_VALID,
    FLAG_EOB,
    FLAG_OVERFLOW_BEFORE,
    FLAG_SOB,
    FLAG_TS_VALID,
    SAMPLE_FORMATS,
    crc32c,
    encode_frame,
)
from .pattern import pattern_fill


def _valid(name, description, *, fmt=1, channels=1, samples=8, seq=0, tick=None, flags=FLAG_TS_VALID,
           stream_id=0, send_time_ns=0, corrupt_words=()):
    fname, word_bytes = SAMPLE_FORMATS[fmt]
    tick = seq * samples if tick is None else tick
    n_words = samples * channels
    first = tick * channels
    payload = bytearray(pattern_fill(first, n_words, fname))
    for w in corrupt_words:
        payload[w * word_bytes] ^= 0xFF  # one changed word per corrupted sample
    header = {"flags": flags, "stream_id": stream_id, "sample_format": fmt, "channels": channels,
              "seq": seq, "sample_tick": tick, "send_time_ns": send_time_ns}
    frame = encode_frame(header, bytes(payload))
    return name, frame, {"description": description, "valid": True,
                         "header": dict(header, magic=0x4852, version=1, payload_bytes=len(payload),
                                        crc32c=crc32c(bytes(payload)) if flags & FLAG_CRC_VALID else 0, reserved=0),
                         "pattern_first_word": first, "pattern_words": n_words,
                         "pattern_errors": len(corrupt_words)}


def _broken(name, description, frame: bytes, error: str):
    return name, frame, {"description": description, "valid": False, "error": error}


def build() -> list[tuple[str, bytes, dict]]:
    v = [
        _valid("sc16_1ch_sob", "first frame: seq 0, SOB|TS_VALID, sc16, 1 channel, 8 samples",
               flags=FLAG_SOB | FLAG_TS_VALID, send_time_ns=123456789),
        _valid("sc16_1ch_seq5_crc", "seq 5 with CRC_VALID and stream_id 7", seq=5,
               flags=FLAG_TS_VALID | FLAG_CRC_VALID, stream_id=7, send_time_ns=0x0102030405060708),
        _valid("sc16_2ch_eob_overflow", "2 channels, EOB|OVERFLOW_BEFORE, seq 3",
               channels=2, seq=3, flags=FLAG_TS_VALID | FLAG_EOB | FLAG_OVERFLOW_BEFORE),
        _valid("sc8_1ch", "sc8 (u16 words), 16 samples, seq 2", fmt=2, samples=16, seq=2),
        _valid("sc8_4ch_wrap", "sc8 4 channels, tick near 2^14 so the u16 word wraps", fmt=2, channels=4,
               samples=8, seq=1, tick=16380),
        _valid("sc16_wrap_u32", "sc16 tick at 2^32-3: the u32 word wraps, seq large", seq=2**40, tick=2**32 - 3,
               flags=FLAG_TS_VALID | FLAG_CRC_VALID),
        _valid("sc16_corrupt3", "sc16 with 3 corrupted samples (words 0, 5, 7)", seq=9,
               corrupt_words=(0, 5, 7)),
        _valid("empty_eob", "EOB with no payload", samples=0, seq=4, flags=FLAG_TS_VALID | FLAG_EOB),
    ]
    good = encode_frame({"flags": FLAG_TS_VALID | FLAG_CRC_VALID, "seq": 1, "sample_tick": 8},
                        pattern_fill(8, 8))
    bad_magic = b"\x00\x00" + good[2:]
    bad_version = good[:2] + b"\x02" + good[3:]
    bad_crc = good[:-1] + bytes([good[-1] ^ 1])
    v += [
        _broken("bad_magic", "magic 0x0000", bad_magic, "bad magic"),
        _broken("bad_version", "version 2", bad_version, "unsupported version"),
        _broken("bad_crc", "payload byte flipped after CRC", bad_crc, "crc32c mismatch"),
        _broken("short_header", "only 40 bytes", good[:40], "shorter than the 48-byte header"),
        _broken("truncated_payload", "payload_bytes says 32, 30 bytes follow", good[:-2],
                "payload_bytes does not match"),
        _broken("odd_payload", "sc16 payload of 6 bytes", encode_frame({}, b"\x00" * 6), "not a multiple"),
    ]
    return v


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default="docs/vectors",
                    help="output directory (default: docs/vectors, from the repo root)")
    out = Path(ap.parse_args().out)
    out.mkdir(parents=True, exist_ok=True)
    index: dict[str, Any] = {"format": "hilrig frame vectors v1 (see docs/frame-format.md)", "vectors": []}
    for name, frame, meta in build():
        (out / f"{name}.bin").write_bytes(frame)
        index["vectors"].append({"file": f"{name}.bin", "frame_bytes": len(frame), **meta})
    (out / "index.json").write_text(json.dumps(index, indent=2) + "\n")
    print(f"wrote {len(index['vectors'])} vectors to {out}")


if __name__ == "__main__":
    main()
