#include "hilrig/rf/phase_noise.hpp"

#include <algorithm>
#include <type_traits>

#include "hilrig/rf/simd_clones.hpp"

namespace hilrig::rf {
namespace {

// Taylor coefficients in d^2: cos d = sum kCos[i] d^(2i), sin d = d sum kSin[i] d^(2i).
constexpr double kCos[8] = {1, -1.0 / 2, 1.0 / 24, -1.0 / 720, 1.0 / 40320, -1.0 / 3628800, 1.0 / 479001600,
                            -1.0 / 87178291200};
constexpr double kSin[8] = {1, -1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880, -1.0 / 39916800, 1.0 / 6227020800,
                            -1.0 / 1307674368000};
// Terms kept: to d^14 and d^15 in double (error below 1e-19 at |d| <= kPolyMax), to d^8
// and d^9 in float (below 3e-10, under float's rounding).
template <class T>
constexpr int kTerms = std::is_same_v<T, float> ? 5 : 8;

// Sample k's (or, L a vector of T, the next lanes') phase from the widened doubles d, in
// L: a float vector's narrowed in registers.
template <class T>
  requires std::is_floating_point_v<T>
[[gnu::always_inline]] inline void phase_at(const double* d, T& out) {
  out = T(d[0]);
}
[[gnu::always_inline]] inline void phase_at(const double* d, vec32<double>& out) {
  __builtin_memcpy(&out, d, sizeof out);
}
[[gnu::always_inline]] inline void phase_at(const double* d, vec32<float>& out) {
  vec32<double> a, b;
  __builtin_memcpy(&a, d, sizeof a);
  __builtin_memcpy(&b, d + 4, sizeof b);
  using f4 = float __attribute__((vector_size(16)));
  out = __builtin_shufflevector(__builtin_convertvector(a, f4), __builtin_convertvector(b, f4), 0, 1, 2, 3, 4, 5, 6, 7);
}
[[gnu::always_inline]] inline void phase_at(const double* d, vec64<float>& out) {
  vec64<double> a, b;
  __builtin_memcpy(&a, d, sizeof a);
  __builtin_memcpy(&b, d + 8, sizeof b);
  out = __builtin_shufflevector(__builtin_convertvector(a, vec32<float>), __builtin_convertvector(b, vec32<float>), 0,
                                1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}

// Samples from `from` on turned by anchor * exp(j*d[k]), |d[k]| <= kPolyMax: Horner in
// d^2, L (T, or a vector of T: the same arithmetic lane by lane) at a time; returns where it
// stopped (the last whole L).
template <class L, class T>
[[gnu::always_inline]] inline std::size_t turn_run(T* __restrict re, T* __restrict im, const double* __restrict d,
                                                   std::size_t from, std::size_t count, T ar, T ai) {
  constexpr std::size_t lanes = sizeof(L) / sizeof(T);
  constexpr int terms = kTerms<T>;
  std::size_t k = from;
  for (; k + lanes <= count; k += lanes) {
    L x;
    phase_at(d + k, x);
    const L x2 = x * x;
    L c = L{} + T(kCos[terms - 1]), s = L{} + T(kSin[terms - 1]);
#pragma GCC unroll 8
    for (int i = terms - 2; i >= 0; --i) c = c * x2 + T(kCos[i]), s = s * x2 + T(kSin[i]);
    s *= x;
    const L er = ar * c - ai * s, ei = ar * s + ai * c;
    L xr, xi;
    __builtin_memcpy(&xr, re + k, sizeof xr);
    __builtin_memcpy(&xi, im + k, sizeof xi);
    const L yr = xr * er - xi * ei, yi = xr * ei + xi * er;
    __builtin_memcpy(re + k, &yr, sizeof yr);
    __builtin_memcpy(im + k, &yi, sizeof yi);
  }
  return k;
}

// The float turn in explicit vectors (GCC's vectoriser keeps to 8 lanes even on AVX-512):
// 16 lanes a register there, 8 on AVX2; none on the baseline (the loop takes them all).
#if HILRIG_SIMD_CLONES_ON
[[gnu::target("default")]] std::size_t turn_float(float*, float*, const double*, std::size_t, float, float) {
  return 0;
}
[[gnu::target("arch=x86-64-v3")]] std::size_t turn_float(float* re, float* im, const double* d, std::size_t count,
                                                          float ar, float ai) {
  return turn_run<vec32<float>>(re, im, d, 0, count, ar, ai);
}
[[gnu::target("arch=x86-64-v4")]] std::size_t turn_float(float* re, float* im, const double* d, std::size_t count,
                                                          float ar, float ai) {
  return turn_run<vec64<float>>(re, im, d, 0, count, ar, ai);
}
#endif

template <class T>
HILRIG_SIMD_CLONES void turn_by_anchor(T* __restrict re, T* __restrict im, const double* __restrict d,
                                       std::size_t count, double anchor_re, double anchor_im) {
  const T ar = T(anchor_re), ai = T(anchor_im);
  std::size_t k = 0;
#if HILRIG_SIMD_CLONES_ON
  if constexpr (std::is_same_v<T, float>) k = turn_float(re, im, d, count, ar, ai);
#endif
  k = turn_run<vec32<T>>(re, im, d, k, count, ar, ai);  // 32-byte vectors: 4 doubles, or 8 floats
  turn_run<T>(re, im, d, k, count, ar, ai);
}

// A piece's phases from its normals g[0..63], g[0] taken as 0 (the anchor's step, taken
// apart): phase[8r + j] = step * the sum of g[8j' + r'] over the steps 8r' + j' up to 8r
// + j (step 8r + j takes normal 8j + r). Eight runs of eight steps side by side: S_j =
// S_{j-1} + step * g[8j .. 8j+7] is run r's sum to j in lane r; an 8x8 transpose in four
// 4x4 blocks puts each run in step order; each run then gets the totals of those before
// it. Returns the largest |phase|. The normals are read as the generator's floats, widened
// in registers.
[[gnu::always_inline]] inline double transposed_walk_4(const float* __restrict g, double step, double* __restrict phase) {
  using v4 = vec32<double>;
  using f4 = float __attribute__((vector_size(16)));
  v4 lo[8], hi[8];  // S_j for runs 0-3 and 4-7
  v4 sum_lo = {}, sum_hi = {};
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) {
    f4 a4, b4;
    __builtin_memcpy(&a4, g + 8 * j, sizeof a4);
    __builtin_memcpy(&b4, g + 8 * j + 4, sizeof b4);
    v4 a = __builtin_convertvector(a4, v4);
    const v4 b = __builtin_convertvector(b4, v4);
    if (j == 0) a[0] = 0;
    sum_lo += step * a, sum_hi += step * b;
    lo[j] = sum_lo, hi[j] = sum_hi;
  }
  // Rows of a 4x4 block whose columns are a..d.
  auto transpose = [](v4 a, v4 b, v4 c, v4 d, v4* rows) {
    const v4 t0 = __builtin_shufflevector(a, b, 0, 4, 2, 6), t1 = __builtin_shufflevector(a, b, 1, 5, 3, 7);
    const v4 t2 = __builtin_shufflevector(c, d, 0, 4, 2, 6), t3 = __builtin_shufflevector(c, d, 1, 5, 3, 7);
    rows[0] = __builtin_shufflevector(t0, t2, 0, 1, 4, 5), rows[1] = __builtin_shufflevector(t1, t3, 0, 1, 4, 5);
    rows[2] = __builtin_shufflevector(t0, t2, 2, 3, 6, 7), rows[3] = __builtin_shufflevector(t1, t3, 2, 3, 6, 7);
  };
  // Where each run starts: the totals of the runs before it (S_7's lanes), summed apart
  // from the stores so that no chain runs through them.
  double base[8] = {0};
#pragma GCC unroll 8
  for (int r = 1; r < 8; ++r) base[r] = base[r - 1] + (r <= 4 ? lo[7][r - 1] : hi[7][r - 5]);
  // Each 4x4 block's rows at once: runs `run` .. run+3, steps `at` .. at+3 (few registers
  // live, and four maxima side by side rather than one chain through all sixteen rows).
  v4 largest[4] = {};
  auto rows_out = [&](const v4* columns, int run, int at) {
    v4 rows[4];
    transpose(columns[0], columns[1], columns[2], columns[3], rows);
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
      const v4 x = rows[i] + base[run + i];
      __builtin_memcpy(phase + 8 * (run + i) + at, &x, sizeof x);
      const v4 ax = x < 0 ? -x : x;
      largest[i] = ax > largest[i] ? ax : largest[i];
    }
  };
  rows_out(lo, 0, 0);
  rows_out(lo + 4, 0, 4);
  rows_out(hi, 4, 0);
  rows_out(hi + 4, 4, 4);
  const v4 a = largest[0] > largest[1] ? largest[0] : largest[1], b = largest[2] > largest[3] ? largest[2] : largest[3];
  const v4 most = a > b ? a : b;
  return std::max(std::max(most[0], most[1]), std::max(most[2], most[3]));
}

#if HILRIG_SIMD_CLONES_ON
[[gnu::target("default")]]
#endif
double transposed_walk(const float* __restrict g, double step, double* __restrict phase) {
  return transposed_walk_4(g, step, phase);
}
#if HILRIG_SIMD_CLONES_ON
[[gnu::target("arch=x86-64-v3")]]
double transposed_walk(const float* __restrict g, double step, double* __restrict phase) {
  return transposed_walk_4(g, step, phase);
}
// The same sums and maxima eight runs a register (an 8x8 transpose in three stages of
// shuffles): the same values, as each lane's arithmetic is the four-lane version's.
[[gnu::target("arch=x86-64-v4")]]
double transposed_walk(const float* __restrict g, double step, double* __restrict phase) {
  using v8 = vec64<double>;
  v8 sums[8];  // S_j: run r's sum to j in lane r
  v8 sum = {};
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) {
    vec32<float> a8;
    __builtin_memcpy(&a8, g + 8 * j, sizeof a8);
    v8 a = __builtin_convertvector(a8, v8);
    if (j == 0) a[0] = 0;
    sum += step * a;
    sums[j] = sum;
  }
  double base[8] = {0};
#pragma GCC unroll 8
  for (int r = 1; r < 8; ++r) base[r] = base[r - 1] + sums[7][r - 1];
  v8 pair_lo[4], pair_hi[4];  // steps 2m, 2m+1 interleaved: even runs, odd runs
#pragma GCC unroll 4
  for (int m = 0; m < 4; ++m) {
    pair_lo[m] = __builtin_shufflevector(sums[2 * m], sums[2 * m + 1], 0, 8, 2, 10, 4, 12, 6, 14);
    pair_hi[m] = __builtin_shufflevector(sums[2 * m], sums[2 * m + 1], 1, 9, 3, 11, 5, 13, 7, 15);
  }
  // Runs {0,4}, {2,6}, {1,5}, {3,7}: steps 0-3 of each in the low half, 4-7 in the high.
  v8 quad[2][4];
#pragma GCC unroll 2
  for (int h = 0; h < 2; ++h) {
    quad[h][0] = __builtin_shufflevector(pair_lo[2 * h], pair_lo[2 * h + 1], 0, 1, 8, 9, 4, 5, 12, 13);
    quad[h][1] = __builtin_shufflevector(pair_lo[2 * h], pair_lo[2 * h + 1], 2, 3, 10, 11, 6, 7, 14, 15);
    quad[h][2] = __builtin_shufflevector(pair_hi[2 * h], pair_hi[2 * h + 1], 0, 1, 8, 9, 4, 5, 12, 13);
    quad[h][3] = __builtin_shufflevector(pair_hi[2 * h], pair_hi[2 * h + 1], 2, 3, 10, 11, 6, 7, 14, 15);
  }
  constexpr int run_of[4] = {0, 2, 1, 3};  // quad q holds runs run_of[q] and run_of[q] + 4
  v8 largest[2] = {};
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) {
    const int r = run_of[q];
    const v8 low = __builtin_shufflevector(quad[0][q], quad[1][q], 0, 1, 2, 3, 8, 9, 10, 11) + base[r];
    const v8 high = __builtin_shufflevector(quad[0][q], quad[1][q], 4, 5, 6, 7, 12, 13, 14, 15) + base[r + 4];
    __builtin_memcpy(phase + 8 * r, &low, sizeof low);
    __builtin_memcpy(phase + 8 * (r + 4), &high, sizeof high);
    const v8 al = low < 0 ? -low : low, ah = high < 0 ? -high : high;
    largest[0] = al > largest[0] ? al : largest[0];
    largest[1] = ah > largest[1] ? ah : largest[1];
  }
  const v8 most = largest[0] > largest[1] ? largest[0] : largest[1];
  double m = most[0];
