#include "hilrig/rf/channel.hpp"

#include <cmath>
#include <numbers>
#include <tuple>

#include "hilrig/rf/decibel.hpp"
#include "hilrig/rf/gaussian.hpp"
#include "hilrig/rf/phase_noise.hpp"
#include "hilrig/rf/timing.hpp"

namespace hilrig::rf {
namespace {
double from_db20(double v_db) { return std::pow(10.0, v_db / 20); }
}  // namespace

std::vector<cdouble> tone(std::size_t count, double freq_hz, double fs_hz, double amplitude, double phase_rad) {
  std::vector<cdouble> x(count);
  const double step = 2 * std::numbers::pi * freq_hz / fs_hz;
  for (std::size_t n = 0; n < count; ++n) x[n] = std::polar(amplitude, step * double(n) + phase_rad);
  return x;
}

std::pair<cdouble, cdouble> Channel::iq_mu_nu() const {
  const double g = from_db20(iq_gain_db), phi = iq_phase_deg * std::numbers::pi / 180;
  return {(1.0 + g * std::polar(1.0, -phi)) / 2.0, (1.0 - g * std::polar(1.0, phi)) / 2.0};
}

ChannelPath::ChannelPath(const Channel& c, double fs_hz)
    : gain_(from_db20(c.gain_db)), cfo_step_(2 * std::numbers::pi * c.cfo_hz / fs_hz), c3_(c.c3), cfo_(c.cfo_hz != 0) {
  std::tie(mu_, nu_) = c.iq_mu_nu();
}

std::vector<cdouble> Channel::apply(std::span<const cdouble> x, double fs_hz) const {
  const ChannelPath path(*this, fs_hz);
  const TimingStage timing(sco_ppm, delay_samples);
  PhaseNoise phase_noise(phase_noise_hz, fs_hz, seed);
  std::vector<cdouble> y(x.size());
  double power_sum = 0;
  for (std::size_t n = 0; n < x.size(); ++n) {
    cdouble s = timing.active() ? timing.at_block(n, x.data(), x.size()) : x[n];
    if (phase_noise.active()) s *= phase_noise.next();
    const cdouble v = path.distort(s, n);
    power_sum += std::norm(v);
    y[n] = v + dc_offset;
  }
  if (snr_db && !x.empty()) {
    const double noise_var = power_sum / double(x.size()) / std::pow(10.0, *snr_db / 10);
    const double sigma = std::sqrt(noise_var);
    ComplexGaussian noise(seed);
    for (auto& v : y) v += sigma * noise();
  }
  return y;
}

ToneTruth Channel::tone_truth(double freq_hz, double amplitude) const {
  const double a = amplitude * from_db20(gain_db);
  // Per-rail cubic on a tone: x*(1 + 3*c3*a^2/4) plus c3*a^3/4 at -3f.
  const double main = a * (1 + 0.75 * c3 * a * a);
  const double spur = std::abs(c3) * a * a * a / 4;
  const auto [mu, nu] = iq_mu_nu();
  const double tone_amp = std::abs(mu) * main, image_amp = std::abs(nu) * main;
  const double dc = std::abs(dc_offset);
  ToneTruth t;
  t.freq_hz = freq_hz / (1 + sco_ppm * 1e-6) + cfo_hz;  // the receiver's clock fast by sco_ppm: f reads low
  t.power_dbfs = power_db(tone_amp * tone_amp);
  if (phase_noise_hz == 0) t.snr_db = snr_db;  // phase noise's skirt reaches the noise bins: not stated
  if (image_amp > 0) t.image_dbc = power_db(image_amp * image_amp / (tone_amp * tone_amp));
  if (spur > 0) t.spur_dbc = power_db(std::norm(std::abs(mu) * spur) / (tone_amp * tone_amp));
  if (dc > 0) t.dc_dbfs = power_db(dc * dc);
  return t;
}

}  // namespace hilrig::rf
