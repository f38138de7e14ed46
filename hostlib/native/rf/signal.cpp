#include "hilrig/rf/signal.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>

namespace hilrig::rf {

cdouble tones_at(std::span<const ToneSpec> tones, std::uint64_t n, double fs_hz) {
  cdouble sum{};
  for (const ToneSpec& t : tones) {
    const double cycles = t.frequency_hz / fs_hz * double(n);
    sum += std::polar(t.amplitude, 2 * std::numbers::pi * (cycles - std::floor(cycles)) + t.phase_rad);
  }
  return sum;
}

std::vector<cdouble> multitone(std::size_t count, std::span<const ToneSpec> tones, double fs_hz) {
  std::vector<cdouble> x(count);
  for (std::size_t n = 0; n < count; ++n) x[n] = tones_at(tones, n, fs_hz);
  return x;
}

SignalSource::SignalSource(const SignalSpec& spec, double fs_hz)
    : tones_(spec.tones),
      period_(spec.modulation ? modem_frame(*spec.modulation).samples : std::vector<cdouble>{}),
      fs_hz_(fs_hz), path_(spec.channel, fs_hz), dc_(spec.channel.dc_offset),
      noise_(spec.channel.seed) {
  if (spec.channel.snr_db) {
    double power_sum = 0;
    for (std::size_t n = 0; n < kPowerSamples; ++n) power_sum += std::norm(path_.distort(clean(n), n));
    sigma_ = std::sqrt(power_sum / double(kPowerSamples) / std::pow(10.0, *spec.channel.snr_db / 10));
  }
}

cdouble SignalSource::clean(std::uint64_t n) const {
  return period_.empty() ? tones_at(tones_, n, fs_hz_) : period_[n % period_.size()];
}

cdouble SignalSource::sample(std::uint64_t n) {
  cdouble v = path_.distort(clean(n), n) + dc_;
  if (sigma_ > 0) v += sigma_ * noise_();
  return v;
}

namespace {
template <class Rail>
void put(cdouble v, double scale, unsigned channels, Rail*& out) {
  constexpr double lo = double(std::numeric_limits<Rail>::min()), hi = double(std::numeric_limits<Rail>::max());
  const Rail i = Rail(std::clamp(std::nearbyint(v.real() * scale), lo, hi));
  const Rail q = Rail(std::clamp(std::nearbyint(v.imag() * scale), lo, hi));
  for (unsigned c = 0; c < channels; ++c) {
    std::memcpy(out++, &i, sizeof i);  // the host's order is the frame's (frame.hpp asserts little-endian)
    std::memcpy(out++, &q, sizeof q);
  }
}
}  // namespace

void SignalSource::fill(std::uint64_t first_tick, std::uint32_t ticks, unsigned channels, SampleFormat fmt, void* out) {
  const double scale = full_scale(fmt);
  if (fmt == SampleFormat::sc16) {
    auto* p = static_cast<std::int16_t*>(out);
    for (std::uint32_t k = 0; k < ticks; ++k) put(sample(first_tick + k), scale, channels, p);
  } else {
    auto* p = static_cast<std::int8_t*>(out);
    for (std::uint32_t k = 0; k < ticks; ++k) put(sample(first_tick + k), scale, channels, p);
  }
}

}  // namespace hilrig::rf
