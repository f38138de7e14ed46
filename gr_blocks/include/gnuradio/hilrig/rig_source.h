/* -*- c++ -*- */
/*
 * Copyright 2026 hilrig.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_HILRIG_RIG_SOURCE_H
#define INCLUDED_HILRIG_RIG_SOURCE_H

#include <gnuradio/hilrig/api.h>
#include <gnuradio/sync_block.h>

#include <cstdint>
#include <string>

namespace gr {
namespace hilrig {

/*!
 * \brief Receives hilrig frames (from the simulator or a device) and outputs their
 * samples, one output per channel.
 * \ingroup hilrig
 *
 * transport "udp": address "host:port" to bind (port 0: a free port);
 * transport "shm": address "" creates a ring here (the sender opens it), else the
 * /proc/<pid>/fd/<n> path of a ring to open. endpoint() is the JSON the sender is
 * given (the simulator's configure "dest"). frame_bytes: the largest frame
 * (0: the core's default); ring_slots and socket_buffer_bytes (0: the core's defaults),
 * grown to ~50 ms of the stream's rate_sps when it is > 0 (the core's resolve_stream_config,
 * as a case's config is resolved).
 *
 * Every frame goes through the core's RxChecker, so stats_json() holds the same
 * counters, under the same names, as the rig's RxStream (frames_received,
 * missing_frames, dropped_samples, overruns, pattern_errors, latency_*_ns, ...).
 * Stream tags on every output at the first sample after an event:
 * "hilrig_overflow" (u64: overruns so far) for a frame flagged OVERFLOW_BEFORE and
 * "hilrig_gap" (dict: missing_frames, dropped_samples of this gap) after a
 * sequence gap. With stop_on_eob the block is done after an EOB frame.
 * cpu_format sc16 needs sc16 frames, sc8 sc8 frames; fc32 takes either (1/32768, 1/128).
 */
class HILRIG_API rig_source : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<rig_source> sptr;

    static sptr make(const std::string& cpu_format,
                     int channels,
                     const std::string& transport,
                     const std::string& address,
                     int frame_bytes = 0,
                     int ring_slots = 0,
                     int socket_buffer_bytes = 0,
                     bool stop_on_eob = true,
                     double rate_sps = 0.0);

    //! JSON: {"kind":"udp","host":...,"port":...} or {"kind":"shm","path":...,"slots":...}
    virtual std::string endpoint() const = 0;
    //! JSON object of the RxStream counters (counters_json of the core).
    virtual std::string stats_json() const = 0;
    virtual uint64_t frames_received() const = 0;
    virtual uint64_t samples_received() const = 0;
    virtual uint64_t missing_frames() const = 0;
    virtual uint64_t dropped_samples() const = 0;
    virtual uint64_t overruns() const = 0;
    virtual uint64_t pattern_errors() const = 0;
    virtual uint64_t malformed_frames() const = 0;
    //! Frames whose channels or sample format do not fit this block (skipped).
    virtual uint64_t mismatched_frames() const = 0;
};

} // namespace hilrig
} // namespace gr

#endif /* INCLUDED_HILRIG_RIG_SOURCE_H */
