// The tone analyzer on captures longer than its segment (kToneSegmentSamples): Welch-averaged
// spectra, the medium search, the whole capture's frequency and fit (docs/rf.md "Long
// captures"). The injected truth is what it measures, over seeds, as for a short capture.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

#include "hilrig/rf/channel.hpp"
#include "hilrig/rf/tone_analyzer.hpp"

namespace {

using hilrig::rf::analyze_tone;
using hilrig::rf::Channel;
using hilrig::rf::tone;

constexpr double kFsHz = 1e6;
constexpr double kFreqHz = kFsHz * 0.1234567;
constexpr double kAmplitude = 0.5;
// Three segments and a part: the last segment overlaps the one before it.
constexpr std::size_t kLongN = 3 * hilrig::rf::kToneSegmentSamples + 4321;

TEST(RfLongCapture, SegmentsCoverTheCaptureEvenlyEndToEnd) {
  const auto starts = hilrig::rf::tone_segment_starts(kLongN, hilrig::rf::kToneSegmentSamples);
  ASSERT_EQ(starts.size(), 4u);
  EXPECT_EQ(starts.front(), 0u);
  EXPECT_EQ(starts.back() + hilrig::rf::kToneSegmentSamples, kLongN);
  for (std::size_t k = 1; k < starts.size(); ++k) EXPECT_LE(starts[k] - starts[k - 1], hilrig::rf::kToneSegmentSamples);
  EXPECT_EQ(hilrig::rf::tone_segment_starts(4096, 4096), std::vector<std::size_t>{0});
  EXPECT_THROW(hilrig::rf::tone_segment_starts(100, 101), std::invalid_argument);
}

TEST(RfLongCapture, SnrAndPowerWithin0p3DbOfTheInjectedOverSeeds) {
  const auto x = tone(kLongN, kFreqHz, kFsHz, kAmplitude);
  for (double snr_db : {10.0, 40.0})
    for (std::uint64_t seed = 0; seed < 4; ++seed) {
      Channel ch;
      ch.snr_db = snr_db;
      ch.seed = seed;
      const auto got = analyze_tone(ch.apply(x, kFsHz), kFsHz);
      EXPECT_NEAR(got.snr_db, snr_db, 0.3) << "seed " << seed;
      EXPECT_NEAR(got.power_dbfs, ch.tone_truth(kFreqHz, kAmplitude).power_dbfs, 0.05) << "seed " << seed;
      EXPECT_EQ(got.n, kLongN);
    }
}

TEST(RfLongCapture, FrequencyErrorWithinTwiceTheCramerRaoBoundOfTheWholeCapture) {
  // The whole capture's bound, not a segment's (sqrt(N^3) times finer): the medium search
  // must land in the right bin of the whole capture's periodogram every time.
  constexpr int seeds = 20;
  constexpr double snr_db = 20;
  Channel ch;
  ch.cfo_hz = 123.4;
  ch.snr_db = snr_db;
  const double truth = ch.tone_truth(kFreqHz, kAmplitude).freq_hz;
  const auto x = tone(kLongN, kFreqHz, kFsHz, kAmplitude);
  double sum2 = 0;
  for (int s = 0; s < seeds; ++s) {
    ch.seed = std::uint64_t(s);
    const double e = analyze_tone(ch.apply(x, kFsHz), kFsHz).freq_hz - truth;
    sum2 += e * e;
  }
  const double n = double(kLongN);
  const double crb_hz = std::sqrt(6 / (std::pow(10.0, snr_db / 10) * n * (n * n - 1))) * kFsHz / (2 * std::numbers::pi);
  EXPECT_LE(std::sqrt(sum2 / seeds), 2 * crb_hz);
}

TEST(RfLongCapture, SfdrThdAndImageWithin1DbOfTheInjected) {
  const auto x = tone(kLongN, kFreqHz, kFsHz, kAmplitude);
  for (std::uint64_t seed : {3, 4}) {
    Channel ch;
    ch.c3 = -std::pow(10.0, -60.0 / 20) * 4 / (kAmplitude * kAmplitude);
    ch.iq_gain_db = 0.05;  // an image at about -51 dBc: above the cubic's spur
    ch.snr_db = 80;
    ch.seed = seed;
    const auto truth = ch.tone_truth(kFreqHz, kAmplitude);
    ASSERT_TRUE(truth.spur_dbc && truth.image_dbc);
    const auto got = analyze_tone(ch.apply(x, kFsHz), kFsHz);
    EXPECT_NEAR(got.thd_dbc, *truth.spur_dbc, 1.0) << "seed " << seed;
    EXPECT_NEAR(got.image_dbc, *truth.image_dbc, 1.0) << "seed " << seed;
    EXPECT_NEAR(got.sfdr_dbc, -*truth.image_dbc, 1.0) << "seed " << seed;
  }
}

TEST(RfLongCapture, ATwoSegmentCaptureIsNotTheWholeTransformsButAgreesWithIt) {
  // Just over a segment: two heavily overlapping segments. The figures of the same
  // noise-free tone match the one-transform path's on the capture's first segment.
  const std::size_t n = hilrig::rf::kToneSegmentSamples + 1;
  Channel ch;
  ch.snr_db = 60;
  ch.seed = 9;
  const auto y = ch.apply(tone(n, kFreqHz, kFsHz, kAmplitude), kFsHz);
  const auto longer = analyze_tone(y, kFsHz);
  const auto one = analyze_tone(std::span(y).first(hilrig::rf::kToneSegmentSamples), kFsHz);
  EXPECT_NEAR(longer.snr_db, one.snr_db, 0.1);
  EXPECT_NEAR(longer.freq_hz, one.freq_hz, kFsHz / double(n) * 0.01);
  EXPECT_NEAR(longer.power_dbfs, one.power_dbfs, 0.001);
}

}  // namespace
