/* -*- c++ -*- */
/*
 * Copyright 2026 hilrig.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "rig_sink_impl.h"

#include <gnuradio/io_signature.h>
#include <hilrig/core/clock.hpp>
#include <hilrig/core/config.hpp>
#include <hilrig/core/framer.hpp>
#include <hilrig/io/frame_sink.hpp>
#include <hilrig/core/tx_pacer.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace gr {
namespace hilrig {

rig_sink::sptr rig_sink::make(const std::string& cpu_format,
                              int channels,
                              const std::string& endpoint,
                              int frame_bytes,
                              double rate_sps,
                              const std::string& wire_format,
                              int stream_id,
                              bool crc)
{
    return gnuradio::make_block_sptr<rig_sink_impl>(
        cpu_format, channels, endpoint, frame_bytes, rate_sps, wire_format, stream_id, crc);
}

// The receiver's endpoint (the JSON rig_source::endpoint() and RxStream give) as the
// core's transport: udp or tcp host and port (tcp: rig_source listens, this connects),
// or the shm ring's path.
static ::hilrig::TransportSpec sink_endpoint(const std::string& endpoint)
{
    const std::string where = "hilrig rig_sink: endpoint";
    nlohmann::json ep;
    try {
        ep = nlohmann::json::parse(endpoint);
    } catch (const nlohmann::json::parse_error&) {
        throw std::invalid_argument(where + " " + endpoint +
                                    " is not JSON; give rig_source's endpoint(), e.g. "
                                    "{\"kind\": \"udp\", \"host\": \"127.0.0.1\", \"port\": 5000}");
    }
    if (!ep.is_object() || !ep.contains("kind") || !ep["kind"].is_string())
        throw std::invalid_argument(where + " must be an object with a kind (udp, tcp, shm), got " + endpoint);
    const std::string kind = ep["kind"].get<std::string>();
    if (kind != "udp" && kind != "tcp" && kind != "shm")
        throw std::invalid_argument(where + ".kind '" + kind + "' is not one of udp, tcp, shm");
    ::hilrig::TransportSpec base;
    base.kind = ::hilrig::parse_transport_kind(kind, where + ".kind");
    return ::hilrig::transport_at_endpoint(base, ep, where);
}

rig_sink_impl::rig_sink_impl(const std::string& format,
                             int channels,
                             const std::string& endpoint,
                             int frame_bytes,
                             double rate_sps,
                             const std::string& wire_format,
                             int stream_id,
                             bool crc)
    : gr::sync_block("rig_sink",
                     gr::io_signature::make(checked_channels(channels, "rig_sink"),
                                            channels,
                                            item_bytes(parse_cpu_format(format))),
                     gr::io_signature::make(0, 0, 0)),
      d_format(parse_cpu_format(format))
{
    // The core's stream config of this sink: frame geometry, header fields, rate, endpoint.
    d_cfg.sample_format = parse_wire_format(wire_format);
    if (!cpu_takes_wire(d_format, d_cfg.sample_format))
        throw std::invalid_argument("hilrig rig_sink: cpu_format sc16/sc8 must equal wire_format (" +
                                    wire_format + "); only fc32 is converted");
    if (!(rate_sps >= 0.0) || !std::isfinite(rate_sps))
        throw std::invalid_argument("hilrig rig_sink: rate_sps must be >= 0 (0: unpaced)");
    if (stream_id < 0 || stream_id > 65535)
        throw std::invalid_argument("hilrig rig_sink: stream_id must be 0-65535");
    d_cfg.channels = unsigned(channels);
    d_cfg.stream_id = uint16_t(stream_id);
    d_cfg.crc = crc;
    if (rate_sps > 0)
        d_cfg.rate_sps = rate_sps;
    if (frame_bytes > 0)
        d_cfg.frame_bytes = uint32_t(frame_bytes);
    if (d_cfg.frame_bytes <= ::hilrig::kFrameHeaderBytes || d_cfg.samples_per_frame() == 0)
        throw std::invalid_argument("hilrig rig_sink: frame_bytes " + std::to_string(d_cfg.frame_bytes) +
                                    " holds no sample after the 48-byte header");
    d_cfg.transport = sink_endpoint(endpoint);
    d_ticks_per_frame = d_cfg.samples_per_frame();
    try {
        // The send buffer grown to the rate by the core's one rule, as a case's config.
        d_cfg = ::hilrig::resolve_stream_config(d_cfg, "hilrig rig_sink");
        d_sink = std::make_unique<::hilrig::FrameSink>(d_cfg);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string("hilrig rig_sink: ") + e.what());
    } catch (const std::runtime_error& e) {
        throw std::runtime_error(std::string("hilrig rig_sink: ") + e.what());
    }
    // TxStream's flow control: the rate clock with the core's lead (samples here).
    if (rate_sps > 0) {
        const uint64_t lead_frames = ::hilrig::TxPacer::lead_frames(
            d_cfg, ::hilrig::TxPacer::link_frames(d_cfg, d_sink->ring_slots()));
        d_pacer = std::make_unique<::hilrig::TxPacer>(rate_sps, lead_frames * d_ticks_per_frame);
    }
}

bool rig_sink_impl::start()
{
    if (d_pacer)
        d_pacer->start(::hilrig::now_ns());
    d_stopping = false;
    return true;
}

// The frame being filled: a ring slot or the sink's UDP buffer, waited for (bounded,
// so stop() is seen) when the ring is full. nullptr: stopping.
uint8_t* rig_sink_impl::frame_buffer()
{
    while (!d_out) {
        d_out = d_sink->acquire(10'000'000);
        if (!d_out && d_stopping)
            return nullptr;
    }
    return d_out;
}

// Sends the d_fill ticks in d_out as frame d_seq (the core's header; the sink stamps
// the send time and CRC), paced by the core's TxPacer; the sink's send-with-retry
// waits on a full socket until stop().
bool rig_sink_impl::send_frame(uint8_t flags)
{
    const uint64_t tick = d_seq * d_ticks_per_frame;
    if (d_pacer && tick >= d_pacer->allowed(::hilrig::now_ns()))
        ::hilrig::sleep_until_ns(d_pacer->due_ns(tick));
    uint8_t* out = frame_buffer();
    if (!out)
        return false;
    d_sink->commit(::hilrig::write_samples_header(
        d_cfg, d_seq, tick, d_fill, uint8_t(flags | (d_seq == 0 ? ::hilrig::kFlagSOB : 0)), out));
    d_out = nullptr;
    if (d_sink->flush(~uint64_t(0), &d_stopping) != 1) {
        if (d_sink->error())
            d_logger->error(std::string("send failed: ") + std::strerror(d_sink->error()));
        return false;
    }
    ++d_seq;
    d_frames_sent.fetch_add(1, std::memory_order_relaxed);
    d_samples_sent.fetch_add(d_fill, std::memory_order_relaxed);
    d_fill = 0;
    return true;
}

bool rig_sink_impl::stop()
{
    d_stopping = true; // from now on a full link is waited on once, not forever
    send_frame(::hilrig::kFlagEOB); // the partial frame, or an empty one, with EOB
    return true;
}

int rig_sink_impl::work(int noutput_items,
                        gr_vector_const_void_star& input_items,
                        gr_vector_void_star& /*output_items*/)
{
    const std::size_t stride = d_cfg.tick_bytes();
    int used = 0;
    while (used < noutput_items) {
        uint8_t* out = frame_buffer();
        if (!out)
            return WORK_DONE; // stopping
        const int n = int(std::min<uint32_t>(d_ticks_per_frame - d_fill, uint32_t(noutput_items - used)));
        uint8_t* payload = out + ::hilrig::kFrameHeaderBytes + std::size_t(d_fill) * stride;
        interleave(input_items.data(), std::size_t(used), d_format, d_cfg.channels, std::size_t(n), d_cfg.sample_format, payload);
        d_fill += uint32_t(n);
        used += n;
        if (d_fill == d_ticks_per_frame && !send_frame(0))
            return WORK_DONE; // stopping, or the socket failed (logged)
    }
    return used;
}

} /* namespace hilrig */
} /* namespace gr */
