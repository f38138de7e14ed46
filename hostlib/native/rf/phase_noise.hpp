// The LO's phase noise as a Wiener process (docs/rf.md "Phase noise"): a random walk
//   phi[n] = phi[n-1] + delta_n,  delta_n ~ N(0, 2*pi*linewidth_hz/fs),
// the free-running oscillator of 3 dB (full) linewidth linewidth_hz: its spectrum is a
// Lorentzian, its phase's one-sided PSD L(f) = linewidth/(2*pi*f^2) (f >> linewidth).
// Sample n is multiplied by exp(j*phi[n]), phi[0] = delta_0. Stateful: the walk goes on
// in the order samples are asked for (a stream's blocks: the order they are built, as the
// channel's noise). The steps are standard normals from the channel's generator
// (gaussian.hpp's ziggurat on xoshiro256++), a generator of its own seeded with the
// channel's seed spread, so turning it on does not change the AWGN's samples. Off
// (linewidth 0) it holds no generator and costs nothing. No sin/cos per sample:
// exp(j*delta) by its polynomial (|delta| < 1: error below 2e-5 * delta^7), the rotator
// renormalised each step.
#pragma once
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <optional>

#include "hilrig/rf/gaussian.hpp"

namespace hilrig::rf {

class PhaseNoise {
 public:
  // The generator's seed from the channel's: a fixed odd multiplier and offset (splitmix64's
  // constants) keep its splitmix64 seeding sequence apart from the AWGN's, seeded with the
  // seed itself.
  static constexpr std::uint64_t spread_seed(std::uint64_t seed) {
    return seed * 0x9E3779B97F4A7C15ULL + 0xD1B54A32D192ED03ULL;
  }

  PhaseNoise(double linewidth_hz, double fs_hz, std::uint64_t seed)
      : sigma_(std::sqrt(2 * std::numbers::pi * linewidth_hz / fs_hz)), active_(linewidth_hz > 0) {
    if (active_) gauss_.emplace(spread_seed(seed));
  }
  bool active() const { return active_; }
  double step_sigma() const { return sigma_; }  // of delta_n, radians

  // exp(j*phi[n]) of the next sample (an active walk only).
  std::complex<double> next() {
    const double delta = gauss_->normal() * sigma_;
    const double d2 = delta * delta;
    const double c = 1 - d2 / 2 * (1 - d2 / 12 * (1 - d2 / 30));
    const double s = delta * (1 - d2 / 6 * (1 - d2 / 20 * (1 - d2 / 42)));
    rot_ *= std::complex<double>(c, s);
    rot_ *= (3 - std::norm(rot_)) / 2;  // one Newton step back to |rot| = 1
    return rot_;
  }
  // The next count samples as rails, each turned by its exp(j*phi[n]): next() in order.
  void rotate(double* re, double* im, std::size_t count) {
    for (std::size_t k = 0; k < count; ++k) {
      const std::complex<double> r = next();
      const double xr = re[k], xi = im[k];
      re[k] = xr * r.real() - xi * r.imag();
      im[k] = xr * r.imag() + xi * r.real();
    }
  }

 private:
  double sigma_;
  bool active_;
  std::optional<ComplexGaussian> gauss_;  // none when off
  std::complex<double> rot_{1, 0};
};

}  // namespace hilrig::rf
