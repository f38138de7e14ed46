// The RF core: the tone analyzer reproduces the Python reference's figures on the shared
// captures (docs/vectors/rf), and the channel's injected truth is what the analyzer
// measures, over several seeds (the bounds hostlib/tests/test_rf_reference.py holds the
// reference to).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <numbers>
#include <string>
#include <vector>

#include "hilrig/rf/channel.hpp"
#include "hilrig/rf/gaussian.hpp"
#include "hilrig/rf/tone_analyzer.hpp"

namespace {

using cd = std::complex<double>;
using hilrig::rf::analyze_tone;
using hilrig::rf::Channel;
using hilrig::rf::tone;

const std::string kRfVectors = std::string(HILRIG_VECTORS_DIR) + "/rf";

std::vector<char> rf_read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

nlohmann::json rf_index() { return nlohmann::json::parse(rf_read_bytes(kRfVectors + "/index.json")); }

// The capture's samples as the reference reads them (ci16 over 32767; cf32 widened).
std::vector<cd> rf_read_capture(const nlohmann::json& v) {
  const auto bytes = rf_read_bytes(kRfVectors + "/" + v["file"].get<std::string>());
  const auto n = v["n"].get<std::size_t>();
  std::vector<cd> x(n);
  const std::string type = v["datatype"];
  if (type == "ci16_le") {
    EXPECT_EQ(bytes.size(), n * 4);
    for (std::size_t i = 0; i < n; ++i) {
      std::int16_t iq[2];
      std::memcpy(iq, bytes.data() + 4 * i, 4);
      x[i] = {iq[0] / 32767.0, iq[1] / 32767.0};
    }
  } else {
    EXPECT_EQ(type, "cf32_le");
    EXPECT_EQ(bytes.size(), n * 8);
    for (std::size_t i = 0; i < n; ++i) {
      float iq[2];
      std::memcpy(iq, bytes.data() + 8 * i, 8);
      x[i] = {iq[0], iq[1]};
    }
  }
  return x;
}

// A dB figure against the reference's (null there: +-inf).
void expect_db(const nlohmann::json& want, double got, double tol, const char* what) {
  if (want.is_null()) EXPECT_TRUE(std::isinf(got)) << what << " = " << got;
  else EXPECT_NEAR(got, want.get<double>(), tol) << what;
}

TEST(RfToneAnalyzer, MatchesTheReferenceOnEverySharedCapture) {
  const auto index = rf_index();
  const auto& tol = index["tolerance"];
  ASSERT_GE(index["vectors"].size(), 5u);
  for (const auto& v : index["vectors"]) {
    SCOPED_TRACE(v["name"].get<std::string>());
    const double fs_hz = v["fs_hz"];
    const auto x = rf_read_capture(v);
    const auto got = analyze_tone(x, fs_hz);
    const auto& want = v["expected"];
    const double bin_hz = fs_hz / double(x.size());
    EXPECT_NEAR(got.freq_hz / bin_hz, want["freq_hz"].get<double>() / bin_hz, tol["freq_bins"].get<double>());
    const double db = tol["db"];
    expect_db(want["power_dbfs"], got.power_dbfs, db, "power_dbfs");
    expect_db(want["snr_db"], got.snr_db, db, "snr_db");
    expect_db(want["sinad_db"], got.sinad_db, db, "sinad_db");
    expect_db(want["sfdr_dbc"], got.sfdr_dbc, db, "sfdr_dbc");
    expect_db(want["thd_dbc"], got.thd_dbc, db, "thd_dbc");
    expect_db(want["image_dbc"], got.image_dbc, db, "image_dbc");
    expect_db(want["dc_dbfs"], got.dc_dbfs, db, "dc_dbfs");
    expect_db(want["noise_dbfs"], got.noise_dbfs, db, "noise_dbfs");
    EXPECT_NEAR(got.iq_gain_db, want["iq_gain_db"].get<double>(), tol["iq_gain_db"].get<double>());
    EXPECT_NEAR(got.iq_phase_deg, want["iq_phase_deg"].get<double>(), tol["iq_phase_deg"].get<double>());
    EXPECT_EQ(got.n, want["n"].get<std::size_t>());
  }
}

TEST(RfToneAnalyzer, RefusesCapturesTooShortToHoldTheLobes) {
  const auto x = tone(hilrig::rf::kMinToneSamples - 1, 1e3, 1e6);
  EXPECT_THROW(analyze_tone(x, 1e6), std::invalid_argument);
  EXPECT_THROW(analyze_tone(tone(1024, 1e3, 1e6), 0.0), std::invalid_argument);
}

constexpr double kRfFsHz = 1e6;
constexpr double kRfFreqHz = kRfFsHz * 0.1234567;  // off any bin
constexpr double kRfAmplitude = 0.5;             // -6 dBFS
constexpr std::size_t kRfN = 1 << 16;            // the size docs/rf.md states the accuracy for

TEST(RfChannel, SnrWithin0p3DbOfTheInjectedOverSeeds) {
  const auto x = tone(kRfN, kRfFreqHz, kRfFsHz, kRfAmplitude);
  for (double snr_db : {10.0, 20.0, 30.0, 40.0})
    for (std::uint64_t seed = 0; seed < 8; ++seed) {
      Channel ch;
      ch.snr_db = snr_db;
      ch.seed = seed;
      const auto got = analyze_tone(ch.apply(x, kRfFsHz), kRfFsHz);
      EXPECT_NEAR(got.snr_db, snr_db, 0.3) << "seed " << seed;
      EXPECT_NEAR(got.power_dbfs, ch.tone_truth(kRfFreqHz, kRfAmplitude).power_dbfs, 0.05) << "seed " << seed;
    }
}

TEST(RfChannel, FrequencyErrorWithinTwiceTheCramerRaoBound) {
  constexpr std::size_t n = 4096;
  constexpr int seeds = 200;
  constexpr double snr_db = 20;
  Channel ch;
  ch.cfo_hz = 123.4;
  ch.snr_db = snr_db;
  const double truth = ch.tone_truth(kRfFreqHz, kRfAmplitude).freq_hz;
  const auto x = tone(n, kRfFreqHz, kRfFsHz, kRfAmplitude);
  double sum = 0, sum2 = 0;
  for (int s = 0; s < seeds; ++s) {
    ch.seed = std::uint64_t(s);
    const double e = analyze_tone(ch.apply(x, kRfFsHz), kRfFsHz).freq_hz - truth;
    sum += e, sum2 += e * e;
  }
  // var(omega) >= 6 / (SNR N (N^2 - 1))
  const double crb_hz = std::sqrt(6 / (std::pow(10.0, snr_db / 10) * n * (double(n) * n - 1))) * kRfFsHz /
                        (2 * std::numbers::pi);
  EXPECT_LE(std::sqrt(sum2 / seeds), 2 * crb_hz);
  EXPECT_LE(std::abs(sum / seeds), 3 * crb_hz / std::sqrt(double(seeds)) + 1e-9);
}

TEST(RfChannel, SfdrAndThdWithin1DbOfTheInjectedCubic) {
  const auto x = tone(kRfN, kRfFreqHz, kRfFsHz, kRfAmplitude);
  for (double spur_dbc : {-40.0, -60.0})
    for (std::uint64_t seed : {3, 4, 5}) {
      Channel ch;
      ch.c3 = -std::pow(10.0, spur_dbc / 20) * 4 / (kRfAmplitude * kRfAmplitude);
      ch.snr_db = 80;
      ch.seed = seed;
      const auto truth = ch.tone_truth(kRfFreqHz, kRfAmplitude);
      ASSERT_TRUE(truth.spur_dbc);
      const auto got = analyze_tone(ch.apply(x, kRfFsHz), kRfFsHz);
      EXPECT_NEAR(got.sfdr_dbc, -*truth.spur_dbc, 1.0) << spur_dbc << " seed " << seed;
      EXPECT_NEAR(got.thd_dbc, *truth.spur_dbc, 1.0) << spur_dbc << " seed " << seed;  // -3f is the 3rd harmonic
    }
}

TEST(RfChannel, ImageAndIqImbalanceWithin1DbOfTheInjected) {
  const auto x = tone(kRfN, kRfFreqHz, kRfFsHz, kRfAmplitude);
  for (std::uint64_t seed : {5, 6, 7}) {
    Channel ch;
    ch.iq_gain_db = 0.5;
    ch.iq_phase_deg = 2.0;
    ch.snr_db = 60;
    ch.seed = seed;
    const auto truth = ch.tone_truth(kRfFreqHz, kRfAmplitude);
    ASSERT_TRUE(truth.image_dbc);
    const auto got = analyze_tone(ch.apply(x, kRfFsHz), kRfFsHz);
    EXPECT_NEAR(got.image_dbc, *truth.image_dbc, 1.0);
    EXPECT_NEAR(got.sfdr_dbc, -*truth.image_dbc, 1.0);  // the image is the largest other component
    EXPECT_NEAR(got.iq_gain_db, 0.5, 0.02);
    EXPECT_NEAR(got.iq_phase_deg, 2.0, 0.1);
  }
}

TEST(RfChannel, DcOffsetAndPower) {
  Channel ch;
  ch.dc_offset = {0.01, 0.0};
  ch.gain_db = -3;
  ch.snr_db = 50;
  ch.seed = 1;
  const auto truth = ch.tone_truth(kRfFreqHz, kRfAmplitude);
  const auto got = analyze_tone(ch.apply(tone(kRfN, kRfFreqHz, kRfFsHz, kRfAmplitude), kRfFsHz), kRfFsHz);
  ASSERT_TRUE(truth.dc_dbfs);
  EXPECT_NEAR(got.dc_dbfs, *truth.dc_dbfs, 0.1);
  EXPECT_NEAR(got.power_dbfs, truth.power_dbfs, 0.05);
}

TEST(RfChannel, NoiseIsSeededAndOfTheAskedPower) {
  const auto x = tone(kRfN, kRfFreqHz, kRfFsHz, kRfAmplitude);
  Channel ch;
  ch.snr_db = 30;
  ch.seed = 11;
  const auto a = ch.apply(x, kRfFsHz), b = ch.apply(x, kRfFsHz);
  EXPECT_EQ(a, b);
  ch.seed = 12;
  EXPECT_NE(a, ch.apply(x, kRfFsHz));
  double power = 0;
  cd mean = 0;
  for (std::size_t i = 0; i < kRfN; ++i) power += std::norm(a[i] - x[i]), mean += a[i] - x[i];
  const double want = kRfAmplitude * kRfAmplitude / 1e3;
  EXPECT_NEAR(power / kRfN, want, 5 * want / std::sqrt(double(kRfN)));  // |z|^2 is exponential: sd = mean/sqrt(N)
  EXPECT_LT(std::abs(mean / double(kRfN)), 5 * std::sqrt(want / kRfN));
}

TEST(RfChannel, WithoutNoiseIsTheModelsFormulaSampleBySample) {
  Channel ch;
  ch.gain_db = -2;
  ch.c3 = -0.01;
  ch.iq_gain_db = 0.3;
  ch.iq_phase_deg = 1.5;
  ch.cfo_hz = 250;
  ch.dc_offset = {0.001, -0.002};
  const auto x = tone(1000, kRfFreqHz, kRfFsHz, kRfAmplitude, 0.3);
  const auto y = ch.apply(x, kRfFsHz);
  const double g = std::pow(10.0, -2.0 / 20), gq = std::pow(10.0, 0.3 / 20), phi = 1.5 * std::numbers::pi / 180;
  for (std::size_t n = 0; n < x.size(); n += 97) {
    // the CFO first (the LO's), then the baseband's cubic and IQ imbalance, then DC
    const cd offset = g * x[n] * std::polar(1.0, 2 * std::numbers::pi * 250 / kRfFsHz * double(n));
    const double i0 = offset.real(), q0 = offset.imag();
    const double i1 = i0 - 0.01 * i0 * i0 * i0, q1 = q0 - 0.01 * q0 * q0 * q0;
    const cd iq{i1, gq * (q1 * std::cos(phi) - i1 * std::sin(phi))};  // I kept, Q = g(Q cos - I sin)
    const cd want = iq + cd{0.001, -0.002};
    EXPECT_NEAR(std::abs(y[n] - want), 0.0, 1e-12) << n;
  }
}

}  // namespace
