// Seeded complex white Gaussian noise: the same samples for the same seed on every
// platform whose libm rounds log/sin/cos correctly (no std::*_distribution, whose
// algorithms the standard leaves to the library). Not numpy's generator: the channel's
// noise is statistically, not sample-for-sample, the reference's.
#pragma once
#include <cmath>
#include <complex>
#include <cstdint>
#include <numbers>
#include <random>

namespace hilrig::rf {

class ComplexGaussian {
 public:
  explicit ComplexGaussian(std::uint64_t seed) : engine_(seed) {}

  // One sample of E|z|^2 = 1 (1/2 per rail) from two 53-bit uniforms, by Box-Muller:
  // |z|^2 = -ln(u1) is exponential with mean 1, arg z = 2*pi*u2 uniform.
  std::complex<double> operator()() {
    const double u1 = 1.0 - uniform();  // (0, 1]: ln never sees 0
    const double u2 = uniform();
    return std::polar(std::sqrt(-std::log(u1)), 2 * std::numbers::pi * u2);
  }

 private:
  double uniform() { return double(engine_() >> 11) * 0x1.0p-53; }  // [0, 1)
  std::mt19937_64 engine_;  // the engine FaultPlan draws from: its output the standard fixes
};

}  // namespace hilrig::rf
