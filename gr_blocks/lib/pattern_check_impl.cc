/* -*- c++ -*- */
/*
 * Copyright 2026 hilrig.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "pattern_check_impl.h"

#include <gnuradio/io_signature.h>
#include <hilrig/core/clock.hpp>
#include <hilrig/core/pattern.hpp>

#include <algorithm>
#include <cmath>

namespace gr {
namespace hilrig {

pattern_check::sptr pattern_check::make(const std::string& cpu_format,
                                        int channels,
                                        uint64_t stop_after_samples,
                                        uint64_t first_sample,
                                        double stats_interval_s)
{
    return gnuradio::make_block_sptr<pattern_check_impl>(
        cpu_format, channels, stop_after_samples, first_sample, stats_interval_s);
}

pattern_check_impl::pattern_check_impl(const std::string& format,
                                       int channels,
                                       uint64_t stop_after_samples,
                                       uint64_t first_sample,
                                       double stats_interval_s)
    : gr::sync_block("pattern_check",
                     gr::io_signature::make(checked_channels(channels, "pattern_check"),
                                            channels,
                                            item_bytes(parse_cpu_format(format))),
                     gr::io_signature::make(0, 0, 0)),
      d_format(parse_cpu_format(format)),
      d_wire(wire_of(d_format)),
      d_channels(unsigned(channels)),
      d_stop_after(stop_after_samples),
      d_stats_interval_s(stats_interval_s),
      d_word_mask(d_wire == ::hilrig::SampleFormat::sc16 ? 0xffffffffull : 0xffffull),
      d_ch(new channel_state[unsigned(channels)]),
      d_port(pmt::mp("stats"))
{
    if (!(stats_interval_s >= 0.0) || !std::isfinite(stats_interval_s))
        throw std::invalid_argument("hilrig pattern_check: stats_interval_s must be >= 0 (0: only at the end)");
    for (unsigned ch = 0; ch < d_channels; ++ch)
        d_ch[ch].expected_tick = first_sample;
    message_port_register_out(d_port);
}

uint64_t pattern_check_impl::sum(std::atomic<uint64_t> channel_state::*field, int channel) const
{
    if (channel >= int(d_channels) || channel < -1)
        throw std::out_of_range("hilrig pattern_check: channel " + std::to_string(channel) +
                                " (the block has " + std::to_string(d_channels) + ")");
    if (channel >= 0)
        return (d_ch[channel].*field).load(std::memory_order_relaxed);
    uint64_t total = 0;
    for (unsigned ch = 0; ch < d_channels; ++ch)
        total += (d_ch[ch].*field).load(std::memory_order_relaxed);
    return total;
}

pmt::pmt_t pattern_check_impl::stats() const
{
    pmt::pmt_t d = pmt::make_dict();
    auto add = [&](const char* name, std::atomic<uint64_t> channel_state::*field) {
        std::vector<uint64_t> per(d_channels);
        for (unsigned ch = 0; ch < d_channels; ++ch)
            per[ch] = (d_ch[ch].*field).load(std::memory_order_relaxed);
        d = pmt::dict_add(d, pmt::mp(name), pmt::from_uint64(sum(field, -1)));
        d = pmt::dict_add(d, pmt::mp(std::string(name) + "_per_channel"), pmt::init_u64vector(per.size(), per));
    };
    add("samples", &channel_state::samples);
    add("pattern_errors", &channel_state::pattern_errors);
    add("gaps", &channel_state::gaps);
    add("missing_samples", &channel_state::missing_samples);
    return d;
}

void pattern_check_impl::post_stats() { message_port_pub(d_port, stats()); }

bool pattern_check_impl::start()
{
    d_next_stats_ns = ::hilrig::now_ns() + uint64_t(d_stats_interval_s * 1e9);
    return true;
}

bool pattern_check_impl::stop()
{
    settle_suspects();
    post_stats();
    return true;
}

// The words of one channel's input: the input itself, or converted from fc32.
const uint8_t* pattern_check_impl::words_of(const void* in, int n, unsigned /*ch*/)
{
    if (d_format != cpu_format::fc32)
        return static_cast<const uint8_t*>(in);
    d_words.resize(std::size_t(n) * ::hilrig::bytes_per_sample(d_wire));
    const void* const ins[1] = { in };
    interleave(ins, 0, d_format, 1, std::size_t(n), d_wire, d_words.data());
    return d_words.data();
}

