#include "hilrig/rf/timing.hpp"

#include <algorithm>
#include <numbers>

#include "hilrig/rf/simd_clones.hpp"

namespace hilrig::rf {
namespace {
// The zeroth-order modified Bessel function of the first kind, by its power series.
double bessel_i0(double x) {
  double sum = 1, term = 1;
  for (int k = 1; k < 64; ++k) {
    term *= (x / (2 * k)) * (x / (2 * k));
    sum += term;
    if (term < 1e-17 * sum) break;
  }
  return sum;
}
}  // namespace

TimingStage::TimingStage(double sco_ppm, double delay_samples)
    : ratio_(sco_ppm * 1e-6 / (1 + sco_ppm * 1e-6)), delay_(delay_samples),
      active_(sco_ppm != 0 || delay_samples != 0) {}

const std::vector<double>& TimingStage::table() {
  // Row p holds h_k = sinc(d) * kaiser(d), d = k - (kTaps/2 - 1) - p/kPhases the tap's distance
  // from the reading instant, normalised so that the row sums to 1 (DC passes unchanged).
  static const std::vector<double> rows = [] {
    std::vector<double> t(std::size_t(kPhases + 1) * kTaps);
    const double half = kTaps / 2.0, i0_beta = bessel_i0(kBeta);
    for (int p = 0; p <= kPhases; ++p) {
      const double mu = double(p) / kPhases;
      double* row = &t[std::size_t(p) * kTaps];
      double sum = 0;
      for (int k = 0; k < kTaps; ++k) {
        const double d = double(k - (kTaps / 2 - 1)) - mu;
        const double sinc = d == 0 ? 1.0 : std::sin(std::numbers::pi * d) / (std::numbers::pi * d);
        const double u = d / half;
        const double w = std::abs(u) >= 1 ? 0.0 : bessel_i0(kBeta * std::sqrt(1 - u * u)) / i0_beta;
        row[k] = sinc * w;
        sum += row[k];
      }
      for (int k = 0; k < kTaps; ++k) row[k] /= sum;
    }
    return t;
  }();
  return rows;
}

std::array<double, TimingStage::kTaps> TimingStage::taps(double mu) {
  const double pos = mu * kPhases;
  int row = int(pos);
  if (row >= kPhases) row = kPhases - 1;
  const double frac = pos - row;
  std::array<double, kTaps> h{};
  for (int k = 0; k < kTaps; ++k) {
    const double a = table()[std::size_t(row) * kTaps + k], b = table()[std::size_t(row + 1) * kTaps + k];
    h[k] = a + frac * (b - a);
  }
  return h;
}

HILRIG_SIMD_CLONES
void TimingStage::read(std::uint64_t n0, std::size_t count, const double* __restrict in_re,
                       const double* __restrict in_im, std::int64_t first, double* __restrict out_re,
                       double* __restrict out_im) const {
  using v4 = double __attribute__((vector_size(32)));  // two SSE registers on the baseline
  for (std::size_t k = 0; k < count; ++k) {
    const Read r = where(n0 + k);
    const double pos = r.mu * kPhases;
    int row = int(pos);
    if (row >= kPhases) row = kPhases - 1;
    const double frac = pos - row;
    const v4 f = {frac, frac, frac, frac};
    const double* h0 = &table_[std::size_t(row) * kTaps];  // table()'s
    const double* h1 = h0 + kTaps;
    const std::size_t at = std::size_t(r.base - (kTaps / 2 - 1) - first);
    const double* xr = in_re + at;
    const double* xi = in_im + at;
    // Tap t = 4i + j into lane j of a rail's sum.
    v4 vr = {}, vi = {};
    for (int t = 0; t < kTaps; t += 4) {
      v4 a, b, x, y;
      __builtin_memcpy(&a, h0 + t, sizeof a);
      __builtin_memcpy(&b, h1 + t, sizeof b);
      __builtin_memcpy(&x, xr + t, sizeof x);
      __builtin_memcpy(&y, xi + t, sizeof y);
      const v4 h = a + f * (b - a);
      vr += h * x;
      vi += h * y;
    }
    out_re[k] = (vr[0] + vr[1]) + (vr[2] + vr[3]);
    out_im[k] = (vi[0] + vi[1]) + (vi[2] + vi[3]);
  }
}

}  // namespace hilrig::rf
