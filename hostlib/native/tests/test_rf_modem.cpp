// The modulated signals (rf/modulation.hpp): the core's frame and analyzer against the
// Python reference's on the shared captures (docs/vectors/rf, index.json "modem_vectors"),
// the simulator's stream, and the EVM against the AWGN theory over many seeds.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hilrig/core/config.hpp"
#include "hilrig/core/frame.hpp"
#include "hilrig/rf/channel.hpp"
#include "hilrig/rf/modulation.hpp"
#include "hilrig/rf/signal.hpp"
#include "rf_stream_match.hpp"

namespace {

using cd = std::complex<double>;
using namespace hilrig::rf;

const std::string kModemVectors = std::string(HILRIG_VECTORS_DIR) + "/rf";

std::vector<char> modem_read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::vector<cd> modem_read_ci16(const nlohmann::json& v) {
  const auto bytes = modem_read_bytes(kModemVectors + "/" + v["file"].get<std::string>());
  const auto n = v["n"].get<std::size_t>();
  EXPECT_EQ(bytes.size(), n * 4);
  std::vector<cd> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::int16_t iq[2];
    std::memcpy(iq, bytes.data() + 4 * i, 4);
    x[i] = {iq[0] / 32767.0, iq[1] / 32767.0};
  }
  return x;
}

ModulationSpec spec_of(const nlohmann::json& m) {
  ModulationSpec s;
  s.scheme = *scheme_from_name(m["scheme"].get<std::string>());
  s.samples_per_symbol = m["samples_per_symbol"].get<unsigned>();
  s.rolloff = m["rolloff"].get<double>();
  s.amplitude = m["amplitude"].get<double>();
  s.payload_seed = m["payload_seed"].get<std::uint64_t>();
  return s;
}

nlohmann::json modem_index() { return nlohmann::json::parse(modem_read_bytes(kModemVectors + "/index.json")); }

// The stream's samples [start, start + n): the frame's period repeated.
std::vector<cd> modem_stream(const ModemFrame& f, std::size_t start, std::size_t n) {
  std::vector<cd> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = f.samples[(start + i) % f.samples.size()];
  return x;
}

TEST(RfModem, ConstellationsAreGrayCodedWithUnitPower) {
  for (Scheme s : {Scheme::qpsk, Scheme::qam16, Scheme::qam64}) {
    const auto points = constellation(s);
    double power = 0;
    for (const cd& p : points) power += std::norm(p);
    EXPECT_NEAR(power / double(points.size()), 1.0, 1e-12) << scheme_name(s);
    // Gray: the nearest neighbours along a rail differ in one bit.
    double step = 1e9;
    for (std::size_t a = 0; a < points.size(); ++a)
      for (std::size_t b = a + 1; b < points.size(); ++b) step = std::min(step, std::abs(points[a] - points[b]));
    for (std::size_t a = 0; a < points.size(); ++a) {
      for (std::size_t b = a + 1; b < points.size(); ++b) {
        if (std::abs(std::abs(points[a] - points[b]) - step) > 1e-9) continue;
        EXPECT_EQ(__builtin_popcount(unsigned(a ^ b)), 1) << scheme_name(s) << " " << a << " " << b;
      }
    }
  }
}

TEST(RfModem, PreambleIsAnMSequenceWithFlatPeriodicAutocorrelation) {
  const auto p = preamble_symbols();
  ASSERT_EQ(p.size(), kPreambleSymbols);
  for (std::size_t lag = 1; lag < p.size(); ++lag) {
    cd sum = 0;
    for (std::size_t k = 0; k < p.size(); ++k) sum += p[(k + lag) % p.size()] * std::conj(p[k]);
    EXPECT_NEAR(sum.real(), -1.0, 1e-9) << lag;  // an m-sequence: -1 off the peak of 127
  }
}

