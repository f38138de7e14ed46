#include "hilrig/rf/tone_analyzer.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <vector>

#include "hilrig/rf/decibel.hpp"
#include "hilrig/rf/phasors.hpp"
#include "hilrig/rf/simd_clones.hpp"
#include "hilrig/rf/spectrum.hpp"

namespace hilrig::rf {
namespace {

using cd = std::complex<double>;
using v4 = double __attribute__((vector_size(32)));          // two SSE registers on the baseline
using v4i = long long __attribute__((vector_size(32)));
using v4f = float __attribute__((vector_size(16)));

// out[k] = sum_r x[r] * (t_re[k][r] + j t_im[k][r]) for r < count, k < K: x interleaved
// (re, im), each table split. Four samples a vector (lane j holds r = 4i + j), the lanes
// summed at the end: the order of the additions differs from a plain loop's in the last
// bits only, and a strict loop would not vectorise.
template <int K>
[[gnu::always_inline]] inline void complex_dots(const double* __restrict xs, std::size_t count,
                                                const double* const* t_re, const double* const* t_im, cd* out) {
  v4 acc_re[K] = {}, acc_im[K] = {};
  std::size_t r = 0;
  for (; r + 4 <= count; r += 4) {
    v4 a, b;
    __builtin_memcpy(&a, xs + 2 * r, sizeof a);
    __builtin_memcpy(&b, xs + 2 * r + 4, sizeof b);
    const v4 xr = __builtin_shuffle(a, b, v4i{0, 2, 4, 6}), xi = __builtin_shuffle(a, b, v4i{1, 3, 5, 7});
    for (int k = 0; k < K; ++k) {
      v4 tr, ti;
      __builtin_memcpy(&tr, t_re[k] + r, sizeof tr);
      __builtin_memcpy(&ti, t_im[k] + r, sizeof ti);
      acc_re[k] += xr * tr - xi * ti;
      acc_im[k] += xr * ti + xi * tr;
    }
  }
  for (int k = 0; k < K; ++k) {
    double re = (acc_re[k][0] + acc_re[k][1]) + (acc_re[k][2] + acc_re[k][3]);
    double im = (acc_im[k][0] + acc_im[k][1]) + (acc_im[k][2] + acc_im[k][3]);
    for (std::size_t q = r; q < count; ++q) {
      const double xr = xs[2 * q], xi = xs[2 * q + 1], tr = t_re[k][q], ti = t_im[k][q];
      re += xr * tr - xi * ti, im += xr * ti + xi * tr;
    }
    out[k] = {re, im};
  }
}

// The clones the passes call (HILRIG_SIMD_CLONES: AVX2 + FMA where the host has them).
HILRIG_SIMD_CLONES void complex_dots_2(const double* xs, std::size_t count, const double* const* t_re,
                                       const double* const* t_im, cd* out) {
  complex_dots<2>(xs, count, t_re, t_im, out);
}
// out = (x - (at conj(f) + ai f + dc)) w, x and out interleaved (re, im), f = fine_re + j fine_im;
// computed in double, rounded once to out's float (ResidualTransform's input).
HILRIG_SIMD_CLONES void residual_windowed(const double* __restrict xs, std::size_t count,
                                          const double* __restrict f_re, const double* __restrict f_im,
                                          const double* __restrict w, cd at, cd ai, cd dc, float* __restrict out) {
  const double tr = at.real(), ti = at.imag(), ir = ai.real(), ii = ai.imag(), dr = dc.real(), di = dc.imag();
  auto model = [&](double fr, double fi, double& mr, double& mi) {  // at conj(f) + ai f + dc
    mr = tr * fr + ti * fi + ir * fr - ii * fi + dr;
    mi = ti * fr - tr * fi + ir * fi + ii * fr + di;
  };
  std::size_t r = 0;
  for (; r + 4 <= count; r += 4) {
    v4 a, b, fr, fi, wt;
    __builtin_memcpy(&a, xs + 2 * r, sizeof a);
    __builtin_memcpy(&b, xs + 2 * r + 4, sizeof b);
    __builtin_memcpy(&fr, f_re + r, sizeof fr);
    __builtin_memcpy(&fi, f_im + r, sizeof fi);
    __builtin_memcpy(&wt, w + r, sizeof wt);
    const v4 xr = __builtin_shuffle(a, b, v4i{0, 2, 4, 6}), xi = __builtin_shuffle(a, b, v4i{1, 3, 5, 7});
    const v4 mr = tr * fr + ti * fi + ir * fr - ii * fi + dr;
    const v4 mi = ti * fr - tr * fi + ir * fi + ii * fr + di;
    const v4 re = (xr - mr) * wt, im = (xi - mi) * wt;
    const v4 lo = __builtin_shuffle(re, im, v4i{0, 4, 1, 5}), hi = __builtin_shuffle(re, im, v4i{2, 6, 3, 7});
    const v4f lo_f = __builtin_convertvector(lo, v4f), hi_f = __builtin_convertvector(hi, v4f);
    __builtin_memcpy(out + 2 * r, &lo_f, sizeof lo_f);
    __builtin_memcpy(out + 2 * r + 4, &hi_f, sizeof hi_f);
  }
  for (; r < count; ++r) {
    double mr, mi;
    model(f_re[r], f_im[r], mr, mi);
    out[2 * r] = float((xs[2 * r] - mr) * w[r]);
    out[2 * r + 1] = float((xs[2 * r + 1] - mi) * w[r]);
  }
}

// averaged[b] += |bins[b]|^2 for b < count, bins interleaved (re, im) in float, summed in double.
HILRIG_SIMD_CLONES void add_powers(const float* __restrict bins, std::size_t count, double* __restrict averaged) {
  for (std::size_t b = 0; b < count; ++b) {
    const double re = bins[2 * b], im = bins[2 * b + 1];
    averaged[b] += re * re + im * im;
  }
}

// minus[k] = sum_r x[r] t_k[r] and plus[k] = sum_r x[r] conj(t_k[r]) for k < 4, t_k = t_re[k] +
// j t_im[k]: the moments about +omega0 and about -omega0 (FineSearch) from one read of x.
// Lanes as complex_dots's.
HILRIG_SIMD_CLONES void moment_dots(const double* __restrict xs, std::size_t count, const double* const* t_re,
                                    const double* const* t_im, cd* minus, cd* plus) {
  constexpr int K = 4;
  v4 m_re[K] = {}, m_im[K] = {}, p_re[K] = {}, p_im[K] = {};
  std::size_t r = 0;
  for (; r + 4 <= count; r += 4) {
    v4 a, b;
    __builtin_memcpy(&a, xs + 2 * r, sizeof a);
    __builtin_memcpy(&b, xs + 2 * r + 4, sizeof b);
    const v4 xr = __builtin_shuffle(a, b, v4i{0, 2, 4, 6}), xi = __builtin_shuffle(a, b, v4i{1, 3, 5, 7});
    for (int k = 0; k < K; ++k) {
      v4 tr, ti;
      __builtin_memcpy(&tr, t_re[k] + r, sizeof tr);
      __builtin_memcpy(&ti, t_im[k] + r, sizeof ti);
      const v4 rr = xr * tr, ii = xi * ti, ri = xr * ti, ir = xi * tr;
      m_re[k] += rr - ii, m_im[k] += ri + ir;
      p_re[k] += rr + ii, p_im[k] += ir - ri;
    }
  }
  for (int k = 0; k < K; ++k) {
    auto total = [](const v4& v) { return (v[0] + v[1]) + (v[2] + v[3]); };
    double mr = total(m_re[k]), mi = total(m_im[k]), pr = total(p_re[k]), pi = total(p_im[k]);
    for (std::size_t q = r; q < count; ++q) {
      const double xr = xs[2 * q], xi = xs[2 * q + 1], tr = t_re[k][q], ti = t_im[k][q];
      mr += xr * tr - xi * ti, mi += xr * ti + xi * tr;
      pr += xr * tr + xi * ti, pi += xi * tr - xr * ti;
    }
    minus[k] = {mr, mi}, plus[k] = {pr, pi};
  }
}


// The solution of G a = r for a nonsingular 3x3 G (Gaussian elimination, partial pivoting).
std::array<cd, 3> solve3(std::array<std::array<cd, 3>, 3> g, std::array<cd, 3> r) {
  for (int c = 0; c < 3; ++c) {
    int p = c;
    for (int i = c + 1; i < 3; ++i)
      if (std::abs(g[i][c]) > std::abs(g[p][c])) p = i;
    std::swap(g[c], g[p]);
    std::swap(r[c], r[p]);
    for (int i = c + 1; i < 3; ++i) {
      const cd f = g[i][c] / g[c][c];
      for (int k = c; k < 3; ++k) g[i][k] -= f * g[c][k];
      r[i] -= f * r[c];
    }
  }
  std::array<cd, 3> a;
  for (int c = 2; c >= 0; --c) {
    cd s = r[c];
    for (int k = c + 1; k < 3; ++k) s -= g[c][k] * a[k];
    a[c] = s / g[c][c];
  }
  return a;
}

// exp(-j*omega*t) for t = m*block + r as anchor[m] * fine[r], each factor an exact polar
// (a few ulps at any t, as Phasors; the block fixed so the loops over r vectorise).
struct BlockPhasors {
  std::size_t block;
  std::vector<double> fine_re, fine_im;
  BlockPhasors(std::size_t block_size, double omega) : block(block_size), fine_re(block_size), fine_im(block_size) {
    for (std::size_t r = 0; r < block; ++r) {
      const cd e = std::polar(1.0, -omega * double(r));
      fine_re[r] = e.real(), fine_im[r] = e.imag();
    }
  }
};

// The fine search's objective |sum_t xc[t] exp(-j(omega0 + delta) t)| for |delta| within a
// bin or so, from one pass over the capture: y = xc * exp(-j omega0 t) summed per block of
// D samples as moments S_p[m] = sum_r y[mD + r] (r - c)^p, p < 4 (c the block's centre);
// then sum_r y exp(-j delta (r - c)) = sum_p (-j delta)^p / p! S_p[m] to within
// (delta D / 2)^4 / 24 <= 1e-17 relative, and each evaluation costs n/D terms, not n.
// The same pass keeps the image's moments V_p[m] = sum_r x[mD + r] exp(j omega0 (mD + r))
// (r - c)^p, so the sine fit at omega0 + delta needs no pass of its own (fit_sine).
class FineSearch {
 public:
  static constexpr int kMoments = 4;
  FineSearch(std::span<const cd> x, cd mean, double omega0, double delta_max) {
    const std::size_t n = x.size();
    // (delta_max * D / 2)^4 / 24 <= 1e-17
    const double d = 2 * std::pow(24e-17, 0.25) / delta_max;
    block_ = std::max<std::size_t>(1, std::min<std::size_t>(n, std::size_t(d)));
    const std::size_t blocks = (n + block_ - 1) / block_;
    centre_ = double(block_ - 1) / 2;
    const BlockPhasors fine(block_, omega0);
    // g_p[r] = exp(-j omega0 r) (r - c)^p, so that S_p[m] = a_m (sum_r x g_p - mean sum_r g_p),
    // a_m = exp(-j omega0 m D): (x - mean) exp(-j omega0 t) (r - c)^p summed over the block.
    std::vector<double> g_re[kMoments], g_im[kMoments];
    cd g_sum[kMoments] = {}, g_tail[kMoments] = {};   // over a whole block; over the last one's
    const std::size_t last_count = n - (blocks - 1) * block_;
    for (int p = 0; p < kMoments; ++p) g_re[p].resize(block_), g_im[p].resize(block_);
    for (std::size_t r = 0; r < block_; ++r) {
      const double u = double(r) - centre_;
      double pw = 1;
      for (int p = 0; p < kMoments; ++p, pw *= u) {
        g_re[p][r] = fine.fine_re[r] * pw, g_im[p][r] = fine.fine_im[r] * pw;
        g_sum[p] += cd{g_re[p][r], g_im[p][r]};
      }
      if (r + 1 == last_count)
        for (int p = 0; p < kMoments; ++p) g_tail[p] = g_sum[p];
    }
    const double* t_re[kMoments] = {g_re[0].data(), g_re[1].data(), g_re[2].data(), g_re[3].data()};
    const double* t_im[kMoments] = {g_im[0].data(), g_im[1].data(), g_im[2].data(), g_im[3].data()};
    for (auto& s : s_) s.resize(blocks);
    for (auto& v : v_) v.resize(blocks);
    for (std::size_t m = 0; m < blocks; ++m) {
      const std::size_t t0 = m * block_, count = std::min(block_, n - t0);
      const cd a = std::polar(1.0, -omega0 * double(t0));
      cd minus[kMoments], plus[kMoments];
      moment_dots(reinterpret_cast<const double*>(x.data() + t0), count, t_re, t_im, minus, plus);
      for (int p = 0; p < kMoments; ++p) {
        s_[p][m] = a * (minus[p] - mean * (m + 1 == blocks ? g_tail[p] : g_sum[p]));
        v_[p][m] = std::conj(a) * plus[p];
      }
    }
    q_.resize(blocks);
    n_ = n, mean_ = mean, omega0_ = omega0;
  }
  // |sum_t xc[t] exp(-j(omega0 + delta) t)|
  double operator()(double delta) { return std::abs(centred(s_, delta)); }
  // sum_t x[t] exp(-j(omega0 + delta) t) and sum_t x[t] exp(+j(omega0 + delta) t), exactly (to
  // the moments' 1e-17), from the block sums: the sine fit's right-hand side.
  cd tone_sum(double delta) {
    return std::polar(1.0, -delta * centre_) * centred(s_, delta) + mean_ * phasor_sum(-(omega0_ + delta), n_);
  }
  cd image_sum(double delta) { return std::polar(1.0, delta * centre_) * centred(v_, -delta); }
  double omega0() const { return omega0_; }
  std::size_t size() const { return n_; }
  cd mean() const { return mean_; }
  // sum_t exp(j omega t), t < count: by blocks of 1024, each anchor an exact polar.
  static cd phasor_sum(double omega, std::size_t count) {
    constexpr std::size_t kBlock = 1024;
    const BlockPhasors fine(kBlock, -omega);  // its table is exp(j omega r)
    cd whole = 0, total = 0;
    for (std::size_t r = 0; r < kBlock; ++r) whole += cd{fine.fine_re[r], fine.fine_im[r]};
    for (std::size_t t0 = 0; t0 < count; t0 += kBlock) {
      cd part = whole;
      if (count - t0 < kBlock) {
        part = 0;
        for (std::size_t r = 0; r < count - t0; ++r) part += cd{fine.fine_re[r], fine.fine_im[r]};
      }
      total += std::polar(1.0, omega * double(t0)) * part;
    }
    return total;
  }

