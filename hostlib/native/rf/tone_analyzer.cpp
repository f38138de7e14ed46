#include "hilrig/rf/tone_analyzer.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <vector>

#include "hilrig/rf/decibel.hpp"
#include "hilrig/rf/phasors.hpp"
#include "hilrig/rf/spectrum.hpp"

namespace hilrig::rf {
namespace {

using cd = std::complex<double>;


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
    std::vector<double> pw[kMoments];  // (r - c)^p
    for (auto& v : pw) v.resize(block_);
    for (std::size_t r = 0; r < block_; ++r) {
      const double u = double(r) - centre_;
      pw[0][r] = 1, pw[1][r] = u, pw[2][r] = u * u, pw[3][r] = u * u * u;
    }
    for (auto& s : s_) s.resize(blocks);
    const double mr = mean.real(), mi = mean.imag();
    for (std::size_t m = 0; m < blocks; ++m) {
      const std::size_t t0 = m * block_, count = std::min(block_, n - t0);
      const cd a = std::polar(1.0, -omega0 * double(t0));
      const double ar = a.real(), ai = a.imag();
      double acc_re[kMoments] = {}, acc_im[kMoments] = {};
      const double* xs = reinterpret_cast<const double*>(x.data() + t0);
      for (std::size_t r = 0; r < count; ++r) {
        const double er = ar * fine.fine_re[r] - ai * fine.fine_im[r], ei = ar * fine.fine_im[r] + ai * fine.fine_re[r];
        const double vr = xs[2 * r] - mr, vi = xs[2 * r + 1] - mi;
        const double yr = vr * er - vi * ei, yi = vr * ei + vi * er;
        for (int p = 0; p < kMoments; ++p) acc_re[p] += yr * pw[p][r], acc_im[p] += yi * pw[p][r];
      }
      for (int p = 0; p < kMoments; ++p) s_[p][m] = {acc_re[p], acc_im[p]};
    }
    q_.resize(blocks);
  }
  // |sum_t xc[t] exp(-j(omega0 + delta) t)|
  double operator()(double delta) {
    const cd c1{0, -delta}, c2 = c1 * c1 / 2.0, c3 = c2 * c1 / 3.0;
    for (std::size_t m = 0; m < q_.size(); ++m) q_[m] = s_[0][m] + c1 * s_[1][m] + c2 * s_[2][m] + c3 * s_[3][m];
    return std::abs(Phasors(q_.size(), delta * double(block_)).dtft(q_));
  }

 private:
  std::size_t block_ = 1;
  double centre_ = 0;
  std::vector<cd> s_[kMoments], q_;
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

}  // namespace

