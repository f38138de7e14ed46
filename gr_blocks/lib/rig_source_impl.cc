/* -*- c++ -*- */
/*
 * Copyright 2026 hilrig.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "rig_source_impl.h"

#include <gnuradio/io_signature.h>
#include <hilrig/core/clock.hpp>
#include <hilrig/core/config.hpp>
#include <hilrig/io/streams.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>

namespace gr {
namespace hilrig {

rig_source::sptr rig_source::make(const std::string& cpu_format,
                                  int channels,
                                  const std::string& transport,
                                  const std::string& address,
                                  int frame_bytes,
                                  int ring_slots,
                                  int socket_buffer_bytes,
                                  bool stop_on_eob,
                                  double rate_sps)
{
    return gnuradio::make_block_sptr<rig_source_impl>(cpu_format,
                                                      channels,
                                                      transport,
                                                      address,
                                                      frame_bytes,
                                                      ring_slots,
                                                      socket_buffer_bytes,
                                                      stop_on_eob,
                                                      rate_sps);
}

rig_source_impl::rig_source_impl(const std::string& format,
                                 int channels,
                                 const std::string& transport,
                                 const std::string& address,
                                 int frame_bytes,
                                 int ring_slots,
                                 int socket_buffer_bytes,
                                 bool stop_on_eob,
                                 double rate_sps)
    : gr::sync_block("rig_source",
                     gr::io_signature::make(0, 0, 0),
                     gr::io_signature::make(checked_channels(channels, "rig_source"),
                                            channels,
                                            item_bytes(parse_cpu_format(format)))),
      d_format(parse_cpu_format(format)),
      d_channels(unsigned(channels)),
      d_stop_on_eob(stop_on_eob),
      d_overflow_key(pmt::mp("hilrig_overflow")),
      d_gap_key(pmt::mp("hilrig_gap")),
      d_missing_key(pmt::mp("missing_frames")),
      d_dropped_key(pmt::mp("dropped_samples")),
      d_src_id(pmt::mp(alias()))
{
    // The core's frame source with its defaults, resolved by the core's one rule
    // (resolve_stream_config): the socket buffer and ring grown to ~50 ms of the stream
    // when its rate is given, else what is asked (or the core's defaults).
    ::hilrig::StreamConfig cfg;
    if (frame_bytes > 0)
        cfg.frame_bytes = uint32_t(frame_bytes);
    if (cfg.frame_bytes <= ::hilrig::kFrameHeaderBytes)
        throw std::invalid_argument("hilrig rig_source: frame_bytes must exceed the 48-byte header");
    cfg.channels = d_channels;
    cfg.sample_format = wire_of(d_format);
    cfg.rate_sps = rate_sps > 0 ? rate_sps : 1.0; // no rate: nothing grown by it
    if (socket_buffer_bytes > 0)
        cfg.transport.socket_buffer_bytes = uint32_t(socket_buffer_bytes);
    try {
        if (transport == "udp" || transport == "tcp") { // tcp: listens there for the sender
            auto [host, port] = parse_host_port(address.empty() ? "127.0.0.1:0" : address, "rig_source");
            cfg.transport.kind = ::hilrig::parse_transport_kind(transport, "rig_source transport");
            cfg.transport.host = host;
            cfg.transport.port = port;
        } else if (transport == "shm") {
            cfg.transport.kind = ::hilrig::TransportKind::shm;
            cfg.transport.path = address;
            if (ring_slots > 0)
                cfg.transport.slots = uint32_t(ring_slots);
        } else {
            throw std::invalid_argument("hilrig rig_source: transport '" + transport +
                                        "' is not one of udp, tcp, shm");
        }
        d_src = std::make_unique<::hilrig::FrameSource>(
            ::hilrig::resolve_stream_config(cfg, "hilrig rig_source"));
    } catch (const std::runtime_error& e) {
        throw std::runtime_error(std::string("hilrig rig_source: ") + e.what());
    }
    d_check = std::make_unique<::hilrig::RxChecker>(d_counters);
    // work() returns 0 after 10 ms without a frame (so stop() is seen); the scheduler
    // then parks a source for its blocked-input timer, 250 ms by default: longer than
    // the ~50 ms the socket buffer or ring holds, so the first frames would be lost.
    set_blkd_input_timer_value(1);
}

rig_source_impl::~rig_source_impl() { release_current(); }

std::string rig_source_impl::endpoint() const { return d_src->endpoint().dump(); }

std::string rig_source_impl::stats_json() const
{
    nlohmann::json s = ::hilrig::counters_json(d_counters);
    s["mismatched_frames"] = d_mismatched.load();
    return s.dump();
}

bool rig_source_impl::stop()
{
    d_check->flush();
    d_src->release_batch();
    return true;
}

void rig_source_impl::release_current()
{
    if (d_cur.active)
        d_src->release();
    d_cur.active = false;
}

// Accounts one received frame in the core's checker; makes it the current frame
// when its samples fit this block, tagging overflows and gaps at its first sample.
bool rig_source_impl::take(const uint8_t* frame, std::size_t len, int produced)
{
    const uint64_t over0 = d_counters.overruns.load(std::memory_order_relaxed);
    const uint64_t missing0 = d_counters.missing_frames.load(std::memory_order_relaxed);
    const uint64_t dropped0 = d_counters.dropped_samples.load(std::memory_order_relaxed);
    ::hilrig::FrameHeader h;
    if (!d_check->on_frame(frame, len, ::hilrig::now_ns(), &h))
        return false; // malformed: counted by the checker
    d_took = true;
    if (h.flags & ::hilrig::kFlagEOB)
        d_eob = true;
    const auto wire = ::hilrig::SampleFormat(h.sample_format);
    if (h.channels != d_channels || !cpu_takes_wire(d_format, wire)) {
        if (d_mismatched.fetch_add(1) == 0)
            d_logger->error("frames carry " + std::to_string(h.channels) + " channel(s) of " +
                            ::hilrig::sample_format_name(wire) + "; this block takes " +
                            std::to_string(d_channels) +
                            " channel(s) (sc16/sc8 output needs that wire format): skipping them");
        return false;
    }
    const uint64_t offset = nitems_written(0) + uint64_t(produced);
    const uint64_t over = d_counters.overruns.load(std::memory_order_relaxed);
    const uint64_t missing = d_counters.missing_frames.load(std::memory_order_relaxed);
    if (over != over0)
        for (unsigned ch = 0; ch < d_channels; ++ch)
            add_item_tag(ch, offset, d_overflow_key, pmt::from_uint64(over), d_src_id);
    if (missing != missing0) {
        pmt::pmt_t gap = pmt::make_dict();
        gap = pmt::dict_add(gap, d_missing_key, pmt::from_uint64(missing - missing0));
        gap = pmt::dict_add(
            gap,
            d_dropped_key,
            pmt::from_uint64(d_counters.dropped_samples.load(std::memory_order_relaxed) - dropped0));
        for (unsigned ch = 0; ch < d_channels; ++ch)
            add_item_tag(ch, offset, d_gap_key, gap, d_src_id);
    }
    d_cur.payload = frame + ::hilrig::kFrameHeaderBytes;
    d_cur.wire = wire;
    d_cur.ticks = h.payload_bytes / (::hilrig::bytes_per_sample(wire) * h.channels);
    d_cur.done = 0;
    d_cur.active = true;
    return true;
}

// The next frame that fits from the core's frame source, waiting (bounded, so stop()
// is seen) only when asked.
bool rig_source_impl::next_frame(bool wait, int produced)
{
    for (;;) {
        const ::hilrig::FrameView f = d_src->next(wait ? 10'000'000 : 0);
        if (!f) {
            if (d_src->error())
                d_logger->error(std::string("receive failed: ") + std::strerror(d_src->error()));
            d_check->on_idle(::hilrig::now_ns(), ::hilrig::kRecvTimeoutNs);
            return false;
        }
        if (f.malformed)
            d_check->on_malformed();
        else if (take(f.data, f.len, produced))
            return true;
        d_src->release();
    }
}

int rig_source_impl::work(int noutput_items,
                          gr_vector_const_void_star& /*input_items*/,
                          gr_vector_void_star& output_items)
{
    int produced = 0;
    while (produced < noutput_items) {
        if (!d_cur.active) {
            if ((d_eob && d_stop_on_eob) || !next_frame(produced == 0, produced))
                break;
            continue;
        }
        const int n = int(std::min<uint64_t>(d_cur.ticks - d_cur.done, uint64_t(noutput_items - produced)));
        const unsigned wb = ::hilrig::bytes_per_sample(d_cur.wire);
        const uint8_t* first = d_cur.payload + d_cur.done * d_channels * wb;
        deinterleave(first, d_cur.wire, d_channels, std::size_t(n), d_format, output_items.data(),
                     std::size_t(produced));
        d_cur.done += uint64_t(n);
        produced += n;
        if (d_cur.done == d_cur.ticks)
            release_current();
    }
    if (d_took) {
        d_check->on_batch_done(::hilrig::now_ns());
        d_took = false;
    }
    if (produced == 0 && d_eob && d_stop_on_eob && !d_cur.active)
        return WORK_DONE;
    return produced;
}

} /* namespace hilrig */
} /* namespace gr */