#pragma GCC unroll 8
  for (int i = 1; i < 8; ++i) m = std::max(m, most[i]);
  return m;
}
#endif


}  // namespace

void PhaseNoise::begin_piece() {
  static_assert(kAnchorSteps == 64, "transposed_walk sums eight runs of eight");
  float g[kAnchorSteps];
  gauss_->normals(g, kAnchorSteps);
  // The anchor: the last phase plus its step (normal 0), and its polar: the last anchor's
  // turned by the advance (the Taylor polynomial in double, to 1e-19), or every
  // kExactAnchors pieces (and after an advance beyond the polynomial's range) the exact
  // polar of the phase reduced to one turn, so rounding cannot build up: a sincos a piece
  // cost more than the piece's rotation.
  const double last = steps_ == 0 ? 0.0 : phases_[kAnchorSteps - 1];
  const double advance = last + sigma_ * double(g[0]);
  const std::uint64_t piece = steps_ / kAnchorSteps;
  if (piece % kExactAnchors == 0 || std::fabs(advance) > kPolyMax) {
    anchor_phi_ = std::remainder(anchor_phi_ + advance, 2 * std::numbers::pi);
    anchor_ = std::polar(1.0, anchor_phi_);
  } else {
    anchor_phi_ += advance;
    const double a2 = advance * advance;
    double c = kCos[7], s = kSin[7];
    for (int i = 6; i >= 0; --i) c = c * a2 + kCos[i], s = s * a2 + kSin[i];
    anchor_ *= std::complex<double>(c, s * advance);
  }
  phases_.resize(kAnchorSteps);
  within_poly_ = transposed_walk(g, sigma_, phases_.data()) <= kPolyMax;
}

template <class T>
void PhaseNoise::rotate(T* re, T* im, std::size_t count) {
  while (count > 0) {
    // Up to the end of the piece (a step that is a multiple of kAnchorSteps begins one).
    const std::size_t into = std::size_t(steps_ % kAnchorSteps);
    if (into == 0) begin_piece();
    const std::size_t m = std::min(count, kAnchorSteps - into);
    const double* d = phases_.data() + into;
    if (within_poly_) {
      turn_by_anchor(re, im, d, m, anchor_.real(), anchor_.imag());
    } else {  // strayed beyond the polynomial's range: exact polars
      for (std::size_t k = 0; k < m; ++k) {
        const std::complex<double> e = anchor_ * std::polar(1.0, d[k]);
        const double xr = double(re[k]), xi = double(im[k]);
        re[k] = T(xr * e.real() - xi * e.imag());
        im[k] = T(xr * e.imag() + xi * e.real());
      }
    }
    steps_ += m;
    re += m, im += m, count -= m;
  }
}

template void PhaseNoise::rotate<double>(double*, double*, std::size_t);
template void PhaseNoise::rotate<float>(float*, float*, std::size_t);

}  // namespace hilrig::rf
