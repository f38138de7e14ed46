#!/usr/bin/env python3
#
# Copyright 2026 hilrig.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""rig_sink's frames equal the vectors bit for bit (all but the send time it stamps),
SOB first and EOB last; fc32 converts exactly; pacing holds the rate."""
import socket
import time

import numpy as np
import vectors
from gnuradio import blocks, gr, gr_unittest, hilrig

from hostlib.reference.frame import FLAG_EOB, decode_frame


def send(fmt, words, frame_bytes, rate_sps=0.0, wire="sc16", stream_id=0, crc=False):
    """One channel of `words` through rig_sink to a UDP socket here; returns the datagrams."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        tb = gr.top_block()
        if fmt == "fc32":
            src = blocks.vector_source_c(vectors.as_fc32(words, wire).tolist())
        elif fmt == "sc16":
            src = blocks.vector_source_i(words.astype(np.uint32).view(np.int32).tolist())
        else:
            src = blocks.vector_source_s(words.astype(np.uint16).view(np.int16).tolist())
        endpoint = {"kind": "udp", "host": "127.0.0.1", "port": s.getsockname()[1]}
        sink = hilrig.rig_sink(fmt, 1, endpoint, frame_bytes, rate_sps, wire, stream_id, crc)
        tb.connect(src, sink)
        tb.run()
        s.settimeout(2)
        frames = []
        while True:
            f = s.recv(65536)
            frames.append(f)
            if decode_frame(f)[0]["flags"] & FLAG_EOB:
                return sink, frames


def without_send_time(frame):
    return frame[:vectors.SEND_TIME.start] + frame[vectors.SEND_TIME.stop:]


def counter(n, fmt):
    dtype = np.uint32 if fmt == "sc16" else np.uint16
    return (np.arange(n, dtype=np.uint64) & np.iinfo(dtype).max).astype(dtype)


class qa_rig_sink(gr_unittest.TestCase):

    def assert_frame_is_vector(self, frame, v):
        self.assertEqual(without_send_time(frame), without_send_time(v.frame))
        self.assertNotEqual(decode_frame(frame)[0]["send_time_ns"], 0)

    def test_frames_equal_the_vectors(self):
        cases = [("sc16_1ch_sob", {}), ("sc16_1ch_seq5_crc", {"stream_id": 7, "crc": True}), ("sc8_1ch", {})]
        for name, kw in cases:
            v = next(v for v in vectors.load() if v.name == name)
            with self.subTest(vector=name):
                seq, spf = v.header["seq"], len(v.words())
                sink, frames = send(v.format, counter(spf * (seq + 1), v.format), len(v.frame),
                                    wire=v.format, **kw)
                self.assert_frame_is_vector(frames[seq], v)
                self.assertEqual(len(frames), seq + 2)          # + the EOB frame at stop
                last, payload = decode_frame(frames[-1])
                self.assertEqual((last["flags"] & FLAG_EOB, last["seq"], payload), (FLAG_EOB, seq + 1, b""))
                self.assertEqual(sink.frames_sent(), seq + 2)

    def test_fc32_converts_exactly(self):
        v = next(v for v in vectors.load() if v.name == "sc16_1ch_sob")
        _, frames = send("fc32", v.words(), len(v.frame))
        self.assert_frame_is_vector(frames[0], v)

    def test_partial_frame_goes_out_with_eob(self):
        _, frames = send("sc16", counter(1000, "sc16"), 8000)   # 1988 samples fit a frame
        header, payload = decode_frame(frames[-1])
        self.assertEqual((len(frames), header["flags"] & FLAG_EOB, len(payload)), (1, FLAG_EOB, 4000))

    def test_pacing_holds_the_rate(self):
        start = time.monotonic()
        _, frames = send("sc16", counter(40_000, "sc16"), 8000, rate_sps=100_000.0)
        # 21 frames of 1988 samples, paced by the core's TxPacer with TxStream's lead
        # (4 frames at this rate): the EOB frame is due at (20 - 4) * 1988 / 100 kS/s = 0.32 s.
        self.assertGreater(time.monotonic() - start, 0.3)
        self.assertEqual(sum(len(decode_frame(f)[1]) for f in frames), 160_000)

    def test_bad_arguments_are_named(self):
        udp = {"kind": "udp", "host": "127.0.0.1", "port": 9}
        with self.assertRaisesRegex(ValueError, "must equal wire_format"):
            hilrig.rig_sink("sc8", 1, udp, wire_format="sc16")
        with self.assertRaisesRegex(ValueError, "endpoint nowhere is not JSON"):
            hilrig.rig_sink("sc16", 1, "nowhere")
        with self.assertRaisesRegex(ValueError, "kind 'usb' is not one of udp, tcp, shm"):
            hilrig.rig_sink("sc16", 1, {"kind": "usb"})
        with self.assertRaisesRegex(ValueError, "port"):
            hilrig.rig_sink("sc16", 1, {"kind": "udp", "host": "127.0.0.1"})


if __name__ == "__main__":
    gr_unittest.run(qa_rig_sink)
