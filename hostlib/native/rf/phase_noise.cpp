#include "hilrig/rf/phase_noise.hpp"

#include <algorithm>

#include "hilrig/rf/simd_clones.hpp"

namespace hilrig::rf {
namespace {

// Taylor coefficients in d^2: cos d = sum kCos[i] d^(2i), sin d = d sum kSin[i] d^(2i).
constexpr double kCos[8] = {1, -1.0 / 2, 1.0 / 24, -1.0 / 720, 1.0 / 40320, -1.0 / 3628800, 1.0 / 479001600,
                            -1.0 / 87178291200};
constexpr double kSin[8] = {1, -1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880, -1.0 / 39916800, 1.0 / 6227020800,
                            -1.0 / 1307674368000};

// re/im[k] turned by anchor * exp(j*d[k]), |d[k]| <= kPolyMax: Taylor to d^14 (cos) and
// d^15 (sin), Horner in d^2.
HILRIG_SIMD_CLONES
void turn_by_anchor(double* __restrict re, double* __restrict im, const double* __restrict d, std::size_t count,
          double anchor_re, double anchor_im) {
  for (std::size_t k = 0; k < count; ++k) {
    const double x = d[k], x2 = x * x;
    double c = kCos[7], s = kSin[7];
    for (int i = 6; i >= 0; --i) c = c * x2 + kCos[i], s = s * x2 + kSin[i];
    s *= x;
    const double er = anchor_re * c - anchor_im * s, ei = anchor_re * s + anchor_im * c;
    const double xr = re[k], xi = im[k];
    re[k] = xr * er - xi * ei;
    im[k] = xr * ei + xi * er;
  }
}

}  // namespace

void PhaseNoise::rotate(double* re, double* im, std::size_t count) {
  while (count > 0) {
    // A piece: up to the next anchor (a step that is a multiple of kAnchorSteps starts one).
    const std::size_t into = std::size_t(steps_ % kAnchorSteps);
    const std::size_t piece = std::min(count, kAnchorSteps - into);
    work_.resize(piece);
    double* d = work_.data();
    gauss_->normals(d, piece);
    double largest = 0;
    for (std::size_t k = 0; k < piece; ++k) {
      phi_ += sigma_ * d[k];
      if (into == 0 && k == 0) {  // the anchor: the phase reduced to one turn, and its polar
        phi_ = std::remainder(phi_, 2 * std::numbers::pi);
        anchor_phi_ = phi_;
        anchor_ = std::polar(1.0, phi_);
      }
      d[k] = phi_ - anchor_phi_;
      largest = std::max(largest, std::fabs(d[k]));
    }
    if (largest <= kPolyMax) {
      turn_by_anchor(re, im, d, piece, anchor_.real(), anchor_.imag());
    } else {  // strayed beyond the polynomial's range: exact polars
      for (std::size_t k = 0; k < piece; ++k) {
        const std::complex<double> e = anchor_ * std::polar(1.0, d[k]);
        const double xr = re[k], xi = im[k];
        re[k] = xr * e.real() - xi * e.imag();
        im[k] = xr * e.imag() + xi * e.real();
      }
    }
    steps_ += piece;
    re += piece, im += piece, count -= piece;
  }
}

}  // namespace hilrig::rf
