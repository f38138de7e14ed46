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

template <class T>
const std::vector<T>& TimingStage::rows() {
  static const std::vector<T> rows = [] {
    const std::vector<double>& t = table();
    std::vector<T> r(std::size_t(kPhases) * 2 * kTaps);
    for (std::size_t p = 0; p < std::size_t(kPhases); ++p)
      for (std::size_t k = 0; k < std::size_t(kTaps); ++k) {
        r[p * 2 * kTaps + k] = T(t[p * kTaps + k]);
        r[p * 2 * kTaps + kTaps + k] = T(t[(p + 1) * kTaps + k] - t[p * kTaps + k]);
      }
    return r;
  }();
  return rows;
}

template <class T>
HILRIG_SIMD_CLONES void TimingStage::read(std::uint64_t n0, std::size_t count, const T* __restrict in_re,
                                          const T* __restrict in_im, std::int64_t first, T* __restrict out_re,
                                          T* __restrict out_im) const {
  constexpr std::size_t lanes_wide = kLanes<T>, half = lanes_wide / 2;
  using vec = vec32<T>;  // a group is two of them
  auto row_of = [](double mu) { return std::min(int(mu * kPhases), kPhases - 1); };
  const T* const table = rows<T>().data();
  std::size_t k = 0;
  while (k < count) {
    // A group: outputs k .. k+lanes-1 with one table row and one base - n. Row and offset
    // move monotonically with n, so a group whose first and last outputs agree is whole.
    const Read r = where(n0 + k);
    const int row = row_of(r.mu);
    const std::int64_t offset = r.base - std::int64_t(k);
    std::size_t lanes = std::min(lanes_wide, count - k);
    const Read last = where(n0 + k + lanes - 1);
    if (row_of(last.mu) != row || last.base - std::int64_t(k + lanes - 1) != offset) {
      lanes = 1;
      for (; lanes < lanes_wide && k + lanes < count; ++lanes) {
        const Read w = where(n0 + k + lanes);
        if (row_of(w.mu) != row || w.base - std::int64_t(k + lanes) != offset) break;
      }
    }
    // Lane j's fraction of a row, where()'s mu (lanes past `lanes`: discarded).
    alignas(32) T frac[lanes_wide];
    const double first_n = double(n0 + k);  // n + j exact in double below 2^53, as where()'s double(n)
    for (std::size_t j = 0; j < lanes_wide; j += 4) {
      using v4 = vec32<double>;
      using mask4 = std::int64_t __attribute__((vector_size(32)));
      const v4 s = (first_n + (v4{0, 1, 2, 3} + double(j))) * ratio_ + delay_;
      // floor(s), exact for |s| < 2^51: s rounded to an integer by the magic constant, less
      // one where that rounded up.
      const v4 nearest = (s + 0x1.8p52) - 0x1.8p52;
      const v4 q = nearest - (v4)((mask4)(nearest > s) & (mask4)(v4{} + 1.0));
      const v4 f = (1.0 - (s - q)) * kPhases - row;
      for (std::size_t i = 0; i < 4; ++i) frac[j + i] = T(f[i]);
    }
    vec f0, f1;
    __builtin_memcpy(&f0, frac, sizeof f0);
    __builtin_memcpy(&f1, frac + half, sizeof f1);
    const T* a = table + std::size_t(row) * 2 * kTaps;
    const T* d = a + kTaps;
    const std::size_t at = std::size_t(offset + std::int64_t(k) - (kTaps / 2 - 1) - first);
    const T* xr = in_re + at;
    const T* xi = in_im + at;
    // Lane j: the sums over even and over odd t of (a_t + frac_j d_t) x(at + j + t), each
    // in order, then added: eight chains of dependent adds, not four, keep the FMA units busy.
    vec yr0 = {}, yr1 = {}, yi0 = {}, yi1 = {}, zr0 = {}, zr1 = {}, zi0 = {}, zi1 = {};
    auto tap = [&](int t, vec& sr0, vec& sr1, vec& si0, vec& si1) {
      const vec h0 = a[t] + f0 * d[t], h1 = a[t] + f1 * d[t];
      vec r0, r1, i0, i1;
      __builtin_memcpy(&r0, xr + t, sizeof r0);
      __builtin_memcpy(&r1, xr + t + half, sizeof r1);
      __builtin_memcpy(&i0, xi + t, sizeof i0);
      __builtin_memcpy(&i1, xi + t + half, sizeof i1);
      sr0 += h0 * r0, sr1 += h1 * r1, si0 += h0 * i0, si1 += h1 * i1;
    };
    for (int t = 0; t < kTaps; t += 2) {
      tap(t, yr0, yr1, yi0, yi1);
      tap(t + 1, zr0, zr1, zi0, zi1);
    }
    yr0 += zr0, yr1 += zr1, yi0 += zi0, yi1 += zi1;
    if (lanes == lanes_wide) {
      __builtin_memcpy(out_re + k, &yr0, sizeof yr0);
      __builtin_memcpy(out_re + k + half, &yr1, sizeof yr1);
      __builtin_memcpy(out_im + k, &yi0, sizeof yi0);
      __builtin_memcpy(out_im + k + half, &yi1, sizeof yi1);
    } else {
      alignas(32) T yr[lanes_wide], yi[lanes_wide];
      __builtin_memcpy(yr, &yr0, sizeof yr0);
      __builtin_memcpy(yr + half, &yr1, sizeof yr1);
      __builtin_memcpy(yi, &yi0, sizeof yi0);
      __builtin_memcpy(yi + half, &yi1, sizeof yi1);
      for (std::size_t j = 0; j < lanes; ++j) out_re[k + j] = yr[j], out_im[k + j] = yi[j];
    }
    k += lanes;
  }
}

template void TimingStage::read<double>(std::uint64_t, std::size_t, const double*, const double*, std::int64_t,
                                        double*, double*) const;
template void TimingStage::read<float>(std::uint64_t, std::size_t, const float*, const float*, std::int64_t, float*,
                                       float*) const;

}  // namespace hilrig::rf