 private:
  // sum_m exp(-j delta D m) sum_p (-j delta)^p / p! M_p[m] for moments M: sum_t of the moments'
  // sequence times exp(-j delta (t - c)).
  cd centred(const std::vector<cd> (&moments)[kMoments], double delta) {
    const cd c1{0, -delta}, c2 = c1 * c1 / 2.0, c3 = c2 * c1 / 3.0;
    for (std::size_t m = 0; m < q_.size(); ++m)
      q_[m] = moments[0][m] + c1 * moments[1][m] + c2 * moments[2][m] + c3 * moments[3][m];
    return Phasors(q_.size(), delta * double(block_)).dtft(q_);
  }
  std::size_t block_ = 1, n_ = 0;
  double centre_ = 0, omega0_ = 0;
  cd mean_{};
  std::vector<cd> s_[kMoments], v_[kMoments], q_;
};

// FFT(w * m)[b] for the fitted model m(t) = a_tone e^(j w t) + a_image e^(-j w t) + a_dc
// subtracted from buf[b] = FFT(w * x)[b] in place: the residual's windowed transform
// without transforming the residual. w = sum_k c_k e^(j 2 pi k t / n) (k = -3..3, the
// Blackman-Harris terms), so FFT(w e^(j 2 pi nu t / n))[b] = sum_k c_k G(nu - b + k) with
// G(d) = sum_t e^(j 2 pi d t / n) = (1 - e^(j 2 pi d)) / (1 - e^(j 2 pi d / n)); nu (the
// tone's frequency in bins) is computed once and every d from it, so numerator and
// denominator agree to the last bits even at d ~ 0 (there, within kNear bins, the
// denominator is -2j sin(pi d / n) e^(j pi d / n); elsewhere 1 - e^(j 2 pi nu / n) z_m,
// z_m = e^(-j 2 pi m / n) from exact polars per chunk times a table's).
void subtract_model(cd* buf, std::size_t n, double omega, cd a_tone, cd a_image, cd a_dc) {
  constexpr double c[7] = {-0.01168 / 2, 0.14128 / 2, -0.48829 / 2, 0.35875, -0.48829 / 2, 0.14128 / 2, -0.01168 / 2};
  constexpr long long kNear = 32;
  constexpr std::size_t kChunk = 1024;
  const double nd = double(n);
  const double nu = omega * nd / (2 * std::numbers::pi);  // in bins; the image's is -nu
  struct Term {
    double nu;
    cd a;
    cd k;   // a * (1 - e^(j 2 pi nu))
    cd q;   // e^(j 2 pi nu / n)
    long long near;  // the bin nearest nu, as an integer (not reduced mod n)
  };
  auto term = [&](double v, cd a) {
    const double frac = v - std::nearbyint(v);
    const cd numerator = cd{0, -2 * std::sin(std::numbers::pi * frac)} * std::polar(1.0, std::numbers::pi * frac);
    return Term{v, a, a * numerator, std::polar(1.0, 2 * std::numbers::pi * v / nd), static_cast<long long>(std::nearbyint(v))};
  };
  const Term terms[2] = {term(nu, a_tone), term(-nu, a_image)};
  auto h_exact = [&](long long m) {  // sum over both terms of a G(nu - m), m any integer
    cd h = 0;
    for (const Term& t : terms) {
      long long mm = m;  // m's representative nearest the term's bin
      const long long ni = static_cast<long long>(n);
      mm += ((t.near - mm) / ni) * ni;
      while (t.near - mm > ni / 2) mm += ni;
      while (mm - t.near > ni / 2) mm -= ni;
      const double d = t.nu - double(mm);
      if (std::abs(t.near - mm) <= kNear) {
        const double sd = std::sin(std::numbers::pi * d / nd);
        if (sd == 0)
          h += t.a * nd;  // G(0) = n
        else
          h += t.k / (cd{0, -2 * sd} * std::polar(1.0, std::numbers::pi * d / nd));
      } else {
        h += t.k / (1.0 - t.q * std::polar(1.0, -2 * std::numbers::pi * double(mm) / nd));
      }
    }
    return h;
  };
  std::vector<double> fine_re(kChunk + 6), fine_im(kChunk + 6), hr(kChunk + 6), hi(kChunk + 6);
  for (std::size_t i = 0; i < kChunk + 6; ++i) {
    const cd e = std::polar(1.0, -2 * std::numbers::pi * double(i) / nd);
    fine_re[i] = e.real(), fine_im[i] = e.imag();
  }
  const long long ni = static_cast<long long>(n);
  auto mod_n = [ni](long long v) { return ((v % ni) + ni) % ni; };
  for (std::size_t b0 = 0; b0 < n; b0 += kChunk) {
    const std::size_t count = std::min(kChunk, n - b0);
    const long long m0 = static_cast<long long>(b0) - 3;  // hr[i] = H(m0 + i)
    const std::size_t width = count + 6;
    const cd anchor = std::polar(1.0, -2 * std::numbers::pi * double(m0) / nd);
    const double ar = anchor.real(), ai = anchor.imag();
    for (std::size_t i = 0; i < width; ++i) hr[i] = 0, hi[i] = 0;
    for (const Term& t : terms) {
      const double qr = t.q.real(), qi = t.q.imag(), kr = t.k.real(), ki = t.k.imag();
      for (std::size_t i = 0; i < width; ++i) {
        const double zr = ar * fine_re[i] - ai * fine_im[i], zi = ar * fine_im[i] + ai * fine_re[i];
        const double dr = 1 - (qr * zr - qi * zi), di = -(qr * zi + qi * zr);  // 1 - q z
        const double inv = 1 / (dr * dr + di * di);
        hr[i] += (kr * dr + ki * di) * inv;  // k / d = k conj(d) / |d|^2
        hi[i] += (ki * dr - kr * di) * inv;
      }
    }
    // Within kNear bins of either term's bin: the exact form (both terms).
    for (const Term& t : terms)
      for (long long m = t.near - kNear - 8; m <= t.near + kNear + 8; ++m) {
        const long long i = mod_n(m - m0);
        if (i < static_cast<long long>(width)) {
          const cd h = h_exact(m0 + i);
          hr[std::size_t(i)] = h.real(), hi[std::size_t(i)] = h.imag();
        }
      }
    double* out = reinterpret_cast<double*>(buf + b0);
    for (std::size_t j = 0; j < count; ++j) {  // bin b0 + j: sum_k c_k H(b - k), k = -3..3 -> hr[j + 3 - k]
      double mr = 0, mi = 0;
      for (int k = -3; k <= 3; ++k) mr += c[k + 3] * hr[j + std::size_t(3 - k)], mi += c[k + 3] * hi[j + std::size_t(3 - k)];
      out[2 * j] -= mr;
      out[2 * j + 1] -= mi;
    }
  }
  // DC: FFT(w a_dc)[b] = a_dc n c_b for b = -3..3.
  for (int k = -3; k <= 3; ++k) buf[std::size_t(mod_n(k))] -= a_dc * nd * c[k + 3];
}

// The least-squares tone, image and DC at omega = omega0 + delta (normal equations: the
// columns are nearly orthogonal for a tone outside DC's lobe). The right-hand side is the
// fine search's block sums (FineSearch::tone_sum, image_sum; sum x = n mean): no pass over
// the capture of its own. The Gram matrix's sums of exp(-j w t) and exp(-2j w t) by blocks.
struct SineFit {
  cd tone, image, dc;
};

SineFit fit_sine(FineSearch& moments, double delta) {
  const std::size_t n = moments.size();
  const double omega = moments.omega0() + delta;
  const cd s1 = FineSearch::phasor_sum(-omega, n), s2 = FineSearch::phasor_sum(-2 * omega, n);
  const cd r0 = moments.tone_sum(delta), r1 = moments.image_sum(delta), r2 = double(n) * moments.mean();
  const cd nn = double(n);
  // G[i][j] = sum conj(b_i) b_j for b = (exp(jwt), exp(-jwt), 1)
  const std::array<std::array<cd, 3>, 3> gram{{{nn, s2, s1}, {std::conj(s2), nn, std::conj(s1)},
                                               {std::conj(s1), s1, nn}}};
  const auto a = solve3(gram, {r0, r1, r2});
  return {a[0], a[1], a[2]};
}

// Step 4's figures from the residual's spectrum of `size` bins (power(b): a bin's mean is
// the per-sample power): noise outside every lobe; components as lobe less noise. `peak`:
// the coarse peak's bin in that spectrum.
template <class Power>
ToneAnalysis figures(std::size_t size, Power power, long long peak, double omega, const SineFit& fit, double fs_hz,
                     std::span<const double> aside_hz, std::size_t n) {
  const auto ni = static_cast<long long>(size);
  const double step = 2 * std::numbers::pi / double(size);
  auto wrap = [ni](long long b) { return ((b % ni) + ni) % ni; };
  auto lobe = [&](long long center) {
    std::array<long long, 2 * kLobeBins + 1> bins;
    for (int d = -kLobeBins; d <= kLobeBins; ++d) bins[std::size_t(d + kLobeBins)] = wrap(center + d);
    return bins;
  };
  // round-half-even, as Python's round()
  auto bin_of = [&](double om) { return wrap(static_cast<long long>(std::nearbyint(om / step))); };
  std::vector<char> aside(size, 0);
  std::vector<std::array<long long, 2 * kLobeBins + 1>> harmonic_lobes;
  for (int k : kHarmonics)
    for (int s : {1, -1}) harmonic_lobes.push_back(lobe(bin_of(s * k * omega)));
  for (const auto& l : harmonic_lobes)
    for (long long b : l) aside[std::size_t(b)] = 1;
  for (long long c : {0LL, peak, bin_of(-omega)})
    for (long long b : lobe(c)) aside[std::size_t(b)] = 1;
  for (double f : aside_hz)
    for (long long b : lobe(bin_of(2 * std::numbers::pi * f / fs_hz))) aside[std::size_t(b)] = 1;
  double noise_sum = 0, total_sum = 0, largest_power = -1;
  std::size_t noise_bins = 0;
  long long largest = 0;
  for (std::size_t b = 0; b < size; ++b) {
    const double p = power(b);
    total_sum += p;
    if (!aside[b]) noise_sum += p, ++noise_bins;
    if (p > largest_power) largest_power = p, largest = static_cast<long long>(b);
  }
  const double noise_var = noise_sum / double(noise_bins);
  auto power_in = [&](const std::array<long long, 2 * kLobeBins + 1>& bins) {
    double sum = 0;
    for (long long b : bins) sum += power(std::size_t(b));
    return std::max(sum / double(size) - noise_var * double(bins.size()) / double(size), 0.0);
  };

  const double tone_power = std::norm(fit.tone), image_power = std::norm(fit.image);
  double harmonic_power = 0;
  for (const auto& l : harmonic_lobes) harmonic_power += power_in(l);
  const double spur_power = std::max(image_power, power_in(lobe(largest)));
  const cd r = fit.image / std::conj(fit.tone);  // nu / conj(mu)
  const cd g_e = (1.0 - r) / (1.0 + r);          // g exp(j phi)

  ToneAnalysis out;
  out.freq_hz = omega / (2 * std::numbers::pi) * fs_hz;
  out.power_dbfs = power_db(tone_power);
  out.snr_db = power_db(tone_power / noise_var);
  out.sinad_db = power_db(tone_power / (total_sum / double(size) + image_power));
  out.sfdr_dbc = spur_power > 0 ? power_db(tone_power / spur_power) : HUGE_VAL;
  out.thd_dbc = power_db(harmonic_power / tone_power);
  out.image_dbc = power_db(image_power / tone_power);
  out.dc_dbfs = power_db(std::norm(fit.dc));
  out.iq_gain_db = 20 * std::log10(std::abs(g_e));
  out.iq_phase_deg = std::arg(g_e) * 180 / std::numbers::pi;
  out.noise_dbfs = power_db(noise_var);
  out.n = n;
  return out;
}

// The largest Blackman-Harris bin outside DC's lobe (bins -5..5), the first of equals (as
// max_element), of `size` bins.
template <class Power>
long long coarse_peak(std::size_t size, Power power) {
  long long peak = 0;
  double best = -1;
  for (std::size_t b = 0; b < size; ++b) {
    const bool dc_lobe = b <= std::size_t(kLobeBins) || b >= size - std::size_t(kLobeBins);
    const double p = dc_lobe ? 0.0 : power(b);
    if (p > best) best = p, peak = static_cast<long long>(b);
  }
  return peak;
}

double omega_of_bin(long long bin, std::size_t size) {
  const auto ni = static_cast<long long>(size);
  return 2 * std::numbers::pi / double(size) * double(bin < ni / 2 ? bin : bin - ni);
}

// A capture of at most kToneSegmentSamples: one transform of all of it.
ToneAnalysis analyze_whole(std::span<const cd> x, double fs_hz, std::span<const double> aside_hz) {
  const std::size_t n = x.size();
  const double step = 2 * std::numbers::pi / double(n);
  PowerSpectrum spectrum_of(n);
  const double* w = spectrum_of.window();
  cd* buf = spectrum_of.input();
  // 1. coarse: the largest Blackman-Harris bin outside DC's lobe; the mean (for the fine
  // search) in the same pass.
  double mean_re = 0, mean_im = 0;
  {
    const double* xs = reinterpret_cast<const double*>(x.data());
    double* in = reinterpret_cast<double*>(buf);
    for (std::size_t t = 0; t < n; ++t) {
      mean_re += xs[2 * t], mean_im += xs[2 * t + 1];
      in[2 * t] = xs[2 * t] * w[t], in[2 * t + 1] = xs[2 * t + 1] * w[t];
    }
  }
  spectrum_of.execute();
  auto power = [&](std::size_t b) { return spectrum_of.power(b); };
  const long long peak = coarse_peak(n, power);
  const double omega0 = omega_of_bin(peak, n);

  // 2. fine: the rectangular periodogram's maximum within 0.75 bin (ML in white noise),
  // evaluated from the capture's block moments about omega0 (FineSearch).
  const cd mean = cd{mean_re, mean_im} / double(n);
  FineSearch periodogram(x, mean, omega0, 0.75 * step);
  const double delta = golden_max(periodogram, -0.75 * step, 0.75 * step, 1e-7 * step);
  const double omega = omega0 + delta;

  // 3. the sine fit.
  const SineFit fit = fit_sine(periodogram, delta);

  // 4. the residual's spectrum. The transform is linear: the residual's is the capture's
  // (still in the buffer) less the fitted model's, which has a closed form
  // (subtract_model): no second transform.
  subtract_model(buf, n, omega, fit.tone, fit.image, fit.dc);
  return figures(n, power, peak, omega, fit, fs_hz, aside_hz, n);
}

// A longer capture: the spectra of steps 1 and 4 are Welch's averages over segments of
// kToneSegmentSamples (step 1 over kCoarseSegments of them), and a medium search between
// steps 1 and 2 takes the coarse peak to a quarter of the whole capture's bin (the
// reference's _medium_omega): the capture mixed down by omega0 and summed in blocks of
// kMediumBlock, whose zero-padded transform samples the periodogram near omega0.
ToneAnalysis analyze_segmented(std::span<const cd> x, double fs_hz, std::span<const double> aside_hz) {
  const std::size_t n = x.size(), size = kToneSegmentSamples;
  const double step = 2 * std::numbers::pi / double(n);
  const auto starts = tone_segment_starts(n, size);
  PowerSpectrum spectrum_of(size);
  const double* w = spectrum_of.window();
  cd* buf = spectrum_of.input();
  std::vector<double> averaged(size, 0.0);  // sum over segments of |FFT|^2
  auto accumulate = [&] {
    spectrum_of.execute();
    const double* bins = reinterpret_cast<const double*>(buf);
    for (std::size_t b = 0; b < size; ++b) averaged[b] += bins[2 * b] * bins[2 * b] + bins[2 * b + 1] * bins[2 * b + 1];
  };
  // the mean over `segments` of |FFT|^2 / sum(w^2): a bin's mean is the per-sample power
  auto average = [&](std::size_t segments) {
    const double scale = 1 / (spectrum_of.window_power() * double(segments));
    for (double& p : averaged) p *= scale;
  };

  // 1. coarse, from kCoarseSegments segments spread over the capture.
  const std::size_t picked = std::min(starts.size(), kCoarseSegments);
  for (std::size_t i = 0; i < picked; ++i) {
    const cd* seg = x.data() + starts[i * (starts.size() - 1) / (picked - 1)];
    for (std::size_t t = 0; t < size; ++t) buf[t] = seg[t] * w[t];
    accumulate();
  }
  average(picked);
  const long long peak = coarse_peak(size, [&](std::size_t b) { return averaged[b]; });
  double omega0 = omega_of_bin(peak, size);

  // The mean and the medium search's block sums in one pass: sum_r (x - mean) e =
  // sum_r x e - mean sum_r e, e = exp(-j omega0 t) from an exact polar per block.
  const std::size_t d = kMediumBlock, blocks = (n + d - 1) / d;
  const BlockPhasors fine(d, omega0);
  cd fine_sum = 0, last_sum = 0;
  const std::size_t last_count = n - (blocks - 1) * d;
  for (std::size_t r = 0; r < d; ++r) {
    fine_sum += cd{fine.fine_re[r], fine.fine_im[r]};
    if (r + 1 == last_count) last_sum = fine_sum;
  }
  std::vector<cd> raw(blocks), anchors(blocks);
  const std::vector<double> ones(d, 1.0), zeros(d, 0.0);
  const double* t_re[2] = {fine.fine_re.data(), ones.data()};
  const double* t_im[2] = {fine.fine_im.data(), zeros.data()};
  cd total = 0;
  for (std::size_t m = 0; m < blocks; ++m) {
    const std::size_t t0 = m * d, count = std::min(d, n - t0);
    cd dots[2];  // x e, x
    complex_dots_2(reinterpret_cast<const double*>(x.data() + t0), count, t_re, t_im, dots);
    total += dots[1];
    anchors[m] = std::polar(1.0, -omega0 * double(t0));
    raw[m] = anchors[m] * dots[0];
  }
  const cd mean = total / double(n);
  std::size_t padded = 1;
  while (padded < 4 * blocks) padded <<= 1;
  {
    PowerSpectrum medium(padded);
    cd* in = medium.input();
    for (std::size_t m = 0; m < padded; ++m)
      in[m] = m < blocks ? raw[m] - mean * anchors[m] * (m + 1 == blocks ? last_sum : fine_sum) : cd{0, 0};
    medium.execute();
    const long long q_max = static_cast<long long>(3 * d * padded / (4 * size));  // +-0.75 of a segment's bin
    const auto np = static_cast<long long>(padded);
    long long best_q = -q_max;
    double best = -1;
    for (long long q = -q_max; q <= q_max; ++q) {
      const double p = std::norm(in[std::size_t(((q % np) + np) % np)]);
      if (p > best) best = p, best_q = q;
    }
    omega0 += 2 * std::numbers::pi * double(best_q) / (double(d) * double(padded));
  }

  // 2. fine, 3. the sine fit: the whole capture's, as for a short one.
  FineSearch periodogram(x, mean, omega0, 0.75 * step);
  const double delta = golden_max(periodogram, -0.75 * step, 0.75 * step, 1e-7 * step);
  const double omega = omega0 + delta;
  const SineFit fit = fit_sine(periodogram, delta);

  // 4. the residual, segment by segment: x less the fitted model, windowed and transformed
  // in single precision (the tone is gone: ResidualTransform), the powers summed in double.
  std::fill(averaged.begin(), averaged.end(), 0.0);
  constexpr std::size_t kModelBlock = 1024;
  const BlockPhasors model(kModelBlock, omega);
  ResidualTransform residual(size);
  float* residual_in = reinterpret_cast<float*>(residual.input());
  for (std::size_t s : starts) {
    for (std::size_t i0 = 0; i0 < size; i0 += kModelBlock) {
      const std::size_t count = std::min(kModelBlock, size - i0);
      // the tone a e^(jwt) = a conj(e), the image b e^(-jwt) = b e, e = exp(-j w t)
      const cd at = fit.tone * std::polar(1.0, omega * double(s + i0));
      const cd ai = fit.image * std::polar(1.0, -omega * double(s + i0));
      residual_windowed(reinterpret_cast<const double*>(x.data() + s + i0), count, model.fine_re.data(),
                        model.fine_im.data(), w + i0, at, ai, fit.dc, residual_in + 2 * i0);
    }
    residual.execute();
    add_powers(residual_in, size, averaged.data());
  }
  average(starts.size());
  return figures(size, [&](std::size_t b) { return averaged[b]; }, peak, omega, fit, fs_hz, aside_hz, n);
}

}  // namespace

std::vector<std::size_t> tone_segment_starts(std::size_t n, std::size_t size) {
  if (size == 0 || size > n) throw std::invalid_argument("tone_segment_starts: segment size 0 or above the capture's");
  const std::size_t count = (n + size - 1) / size;
  std::vector<std::size_t> starts(count, 0);
  for (std::size_t k = 1; k < count; ++k) starts[k] = k * (n - size) / (count - 1);
  return starts;
}

ToneAnalysis analyze_tone(std::span<const cd> x, double fs_hz, std::span<const double> aside_hz) {
  const std::size_t n = x.size();
  if (n < kMinToneSamples) throw std::invalid_argument("analyze_tone: fewer than " + std::to_string(kMinToneSamples) + " samples");
  if (!(fs_hz > 0)) throw std::invalid_argument("analyze_tone: fs_hz must be > 0");
  return n <= kToneSegmentSamples ? analyze_whole(x, fs_hz, aside_hz) : analyze_segmented(x, fs_hz, aside_hz);
}

}  // namespace hilrig::rf
