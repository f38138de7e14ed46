#!/usr/bin/env python3
#
# Copyright 2026 hilrig.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""pattern_check counts what the vectors say (errors, per channel) and tells gaps from
corruption; stop-after ends a flowgraph; the stats port carries the counters."""
import numpy as np
import pmt
import vectors
from gnuradio import blocks, gr, gr_unittest, hilrig


def source_of(fmt, words):
    if fmt == "fc32":
        return blocks.vector_source_c(vectors.as_fc32(words, "sc16").tolist())
    if fmt == "sc16":
        return blocks.vector_source_i(words.astype(np.uint32).view(np.int32).tolist())
    return blocks.vector_source_s(words.astype(np.uint16).view(np.int16).tolist())


def check(fmt, per_channel_words, first_sample=0, **kw):
    tb = gr.top_block()
    chk = hilrig.pattern_check(fmt, len(per_channel_words), first_sample=first_sample, **kw)
    for ch, words in enumerate(per_channel_words):
        tb.connect(source_of(fmt, words), (chk, ch))
    tb.run()
    return chk


def counter(first, n, dtype=np.uint32, channels=1, ch=0):
    return ((np.arange(first, first + n, dtype=np.uint64) * channels + ch) & np.iinfo(dtype).max).astype(dtype)


class qa_pattern_check(gr_unittest.TestCase):

    def test_every_pattern_vector(self):
        checked = 0
        for v in vectors.valid_with_samples():
            with self.subTest(vector=v.name):
                words = [v.channel_words(ch) for ch in range(v.channels)]
                chk = check(v.format, words, v.header["sample_tick"])
                self.assertEqual(chk.pattern_errors(), v.meta["pattern_errors"])
                self.assertEqual(chk.samples(), sum(len(w) for w in words))
                self.assertEqual(chk.gaps(), 0)
                checked += 1
        self.assertGreaterEqual(checked, 7)

    def test_corrupt_vector_errors_land_on_their_channel_and_as_fc32(self):
        v = next(v for v in vectors.load() if v.name == "sc16_corrupt3")
        chk = check("fc32", [v.channel_words(0)], v.header["sample_tick"])
        self.assertEqual(chk.pattern_errors(0), 3)
        self.assertEqual(chk.pattern_errors(), 3)

    def test_gap_is_counted_with_its_samples(self):
        words = np.concatenate([counter(0, 1000), counter(1050, 2000)])
        chk = check("sc16", [words])
        self.assertEqual((chk.gaps(), chk.missing_samples(), chk.pattern_errors(), chk.samples()), (1, 50, 0, 3000))

    def test_gap_on_one_of_two_channels(self):
        c0 = counter(0, 3000, np.uint16, 2, 0)
        c1 = np.concatenate([counter(0, 700, np.uint16, 2, 1), counter(710, 2290, np.uint16, 2, 1)])
        chk = check("sc8", [c0, c1])
        self.assertEqual((chk.gaps(0), chk.gaps(1), chk.missing_samples(1)), (0, 1, 10))
        self.assertEqual(chk.pattern_errors(), 0)

    def test_corrupted_sample_is_an_error_not_a_gap(self):
        words = counter(0, 5000)
        words[[0, 1234, 4999]] ^= np.uint32(1 << 20)   # first, middle, and last sample
        chk = check("sc16", [words])
        self.assertEqual((chk.pattern_errors(), chk.gaps(), chk.samples()), (3, 0, 5000))

    def test_stop_after_ends_an_endless_flowgraph_and_posts_stats(self):
        tb = gr.top_block()
        src = hilrig.pattern_source("sc16", 2)
        chk = hilrig.pattern_check("sc16", 2, stop_after_samples=250_000, stats_interval_s=0)
        dbg = blocks.message_debug()
        tb.connect((src, 0), (chk, 0))
        tb.connect((src, 1), (chk, 1))
        tb.msg_connect((chk, "stats"), (dbg, "store"))
        tb.run()
        self.assertEqual(chk.samples(0), 250_000)
        self.assertEqual(chk.samples(), 500_000)
        self.assertGreaterEqual(dbg.num_messages(), 1)
        stats = dbg.get_message(0)
        self.assertEqual(pmt.to_uint64(pmt.dict_ref(stats, pmt.intern("samples"), pmt.PMT_NIL)), 500_000)
        per = pmt.u64vector_elements(pmt.dict_ref(stats, pmt.intern("samples_per_channel"), pmt.PMT_NIL))
        self.assertEqual(list(per), [250_000, 250_000])
        self.assertEqual(pmt.to_uint64(pmt.dict_ref(stats, pmt.intern("pattern_errors"), pmt.PMT_NIL)), 0)

    def test_arrival_counters_say_when_and_in_how_many_buffers(self):
        # The counters a flowgraph host reads for a source that counts no frames
        # (gr-uhd, gr-soapy on a radio): the core's monotonic clock, one buffer per work call.
        fresh = hilrig.pattern_check("sc16", 1)
        self.assertEqual((fresh.buffers(), fresh.first_sample_ns(), fresh.last_sample_ns()), (0, 0, 0))
        import time
        before = time.monotonic_ns()
        chk = check("sc16", [counter(0, 100_000)])
        after = time.monotonic_ns()
        self.assertEqual(chk.samples(), 100_000)
        self.assertGreaterEqual(chk.buffers(), 1)
        self.assertLessEqual(chk.buffers(), 100_000)
        self.assertTrue(before <= chk.first_sample_ns() <= chk.last_sample_ns() <= after)

    def test_fc32_converts_as_the_core_does_sc16_words_scaled_by_2_15(self):
        # fc32 -> word is the core's conversion (hilrig/core/convert.hpp: x * 2^15, truncated):
        # exact for every scaled word, so the whole signed range checks clean.
        words = counter(0x7FFF0000 - 50_000, 100_000)
        chk = check("fc32", [words], 0x7FFF0000 - 50_000)
        self.assertEqual((chk.samples(), chk.pattern_errors(), chk.gaps()), (100_000, 0, 0))

    def test_channel_out_of_range_is_named(self):
        chk = hilrig.pattern_check("sc16", 2)
        with self.assertRaisesRegex(IndexError, "channel 2"):
            chk.samples(2)


if __name__ == "__main__":
    gr_unittest.run(qa_pattern_check)