ToneAnalysis analyze_tone(std::span<const cd> x, double fs_hz, std::span<const double> aside_hz) {
  const std::size_t n = x.size();
  if (n < kMinToneSamples) throw std::invalid_argument("analyze_tone: fewer than " + std::to_string(kMinToneSamples) + " samples");
  if (!(fs_hz > 0)) throw std::invalid_argument("analyze_tone: fs_hz must be > 0");
  const auto ni = static_cast<long long>(n);
  const double step = 2 * std::numbers::pi / double(n);
  auto wrap = [ni](long long b) { return ((b % ni) + ni) % ni; };
  auto lobe = [&](long long center) {
    std::array<long long, 2 * kLobeBins + 1> bins;
    for (int d = -kLobeBins; d <= kLobeBins; ++d) bins[std::size_t(d + kLobeBins)] = wrap(center + d);
    return bins;
  };
  // round-half-even, as Python's round()
  auto bin_of = [&](double om) { return wrap(static_cast<long long>(std::nearbyint(om / step))); };

  PowerSpectrum spectrum_of(n);
  const double* w = spectrum_of.window();
  cd* buf = spectrum_of.input();
  // 1. coarse: the largest Blackman-Harris bin outside DC's lobe (bins -5..5); the mean
  // (for the fine search) in the same pass.
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
  long long peak = 0;
  {
    double best = -1;
    for (std::size_t b = 0; b < n; ++b) {
      const bool dc_lobe = b <= std::size_t(kLobeBins) || b >= n - std::size_t(kLobeBins);
      const double p = dc_lobe ? 0.0 : spectrum_of.power(b);
      if (p > best) best = p, peak = static_cast<long long>(b);  // the first of equals, as max_element
    }
  }
  const double omega0 = step * double(peak < ni / 2 ? peak : peak - ni);

  // 2. fine: the rectangular periodogram's maximum within 0.75 bin (ML in white noise),
  // evaluated from the capture's block moments about omega0 (FineSearch).
  const cd mean = cd{mean_re, mean_im} / double(n);
  FineSearch periodogram(x, mean, omega0, 0.75 * step);
  const double omega = omega0 + golden_max(periodogram, -0.75 * step, 0.75 * step, 1e-7 * step);

  // 3. least-squares fit of tone exp(j w t), image exp(-j w t) and DC (normal equations:
  // the columns are nearly orthogonal for a tone outside DC's lobe). e = exp(-j w t) by
  // block: anchor * fine, so sums over a block are of the fine table's terms.
  const std::size_t block = 1024;
  const BlockPhasors fine(block, omega);
  cd s1 = 0, s2 = 0, r0 = 0, r1 = 0, r2 = 0;
  for (std::size_t t0 = 0; t0 < n; t0 += block) {
    const std::size_t count = std::min(block, n - t0);
    const cd a = std::polar(1.0, -omega * double(t0));
    const double* xs = reinterpret_cast<const double*>(x.data() + t0);
    double f1r = 0, f1i = 0, f2r = 0, f2i = 0, p0r = 0, p0i = 0, p1r = 0, p1i = 0, p2r = 0, p2i = 0;
    for (std::size_t r = 0; r < count; ++r) {
      const double fr = fine.fine_re[r], fi = fine.fine_im[r], xr = xs[2 * r], xi = xs[2 * r + 1];
      f1r += fr, f1i += fi;
      f2r += fr * fr - fi * fi, f2i += 2 * fr * fi;
      p0r += xr * fr - xi * fi, p0i += xr * fi + xi * fr;  // x * f
      p1r += xr * fr + xi * fi, p1i += xi * fr - xr * fi;  // x * conj(f)
      p2r += xr, p2i += xi;
    }
    s1 += a * cd{f1r, f1i};
    s2 += a * a * cd{f2r, f2i};
    r0 += a * cd{p0r, p0i};
    r1 += std::conj(a) * cd{p1r, p1i};
    r2 += cd{p2r, p2i};
  }
  const cd nn = double(n);
  // G[i][j] = sum conj(b_i) b_j for b = (exp(jwt), exp(-jwt), 1)
  const std::array<std::array<cd, 3>, 3> gram{{{nn, s2, s1}, {std::conj(s2), nn, std::conj(s1)},
                                               {std::conj(s1), s1, nn}}};
  const auto [a_tone, a_image, a_dc] = solve3(gram, {r0, r1, r2});

  // 4. the residual's spectrum: noise outside every lobe; components as lobe less noise.
  // The transform is linear: the residual's is the capture's (still in the buffer) less
  // the fitted model's, which has a closed form (subtract_model): no second transform.
  subtract_model(buf, n, omega, a_tone, a_image, a_dc);
  auto spectrum = [&](long long b) { return spectrum_of.power(std::size_t(b)); };
  std::vector<char> aside(n, 0);
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
  for (std::size_t b = 0; b < n; ++b) {
    const double p = spectrum_of.power(b);
    total_sum += p;
    if (!aside[b]) noise_sum += p, ++noise_bins;
    if (p > largest_power) largest_power = p, largest = static_cast<long long>(b);
  }
  const double noise_var = noise_sum / double(noise_bins);
  auto power_in = [&](const std::array<long long, 2 * kLobeBins + 1>& bins) {
    double sum = 0;
    for (long long b : bins) sum += spectrum(b);
    return std::max(sum / double(n) - noise_var * double(bins.size()) / double(n), 0.0);
  };

  const double tone_power = std::norm(a_tone), image_power = std::norm(a_image);
  double harmonic_power = 0;
  for (const auto& l : harmonic_lobes) harmonic_power += power_in(l);
  const double spur_power = std::max(image_power, power_in(lobe(largest)));
  const cd r = a_image / std::conj(a_tone);  // nu / conj(mu)
  const cd g_e = (1.0 - r) / (1.0 + r);      // g exp(j phi)

  ToneAnalysis out;
  out.freq_hz = omega / (2 * std::numbers::pi) * fs_hz;
  out.power_dbfs = power_db(tone_power);
  out.snr_db = power_db(tone_power / noise_var);
  out.sinad_db = power_db(tone_power / (total_sum / double(n) + image_power));
  out.sfdr_dbc = spur_power > 0 ? power_db(tone_power / spur_power) : HUGE_VAL;
  out.thd_dbc = power_db(harmonic_power / tone_power);
  out.image_dbc = power_db(image_power / tone_power);
  out.dc_dbfs = power_db(std::norm(a_dc));
  out.iq_gain_db = 20 * std::log10(std::abs(g_e));
  out.iq_phase_deg = std::arg(g_e) * 180 / std::numbers::pi;
  out.noise_dbfs = power_db(noise_var);
  out.n = n;
  return out;
}

}  // namespace hilrig::rf