// Sample by sample (only for input that is not the plain pattern): a mismatch followed
// by a sample that continues from it, a whole number of ticks ahead, is a gap.
void pattern_check_impl::classify(unsigned ch, const uint8_t* words, int n)
{
    channel_state& s = d_ch[ch];
    const unsigned wb = ::hilrig::bytes_per_sample(d_wire);
    const uint64_t C = d_channels, half = (d_word_mask + 1) / 2;
    auto word = [&](int i) -> uint64_t {
        if (wb == 4) {
            uint32_t w;
            std::memcpy(&w, words + std::size_t(i) * 4, 4);
            return w;
        }
        uint16_t w;
        std::memcpy(&w, words + std::size_t(i) * 2, 2);
        return w;
    };
    auto expected = [&] { return (s.expected_tick * C + ch) & d_word_mask; };
    auto decide = [&](uint64_t w, bool have_next, uint64_t next) {
        const uint64_t ahead = (w - expected()) & d_word_mask;
        if (have_next && ahead % C == 0 && ahead < half && next == ((w + C) & d_word_mask)) {
            const uint64_t k = ahead / C;
            s.gaps.fetch_add(1, std::memory_order_relaxed);
            s.missing_samples.fetch_add(k, std::memory_order_relaxed);
            s.expected_tick += k + 1;
        } else {
            s.pattern_errors.fetch_add(1, std::memory_order_relaxed);
            s.expected_tick += 1;
        }
        s.samples.fetch_add(1, std::memory_order_relaxed);
    };
    if (s.suspect) {
        s.suspect = false;
        decide(s.suspect_word, n > 0, n > 0 ? word(0) : 0);
    }
    uint64_t matched = 0;
    for (int i = 0; i < n; ++i) {
        const uint64_t w = word(i);
        if (w == expected()) {
            ++s.expected_tick;
            ++matched;
            continue;
        }
        s.samples.fetch_add(matched, std::memory_order_relaxed);
        matched = 0;
        if (i + 1 == n) {
            s.suspect = true;
            s.suspect_word = w;
            break;
        }
        decide(w, true, word(i + 1));
    }
    s.samples.fetch_add(matched, std::memory_order_relaxed);
}

void pattern_check_impl::settle_suspects()
{
    for (unsigned ch = 0; ch < d_channels; ++ch)
        if (d_ch[ch].suspect)
            classify(ch, nullptr, 0);
}

int pattern_check_impl::work(int noutput_items,
                             gr_vector_const_void_star& input_items,
                             gr_vector_void_star& /*output_items*/)
{
    if (d_done)
        return WORK_DONE;
    int n = noutput_items;
    if (d_stop_after)
        n = int(std::min<uint64_t>(uint64_t(n), d_stop_after - d_checked));

    // Fast path: every channel where the others are and the core finds no error.
    bool aligned = true;
    for (unsigned ch = 0; ch < d_channels; ++ch)
        aligned = aligned && !d_ch[ch].suspect && d_ch[ch].expected_tick == d_ch[0].expected_tick;
    bool clean = false;
    if (aligned) {
        const uint64_t tick = d_ch[0].expected_tick;
        const uint8_t* words;
        if (d_channels == 1) {
            words = words_of(input_items[0], n, 0);
        } else {
            d_words.resize(std::size_t(n) * d_channels * ::hilrig::bytes_per_sample(d_wire));
            interleave(input_items.data(), 0, d_format, d_channels, std::size_t(n), d_wire, d_words.data());
            words = d_words.data();
        }
        clean = ::hilrig::pattern_check(tick * d_channels, words, std::size_t(n) * d_channels, d_wire) == 0;
        if (clean)
            for (unsigned ch = 0; ch < d_channels; ++ch) {
                d_ch[ch].expected_tick += uint64_t(n);
                d_ch[ch].samples.fetch_add(uint64_t(n), std::memory_order_relaxed);
            }
    }
    if (!clean)
        for (unsigned ch = 0; ch < d_channels; ++ch)
            classify(ch, words_of(input_items[ch], n, ch), n);
    d_checked += uint64_t(n);
    if (n > 0) {
        const uint64_t arrived_ns = ::hilrig::now_ns();
        if (d_first_ns.load(std::memory_order_relaxed) == 0)
            d_first_ns.store(arrived_ns, std::memory_order_relaxed);
        d_last_ns.store(arrived_ns, std::memory_order_relaxed);
        d_buffers.fetch_add(1, std::memory_order_relaxed);
    }

    if (d_stop_after && d_checked >= d_stop_after) {
        settle_suspects();
        post_stats();
        d_done = true;
        return WORK_DONE;
    }
    if (d_stats_interval_s > 0) {
        const uint64_t now = ::hilrig::now_ns();
        if (now >= d_next_stats_ns) {
            post_stats();
            d_next_stats_ns = now + uint64_t(d_stats_interval_s * 1e9);
        }
    }
    return n;
}

} /* namespace hilrig */
} /* namespace gr */
