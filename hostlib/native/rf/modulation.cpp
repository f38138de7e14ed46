#include "hilrig/rf/modulation.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "hilrig/rf/decibel.hpp"
#include "hilrig/rf/phasors.hpp"
#include "hilrig/rf/simd_clones.hpp"
#include "hilrig/rf/timing.hpp"

namespace hilrig::rf {
namespace {

using cd = std::complex<double>;
constexpr double kPi = std::numbers::pi;

constexpr double kCarrierSearchCycles = 1e-3;  // the fine search: +-this many cycles per symbol about the coarse CFO
// The fractional timing: each block of kTimingBlockSymbols its own gain and phase (what the coarse
// CFO leaves turns a block by little); golden section to kTimingToleranceSamples.
constexpr std::size_t kTimingBlockSymbols = 64;
constexpr double kTimingToleranceSamples = 1e-5;

// out[j] += y[j] * w for j < count (complex): one symbol's term of a correlation at every start.
HILRIG_SIMD_CLONES void accumulate_scaled(const cd* __restrict y, std::size_t count, cd w, cd* __restrict out) {
  const double wr = w.real(), wi = w.imag();
  const double* ys = reinterpret_cast<const double*>(y);
  double* o = reinterpret_cast<double*>(out);
  for (std::size_t j = 0; j < count; ++j) {
    const double yr = ys[2 * j], yi = ys[2 * j + 1];
    o[2 * j] += yr * wr - yi * wi;
    o[2 * j + 1] += yr * wi + yi * wr;
  }
}

// The channel's interpolator (rf/timing.hpp) reading y at base + mu, h its taps for mu: sum_k h_k y[base - 15 + k].
cd interpolate(const std::array<double, TimingStage::kTaps>& h, const std::vector<cd>& y, double base) {
  const cd* p = y.data() + std::size_t(base) - (TimingStage::kTaps / 2 - 1);
  cd sum = 0;
  for (int k = 0; k < TimingStage::kTaps; ++k) sum += h[std::size_t(k)] * p[k];
  return sum;
}

unsigned rail_levels(Scheme s) { return 1u << (bits_per_symbol(s) / 2); }
// The rails' scale: levels +-1, +-3, ... of mean power 2(M - 1)/3 over both rails, made 1.
double rail_norm(Scheme s) {
  const double m = double(1u << bits_per_symbol(s));
  return std::sqrt(2 * (m - 1) / 3);
}
unsigned gray_decode(unsigned g) {
  unsigned b = 0;
  for (; g; g >>= 1) b ^= g;
  return b;
}

}  // namespace

std::optional<Scheme> scheme_from_name(const std::string& name) {
  if (name == "qpsk") return Scheme::qpsk;
  if (name == "16qam") return Scheme::qam16;
  if (name == "64qam") return Scheme::qam64;
  return std::nullopt;
}

const char* scheme_name(Scheme s) { return s == Scheme::qpsk ? "qpsk" : s == Scheme::qam16 ? "16qam" : "64qam"; }

int bits_per_symbol(Scheme s) { return s == Scheme::qpsk ? 2 : s == Scheme::qam16 ? 4 : 6; }

std::vector<cd> constellation(Scheme s) {
  const int m = bits_per_symbol(s), half = m / 2;
  const unsigned levels = rail_levels(s);
  const double norm = rail_norm(s);
  auto level = [&](unsigned bits) { return (2.0 * gray_decode(bits) - double(levels - 1)) / norm; };
  std::vector<cd> points(std::size_t(1) << m);
  for (unsigned v = 0; v < points.size(); ++v) points[v] = {level(v >> half), level(v & ((1u << half) - 1))};
  return points;
}

std::vector<cd> preamble_symbols() {
  std::vector<cd> p(kPreambleSymbols);
  unsigned state = 0x7f;
  const cd unit = cd(1, 1) / std::sqrt(2.0);
  for (cd& v : p) {
    const unsigned bit = ((state >> 6) ^ (state >> 5)) & 1u;
    state = ((state << 1) | bit) & 0x7fu;
    v = (1.0 - 2.0 * bit) * unit;
  }
  return p;
}

std::vector<std::uint8_t> prbs23(std::uint64_t seed, std::size_t count) {
  // The seed spread over the state's bits (a golden-ratio multiply): a small seed would
  // start the register nearly empty, and its first thousands of bits mostly zeros.
  std::uint32_t state = std::uint32_t(((seed * 0x9E3779B97F4A7C15ull) >> 41) % ((1u << 23) - 1)) + 1;
  std::vector<std::uint8_t> bits(count);
  for (auto& b : bits) {
    const std::uint32_t bit = ((state >> 22) ^ (state >> 17)) & 1u;
    state = ((state << 1) | bit) & 0x7fffffu;
    b = std::uint8_t(bit);
  }
  return bits;
}

std::vector<double> rrc_taps(unsigned sps, double a) {
  const std::size_t n = kRrcSpanSymbols * sps + 1, half = n / 2;
  std::vector<double> h(n);
  double energy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double t = (double(i) - double(half)) / double(sps);  // in symbols
    double v;
    if (t == 0) {
      v = 1 - a + 4 * a / kPi;
    } else if (std::abs(std::abs(4 * a * t) - 1) < 1e-12) {
      v = a / std::sqrt(2.0) * ((1 + 2 / kPi) * std::sin(kPi / (4 * a)) + (1 - 2 / kPi) * std::cos(kPi / (4 * a)));
    } else {
      v = (std::sin(kPi * t * (1 - a)) + 4 * a * t * std::cos(kPi * t * (1 + a))) /
          (kPi * t * (1 - (4 * a * t) * (4 * a * t)));
    }
    h[i] = v;
    energy += v * v;
  }
  for (double& v : h) v /= std::sqrt(energy);
  return h;
}

