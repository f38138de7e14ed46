// Modulated RF signals (QPSK, 16QAM, 64QAM) and their analyzer (docs/rf.md "Modulated
// signals"): the frame (a known preamble and a seeded PN payload, Gray-mapped, root-raised-
// cosine shaped, repeated without a gap) and the figures of a capture of it: EVM, MER, bit
// errors, the carrier and the symbol timing (and its drift, the SCO) found. The same waveform
// and estimators as hostlib/reference/modem.py.
#pragma once
#include <complex>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace hilrig::rf {

enum class Scheme { qpsk, qam16, qam64 };

// "qpsk", "16qam", "64qam" (the DSL's and the stream config's names); nullopt: unknown.
std::optional<Scheme> scheme_from_name(const std::string& name);
const char* scheme_name(Scheme s);
int bits_per_symbol(Scheme s);

inline constexpr std::size_t kPreambleSymbols = 127;  // an m-sequence, x^7 + x^6 + 1
inline constexpr std::size_t kFrameSymbols = 1024;    // preamble + payload, one period of the stream
inline constexpr std::size_t kPayloadSymbols = kFrameSymbols - kPreambleSymbols;
inline constexpr std::size_t kRrcSpanSymbols = 16;    // the RRC filter: kRrcSpanSymbols * sps + 1 taps
inline constexpr std::size_t kMaxConstellationPoints = 2048;
inline constexpr unsigned kMinSamplesPerSymbol = 2, kMaxSamplesPerSymbol = 64;
// The largest sample-clock offset the analyzer's timing follows with room: its search holds
// while the instants move by less than a quarter symbol a frame (244 ppm).
inline constexpr double kMaxModemScoPpm = 200;
// The preamble's correlation, for the timing to a whole sample and the coarse carrier: its
// first kSegments * kSegmentSymbols symbols in kSegments segments, their powers added (a
// CFO-tolerant peak).
inline constexpr std::size_t kSegmentSymbols = 31, kSegments = 4;
// The coarse carrier, the phase step from one segment to the next, is unambiguous within
// +-pi: +-fs / (2 * kSegmentSymbols * sps), one wrap (4032 Hz at 1 MS/s and sps 4). The
// search tries 2 * kCarrierCandidates + 1 offsets a wrap apart, c / (2 * kSegmentSymbols)
// cycles a symbol, and keeps the one whose segments hold the most power: the nearest
// leaves less than a wrap, which the coarse estimate measures.
inline constexpr int kCarrierCandidates = 7;
// The search's reach: (kCarrierCandidates + 1) wraps, where the nearest candidate leaves a
// whole wrap (about symbol rate / 7.75: 32.3 kHz at 1 MS/s and sps 4, 2.0 kHz at sps 64).
inline double modem_cfo_reach_hz(double fs_hz, unsigned samples_per_symbol) {
  return (kCarrierCandidates + 1) * fs_hz / (2.0 * double(kSegmentSymbols) * double(samples_per_symbol));
}
// The largest carrier offset the DSL lets a case inject: 0.9 of the reach (docs/rf.md, step 3).
inline double max_modem_cfo_hz(double fs_hz, unsigned samples_per_symbol) {
  return 0.9 * modem_cfo_reach_hz(fs_hz, samples_per_symbol);
}

struct ModulationSpec {
  Scheme scheme = Scheme::qpsk;
  unsigned samples_per_symbol = 4;
  double rolloff = 0.35;         // the RRC's excess bandwidth, (0, 1]
  double amplitude = 0.25;       // RMS of the samples, full scale 1.0 (constellation of unit average power)
  std::uint64_t payload_seed = 1;
};

// The scheme's points, indexed by the symbol's bits read MSB first (I's bits, then Q's),
// Gray-coded per rail, unit average power.
std::vector<std::complex<double>> constellation(Scheme s);
// The preamble: the m-sequence of x^7 + x^6 + 1 (state all ones), bit b -> (1 - 2b)(1 + j)/sqrt(2).
std::vector<std::complex<double>> preamble_symbols();
// `count` bits of PRBS-23 (x^23 + x^18 + 1), its state ((seed * 0x9E3779B97F4A7C15 mod 2^64)
// >> 41) mod (2^23 - 1) + 1.
std::vector<std::uint8_t> prbs23(std::uint64_t seed, std::size_t count);
// The root-raised-cosine filter, unit energy (sum h^2 = 1), kRrcSpanSymbols * sps + 1 taps.
std::vector<double> rrc_taps(unsigned sps, double rolloff);

struct ModemFrame {
  std::vector<std::complex<double>> symbols;  // kFrameSymbols: preamble then payload
  std::vector<std::uint8_t> bits;             // the payload's bits, kPayloadSymbols * bits_per_symbol
  std::vector<std::complex<double>> samples;  // one period, kFrameSymbols * sps: symbol k peaks at sample k * sps
};
// One period of the stream: the frame's symbols times amplitude * sqrt(sps) (so the samples'
// mean power is amplitude^2 for symbols of unit power) through the RRC, circularly.
ModemFrame modem_frame(const ModulationSpec& spec);

struct ModemAnalysis {
  double evm_rms_pct = 0;   // sqrt(mean |c - s|^2) over the payload, s the sent symbol, of unit average power
  double evm_peak_pct = 0;  // max |c - s|
  double evm_rms_db = 0;    // 20 log10(evm_rms)
  double mer_db = 0;        // sum |d|^2 / sum |c - d|^2, d the nearest point (decision-directed)
  double ber = 0;
  std::uint64_t bit_errors = 0, bits = 0, symbols = 0;  // payload symbols measured
  double cfo_hz = 0;        // the carrier frequency offset found
  double phase_rad = 0;     // the carrier phase at the first symbol measured
  double gain_db = 0;       // the symbols' amplitude relative to the sent amplitude * sqrt(sps)
  std::size_t preamble_sample = 0;  // where the first preamble starts in the capture, to a whole sample
  // The symbol timing found, as the channel's: stream symbol j (frame symbol j mod 1024, its
  // instant j*sps in the sent stream) is at received tick (j*sps + timing_offset_samples) *
  // (1 + sco_ppm*1e-6); the offset wrapped to [-P/2, P/2), P the period in samples.
  double timing_offset_samples = 0;
  double sco_ppm = 0;  // the receiver's sample clock against the sender's: > 0 more received samples a symbol
  std::vector<std::complex<double>> constellation;  // the first <= kMaxConstellationPoints corrected payload symbols
};

// The minimum capture: two frames and the filter's span.
std::size_t min_modem_samples(const ModulationSpec& spec);
// start_tick: the stream tick of the capture's first sample (the sent stream's sample t is the
// period's t mod P; only timing_offset_samples depends on it). Throws std::invalid_argument for
// a capture shorter than min_modem_samples or fs_hz <= 0.
ModemAnalysis analyze_modulation(std::span<const std::complex<double>> x, double fs_hz, const ModulationSpec& spec,
                                 std::uint64_t start_tick = 0);

}  // namespace hilrig::rf
