/* -*- c++ -*- */
/*
 * Copyright 2026 hilrig.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Item formats of the blocks and their relation to the core's wire formats. A sample
// of one channel is one pattern word: u32 for sc16 (I = low 16 bits), u16 for sc8
// (I = low byte), the byte layout of std::complex<int16_t> / <int8_t>; fc32 is a
// wire sample scaled by 1/32768 (sc16) or 1/128 (sc8): exact in both directions.
#ifndef INCLUDED_HILRIG_FORMATS_H
#define INCLUDED_HILRIG_FORMATS_H

#include <hilrig/frame.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace gr {
namespace hilrig {

enum class cpu_format { sc16, sc8, fc32 };

inline cpu_format parse_cpu_format(const std::string& name)
{
    if (name == "sc16")
        return cpu_format::sc16;
    if (name == "sc8")
        return cpu_format::sc8;
    if (name == "fc32")
        return cpu_format::fc32;
    throw std::invalid_argument("hilrig: cpu_format '" + name +
                                "' is not one of sc16, sc8, fc32");
}

inline ::hilrig::SampleFormat parse_wire_format(const std::string& name)
{
    if (name == "sc16")
        return ::hilrig::SampleFormat::sc16;
    if (name == "sc8")
        return ::hilrig::SampleFormat::sc8;
    throw std::invalid_argument("hilrig: wire_format '" + name + "' is not one of sc16, sc8");
}

inline std::size_t item_bytes(cpu_format f)
{
    return f == cpu_format::sc16 ? 4 : f == cpu_format::sc8 ? 2 : sizeof(std::complex<float>);
}

// The wire format whose words a cpu format carries (fc32: the given wire format).
inline ::hilrig::SampleFormat wire_of(cpu_format f,
                                      ::hilrig::SampleFormat fc32_wire = ::hilrig::SampleFormat::sc16)
{
    return f == cpu_format::sc16  ? ::hilrig::SampleFormat::sc16
           : f == cpu_format::sc8 ? ::hilrig::SampleFormat::sc8
                                  : fc32_wire;
}

inline bool cpu_takes_wire(cpu_format f, ::hilrig::SampleFormat w)
{
    return f == cpu_format::fc32 || wire_of(f) == w;
}

inline float full_scale(::hilrig::SampleFormat w)
{
    return w == ::hilrig::SampleFormat::sc16 ? 32768.0f : 128.0f;
}

// One wire word at p (of format w) as one item of format f at out.
inline void word_to_item(const std::uint8_t* p, ::hilrig::SampleFormat w, cpu_format f, std::uint8_t* out)
{
    if (f != cpu_format::fc32) {
        std::memcpy(out, p, ::hilrig::bytes_per_sample(w));
        return;
    }
    float i, q;
    if (w == ::hilrig::SampleFormat::sc16) {
        std::int16_t iq[2];
        std::memcpy(iq, p, 4);
        i = iq[0], q = iq[1];
    } else {
        std::int8_t iq[2];
        std::memcpy(iq, p, 2);
        i = iq[0], q = iq[1];
    }
    const float s = 1.0f / full_scale(w);
    std::complex<float> c(i * s, q * s);
    std::memcpy(out, &c, sizeof c);
}

// One item of format f at in as one wire word (format w) at p; fc32 rounds and saturates.
inline void item_to_word(const std::uint8_t* in, cpu_format f, ::hilrig::SampleFormat w, std::uint8_t* p)
{
    if (f != cpu_format::fc32) {
        std::memcpy(p, in, ::hilrig::bytes_per_sample(w));
        return;
    }
    std::complex<float> c;
    std::memcpy(&c, in, sizeof c);
    const float s = full_scale(w);
    auto q = [&](float x) {
        return std::clamp(std::lrint(x * s), -long(s), long(s) - 1);
    };
    if (w == ::hilrig::SampleFormat::sc16) {
        std::int16_t iq[2] = { std::int16_t(q(c.real())), std::int16_t(q(c.imag())) };
        std::memcpy(p, iq, 4);
    } else {
        std::int8_t iq[2] = { std::int8_t(q(c.real())), std::int8_t(q(c.imag())) };
        std::memcpy(p, iq, 2);
    }
}

// Channel-interleaved wire words (n ticks of `channels` words of format w) to one
// item array per channel, written from item first_item on; one copy for one sc16/sc8 channel.
inline void deinterleave(const std::uint8_t* words, ::hilrig::SampleFormat w, unsigned channels, std::size_t n,
                         cpu_format f, void* const* outs, std::size_t first_item)
{
    const unsigned wb = ::hilrig::bytes_per_sample(w);
    const std::size_t ib = item_bytes(f), stride = std::size_t(channels) * wb;
    if (channels == 1 && f != cpu_format::fc32) {
        std::memcpy(static_cast<std::uint8_t*>(outs[0]) + first_item * ib, words, n * wb);
        return;
    }
    for (unsigned ch = 0; ch < channels; ++ch) {
        auto* out = static_cast<std::uint8_t*>(outs[ch]) + first_item * ib;
        const std::uint8_t* p = words + std::size_t(ch) * wb;
        for (std::size_t i = 0; i < n; ++i, p += stride, out += ib)
            word_to_item(p, w, f, out);
    }
}

// The reverse: item arrays (from item first_item on) to channel-interleaved wire words.
inline void interleave(const void* const* ins, std::size_t first_item, cpu_format f, unsigned channels,
                       std::size_t n, ::hilrig::SampleFormat w, std::uint8_t* words)
{
    const unsigned wb = ::hilrig::bytes_per_sample(w);
    const std::size_t ib = item_bytes(f), stride = std::size_t(channels) * wb;
    if (channels == 1 && f != cpu_format::fc32) {
        std::memcpy(words, static_cast<const std::uint8_t*>(ins[0]) + first_item * ib, n * wb);
        return;
    }
    for (unsigned ch = 0; ch < channels; ++ch) {
        const auto* in = static_cast<const std::uint8_t*>(ins[ch]) + first_item * ib;
        std::uint8_t* p = words + std::size_t(ch) * wb;
        for (std::size_t i = 0; i < n; ++i, in += ib, p += stride)
            item_to_word(in, f, w, p);
    }
}

inline int checked_channels(int channels, const char* block)
{
    if (channels < 1 || channels > 255)
        throw std::invalid_argument(std::string("hilrig ") + block + ": channels must be 1-255, not " +
                                    std::to_string(channels));
    return channels;
}

// "host:port" -> host, port (throws naming the block and the value).
inline std::pair<std::string, std::uint16_t> parse_host_port(const std::string& address, const char* block)
{
    auto colon = address.rfind(':');
    std::string host = colon == std::string::npos ? address : address.substr(0, colon);
    std::string port = colon == std::string::npos ? "" : address.substr(colon + 1);
    char* end = nullptr;
    long p = port.empty() ? -1 : std::strtol(port.c_str(), &end, 10);
    if (host.empty() || p < 0 || p > 65535 || (end && *end))
        throw std::invalid_argument(std::string("hilrig ") + block + ": address '" + address +
                                    "' is not host:port (port 0-65535)");
    return { host, std::uint16_t(p) };
}

} // namespace hilrig
} // namespace gr

#endif
