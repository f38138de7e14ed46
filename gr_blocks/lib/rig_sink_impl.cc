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

#include <algorithm>
#include <cmath>
#include <cstring>

namespace gr {
namespace hilrig {

rig_sink::sptr rig_sink::make(const std::string& cpu_format,
                              int channels,
                              const std::string& transport,
                              const std::string& address,
                              int frame_bytes,
                              double rate_sps,
                              const std::string& wire_format,
                              int stream_id,
                              bool crc)
{
    return gnuradio::make_block_sptr<rig_sink_impl>(
        cpu_format, channels, transport, address, frame_bytes, rate_sps, wire_format, stream_id, crc);
}

static ::hilrig::SampleFormat sink_wire(cpu_format f, const std::string& wire_format)
{
    const auto w = parse_wire_format(wire_format);
    if (!cpu_takes_wire(f, w))
        throw std::invalid_argument("hilrig rig_sink: cpu_format sc16/sc8 must equal wire_format (" +
                                    wire_format + "); only fc32 is converted");
    return w;
}

rig_sink_impl::rig_sink_impl(const std::string& format,
                             int channels,
                             const std::string& transport,
                             const std::string& address,
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
      d_format(parse_cpu_format(format)),
      d_wire(sink_wire(d_format, wire_format)),
      d_channels(unsigned(channels)),
      d_rate_sps(rate_sps),
      d_crc(crc)
{
    if (!(rate_sps >= 0.0) || !std::isfinite(rate_sps))
        throw std::invalid_argument("hilrig rig_sink: rate_sps must be >= 0 (0: unpaced)");
    if (stream_id < 0 || stream_id > 65535)
        throw std::invalid_argument("hilrig rig_sink: stream_id must be 0-65535");
    // The frame geometry of the core's StreamConfig: the largest whole number of ticks.
    ::hilrig::StreamConfig cfg;
    if (frame_bytes > 0)
        cfg.frame_bytes = uint32_t(frame_bytes);
    cfg.channels = d_channels;
    cfg.sample_format = d_wire;
    if (cfg.frame_bytes <= ::hilrig::kFrameHeaderBytes || cfg.samples_per_frame() == 0)
        throw std::invalid_argument("hilrig rig_sink: frame_bytes " + std::to_string(cfg.frame_bytes) +
                                    " holds no sample after the 48-byte header");
    d_ticks_per_frame = cfg.samples_per_frame();
    d_frame_bytes = uint32_t(::hilrig::kFrameHeaderBytes) + cfg.payload_bytes();
    d_tmpl.stream_id = uint16_t(stream_id);
    d_tmpl.sample_format = uint8_t(d_wire);
    d_tmpl.channels = uint8_t(d_channels);
    d_frame.resize(d_frame_bytes);
    try {
        if (transport == "udp") {
            auto [host, port] = parse_host_port(address, "rig_sink");
            d_sock = ::hilrig::UdpSocket::connect_to(host, port, cfg.transport.socket_buffer_bytes);
        } else if (transport == "shm") {
            d_ring = ::hilrig::ShmRing::open(address);
            if (d_ring->slot_bytes() < d_frame_bytes)
                throw std::invalid_argument("hilrig rig_sink: the ring's slots hold " +
                                            std::to_string(d_ring->slot_bytes()) + " bytes, frames are " +
                                            std::to_string(d_frame_bytes));
        } else {
            throw std::invalid_argument("hilrig rig_sink: transport '" + transport +
                                        "' is not one of udp, shm");
        }
    } catch (const std::runtime_error& e) {
        throw std::runtime_error(std::string("hilrig rig_sink: ") + e.what());
    }
}

bool rig_sink_impl::start()
{
    d_start_ns = ::hilrig::now_ns();
    d_stopping = false;
    return true;
}

// Sends d_frame's d_fill ticks as frame d_seq; paced to rate_sps by its first tick.
// A full socket or ring is waited on (bounded polls, so stop() is seen).
bool rig_sink_impl::send_frame(uint8_t flags)
{
    const uint64_t tick = d_seq * d_ticks_per_frame;
    if (d_rate_sps > 0)
        ::hilrig::sleep_until_ns(d_start_ns + uint64_t(double(tick) / d_rate_sps * 1e9));
    ::hilrig::FrameHeader h = d_tmpl;
    h.flags = uint8_t(flags | ::hilrig::kFlagTsValid | (d_seq == 0 ? ::hilrig::kFlagSOB : 0));
    h.payload_bytes = d_fill * d_channels * ::hilrig::bytes_per_sample(d_wire);
    h.seq = d_seq;
    h.sample_tick = tick;
    const uint32_t len = uint32_t(::hilrig::kFrameHeaderBytes) + h.payload_bytes;
    uint8_t* out = d_frame.data();
    if (d_ring) {
        while (!(out = d_ring->acquire_wait(10'000'000)))
            if (d_stopping)
                return false;
        std::memcpy(out + ::hilrig::kFrameHeaderBytes, d_frame.data() + ::hilrig::kFrameHeaderBytes, h.payload_bytes);
    }
    ::hilrig::write_header(h, out);
    ::hilrig::finish_frame(out, d_crc, ::hilrig::now_ns());
    if (d_ring) {
        d_ring->publish(len);
    } else {
        for (;;) {
            bool busy = false;
            int err = 0;
            std::size_t n = len;
            if (::hilrig::udp_send_batch(d_sock.fd(), &out, &n, 1, &busy, &err) == 1)
                break;
            if (!busy) {
                d_logger->error(std::string("send failed: ") + std::strerror(err));
                return false;
            }
            if (d_stopping)
                return false;
            d_sock.wait_writable(10);
        }
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
    const std::size_t stride = std::size_t(d_channels) * ::hilrig::bytes_per_sample(d_wire);
    int used = 0;
    while (used < noutput_items) {
        const int n = int(std::min<uint32_t>(d_ticks_per_frame - d_fill, uint32_t(noutput_items - used)));
        uint8_t* payload = d_frame.data() + ::hilrig::kFrameHeaderBytes + std::size_t(d_fill) * stride;
        interleave(input_items.data(), std::size_t(used), d_format, d_channels, std::size_t(n), d_wire, payload);
        d_fill += uint32_t(n);
        used += n;
        if (d_fill == d_ticks_per_frame && !send_frame(0))
            return WORK_DONE; // stopping, or the socket failed (logged)
    }
    return used;
}

} /* namespace hilrig */
} /* namespace gr */
