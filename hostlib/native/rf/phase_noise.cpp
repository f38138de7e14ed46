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

// re/im[k] turned by anchor * exp(j*d[k]), |d[k]| <= kPolyMax: Horner in d^2.
template <class T>
HILRIG_SIMD_CLONES void turn_by_anchor(T* __restrict re, T* __restrict im, const double* __restrict d,
                                       std::size_t count, double anchor_re, double anchor_im) {
  constexpr int terms = kTerms<T>;
  T cos_c[terms], sin_c[terms];
  for (int i = 0; i < terms; ++i) cos_c[i] = T(kCos[i]), sin_c[i] = T(kSin[i]);
  const T ar = T(anchor_re), ai = T(anchor_im);
  for (std::size_t k = 0; k < count; ++k) {
    const T x = T(d[k]), x2 = x * x;
    T c = cos_c[terms - 1], s = sin_c[terms - 1];
#pragma GCC unroll 8
    for (int i = terms - 2; i >= 0; --i) c = c * x2 + cos_c[i], s = s * x2 + sin_c[i];
    s *= x;
    const T er = ar * c - ai * s, ei = ar * s + ai * c;
    const T xr = re[k], xi = im[k];
    re[k] = xr * er - xi * ei;
    im[k] = xr * ei + xi * er;
  }
}

// In place: v[k] = start + sum_{i <= k} step * v[i] (a piece's phases from its normals);
// returns max |v[k]|. A whole piece (kAnchorSteps = 64) is summed as eight runs of eight
// side by side, so eight chains of dependent adds overlap, then each run's start is added
// as one vector; a shorter piece in order.
HILRIG_SIMD_CLONES
double scaled_prefix_sum(double* __restrict v, std::size_t count, double start, double step) {
  constexpr std::size_t kRuns = 8, kRun = 8;
  static_assert(kRuns * kRun == PhaseNoise::kAnchorSteps);
  if (count != kRuns * kRun) {
    double running = start, most = 0;
    for (std::size_t k = 0; k < count; ++k) {
      running += step * v[k];
      v[k] = running;
      most = std::max(most, std::fabs(running));
    }
    return most;
  }
  double total[kRuns] = {};
  for (std::size_t j = 0; j < kRun; ++j)
    for (std::size_t r = 0; r < kRuns; ++r) {
      total[r] += step * v[r * kRun + j];
      v[r * kRun + j] = total[r];
    }
  double largest[kRun] = {};
  double base = start;
  for (std::size_t r = 0; r < kRuns; ++r) {
    for (std::size_t j = 0; j < kRun; ++j) {
      const double x = v[r * kRun + j] + base;
      v[r * kRun + j] = x;
      largest[j] = std::max(largest[j], std::fabs(x));
    }
    base += total[r];
  }
  double most = 0;
  for (std::size_t j = 0; j < kRun; ++j) most = std::max(most, largest[j]);
  return most;
}

}  // namespace

double PhaseNoise::walk(std::size_t piece, bool at_anchor) {
  double* d = work_.data();
  gauss_->normals(d, piece);
  if (at_anchor) {  // the anchor: the phase reduced to one turn, and its polar
    anchor_phi_ = std::remainder(anchor_phi_ + offset_ + sigma_ * d[0], 2 * std::numbers::pi);
    anchor_ = std::polar(1.0, anchor_phi_);
    d[0] = 0;  // its step is the anchor's: the piece's first phase is the anchor's
    offset_ = 0;
  }
  const double largest = scaled_prefix_sum(d, piece, offset_, sigma_);
  offset_ = d[piece - 1];
  return largest;
}

template <class T>
void PhaseNoise::rotate(T* re, T* im, std::size_t count) {
  while (count > 0) {
    // A piece: up to the next anchor (a step that is a multiple of kAnchorSteps starts one).
    const std::size_t into = std::size_t(steps_ % kAnchorSteps);
    const std::size_t piece = std::min(count, kAnchorSteps - into);
    work_.resize(kAnchorSteps);
    const double largest = walk(piece, into == 0);
    const double* d = work_.data();
    if (largest <= kPolyMax) {
      turn_by_anchor(re, im, d, piece, anchor_.real(), anchor_.imag());
    } else {  // strayed beyond the polynomial's range: exact polars
      for (std::size_t k = 0; k < piece; ++k) {
        const std::complex<double> e = anchor_ * std::polar(1.0, d[k]);
        const double xr = double(re[k]), xi = double(im[k]);
        re[k] = T(xr * e.real() - xi * e.imag());
        im[k] = T(xr * e.imag() + xi * e.real());
      }
    }
    steps_ += piece;
    re += piece, im += piece, count -= piece;
  }
}

template void PhaseNoise::rotate<double>(double*, double*, std::size_t);
template void PhaseNoise::rotate<float>(float*, float*, std::size_t);

}  // namespace hilrig::rf
