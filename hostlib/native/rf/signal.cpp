#include "hilrig/rf/signal.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>

#include "hilrig/rf/simd_clones.hpp"

#if HILRIG_SIMD_CLONES_ON
#include <immintrin.h>
#endif

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
      fs_hz_(fs_hz), path_(spec.channel, fs_hz), dc_(spec.channel.dc_offset),
      noise_(spec.channel.seed), timing_(spec.channel.sco_ppm, spec.channel.delay_samples),
      phase_noise_(spec.channel.phase_noise_hz, fs_hz, spec.channel.seed), block_re_(kBlock),
      block_im_(kBlock), work_re_(kBlock), work_im_(kBlock), rails16_(2 * kBlock), rails8_(2 * kBlock) {
  if (spec.modulation) {
    for (const cdouble& v : modem_frame(*spec.modulation).samples)
      period_re_.push_back(float(v.real())), period_im_.push_back(float(v.imag()));
  } else {
    tone_re_.resize(tones_.size() * kBlock);
    tone_im_.resize(tones_.size() * kBlock);
    for (std::size_t t = 0; t < tones_.size(); ++t)
      for (std::size_t j = 0; j < kBlock; ++j) {
        const cdouble e = std::polar(1.0, 2 * std::numbers::pi * tones_[t].frequency_hz / fs_hz * double(j));
        tone_re_[t * kBlock + j] = float(e.real());
        tone_im_[t * kBlock + j] = float(e.imag());
      }
  }
  if (spec.channel.snr_db) {
    PhaseNoise walk = phase_noise_;  // the stream's own walk starts at tick 0 still
    double power_sum = 0;
    for (std::uint64_t m = 0; m < kPowerSamples / kBlock; ++m) {
      deterministic(m, work_re_.data(), work_im_.data(), walk);
      for (std::size_t k = 0; k < kBlock; ++k)
        power_sum += double(work_re_[k]) * work_re_[k] + double(work_im_[k]) * work_im_[k];
    }
    sigma_ = std::sqrt(power_sum / double(kPowerSamples) / std::pow(10.0, *spec.channel.snr_db / 10));
  }
}

HILRIG_SIMD_CLONES
void SignalSource::clean(std::int64_t first, std::size_t count, float* __restrict re, float* __restrict im) const {
  if (first < 0) {  // the signal starts at tick 0
    const std::size_t zeros = std::min(count, std::size_t(-first));
    std::fill(re, re + zeros, 0.0f);
    std::fill(im, im + zeros, 0.0f);
    re += zeros, im += zeros, count -= zeros, first = 0;
  }
  std::uint64_t n0 = std::uint64_t(first);
  if (!period_re_.empty()) {
    const std::size_t period = period_re_.size();
    std::size_t at = std::size_t(n0 % period);
    while (count > 0) {  // runs of the period, copied
      const std::size_t run = std::min(count, period - at);
      std::copy_n(period_re_.data() + at, run, re);
      std::copy_n(period_im_.data() + at, run, im);
      re += run, im += run, count -= run, at = 0;
    }
    return;
  }
  while (count > 0) {  // pieces of at most kBlock, each from its own exact anchor
    const std::size_t piece = std::min(count, kBlock);
    std::fill(re, re + piece, 0.0f);
    std::fill(im, im + piece, 0.0f);
    for (std::size_t t = 0; t < tones_.size(); ++t) {
      const cdouble a = tones_at(std::span(tones_).subspan(t, 1), n0, fs_hz_);  // the piece's anchor, exact
      const float ar = float(a.real()), ai = float(a.imag());
      const float* __restrict er = tone_re_.data() + t * kBlock;
      const float* __restrict ei = tone_im_.data() + t * kBlock;
      for (std::size_t k = 0; k < piece; ++k) {
        re[k] += ar * er[k] - ai * ei[k];
        im[k] += ar * ei[k] + ai * er[k];
      }
    }
    re += piece, im += piece, count -= piece, n0 += piece;
  }
}

void SignalSource::deterministic(std::uint64_t m, float* __restrict re, float* __restrict im, PhaseNoise& walk) {
  const std::uint64_t n0 = m * kBlock;
  if (!timing_.active()) {
    clean(std::int64_t(n0), kBlock, re, im);
  } else {
    const TimingStage::Reads in = timing_.reads(n0, kBlock);
    if (in_re_.size() < in.size) in_re_.resize(in.size), in_im_.resize(in.size);
    clean(in.first, in.size, in_re_.data(), in_im_.data());
    timing_.read(n0, kBlock, in_re_.data(), in_im_.data(), in.first, re, im);
  }
  if (walk.active()) walk.rotate(re, im, kBlock);
  path_.distort_block(re, im, kBlock, n0);
}

HILRIG_SIMD_CLONES void SignalSource::load_block(std::uint64_t m) {
  if (m == block_) return;
  deterministic(m, block_re_.data(), block_im_.data(), phase_noise_);
  const float dr = float(dc_.real()), di = float(dc_.imag());
  for (std::size_t k = 0; k < kBlock; ++k) block_re_[k] += dr, block_im_[k] += di;
  block_ = m;
}

