#!/usr/bin/env python3
#
# Copyright 2026 hilrig.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""rig_source outputs the vectors' samples, counts like RxStream, tags gaps and
overflows, and carries a stream from rig_sink over UDP and shm without a gap."""
import socket
import threading

import numpy as np
import pmt
import vectors
from gnuradio import blocks, gr, gr_unittest, hilrig

from hostlib.reference.frame import FLAG_EOB, FLAG_TS_VALID, encode_frame

RXSTREAM_KEYS = {"frames_received", "samples_received", "payload_bytes_received", "seq_errors", "missing_frames",
                 "dropped_samples", "duplicate_frames", "reordered_frames", "malformed_frames", "overruns",
                 "pattern_errors", "timeouts", "first_frame_ns", "last_frame_ns", "longest_gap_ns",
                 "latency_p50_ns", "latency_p99_ns", "latency_p999_ns", "latency_max_ns", "latency_count",
                 "eob_received", "block_frames", "blocks", "read_ns"}


def by_name(name):
    return next(v for v in vectors.load() if v.name == name)


def eob(seq, channels=1, fmt=1):
    return encode_frame({"flags": FLAG_EOB | FLAG_TS_VALID, "seq": seq, "channels": channels,
                         "sample_format": fmt}, b"")


def receive(frames, channels=1, fmt="sc16"):
    """UDP rig_source fed `frames` from a socket; runs to the EOB."""
    tb = gr.top_block()
    src = hilrig.rig_source(fmt, channels, "udp", "127.0.0.1:0")
    port = src.endpoint()["port"]
    sinks = [blocks.vector_sink_i() if fmt == "sc16" else blocks.vector_sink_s() for _ in range(channels)]
    for ch, sink in enumerate(sinks):
        tb.connect((src, ch), sink)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for f in frames:
            s.sendto(f, ("127.0.0.1", port))
    tb.run()
    return src, sinks


def words_of(sink, dtype=np.uint32):
    return np.array(sink.data(), dtype=np.int64).astype(dtype)


class qa_rig_source(gr_unittest.TestCase):

    def test_vector_samples_gap_counts_and_tag(self):
        sob, seq5 = by_name("sc16_1ch_sob"), by_name("sc16_1ch_seq5_crc")
        src, (sink,) = receive([sob.frame, seq5.frame, eob(6)])
        np.testing.assert_array_equal(words_of(sink), np.concatenate([sob.words(), seq5.words()]))
        stats = src.stats()
        self.assertEqual(set(stats) - {"mismatched_frames"}, RXSTREAM_KEYS)
        self.assertEqual((stats["frames_received"], stats["missing_frames"], stats["dropped_samples"]), (3, 4, 32))
        self.assertEqual((stats["pattern_errors"], stats["malformed_frames"]), (0, 0))
        self.assertTrue(stats["eob_received"])
        gaps = [t for t in sink.tags() if pmt.symbol_to_string(t.key) == "hilrig_gap"]
        self.assertEqual(len(gaps), 1)
        self.assertEqual(gaps[0].offset, 8)   # the first sample of the frame after the gap
        self.assertEqual(pmt.to_uint64(pmt.dict_ref(gaps[0].value, pmt.intern("missing_frames"), pmt.PMT_NIL)), 4)
        self.assertEqual(pmt.to_uint64(pmt.dict_ref(gaps[0].value, pmt.intern("dropped_samples"), pmt.PMT_NIL)), 32)

    def test_two_channels_overflow_tag_and_eob(self):
        v = by_name("sc16_2ch_eob_overflow")
        src, sinks = receive([v.frame], channels=2)
        for ch, sink in enumerate(sinks):
            np.testing.assert_array_equal(words_of(sink), v.channel_words(ch))
            keys = {pmt.symbol_to_string(t.key): t for t in sink.tags()}
            self.assertEqual(pmt.to_uint64(keys["hilrig_overflow"].value), 1)
            self.assertEqual(keys["hilrig_overflow"].offset, 0)
        self.assertEqual((src.overruns(), src.missing_frames()), (1, 3))

    def test_invalid_vectors_are_malformed_and_output_nothing(self):
        bad = [v.frame for v in vectors.load() if not v.meta["valid"]]
        self.assertGreaterEqual(len(bad), 6)
        src, (sink,) = receive([*bad, eob(0)])
        self.assertEqual(src.malformed_frames(), len(bad))
        self.assertEqual(len(sink.data()), 0)

    def test_pattern_errors_counted_like_rxstream(self):
        v = by_name("sc16_corrupt3")
        src, _ = receive([v.frame, eob(10)])
        self.assertEqual(src.pattern_errors(), 3)

    def test_frames_of_another_geometry_are_skipped_and_counted(self):
        src, (sink,) = receive([by_name("sc8_1ch").frame, eob(3, fmt=2)])
        self.assertEqual(src.mismatched_frames(), 2)
        self.assertEqual(len(sink.data()), 0)

    def loopback(self, transport, fmt, channels, n):
        """pattern_source -> rig_sink ~transport~> rig_source -> pattern_check."""
        rx = gr.top_block()
        src = hilrig.rig_source(fmt, channels, transport, "127.0.0.1:0" if transport in ("udp", "tcp") else "",
                                frame_bytes=8000, ring_slots=64)
        chk = hilrig.pattern_check(fmt, channels, stats_interval_s=0)
        for ch in range(channels):
            rx.connect((src, ch), (chk, ch))
        # UDP has no flow control: the sender is paced (a full shm ring or tcp send buffer is waited on).
        gen = hilrig.pattern_source(fmt, channels, 2_000_000.0 if transport == "udp" else 0.0)
        # The sink is wired to the source the obvious way: with the source's endpoint.
        sink = hilrig.rig_sink(fmt, channels, src.endpoint(), frame_bytes=8000, wire_format="sc16")
        tx = gr.top_block()
        size = gr.sizeof_gr_complex if fmt == "fc32" else 4
        for ch in range(channels):
            tx.connect((gen, ch), blocks.head(size, n), (sink, ch))
        rx.start()
        tx.run()
        done = threading.Event()
        threading.Thread(target=lambda: (rx.wait(), done.set()), daemon=True).start()
        self.assertTrue(done.wait(20), "rig_source did not end at the EOB")
        self.assertEqual(chk.samples(), n * channels)
        self.assertEqual((chk.pattern_errors(), chk.gaps()), (0, 0))
        self.assertEqual(src.missing_frames(), 0)
        self.assertEqual(sink.samples_sent(), n)
        return src

    def test_a_stream_that_starts_after_an_idle_spell_loses_nothing(self):
        # An idle rig_source returns 0 every 10 ms; the scheduler parks such a source
        # for its blocked-input timer (250 ms by default), longer than a socket buffer
        # of a few frames holds: rig_source sets 1 ms, so a stream starting late
        # (the simulator after the flowgraph) keeps its first frames.
        import time
        tb = gr.top_block()
        src = hilrig.rig_source("sc16", 1, "udp", "127.0.0.1:0", 8000, 0, 64 * 1024)
        chk = hilrig.pattern_check("sc16", 1, stats_interval_s=0)
        tb.connect(src, chk)
        port = src.endpoint()["port"]
        tb.start()
        time.sleep(0.6)
        ticks = (8000 - 48) // 4
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            t0 = time.monotonic()
            for seq in range(200):   # 1000 frames/s for 0.2 s: the buffer holds ~12 ms of it
                words = np.arange(seq * ticks, (seq + 1) * ticks, dtype=np.uint32)
                s.sendto(encode_frame({"seq": seq, "sample_tick": seq * ticks}, words.tobytes()),
                         ("127.0.0.1", port))
                time.sleep(max(0.0, t0 + (seq + 1) / 1000 - time.monotonic()))
            s.sendto(eob(200), ("127.0.0.1", port))
        tb.wait()
        self.assertLessEqual(src.stats()["missing_frames"], 10)   # parked 250 ms: ~190 missing
        self.assertEqual(chk.pattern_errors(), 0)

    def test_shm_loopback_is_gapless(self):
        self.loopback("shm", "sc16", 2, 600_000)

    def test_udp_loopback_is_gapless_fc32(self):
        self.loopback("udp", "fc32", 1, 200_000)

    def test_tcp_loopback_is_gapless(self):
        # rig_source listens, rig_sink connects to its endpoint: the same blocks, the core's tcp.
        src = self.loopback("tcp", "sc16", 2, 600_000)
        self.assertEqual(src.stats()["malformed_frames"], 0)


if __name__ == "__main__":
    gr_unittest.run(qa_rig_source)
