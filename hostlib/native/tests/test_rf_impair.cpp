// The channel's timing (SCO, fractional delay) and phase noise stages against what they
// should do to a tone, a multitone and a QPSK stream (docs/rf.md "Timing" and "Phase noise").
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include "hilrig/core/frame.hpp"
#include "hilrig/rf/channel.hpp"
#include "hilrig/rf/modulation.hpp"
#include "hilrig/rf/phase_noise.hpp"
#include "hilrig/rf/signal.hpp"
#include "hilrig/rf/timing.hpp"
#include "hilrig/rf/tone_analyzer.hpp"
#include "rf_stream_match.hpp"

namespace {

using cd = std::complex<double>;
using hilrig::rf::Channel;
using hilrig::rf::ModulationSpec;
using hilrig::rf::Scheme;

constexpr double kFs = 1e6;
constexpr double kPi = std::numbers::pi;
#if defined(__SANITIZE_ADDRESS__)
constexpr int kSeeds = 2;  // the sanitizers check the memory; the seeds run in the plain build
#else
constexpr int kSeeds = 20;
#endif

std::vector<cd> impair_stream(const std::vector<cd>& period, std::size_t start, std::size_t n) {
  std::vector<cd> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = period[(start + i) % period.size()];
  return x;
}

// The shared capture of the timing stage (docs/vectors/rf, the reference's samples as cf32):
// the core's Channel::apply on the same tones gives them to float32's precision.
TEST(RfTiming, SharedCaptureIsTheCoresTimingStage) {
  const std::string dir = std::string(HILRIG_VECTORS_DIR) + "/rf/";
  std::ifstream idx(dir + "index.json");
  const auto index = nlohmann::json::parse(idx);
  const nlohmann::json* found = nullptr;
  for (const auto& v : index["vectors"])
    if (v["name"] == "multitone_sco_delay_cf32") found = &v;
  ASSERT_NE(found, nullptr);
  const auto& v = *found;
  const auto n = v["n"].get<std::size_t>();
  std::ifstream f(dir + v["file"].get<std::string>(), std::ios::binary);
  const std::vector<char> bytes{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  ASSERT_EQ(bytes.size(), n * 8);
  std::vector<hilrig::rf::ToneSpec> tones;
  for (const auto& t : v["signal"]["tones"]) tones.push_back({t[0].get<double>(), t[1].get<double>(), 0.0});
  Channel c;
  c.gain_db = v["channel"]["gain_db"];
  c.sco_ppm = v["channel"]["sco_ppm"];
  c.delay_samples = v["channel"]["delay_samples"];
  const auto y = c.apply(hilrig::rf::multitone(n, tones, v["fs_hz"].get<double>()), v["fs_hz"].get<double>());
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    float iq[2];
    std::memcpy(iq, bytes.data() + 8 * i, 8);
    worst = std::max({worst, std::abs(y[i].real() - iq[0]), std::abs(y[i].imag() - iq[1])});
  }
  EXPECT_LT(worst, 1e-7);  // float32's half ulp at |x| < 0.6 is 3e-8
}

// The interpolator against the analytic tone read at t_n: its error over the band it is for.
TEST(RfTiming, ReadsAToneAtTheFractionalInstantToMinus80Db) {
  for (double f : {0.01, 0.1, 0.25, 0.35, -0.4}) {
    for (double delay : {0.0, 0.37, 0.5, 2.81}) {
      const double ppm = 37.5;
      Channel c;
      c.sco_ppm = ppm;
      c.delay_samples = delay;
      const std::size_t n = 4096;
      const auto y = c.apply(hilrig::rf::tone(n, f * kFs, kFs, 0.5), kFs);
      double err = 0, sig = 0;
      for (std::size_t k = 64; k + 64 < n; ++k) {  // away from the block's edges (zero outside)
        const double t = double(k) / (1 + ppm * 1e-6) - delay;
        const cd want = std::polar(0.5, 2 * kPi * f * t);
        err += std::norm(y[k] - want), sig += std::norm(want);
      }
      const double db = 10 * std::log10(err / sig);
      EXPECT_LT(db, std::abs(f) <= 0.35 ? -80.0 : -60.0) << "f " << f << " delay " << delay;
    }
  }
}

// A delay D turns a tone at w by -w D: the phases of 8 tones at bin centres, projected out
// over the middle of the block, give D by their weighted least-squares slope.
TEST(RfTiming, FractionalDelayMeasuredFromTheTonesPhaseSlope) {
  const std::size_t m = 8192, pad = 128, n = m + 2 * pad;
  const int bins[] = {-2800, -1900, -1100, -300, 400, 1200, 2100, 2900};  // within +-0.36 fs
  const double amp = 0.1;
  std::vector<cd> x(n);
  for (int b : bins)
    for (std::size_t k = 0; k < n; ++k) x[k] += std::polar(amp, 2 * kPi * b * double(k) / double(m));
  for (double delay : {0.37, 1.5, 7.123}) {
    double worst = 0;
    for (int seed = 0; seed < kSeeds; ++seed) {
      Channel c;
      c.delay_samples = delay;
      c.snr_db = 30;
      c.seed = std::uint64_t(seed);
      const auto y = c.apply(x, kFs);
      double num = 0, den = 0;
      for (int b : bins) {
        const double w = 2 * kPi * b / double(m);
        cd a{};
        for (std::size_t k = pad; k < pad + m; ++k) a += y[k] * std::polar(1.0, -w * double(k));
        cd ref{};
        for (std::size_t k = pad; k < pad + m; ++k) ref += x[k] * std::polar(1.0, -w * double(k));
        const double theta = std::arg(a / ref);  // -w D, wrapped: |w D| < pi for these D? no: unwrap by the truth
        const double wrapped = theta + w * delay;
        const double e = std::remainder(wrapped, 2 * kPi);
        num += w * (e - w * delay), den += w * w;
      }
      const double got = -num / den;
      worst = std::max(worst, std::abs(got - delay));
    }
    // Noise: per tone var(theta) = sigma^2 / (2 m amp^2), sigma^2 = P / snr, P = 8 amp^2:
    // var(D) = var(theta) / sum w^2.
    double sum_w2 = 0;
    for (int b : bins) sum_w2 += std::pow(2 * kPi * b / double(m), 2);
    const double sd = std::sqrt(8.0 / 1000 / (2 * double(m)) / sum_w2);
    std::printf("[ RfTiming ] delay %.3f: worst |D - measured| %.2e samples over %d seeds (1 sigma %.2e)\n", delay,
                worst, kSeeds, sd);
    EXPECT_LT(worst, 4 * sd + 1e-4) << delay;
  }
}

// The receiver's clock fast by sco: a tone at f reads f / (1 + sco), -f*sco for small sco;
// the analyzer finds it within twice the Cramer-Rao bound over the seeds.
TEST(RfTiming, ScoMovesAToneByMinusFTimesPpmWithinTwiceTheCramerRaoBound) {
  constexpr std::size_t n = 4096;
  constexpr double snr_db = 20, f = 0.1234567 * kFs;
  for (double ppm : {20.0, -7.0, 100.0}) {
    Channel ch;
    ch.sco_ppm = ppm;
    ch.cfo_hz = 123.4;
    ch.snr_db = snr_db;
    const double truth = ch.tone_truth(f, 0.5).freq_hz;
    EXPECT_NEAR(truth - 123.4 - f, -f * ppm * 1e-6, std::abs(f * ppm * ppm * 1e-12) * 1.01);
    const auto x = hilrig::rf::tone(n, f, kFs, 0.5);
    double sum2 = 0;
    for (int s = 0; s < kSeeds; ++s) {
      ch.seed = std::uint64_t(s);
      const double e = hilrig::rf::analyze_tone(ch.apply(x, kFs), kFs).freq_hz - truth;
      sum2 += e * e;
    }
    const double crb_hz = std::sqrt(6 / (std::pow(10.0, snr_db / 10) * n * (double(n) * n - 1))) * kFs / (2 * kPi);
    std::printf("[ RfTiming ] sco %+.0f ppm: shift %.3f Hz, RMS error %.3f x CRB over %d seeds\n", ppm, truth - f - 123.4,
                std::sqrt(sum2 / kSeeds) / crb_hz, kSeeds);
    EXPECT_LE(std::sqrt(sum2 / kSeeds), 2 * crb_hz) << ppm;
  }
}

hilrig::rf::SignalSpec impaired_tones() {
  hilrig::rf::SignalSpec s;
  s.tones = {{0.1234567 * kFs, 0.4, 0.0}, {-kFs * 0.31, 0.05, 0.0}};
  s.channel.gain_db = -1;
  s.channel.c3 = -0.02;
  s.channel.iq_gain_db = 0.4;
  s.channel.iq_phase_deg = -1.2;
  s.channel.cfo_hz = 321.5;
  s.channel.dc_offset = {0.003, -0.001};
  s.channel.sco_ppm = 40;
  s.channel.delay_samples = 3.37;
  s.channel.phase_noise_hz = 50;
  s.channel.seed = 5;
  return s;
}

// The stream's frames, cut anywhere, hold Channel::apply's samples (the block reads zero past
// its end, so its last samples are left out); the same seed gives the same samples.
TEST(RfTiming, FramesHoldTheChannelsSamplesWhereverTheyAreCut) {
  const auto spec = impaired_tones();
  const std::size_t n = 5000;
  const auto want = spec.channel.apply(hilrig::rf::multitone(n, spec.tones, kFs), kFs);
  for (int round = 0; round < 2; ++round) {
    hilrig::rf::SignalSource src(spec, kFs);
    std::vector<std::int16_t> rails(2 * n);
    std::size_t at = 0;
    for (std::uint32_t len : {1u, 333u, 1000u, 7u, 3659u}) {
      src.fill(at, len, 1, hilrig::SampleFormat::sc16, rails.data() + 2 * at);
      at += len;
    }
    std::size_t tipped = 0;  // rails the float path rounded to the other neighbour
    for (std::size_t k = 0; k + 40 < n; ++k) {
      ASSERT_TRUE(hilrig_test::rail_matches(rails[2 * k], want[k].real() * 32767)) << k;
      ASSERT_TRUE(hilrig_test::rail_matches(rails[2 * k + 1], want[k].imag() * 32767)) << k;
      tipped += (rails[2 * k] != std::nearbyint(want[k].real() * 32767)) +
                (rails[2 * k + 1] != std::nearbyint(want[k].imag() * 32767));
    }
    EXPECT_LT(tipped, 2 * n / 100);
  }
}

// The Wiener phase: increments of variance 2 pi linewidth / fs, field correlation
// E[y(n+k) y*(n)] = exp(-pi linewidth k / fs) (the Lorentzian of 3 dB width linewidth).
TEST(RfPhaseNoise, IncrementsAndCorrelationAreTheWienerProcesss) {
  const double lw = 300;
  const std::size_t n = 1 << 16;
  const double step2 = 2 * kPi * lw / kFs;
  double worst_var = 0, worst_corr = 0;
  for (int seed = 0; seed < kSeeds; ++seed) {
    Channel c;
    c.phase_noise_hz = lw;
    c.seed = std::uint64_t(seed);
    const auto y = c.apply(std::vector<cd>(n, cd{0.5, 0}), kFs);
    double s2 = 0;
    for (std::size_t k = 1; k < n; ++k) {
      ASSERT_NEAR(std::abs(y[k]), 0.5, 1e-12);
      s2 += std::pow(std::arg(y[k] / y[k - 1]), 2);
    }
    const double var = s2 / double(n - 1);
    worst_var = std::max(worst_var, std::abs(var / step2 - 1));
    EXPECT_NEAR(var / step2, 1, 5 * std::sqrt(2.0 / double(n))) << seed;  // 5 sigma of a variance estimate
    const std::size_t lag = 100;  // exp(-pi * 300 * 1e-4) = 0.910
    cd r{};
    for (std::size_t k = 0; k + lag < n; ++k) r += y[k + lag] * std::conj(y[k]) / 0.25;
    r /= double(n - lag);
    worst_corr = std::max(worst_corr, std::abs(r.real() - std::exp(-kPi * lw * double(lag) / kFs)));
  }
  std::printf("[ RfPhaseNoise ] step variance within %.2f %%, correlation at lag 100 within %.4f over %d seeds\n",
              100 * worst_var, worst_corr, kSeeds);
  EXPECT_LT(worst_corr, 0.02);
  // Seeded, and apart from the AWGN: the same seed gives the same walk.
  Channel c;
  c.phase_noise_hz = lw;
  c.seed = 3;
  EXPECT_EQ(c.apply(std::vector<cd>(64, cd{1, 0}), kFs), c.apply(std::vector<cd>(64, cd{1, 0}), kFs));
}

// A tone under phase noise: the noise power the analyzer reads is, on average over walks, the
// truth's (rf::phase_noise_snr_db: the coherent share e^(-v) over the AWGN and the
// Lorentzian's skirt beyond the lobe). One walk's skirt near the lobe scatters it by 1-2 dB
// with a long tail toward low SNR, so the mean is taken of the noise-to-signal ratio (the
// truth is the expected noise power; a mean of decibels sits above it by the spread).
TEST(RfPhaseNoise, ToneSnrIsTheSkirtBeyondTheLobeOnAverage) {
  const std::size_t n = std::size_t(1) << 16;
  const double f = kFs * 0.1234567, snr = 30;
  const int walks = 3 * kSeeds;  // one walk's N/S spreads by ~35 %: 60 put the mean within ~5 %
  for (double lw : {0.3, 1.0, 3.0, 10.0}) {
    Channel c;
    c.phase_noise_hz = lw;
    c.snr_db = snr;
    const auto truth = c.tone_truth(f, 0.5, kFs, n);
    ASSERT_TRUE(truth.snr_db.has_value());
    EXPECT_EQ(*truth.snr_db, hilrig::rf::phase_noise_snr_db(lw, kFs, n, snr));
    double noise_sum = 0, lowest = 1e9, highest = -1e9;
    for (int seed = 0; seed < walks; ++seed) {
      c.seed = std::uint64_t(seed);
      const auto a = hilrig::rf::analyze_tone(c.apply(hilrig::rf::tone(n, f, kFs, 0.5), kFs), kFs);
      noise_sum += std::pow(10.0, -a.snr_db / 10);
      lowest = std::min(lowest, a.snr_db - *truth.snr_db), highest = std::max(highest, a.snr_db - *truth.snr_db);
      // A walk far out of its spread: a stage that lost or doubled the skirt.
      EXPECT_GT(a.snr_db, *truth.snr_db - 8) << "linewidth " << lw << " seed " << seed;
      EXPECT_LT(a.snr_db, *truth.snr_db + 6) << "linewidth " << lw << " seed " << seed;
    }
    const double mean_db = -10 * std::log10(noise_sum / walks);
    std::printf("[ RfPhaseNoise ] tone, %.1f Hz at %g dB over 2^16: truth %.2f dB, measured (mean noise) %.2f dB, "
                "walks from %+.2f to %+.2f dB over %d seeds\n", lw, snr, *truth.snr_db, mean_db, lowest, highest, walks);
    if (kSeeds >= 20) {
      EXPECT_NEAR(mean_db, *truth.snr_db, 0.6) << "linewidth " << lw;  // ~3 sigma at 10 Hz, ~6 at 0.3 Hz
    }
  }
  // Without the capture's size the SNR is not stated; without AWGN it is the phase noise's alone.
  Channel c;
  c.phase_noise_hz = 1;
  EXPECT_FALSE(c.tone_truth(f, 0.5).snr_db.has_value());
  EXPECT_GT(*c.tone_truth(f, 0.5, kFs, n).snr_db, hilrig::rf::phase_noise_snr_db(1, kFs, n, 30.0));
}

// QPSK under phase noise: the analyzer takes out a line (frequency and phase) and a gain; the
// walk's realisation, known from the seed, says what is left: EVM^2 = mean |e^(j theta)/g - 1|^2
// + the AWGN's, theta the walk less its least-squares line. Over the seeds the mean of that part is
// the closed form 2(1 - exp(-v/2)), v = (2 pi lw / fs) T / 15 (hostlib.reference.rf.phase_noise_evm2).
TEST(RfPhaseNoise, QpskEvmIsTheWalksResidualAndItsMeanTheClosedForm) {
  const ModulationSpec spec{Scheme::qpsk, 4, 0.35, 0.25, 7};
  const auto frame = hilrig::rf::modem_frame(spec);
  const std::size_t n = std::size_t(1) << 16;
  const double lw = 0.1, snr = 30;
  double worst = 0, mean_pn = 0;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    const auto x = impair_stream(frame.samples, std::size_t(seed) * 797, n);
    double power = 0;
    for (const cd& v : x) power += std::norm(v);
    power /= double(n);
    Channel c;
    c.phase_noise_hz = lw;
    c.snr_db = snr;
    c.cfo_hz = 1234.5;
    c.seed = std::uint64_t(seed);
    const auto a = hilrig::rf::analyze_modulation(c.apply(x, kFs), kFs, spec);
    // The walk this seed drew, less its least-squares line over the capture.
    hilrig::rf::PhaseNoise walk(lw, kFs, c.seed);
    std::vector<double> phi(n);
    double acc = 0;
    cd prev{1, 0};
    for (std::size_t k = 0; k < n; ++k) {
      const cd r = walk.next();
      acc += std::arg(r / prev);
      prev = r;
      phi[k] = acc;
    }
    double st = 0, sp = 0, stt = 0, stp = 0;
    for (std::size_t k = 0; k < n; ++k) st += double(k), sp += phi[k], stt += double(k) * k, stp += double(k) * phi[k];
    const double slope = (double(n) * stp - st * sp) / (double(n) * stt - st * st), icpt = (sp - slope * st) / double(n);
    cd z{};
    for (std::size_t k = 0; k < n; ++k) z += std::polar(1.0, phi[k] - slope * double(k) - icpt);
    z /= double(n);
    double e2 = 0;
    for (std::size_t k = 0; k < n; ++k)
      e2 += std::norm(std::polar(1.0, phi[k] - slope * double(k) - icpt) / z - 1.0);
    e2 /= double(n);
    mean_pn += e2 / kSeeds;
    const double awgn2 = power / std::pow(10.0, snr / 10) / (0.25 * 0.25 * 4);
    const double want = 100 * std::sqrt(e2 + awgn2);
    worst = std::max(worst, std::abs(a.evm_rms_pct - want));
    EXPECT_NEAR(a.evm_rms_pct, want, 0.1 * want) << "seed " << seed;
    EXPECT_EQ(a.bit_errors, 0u) << "seed " << seed;
  }
  const double v = 2 * kPi * lw / kFs * double(n) / 15, closed = 2 * (1 - std::exp(-v / 2));
  std::printf("[ RfPhaseNoise ] QPSK, 0.1 Hz over 2^16: worst |EVM - the walk's| %.3f pp; mean EVM^2 of the walk "
              "%.3e, closed form %.3e over %d seeds\n", worst, mean_pn, closed, kSeeds);
  if (kSeeds >= 20) {  // the walk's energy scatters ~0.8 a seed: 0.18 over 20
    EXPECT_NEAR(mean_pn / closed, 1, 0.4);
  }
}

