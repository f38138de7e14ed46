/* -*- c++ -*- */
/*
 * Copyright 2026 hilrig.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_HILRIG_RIG_SOURCE_IMPL_H
#define INCLUDED_HILRIG_RIG_SOURCE_IMPL_H

#include "formats.h"
#include <gnuradio/hilrig/rig_source.h>

#include <hilrig/core/rx_check.hpp>
#include <hilrig/io/frame_source.hpp>

#include <atomic>
#include <memory>

namespace gr {
namespace hilrig {

class rig_source_impl : public rig_source
{
private:
    const cpu_format d_format;
    const unsigned d_channels;
    const bool d_stop_on_eob;
    std::unique_ptr<::hilrig::FrameSource> d_src; // the core's frame source: udp or shm
    ::hilrig::RxCounters d_counters;
    std::unique_ptr<::hilrig::RxChecker> d_check;
    std::atomic<uint64_t> d_mismatched{ 0 };

    // The frame being output: its payload, geometry and how many ticks are out.
    struct current_frame {
        const uint8_t* payload = nullptr;
        ::hilrig::SampleFormat wire = ::hilrig::SampleFormat::sc16;
        uint64_t ticks = 0, done = 0;
        bool active = false;
    } d_cur;
    bool d_eob = false;
    bool d_took = false; // a frame was accounted since the last on_batch_done
    pmt::pmt_t d_overflow_key, d_gap_key, d_missing_key, d_dropped_key, d_src_id;

    bool next_frame(bool wait, int produced);
    bool take(const uint8_t* frame, std::size_t len, int produced);
    void release_current();

public:
    rig_source_impl(const std::string& cpu_format,
                    int channels,
                    const std::string& transport,
                    const std::string& address,
                    int frame_bytes,
                    int ring_slots,
                    int socket_buffer_bytes,
                    bool stop_on_eob,
                    double rate_sps);
    ~rig_source_impl() override;

    std::string endpoint() const override;
    std::string stats_json() const override;
    uint64_t frames_received() const override { return d_counters.frames_received.load(); }
    uint64_t samples_received() const override { return d_counters.samples_received.load(); }
    uint64_t missing_frames() const override { return d_counters.missing_frames.load(); }
    uint64_t dropped_samples() const override { return d_counters.dropped_samples.load(); }
    uint64_t overruns() const override { return d_counters.overruns.load(); }
    uint64_t pattern_errors() const override { return d_counters.pattern_errors.load(); }
    uint64_t malformed_frames() const override { return d_counters.malformed_frames.load(); }
    uint64_t mismatched_frames() const override { return d_mismatched.load(); }

    bool stop() override;
    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;
};

} // namespace hilrig
} // namespace gr

#endif