TEST(RfModem, FrameReproducesTheSharedCaptureTo1Lsb) {
  const auto index = modem_index();
  bool seen = false;
  for (const auto& v : index["modem_vectors"]) {
    if (v["name"] != "qam16_frame_clean_ci16") continue;
    seen = true;
    const auto stored = modem_read_ci16(v);
    const ModemFrame f = modem_frame(spec_of(v["modulation"]));
    ASSERT_EQ(f.samples.size(), stored.size());
    double worst = 0, power = 0;
    for (std::size_t i = 0; i < stored.size(); ++i) {
      worst = std::max({worst, std::abs(f.samples[i].real() - stored[i].real()),
                        std::abs(f.samples[i].imag() - stored[i].imag())});
      power += std::norm(f.samples[i]);
    }
    EXPECT_LE(worst * 32767, 0.5 + 1e-6);  // rounding to the nearest LSB
    EXPECT_NEAR(power / double(stored.size()), 0.25 * 0.25, 0.25 * 0.25 * 0.05);  // symbols of mean power ~1
  }
  EXPECT_TRUE(seen);
}

TEST(RfModem, AnalyzerReproducesTheReferencesFiguresOnTheSharedCaptures) {
  const auto index = modem_index();
  const auto& tol = index["modem_tolerance"];
  int checked = 0;
  for (const auto& v : index["modem_vectors"]) {
    if (!v.contains("expected")) continue;
    ++checked;
    const auto& e = v["expected"];
    const ModemAnalysis a = analyze_modulation(modem_read_ci16(v), v["fs_hz"].get<double>(), spec_of(v["modulation"]));
    const std::string name = v["name"];
    EXPECT_EQ(a.preamble_sample, e["preamble_sample"].get<std::size_t>()) << name;
    EXPECT_EQ(a.symbols, e["symbols"].get<std::uint64_t>()) << name;
    EXPECT_EQ(a.bit_errors, e["bit_errors"].get<std::uint64_t>()) << name;
    EXPECT_NEAR(a.evm_rms_pct, e["evm_rms_pct"].get<double>(), tol["evm_pct"].get<double>()) << name;
    EXPECT_NEAR(a.evm_peak_pct, e["evm_peak_pct"].get<double>(), tol["evm_pct"].get<double>()) << name;
    EXPECT_NEAR(a.mer_db, e["mer_db"].get<double>(), tol["db"].get<double>()) << name;
    EXPECT_NEAR(a.gain_db, e["gain_db"].get<double>(), tol["db"].get<double>()) << name;
    EXPECT_NEAR(a.cfo_hz, e["cfo_hz"].get<double>(), tol["cfo_hz"].get<double>()) << name;
    EXPECT_NEAR(a.phase_rad, e["phase_rad"].get<double>(), tol["phase_rad"].get<double>()) << name;
    EXPECT_NEAR(a.timing_offset_samples, e["timing_offset_samples"].get<double>(), tol["timing_samples"].get<double>())
        << name;
    EXPECT_NEAR(a.sco_ppm, e["sco_ppm"].get<double>(), tol["sco_ppm"].get<double>()) << name;
    const auto& head = e["constellation_head"];
    for (std::size_t k = 0; k < head.size(); ++k) {
      EXPECT_NEAR(a.constellation[k].real(), head[k][0].get<double>(), tol["constellation"].get<double>());
      EXPECT_NEAR(a.constellation[k].imag(), head[k][1].get<double>(), tol["constellation"].get<double>());
    }
  }
  EXPECT_EQ(checked, 3);
}

// The simulator's source (SignalSource) carries the modulation: its frames hold the frame's
// period, wherever the stream is cut, through the channel's deterministic part.
TEST(RfModem, SignalSourceRepeatsTheFramesPeriod) {
  SignalSpec spec;
  spec.modulation = ModulationSpec{Scheme::qam64, 4, 0.35, 0.25, 5};
  spec.capture_samples = 1u << 14;
  SignalSource source(spec, 1e6);
  const ModemFrame f = modem_frame(*spec.modulation);
  std::vector<std::int16_t> payload(2 * 1000);
  const std::uint64_t first = 4096 * 3 + 17;
  source.fill(first, 1000, 1, hilrig::SampleFormat::sc16, payload.data());
  for (std::size_t k = 0; k < 1000; ++k) {
    const cd want = f.samples[(first + k) % f.samples.size()] * 32767.0;
    EXPECT_TRUE(hilrig_test::rail_matches(payload[2 * k], want.real())) << k;
    EXPECT_TRUE(hilrig_test::rail_matches(payload[2 * k + 1], want.imag())) << k;
  }
}