namespace {
// Round to nearest (even: the default rounding mode's), saturate, interleave I and Q.
template <class Rail>
[[gnu::always_inline]] inline void quantise_rails(const float* __restrict re, const float* __restrict im,
                                                  std::size_t count, float scale, Rail* __restrict iq) {
  constexpr float lo = float(std::numeric_limits<Rail>::min()), hi = float(std::numeric_limits<Rail>::max());
  for (std::size_t k = 0; k < count; ++k) {
    iq[2 * k] = Rail(std::clamp(std::nearbyint(re[k] * scale), lo, hi));
    iq[2 * k + 1] = Rail(std::clamp(std::nearbyint(im[k] * scale), lo, hi));
  }
}
HILRIG_SIMD_CLONES void quantise(const float* re, const float* im, std::size_t count, float scale, std::int8_t* iq) {
  quantise_rails(re, im, count, scale, iq);
}
// sc16 by explicit vectors: clamped in float (rounding is monotonic and the bounds are
// integers, so clamping first is the same), converted by the rounding mode, interleaved
// as 32-bit pairs and packed: a 128-bit lane's pack of the low and the high pairs is I0 Q0
// .. I3 Q3 in order. The same values as the loop, which GCC vectorised poorly.
#if HILRIG_SIMD_CLONES_ON
[[gnu::target("default")]]
#endif
void quantise(const float* re, const float* im, std::size_t count, float scale, std::int16_t* iq) {
  quantise_rails(re, im, count, scale, iq);
}
#if HILRIG_SIMD_CLONES_ON
[[gnu::target("arch=x86-64-v3")]]
void quantise(const float* re, const float* im, std::size_t count, float scale, std::int16_t* iq) {
  const __m256 s = _mm256_set1_ps(scale), lo = _mm256_set1_ps(-32768.0f), hi = _mm256_set1_ps(32767.0f);
  std::size_t k = 0;
  for (; k + 8 <= count; k += 8) {
    const __m256 r = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(_mm256_loadu_ps(re + k), s), lo), hi);
    const __m256 i = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(_mm256_loadu_ps(im + k), s), lo), hi);
    const __m256i ri = _mm256_cvtps_epi32(r), ii = _mm256_cvtps_epi32(i);
    const __m256i packed = _mm256_packs_epi32(_mm256_unpacklo_epi32(ri, ii), _mm256_unpackhi_epi32(ri, ii));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(iq + 2 * k), packed);
  }
  quantise_rails(re + k, im + k, count - k, scale, iq + 2 * k);
}
[[gnu::target("arch=x86-64-v4")]]
void quantise(const float* re, const float* im, std::size_t count, float scale, std::int16_t* iq) {
  const __m512 s = _mm512_set1_ps(scale), lo = _mm512_set1_ps(-32768.0f), hi = _mm512_set1_ps(32767.0f);
  std::size_t k = 0;
  for (; k + 16 <= count; k += 16) {
    // Zero-masked forms of all lanes: the plain ones read an undefined register GCC warns of.
    const __m512 r = _mm512_maskz_min_ps(0xffff, _mm512_maskz_max_ps(0xffff, _mm512_mul_ps(_mm512_loadu_ps(re + k), s), lo), hi);
    const __m512 i = _mm512_maskz_min_ps(0xffff, _mm512_maskz_max_ps(0xffff, _mm512_mul_ps(_mm512_loadu_ps(im + k), s), lo), hi);
    const __m512i ri = _mm512_maskz_cvtps_epi32(0xffff, r), ii = _mm512_maskz_cvtps_epi32(0xffff, i);
    const __m512i packed = _mm512_packs_epi32(_mm512_maskz_unpacklo_epi32(0xffff, ri, ii), _mm512_maskz_unpackhi_epi32(0xffff, ri, ii));
    _mm512_storeu_si512(iq + 2 * k, packed);
  }
  quantise_rails(re + k, im + k, count - k, scale, iq + 2 * k);
}
#endif
}  // namespace

HILRIG_SIMD_CLONES void SignalSource::fill(std::uint64_t first_tick, std::uint32_t ticks, unsigned channels, SampleFormat fmt, void* out) {
  const float scale = float(full_scale(fmt));
  const std::size_t rail_bytes = fmt == SampleFormat::sc16 ? 2 : 1;
  auto* dst = static_cast<std::uint8_t*>(out);
  std::uint64_t n = first_tick;
  const std::uint64_t end = first_tick + ticks;
  while (n < end) {
    const std::size_t j0 = std::size_t(n % kBlock);
    const std::size_t count = std::size_t(std::min<std::uint64_t>(kBlock - j0, end - n));
    load_block(n / kBlock);
    const float* re = block_re_.data() + j0;
    const float* im = block_im_.data() + j0;
    if (sigma_ > 0) {
      noise_.add(re, im, work_re_.data(), work_im_.data(), count, sigma_);
      re = work_re_.data(), im = work_im_.data();
    }
    // One channel: quantised straight into the frame where its alignment allows.
    const bool direct = channels == 1 && reinterpret_cast<std::uintptr_t>(dst) % rail_bytes == 0;
    const void* iq;
    if (fmt == SampleFormat::sc16) {
      std::int16_t* rails = direct ? reinterpret_cast<std::int16_t*>(dst) : rails16_.data();
      quantise(re, im, count, scale, rails);
      iq = rails;
    } else {
      std::int8_t* rails = direct ? reinterpret_cast<std::int8_t*>(dst) : rails8_.data();
      quantise(re, im, count, scale, rails);
      iq = rails;
    }
    // The host's order is the frame's (frame.hpp asserts little-endian); every channel the same sample.
    const std::size_t sample_bytes = 2 * rail_bytes;
    if (channels == 1) {
      if (!direct) std::memcpy(dst, iq, count * sample_bytes);
      dst += count * sample_bytes;
    } else {
      const auto* src = static_cast<const std::uint8_t*>(iq);
      for (std::size_t k = 0; k < count; ++k)
        for (unsigned c = 0; c < channels; ++c, dst += sample_bytes) std::memcpy(dst, src + k * sample_bytes, sample_bytes);
    }
    n += count;
  }
}

}  // namespace hilrig::rf
