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
  // 1. coarse: the largest Blackman-Harris bin outside DC's lobe.
  std::vector<double> coarse = spectrum_of(x);
  for (long long b : lobe(0)) coarse[std::size_t(b)] = 0;
  const long long peak = std::max_element(coarse.begin(), coarse.end()) - coarse.begin();
  const double omega0 = step * double(peak < ni / 2 ? peak : peak - ni);

  // 2. fine: the rectangular periodogram's maximum within 0.75 bin (ML in white noise).
  cd mean = 0;
  for (const cd& v : x) mean += v;
  mean /= double(n);
  std::vector<cd> xc(x.begin(), x.end());
  for (cd& v : xc) v -= mean;
  const double omega = golden_max([&](double om) { return std::abs(Phasors(n, om).dtft(xc)); },
                                  omega0 - 0.75 * step, omega0 + 0.75 * step, 1e-7 * step);

  // 3. least-squares fit of tone exp(j w t), image exp(-j w t) and DC (normal equations:
  // the columns are nearly orthogonal for a tone outside DC's lobe).
  const std::vector<cd> e = Phasors(n, omega).all(n);  // exp(-j w t)
  cd s1 = 0, s2 = 0, r0 = 0, r1 = 0, r2 = 0;
  for (std::size_t t = 0; t < n; ++t) {
    s1 += e[t];
    s2 += e[t] * e[t];
    r0 += x[t] * e[t];
    r1 += x[t] * std::conj(e[t]);
    r2 += x[t];
  }
  const cd nn = double(n);
  // G[i][j] = sum conj(b_i) b_j for b = (exp(jwt), exp(-jwt), 1)
  const std::array<std::array<cd, 3>, 3> gram{{{nn, s2, s1}, {std::conj(s2), nn, std::conj(s1)},
                                               {std::conj(s1), s1, nn}}};
  const auto [a_tone, a_image, a_dc] = solve3(gram, {r0, r1, r2});
  std::vector<cd> residual(n);
  for (std::size_t t = 0; t < n; ++t) residual[t] = x[t] - (a_tone * std::conj(e[t]) + a_image * e[t] + a_dc);

  // 4. the residual's spectrum: noise outside every lobe; components as lobe less noise.
  const std::vector<double> spectrum = spectrum_of(residual);
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
  double noise_sum = 0, total_sum = 0;
  std::size_t noise_bins = 0;
  for (std::size_t b = 0; b < n; ++b) {
    total_sum += spectrum[b];
    if (!aside[b]) noise_sum += spectrum[b], ++noise_bins;
  }
  const double noise_var = noise_sum / double(noise_bins);
  auto power_in = [&](const std::array<long long, 2 * kLobeBins + 1>& bins) {
    double sum = 0;
    for (long long b : bins) sum += spectrum[std::size_t(b)];
    return std::max(sum / double(n) - noise_var * double(bins.size()) / double(n), 0.0);
  };

  const double tone_power = std::norm(a_tone), image_power = std::norm(a_image);
  double harmonic_power = 0;
  for (const auto& l : harmonic_lobes) harmonic_power += power_in(l);
  const long long largest = std::max_element(spectrum.begin(), spectrum.end()) - spectrum.begin();
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