TEST(RfModem, StreamConfigCarriesTheModulationThroughJson) {
  SignalSpec spec;
  spec.modulation = ModulationSpec{Scheme::qam16, 8, 0.25, 0.3, 42};
  spec.channel.snr_db = 20;
  spec.capture_samples = 1u << 16;
  nlohmann::json partial = {{"direction", "rx"}, {"rate_sps", 1e6}, {"pattern", "signal"},
                            {"transport", {{"kind", "udp"}}}, {"signal", hilrig::to_json(spec)}};
  EXPECT_EQ(hilrig::to_json(hilrig::resolve_stream_config(partial))["signal"], hilrig::to_json(spec));
  partial["signal"]["capture_samples"] = min_modem_samples(*spec.modulation) - 1;  // fewer than two frames
  EXPECT_THROW(hilrig::resolve_stream_config(partial), std::invalid_argument);
  partial["signal"] = hilrig::to_json(spec);
  partial["signal"]["modulation"]["scheme"] = "8psk";
  EXPECT_THROW(hilrig::resolve_stream_config(partial), std::invalid_argument);
  partial["signal"] = hilrig::to_json(spec);
  partial["signal"]["modulation"]["samples_per_symbol"] = 1;
  EXPECT_THROW(hilrig::resolve_stream_config(partial), std::invalid_argument);
  partial["signal"] = hilrig::to_json(spec);
  partial["signal"]["tones"] = nlohmann::json::array({{{"frequency_hz", 1e3}, {"amplitude", 0.1}, {"phase_rad", 0}}});
  EXPECT_THROW(hilrig::resolve_stream_config(partial), std::invalid_argument);  // tones or a modulation
}

TEST(RfModem, CaptureShorterThanTwoFramesIsRefused) {
  const ModulationSpec spec;
  std::vector<cd> x(min_modem_samples(spec) - 1);
  EXPECT_THROW(analyze_modulation(x, 1e6, spec), std::invalid_argument);
}

// The bound: EVM RMS within 0.3 percentage points of the AWGN theory,
// sqrt(P / (A^2 snr)) (P the block's mean power, A = amplitude * sqrt(sps): the symbol SNR
// is sps times the per-sample SNR), for QPSK/16QAM/64QAM at 10..40 dB, on every seed;
// a CFO of 1234.5 Hz at 1 MS/s, the capture starting anywhere in the frame.
TEST(RfModem, EvmMatchesTheAwgnTheoryOnEverySeed) {
#if defined(__SANITIZE_ADDRESS__)
  constexpr int kSeeds = 2;  // the sanitizers check the memory; the sweep runs in the plain build
#else
  constexpr int kSeeds = 20;
#endif
  for (Scheme s : {Scheme::qpsk, Scheme::qam16, Scheme::qam64}) {
    for (double snr : {10.0, 20.0, 30.0, 40.0}) {
      double worst = 0;
      for (int seed = 1; seed <= kSeeds; ++seed) {
        const ModulationSpec spec{s, 4, 0.35, 0.25, std::uint64_t(seed)};
        const auto x = modem_stream(modem_frame(spec), std::size_t(seed) * 797, std::size_t(1) << 16);
        double power = 0;
        for (const cd& v : x) power += std::norm(v);
        power /= double(x.size());
        Channel c;
        c.snr_db = snr;
        c.cfo_hz = 1234.5;
        c.seed = std::uint64_t(seed) * 1000 + std::uint64_t(snr);
        const ModemAnalysis a = analyze_modulation(c.apply(x, 1e6), 1e6, spec);
        const double theory = 100 * std::sqrt(power / std::pow(10.0, snr / 10) / (0.25 * 0.25 * 4));
        worst = std::max(worst, std::abs(a.evm_rms_pct - theory));
        EXPECT_NEAR(a.evm_rms_pct, theory, 0.3) << scheme_name(s) << " snr " << snr << " seed " << seed;
        EXPECT_NEAR(a.cfo_hz, 1234.5, 5.0) << scheme_name(s) << " snr " << snr << " seed " << seed;
        EXPECT_GE(a.symbols, 14000u);  // the payload's share of 16384 symbols
      }
      std::printf("[ RfModem ] %s %2.0f dB: worst |EVM - theory| %.3f pp over %d seeds\n", scheme_name(s), snr, worst,
                  kSeeds);
    }
  }
}

