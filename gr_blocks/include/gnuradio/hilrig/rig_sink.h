/* -*- c++ -*- */
/*
 * Copyright 2026 hilrig.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_HILRIG_RIG_SINK_H
#define INCLUDED_HILRIG_RIG_SINK_H

#include <gnuradio/hilrig/api.h>
#include <gnuradio/sync_block.h>

#include <cstdint>
#include <string>

namespace gr {
namespace hilrig {

/*!
 * \brief Frames samples into hilrig frames and sends them, paced or not.
 * \ingroup hilrig
 *
 * One input per channel. endpoint: where the receiver is, the JSON a receiver gives
 * (rig_source::endpoint(), the core's RxStream endpoint):
 * {"kind": "udp", "host": ..., "port": ...} or {"kind": "shm", "path": "/proc/<pid>/fd/<n>"}.
 * frame_bytes: whole frame including the 48-byte header (0: the core's default);
 * each frame carries the largest whole number of ticks that fits. wire_format:
 * "sc16" or "sc8" (cpu_format sc16/sc8 must match it; fc32 is converted).
 * rate_sps > 0 paces frames to that sample rate with the core's TxPacer (TxStream's
 * lead: ~50 ms ahead, at most half of what the link holds); 0 sends as fast as the
 * link takes them (a full socket or ring is waited on, nothing is dropped). The
 * first frame has SOB; stop() sends what is left with EOB. Header, CRC and pacing
 * are the core's.
 */
class HILRIG_API rig_sink : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<rig_sink> sptr;

    static sptr make(const std::string& cpu_format,
                     int channels,
                     const std::string& endpoint,
                     int frame_bytes = 0,
                     double rate_sps = 0.0,
                     const std::string& wire_format = "sc16",
                     int stream_id = 0,
                     bool crc = false);

    virtual uint64_t frames_sent() const = 0;
    virtual uint64_t samples_sent() const = 0;
};

} // namespace hilrig
} // namespace gr

#endif /* INCLUDED_HILRIG_RIG_SINK_H */
