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

const std::vector<double>& TimingStage::differences() {
  static const std::vector<double> rows = [] {
    const std::vector<double>& t = table();
    std::vector<double> d(std::size_t(kPhases) * kTaps);
    for (std::size_t i = 0; i < d.size(); ++i) d[i] = t[i + kTaps] - t[i];
    return d;
  }();
  return rows;
}

HILRIG_SIMD_CLONES
void TimingStage::read(std::uint64_t n0, std::size_t count, const double* __restrict in_re,
                       const double* __restrict in_im, std::int64_t first, double* __restrict out_re,
                       double* __restrict out_im) const {
  using v4 = double __attribute__((vector_size(32)));  // two SSE registers on the baseline
  constexpr std::size_t kLanes = kGroup;
  static_assert(kLanes == 8, "a group is two v4 wide");
  auto row_of = [](double mu) { return std::min(int(mu * kPhases), kPhases - 1); };
  std::size_t k = 0;
  while (k < count) {
    // A group: outputs k .. k+lanes-1 with one table row and one base - n. Row and offset
    // move monotonically with n, so a group whose first and last outputs agree is whole.
    const Read r = where(n0 + k);
    const int row = row_of(r.mu);
    const std::int64_t offset = r.base - std::int64_t(k);
    std::size_t lanes = std::min(kLanes, count - k);
    const Read last = where(n0 + k + lanes - 1);
    if (row_of(last.mu) != row || last.base - std::int64_t(k + lanes - 1) != offset) {
      lanes = 1;
      for (; lanes < kLanes && k + lanes < count; ++lanes) {
        const Read w = where(n0 + k + lanes);
        if (row_of(w.mu) != row || w.base - std::int64_t(k + lanes) != offset) break;
      }
    }
    alignas(32) double frac[kLanes];
    for (std::size_t j = 0; j < kLanes; ++j) frac[j] = where(n0 + k + j).mu * kPhases - row;  // lanes past `lanes`: discarded
    const double* a = &table_[std::size_t(row) * kTaps];
    const double* d = &differences_[std::size_t(row) * kTaps];
    const std::size_t at = std::size_t(offset + std::int64_t(k) - (kTaps / 2 - 1) - first);
    const double* xr = in_re + at;
    const double* xi = in_im + at;
    v4 f0, f1;
    __builtin_memcpy(&f0, frac, sizeof f0);
    __builtin_memcpy(&f1, frac + 4, sizeof f1);
    // Lane j: sum over t of (a_t + frac_j d_t) x(at + j + t), t in order.
    v4 yr0 = {}, yr1 = {}, yi0 = {}, yi1 = {};
    for (int t = 0; t < kTaps; ++t) {
      const v4 av = {a[t], a[t], a[t], a[t]}, dv = {d[t], d[t], d[t], d[t]};
      const v4 h0 = av + f0 * dv, h1 = av + f1 * dv;
      v4 r0, r1, i0, i1;
      __builtin_memcpy(&r0, xr + t, sizeof r0);
      __builtin_memcpy(&r1, xr + t + 4, sizeof r1);
      __builtin_memcpy(&i0, xi + t, sizeof i0);
      __builtin_memcpy(&i1, xi + t + 4, sizeof i1);
      yr0 += h0 * r0, yr1 += h1 * r1, yi0 += h0 * i0, yi1 += h1 * i1;
    }
    if (lanes == kLanes) {
      __builtin_memcpy(out_re + k, &yr0, sizeof yr0);
      __builtin_memcpy(out_re + k + 4, &yr1, sizeof yr1);
      __builtin_memcpy(out_im + k, &yi0, sizeof yi0);
      __builtin_memcpy(out_im + k + 4, &yi1, sizeof yi1);
    } else {
      alignas(32) double yr[kLanes], yi[kLanes];
      __builtin_memcpy(yr, &yr0, sizeof yr0);
      __builtin_memcpy(yr + 4, &yr1, sizeof yr1);
      __builtin_memcpy(yi, &yi0, sizeof yi0);
      __builtin_memcpy(yi + 4, &yi1, sizeof yi1);
      for (std::size_t j = 0; j < lanes; ++j) out_re[k + j] = yr[j], out_im[k + j] = yi[j];
    }
    k += lanes;
  }
}

}  // namespace hilrig::rf