// The carrier offset the DSL allows (max_modem_cfo_hz: 0.9 of the search's reach,
// kCarrierCandidates + 1 wraps) is acquired at sps 4 and 64, at 3 and 30 dB, either sign, at
// the bound and between two candidates (3.5 wraps), the bits right (sps 4: every seed; sps 64,
// 16x longer: one seed at 3 dB); past the reach (1.05 of it) it is not (one seed each), so the
// bound is where the analyzer's range ends, not an arbitrary one.
TEST(RfModem, CarrierIsAcquiredUpToTheStatedOffsetAndNotPastTheSearchsReach) {
#if defined(__SANITIZE_ADDRESS__)
  constexpr int kSeeds = 2;
#else
  constexpr int kSeeds = 5;
#endif
  constexpr double kFs = 1e6;
  for (unsigned sps : {4u, 64u}) {
    const ModulationSpec spec{Scheme::qpsk, sps, 0.35, 0.25, 3};
    const auto x = modem_stream(modem_frame(spec), 777, min_modem_samples(spec) + 8 * sps);
    const double wrap = kFs / (62.0 * sps), reach = (kCarrierCandidates + 1) * wrap;
    EXPECT_NEAR(max_modem_cfo_hz(kFs, sps), 0.9 * reach, 1e-9);
    for (double snr : {3.0, 30.0})
      for (double sign : {1.0, -1.0})
        for (int seed = 1; seed <= (sps == 4 ? kSeeds : snr < 10 ? 1 : 0); ++seed) {  // sps 64: 16x longer, 3 dB
          Channel c;
          c.snr_db = snr;
          c.seed = std::uint64_t(seed);
          for (double offset : {max_modem_cfo_hz(kFs, sps), 3.5 * wrap}) {
            c.cfo_hz = sign * offset;
            const ModemAnalysis in = analyze_modulation(c.apply(x, kFs), kFs, spec);
            EXPECT_NEAR(in.cfo_hz, c.cfo_hz, 1.0) << "sps " << sps << " snr " << snr << " seed " << seed;
            EXPECT_LT(in.ber, 0.01) << "sps " << sps << " snr " << snr << " seed " << seed;  // a wrong carrier: ~0.5
          }
          if (seed > 1) continue;  // past the reach: one seed shows it
          c.cfo_hz = sign * 1.05 * reach;
          const ModemAnalysis past = analyze_modulation(c.apply(x, kFs), kFs, spec);
          EXPECT_GT(std::abs(past.cfo_hz - c.cfo_hz), wrap) << "sps " << sps << " snr " << snr << " seed " << seed;
        }
  }
}

