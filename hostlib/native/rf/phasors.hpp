// Exact phasor sums and a golden-section maximum: what the tone analyzer's fine frequency
// and the modulation analyzer's carrier search both run (docs/rf.md).
#pragma once
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <span>
#include <vector>

namespace hilrig::rf {

// exp(-j*omega*t) for t = 0..n-1 as exp(-j*omega*B*m) * exp(-j*omega*j), t = m*B + j: each
// factor from its own exact angle, so every term is within a few ulps (a running phasor
// drifts by n ulps, which would move the periodogram's maximum).
class Phasors {
 public:
  Phasors(std::size_t n, double omega) : block_(std::max<std::size_t>(1, std::size_t(std::sqrt(double(n))))) {
    fine_.resize(block_);
    coarse_.resize((n + block_ - 1) / block_);
    for (std::size_t j = 0; j < block_; ++j) fine_[j] = std::polar(1.0, -omega * double(j));
    for (std::size_t m = 0; m < coarse_.size(); ++m) coarse_[m] = std::polar(1.0, -omega * double(m * block_));
  }
  // sum_t x[t] * exp(-j*omega*t)
  std::complex<double> dtft(std::span<const std::complex<double>> x) const {
    std::complex<double> total = 0;
    for (std::size_t m = 0, t = 0; m < coarse_.size(); ++m) {
      std::complex<double> part = 0;
      for (std::size_t j = 0; j < block_ && t < x.size(); ++j, ++t) part += x[t] * fine_[j];
      total += coarse_[m] * part;
    }
    return total;
  }
  std::vector<std::complex<double>> all(std::size_t n) const {
    std::vector<std::complex<double>> e(n);
    for (std::size_t t = 0; t < n; ++t) e[t] = coarse_[t / block_] * fine_[t % block_];
    return e;
  }

 private:
  std::size_t block_;
  std::vector<std::complex<double>> fine_, coarse_;
};

// The maximum of a unimodal f on [lo, hi] by golden-section search (the reference's
// _golden_max, the same comparisons in the same order).
template <class F>
double golden_max(F f, double lo, double hi, double tolerance) {
  const double ratio = (std::sqrt(5.0) - 1) / 2;
  double a = hi - ratio * (hi - lo), b = lo + ratio * (hi - lo);
  double fa = f(a), fb = f(b);
  while (hi - lo > tolerance) {
    if (fa >= fb) {
      hi = b, b = a, fb = fa;
      a = hi - ratio * (hi - lo);
      fa = f(a);
    } else {
      lo = a, a = b, fa = fb;
      b = lo + ratio * (hi - lo);
      fb = f(b);
    }
  }
  return (lo + hi) / 2;
}

}  // namespace hilrig::rf
