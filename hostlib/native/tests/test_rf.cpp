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
#include "hilrig/core/config.hpp"
#include "hilrig/core/frame.hpp"
#include "hilrig/rf/capture.hpp"
#include "hilrig/rf/gaussian.hpp"
#include "hilrig/rf/signal.hpp"
#include "hilrig/rf/spectrum.hpp"
#include "hilrig/rf/tone_analyzer.hpp"
#include "rf_stream_match.hpp"

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

// The report's averaged spectrum: a tone centred on a bin reads its power, white noise
// reads its variance times the window's noise bandwidth over the segment size.
TEST(RfSpectrum, AveragedSpectrumReadsATonesPowerAndTheNoisePerBin) {
  constexpr std::size_t kSize = 2048, kN = 1 << 16;
  const double fs = 1e6, f = 100.0 * fs / double(kSize);  // bin 100 exactly
  const auto clean = hilrig::rf::averaged_spectrum(tone(kN, f, fs, 0.5), kSize);
  EXPECT_EQ(clean.segments, (kN - kSize) / (kSize / 2) + 1);
  EXPECT_NEAR(clean.enbw_bins, 2.004, 0.001);
  EXPECT_NEAR(10 * std::log10(clean.power[100]), 10 * std::log10(0.25), 1e-9);
  Channel ch;
  ch.snr_db = 20;
  ch.seed = 3;
  const auto noisy = hilrig::rf::averaged_spectrum(ch.apply(tone(kN, f, fs, 0.5), fs), kSize);
  double floor = 0;
  std::size_t bins = 0;
  for (std::size_t k = 200; k < 1800; ++k) floor += noisy.power[k], ++bins;
  const double want = 0.25 / 100 * noisy.enbw_bins / double(kSize);
  EXPECT_NEAR(10 * std::log10(floor / double(bins)), 10 * std::log10(want), 0.1);
  EXPECT_THROW(hilrig::rf::averaged_spectrum(tone(100, f, fs), kSize), std::invalid_argument);
}

// The simulator's source (pattern "signal"): the shared multitone capture from the core's
// generator, and frames cut anywhere hold Channel::apply's samples, quantised.
TEST(RfSignal, MultitoneReproducesTheSharedCaptureTo1Lsb) {
  const auto index = rf_index();  // named: a temporary's subobject would dangle in the loop
  for (const auto& v : index["vectors"]) {
    if (v["signal"]["kind"] != "multitone") continue;
    std::vector<hilrig::rf::ToneSpec> tones;
    for (const auto& t : v["signal"]["tones"]) tones.push_back({t[0].get<double>(), t[1].get<double>(), 0.0});
    const auto want = rf_read_capture(v);
    const auto got = hilrig::rf::multitone(want.size(), tones, v["fs_hz"].get<double>());
    for (std::size_t n = 0; n < want.size(); ++n) {
      ASSERT_LE(std::abs(got[n].real() - want[n].real()), 1.0 / 32767) << n;
      ASSERT_LE(std::abs(got[n].imag() - want[n].imag()), 1.0 / 32767) << n;
    }
    return;
  }
  FAIL() << "no multitone capture in docs/vectors/rf";
}

hilrig::rf::SignalSpec impaired_two_tones() {
  hilrig::rf::SignalSpec s;
  s.tones = {{kRfFreqHz, 0.4, 0.0}, {-kRfFsHz * 0.31, 0.05, 0.0}};
  s.channel.gain_db = -1;
  s.channel.c3 = -0.02;
  s.channel.iq_gain_db = 0.4;
  s.channel.iq_phase_deg = -1.2;
  s.channel.cfo_hz = 321.5;
  s.channel.dc_offset = {0.003, -0.001};
  return s;
}

