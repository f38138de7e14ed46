#include "hilrig/rf/channel.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <tuple>
#include <type_traits>

#include "hilrig/rf/decibel.hpp"
#include "hilrig/rf/gaussian.hpp"
#include "hilrig/rf/phase_noise.hpp"
#include "hilrig/rf/simd_clones.hpp"
#include "hilrig/rf/timing.hpp"
#include "hilrig/rf/tone_analyzer.hpp"

namespace hilrig::rf {
namespace {
double from_db20(double v_db) { return std::pow(10.0, v_db / 20); }
}  // namespace

std::vector<cdouble> tone(std::size_t count, double freq_hz, double fs_hz, double amplitude, double phase_rad) {
  std::vector<cdouble> x(count);
  const double step = 2 * std::numbers::pi * freq_hz / fs_hz;
  for (std::size_t n = 0; n < count; ++n) x[n] = std::polar(amplitude, step * double(n) + phase_rad);
  return x;
}

std::pair<cdouble, cdouble> Channel::iq_mu_nu() const {
  const double g = from_db20(iq_gain_db), phi = iq_phase_deg * std::numbers::pi / 180;
  return {(1.0 + g * std::polar(1.0, -phi)) / 2.0, (1.0 - g * std::polar(1.0, phi)) / 2.0};
}

ChannelPath::ChannelPath(const Channel& c, double fs_hz)
    : gain_(from_db20(c.gain_db)), cfo_step_(2 * std::numbers::pi * c.cfo_hz / fs_hz), c3_(c.c3), cfo_(c.cfo_hz != 0) {
  std::tie(mu_, nu_) = c.iq_mu_nu();
  if (cfo_) {
    cfo_re_.resize(kBlock);
    cfo_im_.resize(kBlock);
    for (std::size_t j = 0; j < kBlock; ++j) {
      const cdouble e = std::polar(1.0, cfo_step_ * double(j));
      cfo_re_[j] = e.real();
      cfo_im_[j] = e.imag();
    }
    cfo_re_f_.assign(cfo_re_.begin(), cfo_re_.end());
    cfo_im_f_.assign(cfo_im_.begin(), cfo_im_.end());
  }
}

template <class T>
const T* ChannelPath::cfo_table(bool imag) const {
  if constexpr (std::is_same_v<T, float>)
    return (imag ? cfo_im_f_ : cfo_re_f_).data();
  else
    return (imag ? cfo_im_ : cfo_re_).data();
}

namespace {
// distort_block's constants: the block's CFO anchor times the gain and its phasor tables
// (er/ei from the block's first sample), the gain, the cubic, and mu*v + nu*conj(v) on the
// rails (rr ri / ir ii).
template <class T>
struct Distortion {
  T ar, ai;
  const T* er;
  const T* ei;
  T g, c3, rr, ri, ir, ii;
};

// distort_block's stages in one pass, each sample's arithmetic as the stages in turn: the
// gain and CFO, or the gain alone; the per-rail cubic where on; the IQ imbalance. L is T
// (one sample) or a vector of T (as many, the same arithmetic lane by lane).
template <class L, class T, bool kCfo, bool kCubic>
[[gnu::always_inline]] inline void distort_at(T* __restrict re, T* __restrict im, std::size_t k, const Distortion<T>& c) {
  L vr, vi;
  __builtin_memcpy(&vr, re + k, sizeof vr);
  __builtin_memcpy(&vi, im + k, sizeof vi);
  if constexpr (kCfo) {
    L er, ei;
    __builtin_memcpy(&er, c.er + k, sizeof er);
    __builtin_memcpy(&ei, c.ei + k, sizeof ei);
    const L pr = c.ar * er - c.ai * ei, pi = c.ar * ei + c.ai * er;
    const L xr = vr, xi = vi;
    vr = xr * pr - xi * pi;
    vi = xr * pi + xi * pr;
  } else {
    vr *= c.g, vi *= c.g;
  }
  if constexpr (kCubic) {
    vr = vr + c.c3 * vr * vr * vr;
    vi = vi + c.c3 * vi * vi * vi;
  }
  const L yr = c.rr * vr + c.ri * vi, yi = c.ir * vr + c.ii * vi;
  __builtin_memcpy(re + k, &yr, sizeof yr);
  __builtin_memcpy(im + k, &yi, sizeof yi);
}

// Samples from `from` to count, vectors V of T first (V = T: one at a time); returns where
// it stopped (the vectors' end).
template <class V, class T, bool kCfo, bool kCubic>
[[gnu::always_inline]] inline std::size_t distort_run(T* re, T* im, std::size_t from, std::size_t count,
                                                      const Distortion<T>& c) {
  constexpr std::size_t lanes = sizeof(V) / sizeof(T);
  std::size_t k = from;
  for (; k + lanes <= count; k += lanes) distort_at<V, T, kCfo, kCubic>(re, im, k, c);
  return k;
}
template <class V, class T>
[[gnu::always_inline]] inline std::size_t distort_pass(T* re, T* im, std::size_t from, std::size_t count, bool cfo,
                                                       bool cubic, const Distortion<T>& c) {
  if (cfo) return cubic ? distort_run<V, T, true, true>(re, im, from, count, c)
                        : distort_run<V, T, true, false>(re, im, from, count, c);
  return cubic ? distort_run<V, T, false, true>(re, im, from, count, c)
               : distort_run<V, T, false, false>(re, im, from, count, c);
}

// The float stream's pass sixteen samples a register on AVX-512 (GCC's vectoriser keeps to
// eight there); elsewhere none, and distort_block's 32-byte vectors take them.
#if HILRIG_SIMD_CLONES_ON
[[gnu::target("default")]] std::size_t distort_wide(float*, float*, std::size_t, bool, bool, const Distortion<float>&) {
  return 0;
}
[[gnu::target("arch=x86-64-v4")]] std::size_t distort_wide(float* re, float* im, std::size_t count, bool cfo,
                                                            bool cubic, const Distortion<float>& c) {
  return distort_pass<vec64<float>>(re, im, 0, count, cfo, cubic, c);
}
#endif
}  // namespace

template <class T>
HILRIG_SIMD_CLONES void ChannelPath::distort_block(T* __restrict re, T* __restrict im, std::size_t count,
                                                   std::uint64_t n0) const {
  const std::size_t j0 = std::size_t(n0 % kBlock);
  Distortion<T> c{};
  c.g = T(gain_), c.c3 = T(c3_);
  c.rr = T(mu_.real() + nu_.real()), c.ri = T(nu_.imag() - mu_.imag());
  c.ir = T(mu_.imag() + nu_.imag()), c.ii = T(mu_.real() - nu_.real());
  if (cfo_) {
    // The block's anchor, times the gain: one polar per block.
    const cdouble a = gain_ * std::polar(1.0, cfo_step_ * double(n0 - j0));
    c.ar = T(a.real()), c.ai = T(a.imag());
    c.er = cfo_table<T>(false) + j0;
    c.ei = cfo_table<T>(true) + j0;
  }
  std::size_t k = 0;
#if HILRIG_SIMD_CLONES_ON
  if constexpr (std::is_same_v<T, float>) k = distort_wide(re, im, count, cfo_, c3_ != 0, c);
#endif
  k = distort_pass<vec32<T>>(re, im, k, count, cfo_, c3_ != 0, c);
  distort_pass<T>(re, im, k, count, cfo_, c3_ != 0, c);
}

template void ChannelPath::distort_block<double>(double*, double*, std::size_t, std::uint64_t) const;
template void ChannelPath::distort_block<float>(float*, float*, std::size_t, std::uint64_t) const;

std::vector<cdouble> Channel::apply(std::span<const cdouble> x, double fs_hz) const {
  const ChannelPath path(*this, fs_hz);
  const TimingStage timing(sco_ppm, delay_samples);
  PhaseNoise phase_noise(phase_noise_hz, fs_hz, seed);
  constexpr std::size_t kBlock = ChannelPath::kBlock;
  std::vector<cdouble> y(x.size());
  std::array<double, kBlock> re, im;
  std::vector<double> in_re, in_im;  // the timing stage's input rails for a block
  double power_sum = 0;
  for (std::size_t n0 = 0; n0 < x.size(); n0 += kBlock) {
    const std::size_t count = std::min(kBlock, x.size() - n0);
    if (timing.active()) {  // the block's reads as rails, zero outside x
      const TimingStage::Reads in = timing.reads(n0, count);
      in_re.assign(in.size, 0.0);
      in_im.assign(in.size, 0.0);
      for (std::size_t i = 0; i < in.size; ++i) {
        const std::int64_t t = in.first + std::int64_t(i);
        if (t >= 0 && std::uint64_t(t) < x.size()) in_re[i] = x[std::size_t(t)].real(), in_im[i] = x[std::size_t(t)].imag();
      }
      timing.read(n0, count, in_re.data(), in_im.data(), in.first, re.data(), im.data());
    } else {
      for (std::size_t k = 0; k < count; ++k) re[k] = x[n0 + k].real(), im[k] = x[n0 + k].imag();
    }
    if (phase_noise.active()) phase_noise.rotate(re.data(), im.data(), count);
    path.distort_block(re.data(), im.data(), count, n0);
    double block_power = 0;
    for (std::size_t k = 0; k < count; ++k) block_power += re[k] * re[k] + im[k] * im[k];
    power_sum += block_power;
    for (std::size_t k = 0; k < count; ++k) y[n0 + k] = {re[k] + dc_offset.real(), im[k] + dc_offset.imag()};
  }
  if (snr_db && !x.empty()) {
    const double noise_var = power_sum / double(x.size()) / std::pow(10.0, *snr_db / 10);
    const double sigma = std::sqrt(noise_var);
    ComplexGaussian noise(seed);
    noise.add(reinterpret_cast<double*>(y.data()), 2 * y.size(), sigma);  // std::complex: two doubles, I then Q
  }
  return y;
}

double phase_noise_snr_db(double linewidth_hz, double fs_hz, std::size_t n, std::optional<double> snr_db) {
  const double s2 = 2 * std::numbers::pi * linewidth_hz / fs_hz, r = std::exp(-s2 / 2);
  const double coherent = std::exp(-s2 * double(n) / 15);
  // radians a sample, in the bins of the analyzer's segment (the whole capture, up to kToneSegmentSamples)
  const double half_lobe = 2 * std::numbers::pi * (kLobeBins + 0.5) / double(std::min(n, kToneSegmentSamples));
  const double beyond = 1 - 2 / std::numbers::pi * std::atan((1 + r) / (1 - r) * std::tan(half_lobe / 2));
  const double awgn = snr_db ? std::pow(10.0, -*snr_db / 10) : 0.0;  // relative to the tone's power
  return power_db(coherent / (awgn + beyond));
}

ToneTruth Channel::tone_truth(double freq_hz, double amplitude, double fs_hz, std::size_t capture_samples) const {
  const double a = amplitude * from_db20(gain_db);
  // Per-rail cubic on a tone: x*(1 + 3*c3*a^2/4) plus c3*a^3/4 at -3f.
  const double main = a * (1 + 0.75 * c3 * a * a);
  const double spur = std::abs(c3) * a * a * a / 4;
  const auto [mu, nu] = iq_mu_nu();
  const double tone_amp = std::abs(mu) * main, image_amp = std::abs(nu) * main;
  const double dc = std::abs(dc_offset);
  ToneTruth t;
  t.freq_hz = freq_hz / (1 + sco_ppm * 1e-6) + cfo_hz;  // the receiver's clock fast by sco_ppm: f reads low
  t.power_dbfs = power_db(tone_amp * tone_amp);
  if (phase_noise_hz == 0)
    t.snr_db = snr_db;
  else if (fs_hz > 0 && capture_samples > 0)
    t.snr_db = phase_noise_snr_db(phase_noise_hz, fs_hz, capture_samples, snr_db);
  if (image_amp > 0) t.image_dbc = power_db(image_amp * image_amp / (tone_amp * tone_amp));
  if (spur > 0) t.spur_dbc = power_db(std::norm(std::abs(mu) * spur) / (tone_amp * tone_amp));
  if (dc > 0) t.dc_dbfs = power_db(dc * dc);
  return t;
}

}  // namespace hilrig::rf
