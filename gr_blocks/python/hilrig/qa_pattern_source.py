#!/usr/bin/env python3
#
# Copyright 2026 hilrig.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""pattern_source emits exactly the payload words of every pattern vector."""
import time

import numpy as np
import vectors
from gnuradio import blocks, gr, gr_unittest, hilrig

SINK = {"sc16": (blocks.vector_sink_i, np.uint32), "sc8": (blocks.vector_sink_s, np.uint16)}


def run_source(fmt, channels, n, first_sample=0, rate_sps=0.0):
    tb = gr.top_block()
    src = hilrig.pattern_source(fmt, channels, rate_sps, first_sample)
    sinks = []
    for ch in range(channels):
        head = blocks.head(gr.sizeof_gr_complex if fmt == "fc32" else (4 if fmt == "sc16" else 2), n)
        sink = blocks.vector_sink_c() if fmt == "fc32" else SINK[fmt][0]()
        tb.connect((src, ch), head, sink)
        sinks.append(sink)
    tb.run()
    return src, sinks


class qa_pattern_source(gr_unittest.TestCase):

    def test_every_pattern_vector(self):
        checked = 0
        for v in vectors.valid_with_samples():
            if v.meta["pattern_errors"]:
                continue
            with self.subTest(vector=v.name):
                n = len(v.channel_words(0))
                _, sinks = run_source(v.format, v.channels, n, v.header["sample_tick"])
                for ch, sink in enumerate(sinks):
                    got = np.array(sink.data(), dtype=np.int64).astype(SINK[v.format][1])
                    np.testing.assert_array_equal(got, v.channel_words(ch))
                checked += 1
        self.assertGreaterEqual(checked, 6)

    def test_fc32_is_the_sc16_pattern_scaled(self):
        v = next(v for v in vectors.load() if v.name == "sc16_wrap_u32")
        n = len(v.channel_words(0))
        _, (sink,) = run_source("fc32", 1, n, v.header["sample_tick"])
        np.testing.assert_array_equal(np.array(sink.data(), dtype=np.complex64),
                                      vectors.as_fc32(v.channel_words(0), "sc16"))

    def test_long_run_continues_the_pattern(self):
        src, (a, b) = run_source("sc8", 2, 200_000)
        words = np.empty(400_000, dtype=np.uint16)
        words[0::2] = np.array(a.data(), dtype=np.int64).astype(np.uint16)
        words[1::2] = np.array(b.data(), dtype=np.int64).astype(np.uint16)
        np.testing.assert_array_equal(words, np.arange(400_000, dtype=np.int64).astype(np.uint16))
        self.assertGreaterEqual(src.samples_produced(), 200_000)

    def test_throttle_holds_the_rate(self):
        start = time.monotonic()
        run_source("sc16", 1, 5000, rate_sps=20_000.0)
        self.assertGreater(time.monotonic() - start, 0.2)   # 5000 samples at 20 kS/s: 0.25 s

    def test_bad_arguments_are_named(self):
        with self.assertRaisesRegex(ValueError, "cpu_format 'cs16'"):
            hilrig.pattern_source("cs16", 1)
        with self.assertRaisesRegex(ValueError, "channels must be 1-255"):
            hilrig.pattern_source("sc16", 0)


if __name__ == "__main__":
    gr_unittest.run(qa_pattern_source)