ModemFrame modem_frame(const ModulationSpec& spec) {
  const int m = bits_per_symbol(spec.scheme);
  const unsigned sps = spec.samples_per_symbol;
  ModemFrame f;
  f.symbols = preamble_symbols();
  f.bits = prbs23(spec.payload_seed, kPayloadSymbols * std::size_t(m));
  const std::vector<cd> points = constellation(spec.scheme);
  for (std::size_t k = 0; k < kPayloadSymbols; ++k) {
    unsigned v = 0;
    for (int b = 0; b < m; ++b) v = (v << 1) | f.bits[k * std::size_t(m) + std::size_t(b)];
    f.symbols.push_back(points[v]);
  }
  const std::vector<double> h = rrc_taps(sps, spec.rolloff);
  const std::size_t period = kFrameSymbols * sps, half = h.size() / 2;
  const double scale = spec.amplitude * std::sqrt(double(sps));
  f.samples.assign(period, cd{});
  for (std::size_t k = 0; k < kFrameSymbols; ++k)
    for (std::size_t j = 0; j < h.size(); ++j)
      f.samples[(k * sps + period * (1 + h.size() / period) + j - half) % period] += scale * h[j] * f.symbols[k];
  return f;
}

std::size_t min_modem_samples(const ModulationSpec& spec) {
  return 2 * kFrameSymbols * spec.samples_per_symbol + kRrcSpanSymbols * spec.samples_per_symbol;
}

