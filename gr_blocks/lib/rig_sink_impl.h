/* -*- c++ -*- */
/*
 * Copyright 2026 hilrig.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_HILRIG_RIG_SINK_IMPL_H
#define INCLUDED_HILRIG_RIG_SINK_IMPL_H

#include "formats.h"
#include <gnuradio/hilrig/rig_sink.h>

#include <hilrig/core/config.hpp>
#include <hilrig/core/frame.hpp>
#include <hilrig/io/frame_sink.hpp>
#include <hilrig/core/tx_pacer.hpp>

#include <atomic>
#include <memory>
#include <vector>

namespace gr {
namespace hilrig {

class rig_sink_impl : public rig_sink
{
private:
    const cpu_format d_format;
    ::hilrig::StreamConfig d_cfg; // geometry, header fields, rate, the receiver's endpoint
    uint32_t d_ticks_per_frame = 0;
    std::unique_ptr<::hilrig::FrameSink> d_sink; // the core's frame sink: udp or the receiver's ring
    std::unique_ptr<::hilrig::TxPacer> d_pacer;   // samples; null: unpaced
    uint8_t* d_out = nullptr;                     // the frame being filled (from d_sink)
    uint32_t d_fill = 0;                          // ticks in d_out
    uint64_t d_seq = 0;
    std::atomic<uint64_t> d_frames_sent{ 0 }, d_samples_sent{ 0 };
    std::atomic<bool> d_stopping{ false };

    uint8_t* frame_buffer();
    bool send_frame(uint8_t flags);

public:
    rig_sink_impl(const std::string& cpu_format,
                  int channels,
                  const std::string& endpoint,
                  int frame_bytes,
                  double rate_sps,
                  const std::string& wire_format,
                  int stream_id,
                  bool crc);

    uint64_t frames_sent() const override { return d_frames_sent.load(); }
    uint64_t samples_sent() const override { return d_samples_sent.load(); }

    bool start() override;
    bool stop() override;
    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;
};

} // namespace hilrig
} // namespace gr

#endif
