"""The `counter` test pattern: stream word k == k mod 2**word_bits.

k = sample_tick * channels + index of the word in the frame; sc16 words are u32
(I low 16 bits, Q high 16), sc8 words are u16 (I low byte, Q high byte).
"""
from __future__ import annotations

import struct

_WORD = {"sc16": ("<I", 4, 0xFFFFFFFF), "sc8": ("<H", 2, 0xFFFF)}


def _word(sample_format: str):
    try:
        return _WORD[sample_format]
    except KeyError:
        raise ValueError(f"sample_format {sample_format!r} is not supported (allowed: sc16, sc8)") from None


def pattern_fill(first_word: int, n_words: int, sample_format: str = "sc16") -> bytes:
    fmt, _, mask = _word(sample_format)
    return b"".join(struct.pack(fmt, (first_word + i) & mask) for i in range(n_words))


def pattern_check(first_word: int, payload: bytes, sample_format: str = "sc16") -> int:
    """Number of words that differ from the pattern."""
    fmt, size, mask = _word(sample_format)
    if len(payload) % size:
        raise ValueError(f"payload length {len(payload)} is not a multiple of the {sample_format} word size")
    return sum(1 for i, (w,) in enumerate(struct.iter_unpack(fmt, payload)) if w != (first_word + i) & mask)
