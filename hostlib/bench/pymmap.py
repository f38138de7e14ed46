"""The reference Python mmap method (the lab's published 1.85 GB/s figure): a
writer process puts each frame into a shared mmap ring with a slice assignment,
a reader process takes it out with a slice (a bytes copy); counters in the map.

It verifies nothing per sample (checking in Python would be far slower still),
so it is a generous baseline. Used only by the benchmark.
"""
from __future__ import annotations

import mmap
import multiprocessing as mp
import struct
import time

_HDR = 128  # head at 0, tail at 64: their own cache lines


def _writer(mm: mmap.mmap, frame_bytes: int, slots: int, stop_at: float) -> None:
    payload = bytes(range(256)) * (frame_bytes // 256 + 1)
    payload = payload[:frame_bytes]
    head = 0
    while True:
        tail = struct.unpack_from("<Q", mm, 64)[0]
        if head - tail >= slots:
            if time.monotonic() > stop_at + 1:
                break
            continue
        off = _HDR + (head % slots) * frame_bytes
        mm[off:off + frame_bytes] = payload
        head += 1
        struct.pack_into("<Q", mm, 0, head)
        if (head & 63) == 0 and time.monotonic() > stop_at:
            break
    struct.pack_into("<Q", mm, 8, 1)  # done


def run(frame_bytes: int, seconds: float, slots: int = 64) -> dict:
    mm = mmap.mmap(-1, _HDR + slots * frame_bytes)  # MAP_SHARED: the forked writer sees it
    ctx = mp.get_context("fork")
    t0 = time.monotonic()
    proc = ctx.Process(target=_writer, args=(mm, frame_bytes, slots, t0 + seconds), daemon=True)
    proc.start()
    try:
        tail = 0
        while True:
            head = struct.unpack_from("<Q", mm, 0)[0]
            if head == tail:
                if struct.unpack_from("<Q", mm, 8)[0]:
                    break
                continue
            while tail < head:
                off = _HDR + (tail % slots) * frame_bytes
                data = mm[off:off + frame_bytes]  # noqa: F841  the copy out is the method
                tail += 1
            struct.pack_into("<Q", mm, 64, tail)
        dt = time.monotonic() - t0
    finally:
        proc.join(timeout=5)
        if proc.is_alive():
            proc.kill()
            proc.join()
    return {"frames": tail, "seconds": dt, "frames_per_s": tail / dt, "GBps": tail * frame_bytes / dt / 1e9}
