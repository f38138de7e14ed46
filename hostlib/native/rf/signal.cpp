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
      noise_(spec.channel.seed), timing_(spec.channel.sco_ppm, spec.channel.delay_samples),
      phase_noise_(spec.channel.phase_noise_hz, fs_hz, spec.channel.seed) {
  ring_tick_.fill(-1);
  if (spec.channel.snr_db) {
    PhaseNoise walk = phase_noise_;  // the stream's own walk starts at tick 0 still
    double power_sum = 0;
    for (std::size_t n = 0; n < kPowerSamples; ++n) power_sum += std::norm(path_.distort(received(n, walk), n));
    sigma_ = std::sqrt(power_sum / double(kPowerSamples) / std::pow(10.0, *spec.channel.snr_db / 10));
  }
}

cdouble SignalSource::clean(std::uint64_t n) const {
  return period_.empty() ? tones_at(tones_, n, fs_hz_) : period_[n % period_.size()];
}

cdouble SignalSource::clean_cached(std::int64_t m) {
  if (m < 0) return {};  // the signal starts at tick 0
  const std::size_t slot = std::size_t(m) % kRing;
  if (ring_tick_[slot] != m) {
    ring_[slot] = clean(std::uint64_t(m));
    ring_tick_[slot] = m;
  }
  return ring_[slot];
}

cdouble SignalSource::received(std::uint64_t n, PhaseNoise& phase_noise) {
  cdouble s = timing_.active() ? timing_.at(n, [this](std::int64_t m) { return clean_cached(m); }) : clean(n);
  if (phase_noise.active()) s *= phase_noise.next();
  return s;
}

cdouble SignalSource::sample(std::uint64_t n) {
  cdouble v = path_.distort(received(n, phase_noise_), n) + dc_;
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
