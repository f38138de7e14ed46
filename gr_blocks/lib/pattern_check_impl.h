/* -*- c++ -*- */
/*
 * Copyright 2026 hilrig.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_HILRIG_PATTERN_CHECK_IMPL_H
#define INCLUDED_HILRIG_PATTERN_CHECK_IMPL_H

#include "formats.h"
#include <gnuradio/hilrig/pattern_check.h>

#include <atomic>
#include <memory>
#include <vector>

namespace gr {
namespace hilrig {

class pattern_check_impl : public pattern_check
{
private:
    struct channel_state {
        std::atomic<uint64_t> samples{ 0 }, pattern_errors{ 0 }, gaps{ 0 }, missing_samples{ 0 };
        uint64_t expected_tick = 0; // the tick the next sample should carry
        // A mismatching last sample of a work call waits for the next sample to tell a
        // gap from an error (decided at the next call, or as an error at stop()).
        bool suspect = false;
        uint64_t suspect_word = 0;
    };

    const cpu_format d_format;
    const ::hilrig::SampleFormat d_wire;
    const unsigned d_channels;
    const uint64_t d_stop_after;
    const double d_stats_interval_s;
    const uint64_t d_word_mask;
    std::unique_ptr<channel_state[]> d_ch;
    std::vector<uint8_t> d_words;      // interleaved words (fast path) or one channel's (fc32)
    uint64_t d_checked = 0;            // samples per channel consumed so far
    std::atomic<uint64_t> d_first_ns{ 0 }, d_last_ns{ 0 }, d_buffers{ 0 };
    uint64_t d_next_stats_ns = 0;
    bool d_done = false;
    const pmt::pmt_t d_port;

    const uint8_t* words_of(const void* in, int n, unsigned ch);
    void classify(unsigned ch, const uint8_t* words, int n);
    void settle_suspects();
    uint64_t sum(std::atomic<uint64_t> channel_state::*field, int channel) const;
    void post_stats();

public:
    pattern_check_impl(const std::string& cpu_format,
                       int channels,
                       uint64_t stop_after_samples,
                       uint64_t first_sample,
                       double stats_interval_s);

    uint64_t first_sample_ns() const override { return d_first_ns.load(std::memory_order_relaxed); }
    uint64_t last_sample_ns() const override { return d_last_ns.load(std::memory_order_relaxed); }
    uint64_t buffers() const override { return d_buffers.load(std::memory_order_relaxed); }
    uint64_t samples(int channel) const override { return sum(&channel_state::samples, channel); }
    uint64_t pattern_errors(int channel) const override
    {
        return sum(&channel_state::pattern_errors, channel);
    }
    uint64_t gaps(int channel) const override { return sum(&channel_state::gaps, channel); }
    uint64_t missing_samples(int channel) const override
    {
        return sum(&channel_state::missing_samples, channel);
    }
    pmt::pmt_t stats() const override;

    bool start() override;
    bool stop() override;
    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;
};

} // namespace hilrig
} // namespace gr

#endif
