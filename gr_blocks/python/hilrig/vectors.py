#
# Copyright 2026 hilrig.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The shared binary test vectors (docs/vectors/) for the QA tests: the blocks must
agree with them bit for bit, as the C++ core and the Python reference do."""
import json
import os
from pathlib import Path

import numpy as np

VECTORS = Path(os.environ.get("HILRIG_VECTORS_DIR") or Path(__file__).resolve().parents[3] / "docs" / "vectors")
HEADER_BYTES = 48
SEND_TIME = slice(32, 40)     # send_time_ns: the one header field a sender stamps itself
WORD = {1: ("sc16", np.uint32), 2: ("sc8", np.uint16)}


class Vector:
    def __init__(self, meta):
        self.meta = meta
        self.name = meta["file"][:-4]
        self.frame = (VECTORS / meta["file"]).read_bytes()
        self.header = meta.get("header", {})

    @property
    def format(self):
        return WORD[self.header["sample_format"]][0]

    @property
    def channels(self):
        return self.header["channels"]

    def words(self):
        """The payload as pattern words, interleaved by channel."""
        return np.frombuffer(self.frame[HEADER_BYTES:], dtype=WORD[self.header["sample_format"]][1])

    def channel_words(self, ch):
        return self.words()[ch::self.channels]


def load():
    index = json.loads((VECTORS / "index.json").read_text())
    vectors = [Vector(m) for m in index["vectors"]]
    assert vectors, f"no vectors in {VECTORS}"
    return vectors


def valid_with_samples():
    return [v for v in load() if v.meta["valid"] and v.header["payload_bytes"] > 0]


def as_fc32(words, fmt):
    """sc16/sc8 words as complex floats (I = low half), scaled by 1/32768 or 1/128."""
    half = np.int16 if fmt == "sc16" else np.int8
    iq = words.view(half).astype(np.float32) / (32768.0 if fmt == "sc16" else 128.0)
    return iq[0::2] + 1j * iq[1::2]