ModemAnalysis analyze_modulation(std::span<const cd> x, double fs_hz, const ModulationSpec& spec,
                                 std::uint64_t start_tick) {
  if (!(fs_hz > 0)) throw std::invalid_argument("analyze_modulation: fs_hz must be > 0");
  if (x.size() < min_modem_samples(spec))
    throw std::invalid_argument("analyze_modulation: " + std::to_string(x.size()) + " samples, fewer than two frames (" +
                                std::to_string(min_modem_samples(spec)) + ")");
  const std::size_t n = x.size(), sps = spec.samples_per_symbol, period = kFrameSymbols * sps;
  const std::vector<double> h = rrc_taps(unsigned(sps), spec.rolloff);
  const std::size_t half = h.size() / 2;
  const ModemFrame frame = modem_frame(spec);
  auto filtered = [&](std::span<const cd> in, std::size_t t) {  // the matched filter's output at sample t
    cd sum = 0;
    for (std::size_t j = 0; j < h.size(); ++j) sum += h[j] * in[t + j - half];
    return sum;
  };

  // 1. Timing to a whole sample and the carrier candidate: the preamble's correlation with
  // the matched filter's output, as the power of 4 segments summed (a CFO turns the whole
  // preamble's sum but hardly a segment's), its symbols turned back by each candidate's
  // offset (c k / 62 cycles at symbol k: exact phases), at every start within one period; the
  // first maximum over candidates (-K first), then starts.
  std::vector<cd> y(n);
  for (std::size_t t = half; t + half < n; ++t) y[t] = filtered(x, t);
  constexpr std::size_t kPreambleUsed = kSegments * kSegmentSymbols;
  constexpr int kWrapSteps = 2 * int(kSegmentSymbols);
  std::vector<cd> turned(kPreambleUsed);  // conj(preamble symbol k) turned back by the candidate
  // Each segment's correlation at every start, summed over its symbols in order (k outer, the
  // starts inner: contiguous reads of y, the same sums as start by start).
  std::array<std::vector<cd>, kSegments> seg;
  for (auto& v : seg) v.resize(period);
  std::size_t tau0 = half;
  int candidate = 0;
  std::array<cd, kSegments> c{};
  double best = -1;
  for (int cand = -kCarrierCandidates; cand <= kCarrierCandidates; ++cand) {
    for (std::size_t k = 0; k < kPreambleUsed; ++k) {
      const int step = ((cand * int(k)) % kWrapSteps + kWrapSteps) % kWrapSteps;
      turned[k] = std::conj(frame.symbols[k]) * std::polar(1.0, -2 * kPi * double(step) / kWrapSteps);
    }
    for (std::size_t i = 0; i < kSegments; ++i) {
      std::fill(seg[i].begin(), seg[i].end(), cd{});
      for (std::size_t k = i * kSegmentSymbols; k < (i + 1) * kSegmentSymbols; ++k)
        accumulate_scaled(y.data() + half + k * sps, period, turned[k], seg[i].data());
    }
    for (std::size_t j = 0; j < period; ++j) {
      double power = 0;
      for (std::size_t i = 0; i < kSegments; ++i) power += std::norm(seg[i][j]);
      if (power > best) {
        best = power, tau0 = half + j, candidate = cand;
        for (std::size_t i = 0; i < kSegments; ++i) c[i] = seg[i][j];
      }
    }
  }
  // 2. Coarse carrier: the candidate's offset and the phase advance left from one segment to the next.
  cd advance = 0;
  for (std::size_t i = 0; i + 1 < kSegments; ++i) advance += c[i + 1] * std::conj(c[i]);
  const double coarse = double(candidate) / double(kWrapSteps * int(sps)) +
                        std::arg(advance) / (2 * kPi * double(kSegmentSymbols * sps));  // cycles per sample

  // 3. The capture turned back by the coarse CFO and matched-filtered wherever the filter fits
  // (zero elsewhere): yd; the nominal symbol instants first + k*sps on tau0's grid within it.
  std::vector<cd> xd(n), yd(n);
  for (std::size_t t = 0; t < n; ++t) {
    const double cycles = coarse * double(t);
    xd[t] = x[t] * std::polar(1.0, -2 * kPi * (cycles - std::floor(cycles)));
  }
  for (std::size_t t = half; t + half < n; ++t) yd[t] = filtered(xd, t);
  const std::size_t first = half + (tau0 - half) % sps;
  const std::size_t nominal = (n - half - first + sps - 1) / sps;
  const std::size_t k0 = (tau0 - first) / sps;  // symbols from the first instant to the preamble
  auto frame_index = [&](std::size_t k) { return (k + kFrameSymbols - k0) % kFrameSymbols; };
  // Whether the interpolator's read at t (inputs floor(t) - 15 .. floor(t) + 16) is all filtered samples.
  auto reads_filtered = [&](double t) {
    const double base = std::floor(t);
    return base - (TimingStage::kTaps / 2 - 1) >= double(half) && base + TimingStage::kTaps / 2 < double(n - half);
  };

  // 4. Timing to a fraction of a sample (data-aided, every symbol known): per segment of about
  // a frame the offset delta of its instants first + k*sps + delta that maximises
  //   F(delta) = sum_b |sum_{k in b} r_k s*_k|^2 / sum_{k in b} |s_k|^2 - sum_k |r_k|^2,
  // r_k the filtered samples read there by the channel's interpolator, b the blocks: -F is
  // the error energy left once each block has its least-squares gain, 0 without noise at the
  // true instants (the RRC pair has no intersymbol interference there), so the maximum is
  // unbiased whatever the symbols. Each segment's search spans half a symbol either side of the
  // one before (the first: of tau0's grid), where F has its one maximum while an SCO moves the
  // instants by less than a quarter symbol a frame (244 ppm); it takes the segment's symbols
  // whose reads stay on filtered samples over the whole span. Then the line offset = a + b*k
  // through the segments' (centre, offset).
  const std::size_t segment_count = std::max<std::size_t>(2, nominal / kFrameSymbols);
  const double reach = double(sps) / 2;
  std::vector<double> centre, offset;
  double previous = 0;
  for (std::size_t j = 0; j < segment_count; ++j) {
    std::size_t lo = j * nominal / segment_count, hi = (j + 1) * nominal / segment_count;
    const double from = previous - reach, to = previous + reach;
    while (lo < hi && !reads_filtered(double(first + lo * sps) + from)) ++lo;
    while (hi > lo && !reads_filtered(double(first + (hi - 1) * sps) + to)) --hi;
    if (hi - lo < kTimingBlockSymbols) continue;  // the capture's edge: too few symbols to time
    auto fit = [&](double delta) {
      const double whole = std::floor(delta);
      const auto taps = TimingStage::taps(delta - whole);
      double explained = 0, power = 0, sent = 0;
      cd sum = 0;
      for (std::size_t k = lo; k < hi; ++k) {
        const cd r = interpolate(taps, yd, double(first + k * sps) + whole);
        const cd s = frame.symbols[frame_index(k)];
        power += std::norm(r);
        sum += r * std::conj(s);
        sent += std::norm(s);
        if ((k - lo + 1) % kTimingBlockSymbols == 0 || k + 1 == hi) explained += std::norm(sum) / sent, sum = 0, sent = 0;
      }
      return explained - power;
    };
    previous = golden_max(fit, from, to, kTimingToleranceSamples);
    offset.push_back(previous);
    centre.push_back((double(lo) + double(hi - 1)) / 2);
  }
  const std::size_t fitted = offset.size();
  double centre_mean = 0, offset_mean = 0;
  for (std::size_t j = 0; j < fitted; ++j) centre_mean += centre[j], offset_mean += offset[j];
  centre_mean /= double(fitted), offset_mean /= double(fitted);
  double sxx = 0, sxy = 0;
  for (std::size_t j = 0; j < fitted; ++j)
    sxx += (centre[j] - centre_mean) * (centre[j] - centre_mean), sxy += (centre[j] - centre_mean) * (offset[j] - offset_mean);
  const double slope = sxx > 0 ? sxy / sxx : 0, intercept = offset_mean - slope * centre_mean;
  auto instant = [&](std::size_t k) { return double(first + k * sps) + intercept + slope * double(k); };

  // 5. The symbols, read on the line wherever the reads are all filtered samples (a contiguous
  // run of k: the line is monotonic).
  std::vector<cd> r, z;
  std::vector<std::size_t> index;  // each symbol's place in the frame
  double sent_power = 0;
  for (std::size_t k = 0; k < nominal; ++k) {
    const double t = instant(k);
    if (!reads_filtered(t)) continue;
    const double whole = std::floor(t);
    const std::size_t at = frame_index(k);
    r.push_back(interpolate(TimingStage::taps(t - whole), yd, whole));
    index.push_back(at);
    z.push_back(r.back() * std::conj(frame.symbols[at]));
    sent_power += std::norm(frame.symbols[at]);
  }
  const std::size_t count = r.size();

  // 6. Fine carrier: the maximum of |sum z_k exp(-j w k)| (every symbol known: the ML
  // estimate), on a grid of a quarter bin, then golden-section to 10^-7 bin.
  const double bin = 2 * kPi / double(count);
  auto magnitude = [&](double w) { return std::abs(Phasors(count, w).dtft(z)); };
  const double range = 2 * kPi * kCarrierSearchCycles, step = bin / 4;
  double w_best = 0, m_best = -1;
  for (double w = -range; w <= range; w += step) {
    const double mag = magnitude(w);
    if (mag > m_best) m_best = mag, w_best = w;
  }
  const double w = golden_max(magnitude, w_best - step, w_best + step, 1e-7 * bin);
  const Phasors turn(count, w);
  const cd sum = turn.dtft(z);
  const double gain = std::abs(sum) / sent_power, phase = std::arg(sum);

  // 7. The payload's symbols, corrected; EVM against the sent symbol, MER against the
  // nearest point, bits by the nearest point.
  const std::vector<cd> e = turn.all(count);
  const cd correct = std::polar(1.0 / gain, -phase);
  const Scheme s = spec.scheme;
  const int m = bits_per_symbol(s), rail_bits = m / 2;
  const double levels = rail_levels(s), norm = rail_norm(s);
  auto rail_index = [&](double v) { return unsigned(std::clamp(std::nearbyint((v * norm + (levels - 1)) / 2), 0.0, levels - 1)); };
  ModemAnalysis a;
  double error_sum = 0, error_peak = 0, decided_sum = 0, decided_error_sum = 0;
  for (std::size_t k = 0; k < count; ++k) {
    if (index[k] < kPreambleSymbols) continue;
    const cd v = r[k] * e[k] * correct;
    const cd sent = frame.symbols[index[k]];
    const double err = std::norm(v - sent);
    error_sum += err;
    error_peak = std::max(error_peak, err);
    const unsigned ii = rail_index(v.real()), qi = rail_index(v.imag());
    const cd decided((2.0 * ii - (levels - 1)) / norm, (2.0 * qi - (levels - 1)) / norm);
    decided_sum += std::norm(decided);
    decided_error_sum += std::norm(v - decided);
    const unsigned got = ((ii ^ (ii >> 1)) << rail_bits) | (qi ^ (qi >> 1));
    const std::size_t p = (index[k] - kPreambleSymbols) * std::size_t(m);
    for (int b = 0; b < m; ++b) a.bit_errors += ((got >> (m - 1 - b)) & 1u) != frame.bits[p + std::size_t(b)];
    ++a.symbols;
    if (a.constellation.size() < kMaxConstellationPoints) a.constellation.push_back(v);
  }
  const double evm = std::sqrt(error_sum / double(a.symbols));  // the constellation's mean power is 1
  a.evm_rms_pct = 100 * evm;
  a.evm_peak_pct = 100 * std::sqrt(error_peak);
  a.evm_rms_db = 20 * std::log10(evm);
  a.mer_db = power_db(decided_sum / decided_error_sum);
  a.bits = a.symbols * std::uint64_t(m);
  a.ber = double(a.bit_errors) / double(a.bits);
  a.cfo_hz = (coarse + w / (2 * kPi * double(sps))) * fs_hz;
  a.phase_rad = phase;
  a.gain_db = 20 * std::log10(gain / (spec.amplitude * std::sqrt(double(sps))));
  a.preamble_sample = tau0;
  // The line in the channel's terms: symbol instants sps*(1 + eps) apart; the preamble at
  // k0 is at stream tick (m*P + D)(1 + eps) for some m (start_tick's multiple of P taken out
  // exactly, so a late capture keeps D's precision).
  const double eps = slope / double(sps);
  double d = double(start_tick % period) - double(start_tick) * (eps / (1 + eps)) + instant(k0) / (1 + eps);
  d -= double(period) * std::floor(d / double(period) + 0.5);
  a.timing_offset_samples = d;
  a.sco_ppm = eps * 1e6;
  return a;
}

}  // namespace hilrig::rf
