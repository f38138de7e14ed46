#include "hilrig/rf/timing.hpp"

#include <algorithm>
#include <numbers>
#include <type_traits>
#include <utility>

#include "hilrig/rf/simd_clones.hpp"

#if HILRIG_SIMD_CLONES_ON
#include <immintrin.h>
#endif

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

namespace timing_detail {

// mu * kPhases - row of outputs first_n + j, j below V's lanes, where()'s arithmetic four
// doubles at a time (first_n + j exact in double below 2^53, as where()'s double(n)),
// rounded to T in registers: a vector built in memory from narrower stores would stall the
// load that reads it back.
template <class T, class V>
[[gnu::always_inline]] inline void lane_fractions(double first_n, double ratio, double delay, int row, V& out) {
  using v4 = vec32<double>;
  using mask4 = std::int64_t __attribute__((vector_size(32)));
  constexpr std::size_t lanes = sizeof(V) / sizeof(T);
  // floor(s), exact for |s| < 2^51: s rounded to an integer by the magic constant, less one
  // where that rounded up.
  auto chunk = [&](std::size_t j, v4& f) {
    const v4 s = (first_n + (v4{0, 1, 2, 3} + double(j))) * ratio + delay;
    const v4 nearest = (s + 0x1.8p52) - 0x1.8p52;
    const v4 q = nearest - (v4)((mask4)(nearest > s) & (mask4)(v4{} + 1.0));
    f = (1.0 - (s - q)) * TimingStage::kPhases - row;
  };
  v4 c0d, c1d, c2d, c3d;
  chunk(0, c0d);
  if constexpr (lanes > 4) chunk(4, c1d);
  if constexpr (lanes > 8) chunk(8, c2d), chunk(12, c3d);
  if constexpr (std::is_same_v<T, double>) {
    static_assert(lanes == 4);
    out = c0d;
  } else {
    using f4 = float __attribute__((vector_size(16)));
    const f4 c0 = __builtin_convertvector(c0d, f4), c1 = __builtin_convertvector(c1d, f4);
    const auto low = __builtin_shufflevector(c0, c1, 0, 1, 2, 3, 4, 5, 6, 7);
    if constexpr (lanes == 8) {
      out = low;
    } else {
      static_assert(lanes == 16);
      const f4 c2 = __builtin_convertvector(c2d, f4), c3 = __builtin_convertvector(c3d, f4);
      const auto high = __builtin_shufflevector(c2, c3, 0, 1, 2, 3, 4, 5, 6, 7);
      out = __builtin_shufflevector(low, high, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    }
  }
}

// Lane j of sum_r/sum_i: the sums over even and over odd t of (a_t + f_j d_t) x(j + t), each
// in order, then added: two chains of dependent adds a vector keep the FMA units busy. x(j
// + t) for all lanes is one unaligned load a tap.
template <class T, class V>
struct LoadedTaps {
  [[gnu::always_inline]] static void sum(const T* a, const T* d, const V& f, const T* xr, const T* xi, V& sum_r,
                                         V& sum_i) {
    V even_r = {}, even_i = {}, odd_r = {}, odd_i = {};
    auto tap = [&](int t, V& acc_r, V& acc_i) {
      const V h = a[t] + f * d[t];
      V xrv, xiv;
      __builtin_memcpy(&xrv, xr + t, sizeof xrv);
      __builtin_memcpy(&xiv, xi + t, sizeof xiv);
      acc_r += h * xrv, acc_i += h * xiv;
    };
    for (int t = 0; t < TimingStage::kTaps; t += 2) {
      tap(t, even_r, even_i);
      tap(t + 1, odd_r, odd_i);
    }
    sum_r = even_r + odd_r, sum_i = even_i + odd_i;
  }
};

template <class T, class V, class Taps>
[[gnu::always_inline]] inline void read_groups(const TimingStage& stage, std::uint64_t n0, std::size_t count,
                                               const T* __restrict in_re, const T* __restrict in_im, std::int64_t first,
                                               T* __restrict out_re, T* __restrict out_im) {
  using TS = TimingStage;
  constexpr int kTaps = TS::kTaps, kPhases = TS::kPhases;
  constexpr std::size_t lanes_wide = TS::kLanes<T>, width = sizeof(V) / sizeof(T), parts = lanes_wide / width;
  static_assert(parts == 1 || parts == 2, "a group is one or two vectors");
  auto row_of = [](double mu) { return std::min(int(mu * kPhases), kPhases - 1); };
  const T* const table = TS::rows<T>().data();
  std::size_t k = 0;
  while (k < count) {
    // A group: outputs k .. k+lanes-1 with one table row and one base - n. Row and offset
    // move monotonically with n, so a group whose first and last outputs agree is whole.
    const TS::Read r = stage.where(n0 + k);
    const int row = row_of(r.mu);
    const std::int64_t offset = r.base - std::int64_t(k);
    std::size_t lanes = std::min(lanes_wide, count - k);
    const TS::Read last = stage.where(n0 + k + lanes - 1);
    if (row_of(last.mu) != row || last.base - std::int64_t(k + lanes - 1) != offset) {
      // Output k is in the group, k + lanes - 1 is not: halve the interval between them.
      std::size_t in = 1, out = lanes - 1;
      while (out - in > 0) {
        const std::size_t mid = in + (out - in) / 2;
        const TS::Read w = stage.where(n0 + k + mid);
        if (row_of(w.mu) == row && w.base - std::int64_t(k + mid) == offset) {
          in = mid + 1;
        } else {
          out = mid;
        }
      }
      lanes = in;
    }
    const double first_n = double(n0 + k);  // n + j exact in double below 2^53, as where()'s double(n)
    const T* a = table + std::size_t(row) * 2 * kTaps;
    const T* d = a + kTaps;
    const std::size_t at = std::size_t(offset + std::int64_t(k) - (kTaps / 2 - 1) - first);
    alignas(64) T yr[lanes_wide], yi[lanes_wide];
    for (std::size_t p = 0; p < parts; ++p) {
      const T* xr = in_re + at + p * width;
      const T* xi = in_im + at + p * width;
      // Lane j's fraction of a row, where()'s mu (lanes past `lanes`: discarded).
      V f;
      lane_fractions<T, V>(first_n + double(p * width), stage.ratio_, stage.delay_, row, f);
      V even_r, even_i;
      Taps::sum(a, d, f, xr, xi, even_r, even_i);
      __builtin_memcpy(yr + p * width, &even_r, sizeof even_r);
      __builtin_memcpy(yi + p * width, &even_i, sizeof even_i);
    }
    if (lanes == lanes_wide) {
      std::copy_n(yr, lanes_wide, out_re + k);
      std::copy_n(yi, lanes_wide, out_im + k);
    } else {
      for (std::size_t j = 0; j < lanes; ++j) out_re[k + j] = yr[j], out_im[k + j] = yi[j];
    }
    k += lanes;
  }
}

#if HILRIG_SIMD_CLONES_ON
// LoadedTaps' arithmetic for 16 floats in an AVX-512 register, the data of odd taps
// shifted out of three loaded vectors (valignd) rather than loaded: a 64-byte load off
// its alignment spans two cache lines and costs two of the core's load slots, so loads
// alone bound the loop; shifts run beside them (measured: about 1.2x the loop's speed).
struct ShiftedTapsV4 {
  using V = vec64<float>;
  template <int t>
  [[gnu::target("arch=x86-64-v4"), gnu::always_inline]] static void tap(const float* a, const float* d, const V& f,
                                                                      const float* xr, const float* xi,
                                                                      const __m512i* wr, const __m512i* wi,
                                                                      V& acc_r, V& acc_i) {
    const V h = a[t] + f * d[t];
    V xrv, xiv;
    if constexpr (t % 2 == 1) {
      // Zero-masked of all lanes: the plain form reads an undefined register GCC warns of.
      xrv = V(_mm512_maskz_alignr_epi32(0xffff, wr[t / 16 + 1], wr[t / 16], t % 16));
      xiv = V(_mm512_maskz_alignr_epi32(0xffff, wi[t / 16 + 1], wi[t / 16], t % 16));
    } else {
      __builtin_memcpy(&xrv, xr + t, sizeof xrv);
      __builtin_memcpy(&xiv, xi + t, sizeof xiv);
    }
    acc_r += h * xrv, acc_i += h * xiv;
  }
  template <int... pair>
  [[gnu::target("arch=x86-64-v4"), gnu::always_inline]] static void taps(std::integer_sequence<int, pair...>,
                                                                       const float* a, const float* d, const V& f,
                                                                       const float* xr, const float* xi,
                                                                       const __m512i* wr, const __m512i* wi, V* acc) {
    ((tap<2 * pair>(a, d, f, xr, xi, wr, wi, acc[0], acc[1]), tap<2 * pair + 1>(a, d, f, xr, xi, wr, wi, acc[2], acc[3])),
     ...);
  }
  // A call of its own: read_groups, built for the default target, cannot inline it.
  [[gnu::target("arch=x86-64-v4")]] static void sum(const float* a, const float* d, const V& f,
                                                                      const float* xr, const float* xi, V& sum_r,
                                                                      V& sum_i) {
    const __m512i wr[3] = {_mm512_loadu_si512(xr), _mm512_loadu_si512(xr + 16), _mm512_loadu_si512(xr + 32)};
    const __m512i wi[3] = {_mm512_loadu_si512(xi), _mm512_loadu_si512(xi + 16), _mm512_loadu_si512(xi + 32)};
    V acc[4] = {};  // even r, even i, odd r, odd i
    taps(std::make_integer_sequence<int, TimingStage::kTaps / 2>{}, a, d, f, xr, xi, wr, wi, acc);
    sum_r = acc[0] + acc[2], sum_i = acc[1] + acc[3];
  }
};
#endif

}  // namespace timing_detail

namespace {
// The float path by the host's widest vectors: two AVX2 registers or one AVX-512 register a
// group of 16, the same arithmetic lane by lane (FMA in both), so the same samples.
#if HILRIG_SIMD_CLONES_ON
[[gnu::target("default")]]
#endif
void read_float(const TimingStage& stage, std::uint64_t n0, std::size_t count, const float* in_re, const float* in_im,
                std::int64_t first, float* out_re, float* out_im) {
  timing_detail::read_groups<float, vec32<float>>(stage, n0, count, in_re, in_im, first, out_re, out_im);
}
#if HILRIG_SIMD_CLONES_ON
[[gnu::target("arch=x86-64-v3")]]
void read_float(const TimingStage& stage, std::uint64_t n0, std::size_t count, const float* in_re, const float* in_im,
                std::int64_t first, float* out_re, float* out_im) {
  timing_detail::read_groups<float, vec32<float>>(stage, n0, count, in_re, in_im, first, out_re, out_im);
}
// flatten: the group's sum (an AVX-512 function, which read_groups cannot inline) inline
// here, so that the group's registers are not spilled around a call.
[[gnu::target("arch=x86-64-v4"), gnu::flatten]]
void read_float(const TimingStage& stage, std::uint64_t n0, std::size_t count, const float* in_re, const float* in_im,
                std::int64_t first, float* out_re, float* out_im) {
  timing_detail::read_groups<float, vec64<float>, timing_detail::ShiftedTapsV4>(stage, n0, count, in_re, in_im, first,
                                                                             out_re, out_im);
}
#endif
}  // namespace

template <>
void TimingStage::read<float>(std::uint64_t n0, std::size_t count, const float* in_re, const float* in_im,
                              std::int64_t first, float* out_re, float* out_im) const {
  read_float(*this, n0, count, in_re, in_im, first, out_re, out_im);
}

template <>
HILRIG_SIMD_CLONES void TimingStage::read<double>(std::uint64_t n0, std::size_t count, const double* in_re,
                                                  const double* in_im, std::int64_t first, double* out_re,
                                                  double* out_im) const {
  timing_detail::read_groups<double, vec32<double>>(*this, n0, count, in_re, in_im, first, out_re, out_im);
}

}  // namespace hilrig::rf
