/* -*- c++ -*- */
/*
 * Copyright 2026 hilrig.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_HILRIG_PATTERN_SOURCE_IMPL_H
#define INCLUDED_HILRIG_PATTERN_SOURCE_IMPL_H

#include "formats.h"
#include <gnuradio/hilrig/pattern_source.h>

#include <atomic>
#include <vector>

namespace gr {
namespace hilrig {

class pattern_source_impl : public pattern_source
{
private:
    const cpu_format d_format;
    const ::hilrig::SampleFormat d_wire;
    const unsigned d_channels;
    const double d_rate_sps;
    const uint64_t d_first_sample;
    std::atomic<uint64_t> d_produced{ 0 };
    uint64_t d_start_ns = 0;
    std::vector<uint8_t> d_words; // interleaved words of one work call

    int throttle(int noutput_items);

public:
    pattern_source_impl(const std::string& cpu_format,
                        int channels,
                        double rate_sps,
                        uint64_t first_sample);

    uint64_t samples_produced() const override { return d_produced.load(); }
    bool start() override;
    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;
};

} // namespace hilrig
} // namespace gr

#endif