// The fractional timing (docs/rf.md "The modulation analyzer", step 4): under a fractional
// delay and a sample-clock offset, apart and together, the EVM is the AWGN theory's within the
// issue's 0.3 percentage points (as RfModem.EvmMatchesTheAwgnTheoryOnEverySeed) and the delay
// and the SCO found are the channel's, for QPSK and 16QAM at 20 and 30 dB on every seed. Short
// captures (4 frames and the filter's span) keep the sweep fast; the bounds are about 4x the
// worst error measured over the seeds.
TEST(RfModem, FractionalDelayAndScoAreFoundAndLeaveTheAwgnEvm) {
#if defined(__SANITIZE_ADDRESS__)
  constexpr int kSeeds = 1;  // the sanitizers check the memory; the sweep runs in the plain build
#else
  constexpr int kSeeds = 20;
#endif
  struct Timing {
    double delay_samples, sco_ppm;
  };
  const Timing timings[] = {{0.37, 0}, {1.5, 0}, {0, 20}, {0, -20}, {0.37, 20}, {1.5, -20}};
  const std::size_t n = min_modem_samples(ModulationSpec{}) * 2;  // 4 frames and the filter's span at sps 4
  for (Scheme s : {Scheme::qpsk, Scheme::qam16}) {
    for (double snr : {20.0, 30.0}) {
      for (const Timing& tm : timings) {
        double worst_evm = 0, worst_delay = 0, worst_sco = 0;
        for (int seed = 1; seed <= kSeeds; ++seed) {
          const ModulationSpec spec{s, 4, 0.35, 0.25, std::uint64_t(seed)};
          const std::size_t start = std::size_t(seed) * 797;
          const auto x = modem_stream(modem_frame(spec), start, n);
          double power = 0;
          for (const cd& v : x) power += std::norm(v);
          power /= double(x.size());
          Channel c;
          c.snr_db = snr;
          c.cfo_hz = -1234.5;
          c.delay_samples = tm.delay_samples;
          c.sco_ppm = tm.sco_ppm;
          c.seed = std::uint64_t(seed) * 1000 + std::uint64_t(snr);
          const ModemAnalysis a = analyze_modulation(c.apply(x, 1e6), 1e6, spec);
          const double theory = 100 * std::sqrt(power / std::pow(10.0, snr / 10) / (0.25 * 0.25 * 4));
          // The channel's block starts at the period's sample `start`: the stream's grid is D - start late.
          const double period = double(kFrameSymbols * 4);
          double delay_error = a.timing_offset_samples - (tm.delay_samples - double(start));
          delay_error -= period * std::nearbyint(delay_error / period);
          worst_evm = std::max(worst_evm, std::abs(a.evm_rms_pct - theory));
          worst_delay = std::max(worst_delay, std::abs(delay_error));
          worst_sco = std::max(worst_sco, std::abs(a.sco_ppm - tm.sco_ppm));
          const std::string what = std::string(scheme_name(s)) + " snr " + std::to_string(snr) + " delay " +
                                   std::to_string(tm.delay_samples) + " sco " + std::to_string(tm.sco_ppm) +
                                   " seed " + std::to_string(seed);
          EXPECT_NEAR(a.evm_rms_pct, theory, 0.3) << what;
          EXPECT_NEAR(delay_error, 0, snr == 20 ? 0.02 : 0.01) << what;
          EXPECT_NEAR(a.sco_ppm, tm.sco_ppm, snr == 20 ? 2.0 : 1.0) << what;
          EXPECT_NEAR(a.cfo_hz, -1234.5, 5.0) << what;
          EXPECT_EQ(a.bit_errors, 0u) << what;
        }
        std::printf("[ RfModem ] %s %2.0f dB, delay %.2f, sco %+.0f ppm: worst |EVM - theory| %.3f pp, |delay error| "
                    "%.4f samples, |sco error| %.3f ppm over %d seeds\n",
                    scheme_name(s), snr, tm.delay_samples, tm.sco_ppm, worst_evm, worst_delay, worst_sco, kSeeds);
      }
    }
  }
}

// The timing follows a drift of several symbols (200 ppm over 2^16 samples: 13 samples), a
// segment at a time: the symbols stay on their line to the capture's end.
TEST(RfModem, TimingFollowsADriftOfSeveralSymbols) {
  const ModulationSpec spec{Scheme::qpsk, 4, 0.35, 0.25, 3};
  const auto x = modem_stream(modem_frame(spec), 0, std::size_t(1) << 16);
  double power = 0;
  for (const cd& v : x) power += std::norm(v);
  power /= double(x.size());
  const double theory = 100 * std::sqrt(power / 1000 / (0.25 * 0.25 * 4));
  for (double ppm : {200.0, -200.0}) {
    Channel c;
    c.snr_db = 30;
    c.cfo_hz = 300;
    c.sco_ppm = ppm;
    c.delay_samples = 0.5;
    c.seed = 5;
    const ModemAnalysis a = analyze_modulation(c.apply(x, 1e6), 1e6, spec);
    EXPECT_NEAR(a.evm_rms_pct, theory, 0.3) << ppm;
    EXPECT_NEAR(a.sco_ppm, ppm, 0.5) << ppm;
    EXPECT_NEAR(a.timing_offset_samples, 0.5, 0.01) << ppm;
    EXPECT_EQ(a.bit_errors, 0u) << ppm;
    EXPECT_GE(a.symbols, 14000u) << ppm;
  }
}

}  // namespace
