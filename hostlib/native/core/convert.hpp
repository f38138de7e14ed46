// Sample conversion between the wire formats (sc16, sc8: I/Q integer pairs) and host
// formats (int16, int8, float I/Q pairs), bit-identical to SoapySDR's
// ConverterPrimitives.hpp (the primitives SoapySDR's own converters use): to float
// divides by the full scale 2^15 (2^7), from float multiplies by it and truncates;
// 16 <-> 8 bits keeps or restores the high byte. So every sc16/sc8 value survives a
// CF32 read-then-write unchanged (tests/test_convert.cpp checks all of them against
// SoapySDR's own header). Header-only, no SoapySDR dependency.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace hilrig {

inline constexpr float kS16FullScale = 32768.0f;  // SoapySDR S16_FULL_SCALE
inline constexpr float kS8FullScale = 128.0f;     // SoapySDR S8_FULL_SCALE

inline float s16_to_f32(std::int16_t v) { return float(v) / kS16FullScale; }
inline std::int16_t f32_to_s16(float v) { return std::int16_t(v * kS16FullScale); }
inline float s8_to_f32(std::int8_t v) { return float(v) / kS8FullScale; }
inline std::int8_t f32_to_s8(float v) { return std::int8_t(v * kS8FullScale); }
inline std::int8_t s16_to_s8(std::int16_t v) { return std::int8_t(v >> 8); }
inline std::int16_t s8_to_s16(std::int8_t v) { return std::int16_t(v << 8); }

// One I or Q value from In to Out (each of int16_t, int8_t, float).
template <class Out, class In>
inline Out convert_sample(In v) {
  if constexpr (std::is_same_v<In, Out>) return v;
  else if constexpr (std::is_same_v<Out, float>) return std::is_same_v<In, std::int16_t> ? s16_to_f32(v) : s8_to_f32(std::int8_t(v));
  else if constexpr (std::is_same_v<In, float>) {
    if constexpr (std::is_same_v<Out, std::int16_t>) return f32_to_s16(v);
    else return f32_to_s8(v);
  } else if constexpr (std::is_same_v<Out, std::int8_t>) return s16_to_s8(v);
  else return s8_to_s16(v);
}

// Channel c (of C) of n ticks out of an interleaved wire payload into one host buffer.
template <class Wire, class Host>
void deinterleave(const Wire* frame, unsigned C, unsigned c, std::uint32_t n, Host* out) {
  if constexpr (std::is_same_v<Wire, Host>) {
    if (C == 1) return void(std::memcpy(out, frame, std::size_t(n) * 2 * sizeof(Wire)));
  }
  for (std::uint32_t i = 0; i < n; ++i) {
    out[2 * i] = convert_sample<Host>(frame[2 * (std::size_t(i) * C + c)]);
    out[2 * i + 1] = convert_sample<Host>(frame[2 * (std::size_t(i) * C + c) + 1]);
  }
}

// One host buffer into channel c (of C) of an interleaved wire payload.
template <class Host, class Wire>
void interleave(const Host* in, unsigned C, unsigned c, std::uint32_t n, Wire* frame) {
  if constexpr (std::is_same_v<Wire, Host>) {
    if (C == 1) return void(std::memcpy(frame, in, std::size_t(n) * 2 * sizeof(Wire)));
  }
  for (std::uint32_t i = 0; i < n; ++i) {
    frame[2 * (std::size_t(i) * C + c)] = convert_sample<Wire>(in[2 * i]);
    frame[2 * (std::size_t(i) * C + c) + 1] = convert_sample<Wire>(in[2 * i + 1]);
  }
}

}  // namespace hilrig
