// The sample conversions against SoapySDR's own ConverterPrimitives.hpp, value by
// value, and the round trips the SoapySDR module promises (CF32 exact).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "hilrig/core/convert.hpp"

#if __has_include(<SoapySDR/ConverterPrimitives.hpp>)
#include <SoapySDR/ConverterPrimitives.hpp>
#define HILRIG_HAVE_SOAPY_PRIMITIVES 1
#endif

namespace {
bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }
}  // namespace

TEST(Convert, EveryIntegerSurvivesFloatAndBack) {
  for (int v = -32768; v <= 32767; ++v) {
    const auto s = std::int16_t(v);
    ASSERT_EQ(hilrig::f32_to_s16(hilrig::s16_to_f32(s)), s) << v;
    ASSERT_EQ(hilrig::s16_to_f32(s) * 32768.0f, float(v));
  }
  for (int v = -128; v <= 127; ++v) {
    const auto s = std::int8_t(v);
    ASSERT_EQ(hilrig::f32_to_s8(hilrig::s8_to_f32(s)), s) << v;
    ASSERT_EQ(hilrig::s16_to_s8(hilrig::s8_to_s16(s)), s) << v;
  }
}

#ifdef HILRIG_HAVE_SOAPY_PRIMITIVES
TEST(Convert, BitIdenticalToSoapySDRConverterPrimitives) {
  for (int v = -32768; v <= 32767; ++v) {
    const auto s = std::int16_t(v);
    ASSERT_TRUE(same_bits(hilrig::s16_to_f32(s), SoapySDR::S16toF32(s))) << v;
    ASSERT_EQ(hilrig::s16_to_s8(s), SoapySDR::S16toS8(s)) << v;
  }
  for (int v = -128; v <= 127; ++v) {
    const auto s = std::int8_t(v);
    ASSERT_TRUE(same_bits(hilrig::s8_to_f32(s), SoapySDR::S8toF32(s))) << v;
    ASSERT_EQ(hilrig::s8_to_s16(s), SoapySDR::S8toS16(s)) << v;
  }
  // Floats in range (and at its edges): what a client writes.
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> in_range(-1.0f, std::nextafter(1.0f, 0.0f));
  std::vector<float> xs = {0.0f, -0.0f, -1.0f, 0.5f, -0.5f, 1.0f / 32768, -1.0f / 32768, 0.99996948f, 1e-9f};
  for (int i = 0; i < 200000; ++i) xs.push_back(in_range(rng));
  for (float x : xs) {
    ASSERT_EQ(hilrig::f32_to_s16(x), SoapySDR::F32toS16(x)) << x;
    ASSERT_EQ(hilrig::f32_to_s8(x), SoapySDR::F32toS8(x)) << x;
  }
}
#endif

TEST(Convert, InterleaveThenDeinterleaveIsExactForEveryFormatAndChannelCount) {
  for (unsigned C = 1; C <= 4; ++C) {
    const std::uint32_t n = 257;
    std::vector<std::int16_t> wire(2 * n * C);
    for (std::size_t i = 0; i < wire.size(); ++i) wire[i] = std::int16_t(i * 2654435761u);
    std::vector<std::vector<float>> host(C, std::vector<float>(2 * n));
    for (unsigned c = 0; c < C; ++c) hilrig::deinterleave(wire.data(), C, c, n, host[c].data());
    std::vector<std::int16_t> back(wire.size(), 0);
    for (unsigned c = 0; c < C; ++c) hilrig::interleave(host[c].data(), C, c, n, back.data());
    EXPECT_EQ(back, wire) << C << " channels via CF32";
    std::vector<std::vector<std::int16_t>> same(C, std::vector<std::int16_t>(2 * n));
    for (unsigned c = 0; c < C; ++c) hilrig::deinterleave(wire.data(), C, c, n, same[c].data());
    for (unsigned c = 0; c < C; ++c)
      for (std::uint32_t i = 0; i < n; ++i) ASSERT_EQ(same[c][2 * i + 1], wire[2 * (i * C + c) + 1]);
    std::vector<std::int8_t> wire8(2 * n * C);
    for (std::size_t i = 0; i < wire8.size(); ++i) wire8[i] = std::int8_t(i * 31);
    std::vector<std::vector<std::int16_t>> wide(C, std::vector<std::int16_t>(2 * n));
    for (unsigned c = 0; c < C; ++c) hilrig::deinterleave(wire8.data(), C, c, n, wide[c].data());
    std::vector<std::int8_t> back8(wire8.size(), 0);
    for (unsigned c = 0; c < C; ++c) hilrig::interleave(wide[c].data(), C, c, n, back8.data());
    EXPECT_EQ(back8, wire8) << C << " channels sc8 via CS16";
  }
}