TEST(RfSignal, FramesHoldTheChannelsSamplesWhereverTheyAreCut) {
  const auto spec = impaired_two_tones();
  const std::size_t n = 5000;
  const auto want = spec.channel.apply(hilrig::rf::multitone(n, spec.tones, kRfFsHz), kRfFsHz);
  hilrig::rf::SignalSource src(spec, kRfFsHz);
  std::vector<std::int16_t> rails(2 * n);
  std::size_t at = 0;
  for (std::uint32_t len : {1u, 333u, 1000u, 7u, 3659u}) {  // frames of any size, in order
    src.fill(at, len, 1, hilrig::SampleFormat::sc16, rails.data() + 2 * at);
    at += len;
  }
  ASSERT_EQ(at, n);
  std::size_t tipped = 0;  // rails the float path rounded to the other neighbour
  for (std::size_t k = 0; k < n; ++k) {
    ASSERT_TRUE(hilrig_test::rail_matches(rails[2 * k], want[k].real() * 32767)) << k;
    ASSERT_TRUE(hilrig_test::rail_matches(rails[2 * k + 1], want[k].imag() * 32767)) << k;
    tipped += (rails[2 * k] != std::nearbyint(want[k].real() * 32767)) + (rails[2 * k + 1] != std::nearbyint(want[k].imag() * 32767));
  }
  EXPECT_LT(tipped, 2 * n / 100);
  // A frame further on (an overflow skipped the ones between) has the phase of its own ticks.
  std::vector<std::int16_t> late(2 * 16);
  const std::uint64_t tick = 1'000'000'007;
  src.fill(tick, 16, 1, hilrig::SampleFormat::sc16, late.data());
  const hilrig::rf::ChannelPath path(spec.channel, kRfFsHz);
  const cd v = path.distort(hilrig::rf::tones_at(spec.tones, tick + 3, kRfFsHz), tick + 3) + spec.channel.dc_offset;
  EXPECT_NEAR(late[6], std::nearbyint(v.real() * 32767), 1.0);
  EXPECT_NEAR(late[7], std::nearbyint(v.imag() * 32767), 1.0);
}

// The noise too: drawn in batches and handed out in order, so frames of any size get the
// samples one block would (the deterministic part is per aligned block of ticks).
TEST(RfSignal, NoisyFramesAreTheSameWhereverTheyAreCut) {
  auto spec = impaired_two_tones();
  spec.channel.snr_db = 20;
  spec.channel.seed = 3;
  const std::size_t n = 5000;
  hilrig::rf::SignalSource whole(spec, kRfFsHz), cut(spec, kRfFsHz);
  std::vector<std::int16_t> a(2 * n), b(2 * n);
  whole.fill(0, n, 1, hilrig::SampleFormat::sc16, a.data());
  std::size_t at = 0;
  for (std::uint32_t len : {1u, 333u, 1000u, 7u, 1024u, 2635u}) {
    cut.fill(at, len, 1, hilrig::SampleFormat::sc16, b.data() + 2 * at);
    at += len;
  }
  ASSERT_EQ(at, n);
  EXPECT_EQ(a, b);
}

// The ziggurat's normals over 20 seeds: each rail's mean, variance, kurtosis and tail mass
// as a standard normal's, and I and Q uncorrelated.
TEST(RfChannel, NoiseIsGaussianOverTwentySeeds) {
  constexpr std::size_t n = 1 << 18;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    hilrig::rf::ComplexGaussian g(seed);
    double s1 = 0, s2 = 0, s4 = 0, iq = 0;
    std::size_t beyond2 = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const cd z = g() * std::sqrt(2.0);
      for (double v : {z.real(), z.imag()}) {
        s1 += v, s2 += v * v, s4 += v * v * v * v;
        beyond2 += std::abs(v) > 2;
      }
      iq += z.real() * z.imag();
    }
    const double m = 2.0 * n;
    EXPECT_NEAR(s1 / m, 0.0, 5 / std::sqrt(m)) << seed;
    EXPECT_NEAR(s2 / m, 1.0, 5 * std::sqrt(2 / m)) << seed;         // var(v^2) = 2
    EXPECT_NEAR(s4 / m, 3.0, 5 * std::sqrt(96 / m)) << seed;        // var(v^4) = 105 - 9
    EXPECT_NEAR(double(beyond2) / m, 0.0455003, 5 * std::sqrt(0.0455 / m)) << seed;
    EXPECT_NEAR(iq / double(n), 0.0, 5 / std::sqrt(double(n))) << seed;
  }
}

