/* -*- c++ -*- */
/*
 * Copyright 2026 hilrig.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Item formats of the blocks and their relation to the core's wire formats. A sample
// of one channel is one pattern word: u32 for sc16 (I = low 16 bits), u16 for sc8
// (I = low byte), the byte layout of std::complex<int16_t> / <int8_t>; fc32 is a
// wire sample scaled by 1/32768 (sc16) or 1/128 (sc8) by the core's conversions
// (hilrig/core/convert.hpp, the SoapySDR module's too): exact in both directions.
#ifndef INCLUDED_HILRIG_FORMATS_H
#define INCLUDED_HILRIG_FORMATS_H

#include <hilrig/core/convert.hpp>
#include <hilrig/core/frame.hpp>

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

// Calls fn(Wire{}, Item{}) with the C++ types of one I or Q value on the wire and in
// an item of format f (fc32: float; sc16/sc8: the wire's own integer, cpu_takes_wire).
template <class F>
inline void with_value_types(::hilrig::SampleFormat w, cpu_format f, F&& fn)
{
    auto items = [&](auto wire) {
        if (f == cpu_format::fc32)
            fn(wire, float{});
        else
            fn(wire, decltype(wire){});
    };
    if (w == ::hilrig::SampleFormat::sc16)
        items(std::int16_t{});
    else
        items(std::int8_t{});
}

// Channel-interleaved wire words (n ticks of `channels` words of format w) to one
// item array per channel, written from item first_item on. The conversion is the
// core's (hilrig/core/convert.hpp, SoapySDR's: fc32 = wire / 2^15 or 2^7, exact both ways).
inline void deinterleave(const std::uint8_t* words, ::hilrig::SampleFormat w, unsigned channels, std::size_t n,
                         cpu_format f, void* const* outs, std::size_t first_item)
{
    with_value_types(w, f, [&](auto wire, auto item) {
        using W = decltype(wire);
        using I = decltype(item);
        for (unsigned ch = 0; ch < channels; ++ch)
            ::hilrig::deinterleave(reinterpret_cast<const W*>(words), channels, ch, std::uint32_t(n),
                                   static_cast<I*>(outs[ch]) + 2 * first_item);
    });
}

// The reverse: item arrays (from item first_item on) to channel-interleaved wire words;
// fc32 is scaled and truncated as SoapySDR does (values outside [-1, 1) do not fit the wire).
inline void interleave(const void* const* ins, std::size_t first_item, cpu_format f, unsigned channels,
                       std::size_t n, ::hilrig::SampleFormat w, std::uint8_t* words)
{
    with_value_types(w, f, [&](auto wire, auto item) {
        using W = decltype(wire);
        using I = decltype(item);
        for (unsigned ch = 0; ch < channels; ++ch)
            ::hilrig::interleave(static_cast<const I*>(ins[ch]) + 2 * first_item, channels, ch, std::uint32_t(n),
                                 reinterpret_cast<W*>(words));
    });
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
