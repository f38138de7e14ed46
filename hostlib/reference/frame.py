"""Frame encode/decode exactly as docs/frame-format.md specifies (little-endian)."""
from __future__ import annotations

import struct

from .._exceptions import FrameError

FRAME_HEADER_BYTES = 48
FRAME_MAGIC = 0x4852
FRAME_VERSION = 1

FLAG_SOB = 1 << 0
FLAG_EOB = 1 << 1
FLAG_TS_VALID = 1 << 2
FLAG_OVERFLOW_BEFORE = 1 << 3
FLAG_ERROR = 1 << 4
FLAG_CRC_VALID = 1 << 5

# sample_format code -> (name, bytes per sample per channel = pattern word bytes)
SAMPLE_FORMATS = {1: ("sc16", 4), 2: ("sc8", 2)}

_HEADER = struct.Struct("<HBBHBBIIQQQQ")
assert _HEADER.size == FRAME_HEADER_BYTES
FIELDS = ("magic", "version", "flags", "stream_id", "sample_format", "channels", "payload_bytes",
          "crc32c", "seq", "sample_tick", "send_time_ns", "reserved")


def _crc32c_table() -> list[int]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), reflected, init and xorout 0xFFFFFFFF."""
    c = 0xFFFFFFFF
    for b in data:
        c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def encode_frame(header: dict, payload: bytes) -> bytes:
    """Frame bytes; payload_bytes and crc32c (when CRC_VALID is set) are computed here."""
    h = {"magic": FRAME_MAGIC, "version": FRAME_VERSION, "flags": 0, "stream_id": 0, "sample_format": 1,
         "channels": 1, "seq": 0, "sample_tick": 0, "send_time_ns": 0, "reserved": 0}
    h.update(header)
    h["payload_bytes"] = len(payload)
    h["crc32c"] = crc32c(payload) if h["flags"] & FLAG_CRC_VALID else 0
    return _HEADER.pack(*(h[f] for f in FIELDS)) + bytes(payload)


def decode_frame(frame: bytes) -> tuple[dict, bytes]:
    """(header dict, payload); FrameError (a ValueError) naming the broken field."""
    if len(frame) < FRAME_HEADER_BYTES:
        raise FrameError("frame shorter than the 48-byte header")
    h = dict(zip(FIELDS, _HEADER.unpack_from(frame), strict=True))
    if h["magic"] != FRAME_MAGIC:
        raise FrameError("bad magic (expected 0x4852)")
    if h["version"] != FRAME_VERSION:
        raise FrameError("unsupported version (expected 1)")
    if h["sample_format"] not in SAMPLE_FORMATS:
        raise FrameError("unknown sample_format (allowed: 1 sc16, 2 sc8)")
    if h["channels"] == 0:
        raise FrameError("channels is 0")
    if h["payload_bytes"] != len(frame) - FRAME_HEADER_BYTES:
        raise FrameError("payload_bytes does not match the frame length")
    if h["payload_bytes"] % (SAMPLE_FORMATS[h["sample_format"]][1] * h["channels"]):
        raise FrameError("payload_bytes is not a multiple of bytes_per_sample x channels")
    payload = bytes(frame[FRAME_HEADER_BYTES:])
    if h["flags"] & FLAG_CRC_VALID:
        if crc32c(payload) != h["crc32c"]:
            raise FrameError("payload crc32c mismatch")
    elif h["crc32c"] != 0:
        raise FrameError("crc32c field is not 0 although CRC_VALID is clear")
    return h, payload