// Seeds a step of splitmix64's sequence apart (as the phase noise's seed * 0x9e37... + c
// are, one channel seed to the next) give unrelated normals, not the same ones a few
// places on: the generator mixes its seed before the sequence starts.
TEST(RfChannel, SeedsAStepApartGiveUnrelatedNoise) {
  constexpr std::uint64_t kStep = 0x9e3779b97f4a7c15ULL;
  for (std::uint64_t seed : {0ULL, 1ULL, 12345ULL}) {
    hilrig::rf::ComplexGaussian a(seed * kStep), b((seed + 1) * kStep);
    std::vector<double> x(4096), y(4096);
    a.normals(x.data(), x.size());
    b.normals(y.data(), y.size());
    for (std::size_t shift = 0; shift < 64; ++shift) {
      std::size_t same = 0;
      for (std::size_t k = 0; k + shift < x.size(); ++k) same += x[k + shift] == y[k];
      EXPECT_LT(same, 4u) << "seed " << seed << " shift " << shift;
    }
  }
}

TEST(RfSignal, StreamNoiseGivesTheInjectedSnrThroughCaptureAndAnalyzer) {
  hilrig::rf::SignalSpec spec;
  spec.tones = {{kRfFreqHz, kRfAmplitude, 0.0}};
  spec.channel.snr_db = 30;
  spec.channel.seed = 11;
  spec.capture_samples = kRfN;
  hilrig::StreamConfig cfg;
  cfg.frame_bytes = 8000;
  const std::uint32_t spf = cfg.samples_per_frame();
  hilrig::rf::SignalSource src(spec, kRfFsHz);
  hilrig::rf::SampleCapture capture(spec.capture_samples, hilrig::SampleFormat::sc16, 1);
  std::vector<std::uint8_t> payload(cfg.payload_bytes());
  hilrig::FrameHeader h;
  h.payload_bytes = cfg.payload_bytes();
  for (std::uint64_t seq = 0; !capture.complete(); ++seq) {
    if (seq == 3) capture.arm();
    if (seq == 20) continue;  // a frame lost: the capture starts again after it
    src.fill(seq * spf, spf, 1, hilrig::SampleFormat::sc16, payload.data());
    h.seq = seq;
    h.sample_tick = seq * spf;
    capture.on_frame(h, payload.data());
  }
  EXPECT_EQ(capture.restarts(), 1u);
  EXPECT_EQ(capture.start_tick(), 21u * spf);
  const auto got = analyze_tone(capture.samples(), kRfFsHz);
  EXPECT_NEAR(got.snr_db, 30.0, 0.3);
  EXPECT_NEAR(got.freq_hz, kRfFreqHz, 0.1);
}

TEST(RfSignal, StreamConfigCarriesTheSignalThroughJson) {
  nlohmann::json partial = {{"direction", "rx"}, {"rate_sps", kRfFsHz}, {"pattern", "signal"},
                            {"transport", {{"kind", "udp"}}}};
  hilrig::StreamConfig c;
  c.rate_sps = kRfFsHz;
  c.pattern = "signal";
  c.signal = impaired_two_tones();
  c.signal.channel.snr_db = 25;
  c.signal.capture_samples = 4096;
  partial["signal"] = hilrig::to_json(c.signal);
  const auto got = hilrig::resolve_stream_config(partial);
  EXPECT_EQ(hilrig::to_json(got)["signal"], hilrig::to_json(c.signal));
  EXPECT_EQ(hilrig::to_json(hilrig::StreamConfig{})["signal"], nullptr);
  partial["signal"]["tones"][0]["frequency_hz"] = kRfFsHz;  // outside the band
  EXPECT_THROW(hilrig::resolve_stream_config(partial), std::invalid_argument);
  partial["signal"] = hilrig::to_json(c.signal);
  partial["direction"] = "tx";  // the device generates it: rx only
  EXPECT_THROW(hilrig::resolve_stream_config(partial), std::invalid_argument);
  partial["direction"] = "rx";
  partial["pattern"] = "counter";  // a signal without pattern "signal"
  EXPECT_THROW(hilrig::resolve_stream_config(partial), std::invalid_argument);
}

}  // namespace
