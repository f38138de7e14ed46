/* -*- c++ -*- */
/*
 * Copyright 2026 hilrig.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "pattern_source_impl.h"

#include <gnuradio/io_signature.h>
#include <hilrig/core/clock.hpp>
#include <hilrig/core/pattern.hpp>

#include <algorithm>
#include <cmath>

namespace gr {
namespace hilrig {

pattern_source::sptr pattern_source::make(const std::string& cpu_format,
                                          int channels,
                                          double rate_sps,
                                          uint64_t first_sample)
{
    return gnuradio::make_block_sptr<pattern_source_impl>(
        cpu_format, channels, rate_sps, first_sample);
}

pattern_source_impl::pattern_source_impl(const std::string& format,
                                         int channels,
                                         double rate_sps,
                                         uint64_t first_sample)
    : gr::sync_block("pattern_source",
                     gr::io_signature::make(0, 0, 0),
                     gr::io_signature::make(checked_channels(channels, "pattern_source"),
                                            channels,
                                            item_bytes(parse_cpu_format(format)))),
      d_format(parse_cpu_format(format)),
      d_wire(wire_of(d_format)),
      d_channels(unsigned(channels)),
      d_rate_sps(rate_sps),
      d_first_sample(first_sample)
{
    if (!(rate_sps >= 0.0) || !std::isfinite(rate_sps))
        throw std::invalid_argument("hilrig pattern_source: rate_sps must be >= 0 (0: unthrottled)");
}

bool pattern_source_impl::start()
{
    d_start_ns = ::hilrig::now_ns();
    return true;
}

// Like blocks.throttle: never ahead of rate_sps, sleeping until at least one sample is due.
int pattern_source_impl::throttle(int noutput_items)
{
    const uint64_t produced = d_produced.load(std::memory_order_relaxed);
    for (;;) {
        const double elapsed_s = double(::hilrig::now_ns() - d_start_ns) * 1e-9;
        const double due = std::floor(elapsed_s * d_rate_sps) - double(produced);
        if (due >= 1.0)
            return int(std::min<double>(noutput_items, due));
        const double wait_s = (double(produced) + 1.0) / d_rate_sps - elapsed_s;
        ::hilrig::sleep_for_ns(uint64_t(std::clamp(wait_s, 1e-6, 0.05) * 1e9));
    }
}

int pattern_source_impl::work(int noutput_items,
                              gr_vector_const_void_star& /*input_items*/,
                              gr_vector_void_star& output_items)
{
    const int n = d_rate_sps > 0 ? throttle(noutput_items) : noutput_items;
    const uint64_t tick = d_first_sample + d_produced.load(std::memory_order_relaxed);
    const std::size_t words = std::size_t(n) * d_channels;
    const unsigned wbytes = ::hilrig::bytes_per_sample(d_wire);

    if (d_channels == 1 && d_format != cpu_format::fc32) {
        ::hilrig::pattern_fill(tick, output_items[0], words, d_wire);
    } else {
        d_words.resize(words * wbytes);
        ::hilrig::pattern_fill(tick * d_channels, d_words.data(), words, d_wire);
        deinterleave(d_words.data(), d_wire, d_channels, std::size_t(n), d_format, output_items.data(), 0);
    }
    d_produced.fetch_add(uint64_t(n), std::memory_order_relaxed);
    return n;
}

} /* namespace hilrig */
} /* namespace gr */