// The QPSK analyzer under a sample-clock offset over 2^16 samples (drift sco * 2^16: 0.66 sample
// at 10 ppm): it follows the drift (docs/rf.md "The modulation analyzer", step 4), so the EVM
// stays the AWGN theory's (0.3 percentage points, the bound) and the SCO is found.
TEST(RfTiming, QpskLocksUnderSmallSco) {
  const ModulationSpec spec{Scheme::qpsk, 4, 0.35, 0.25, 9};
  const auto frame = hilrig::rf::modem_frame(spec);
  const std::size_t n = std::size_t(1) << 16;
  double power = 0;
  for (const cd& v : frame.samples) power += std::norm(v);
  power /= double(frame.samples.size());
  const double theory = 100 * std::sqrt(power / std::pow(10.0, 25.0 / 10) / (0.25 * 0.25 * 4));
  for (double ppm : {1.0, 5.0, 10.0, -10.0}) {
    double worst = 0, worst_sco = 0;
    for (int seed = 1; seed <= kSeeds; ++seed) {
      Channel c;
      c.sco_ppm = ppm;
      c.snr_db = 25;
      c.cfo_hz = -2500;
      c.seed = std::uint64_t(seed);
      const auto a = hilrig::rf::analyze_modulation(c.apply(impair_stream(frame.samples, 1000u * seed, n), kFs), kFs, spec);
      worst = std::max(worst, std::abs(a.evm_rms_pct - theory));
      worst_sco = std::max(worst_sco, std::abs(a.sco_ppm - ppm));
      EXPECT_NEAR(a.evm_rms_pct, theory, 0.3) << ppm << " ppm seed " << seed;
      EXPECT_NEAR(a.sco_ppm, ppm, 0.2) << ppm << " ppm seed " << seed;
      EXPECT_EQ(a.bit_errors, 0u) << ppm << " ppm seed " << seed;
      EXPECT_NEAR(a.cfo_hz, -2500, 5.0) << ppm << " ppm seed " << seed;
      EXPECT_GE(a.symbols, 14000u);
    }
    std::printf("[ RfTiming ] QPSK at 25 dB, sco %+.0f ppm: worst |EVM - theory| %.3f pp, |sco error| %.3f ppm over "
                "%d seeds\n", ppm, worst, worst_sco, kSeeds);
  }
}

}  // namespace
