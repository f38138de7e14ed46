"""Pure-Python reference of the hilrig frame format, the `counter` pattern and the CIC filters.

Used by tests (against the native core) and to generate docs/vectors/. Slow on
purpose-free clarity: nothing here runs on the streaming path.
"""
from .cic import cic_decimate, cic_impulse_response, cic_interpolate, cic_width  # noqa: F401
from .frame import (  # noqa: F401
    FLAG_CRC_VALID,
    FLAG_EOB,
    FLAG_ERROR,
    FLAG_OVERFLOW_BEFORE,
    FLAG_SOB,
    FLAG_TS_VALID,
    FRAME_HEADER_BYTES,
    FRAME_MAGIC,
    FRAME_VERSION,
    SAMPLE_FORMATS,
    FrameError,
    crc32c,
    decode_frame,
    encode_frame,
)
from .pattern import pattern_check, pattern_fill  # noqa: F401
