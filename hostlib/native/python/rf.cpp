// hostlib._native's RF face: the core's tone analyzer and channel model on numpy arrays
// (complex128, C-contiguous; anything else is converted by pybind11). The work runs
// without the GIL.
#include <pybind11/complex.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <span>
#include <tuple>

#include "hilrig/rf/channel.hpp"
#include "hilrig/rf/modulation.hpp"
#include "hilrig/rf/phase_noise.hpp"
#include "hilrig/rf/signal.hpp"
#include "hilrig/rf/spectrum.hpp"
#include "hilrig/rf/tone_analyzer.hpp"

namespace py = pybind11;

namespace {

using cd = std::complex<double>;
using CArray = py::array_t<cd, py::array::c_style | py::array::forcecast>;

std::span<const cd> samples(const CArray& x) {
  if (x.ndim() != 1) throw py::value_error("expected a 1-D array of complex samples");
  return {x.data(), std::size_t(x.shape(0))};
}

py::dict analysis_dict(const hilrig::rf::ToneAnalysis& a) {
  py::dict d;
  d["freq_hz"] = a.freq_hz;
  d["power_dbfs"] = a.power_dbfs;
  d["snr_db"] = a.snr_db;
  d["sinad_db"] = a.sinad_db;
  d["sfdr_dbc"] = a.sfdr_dbc;
  d["thd_dbc"] = a.thd_dbc;
  d["image_dbc"] = a.image_dbc;
  d["dc_dbfs"] = a.dc_dbfs;
  d["iq_gain_db"] = a.iq_gain_db;
  d["iq_phase_deg"] = a.iq_phase_deg;
  d["noise_dbfs"] = a.noise_dbfs;
  d["n"] = a.n;
  return d;
}

py::dict truth_dict(const hilrig::rf::ToneTruth& t) {
  py::dict d;
  d["freq_hz"] = t.freq_hz;
  d["power_dbfs"] = t.power_dbfs;
  d["snr_db"] = t.snr_db;
  d["image_dbc"] = t.image_dbc;
  d["spur_dbc"] = t.spur_dbc;
  d["dc_dbfs"] = t.dc_dbfs;
  return d;
}

hilrig::rf::ModulationSpec modulation_spec(const std::string& scheme, unsigned sps, double rolloff, double amplitude,
                                           std::uint64_t payload_seed) {
  const auto s = hilrig::rf::scheme_from_name(scheme);
  if (!s) throw py::value_error("scheme must be qpsk, 16qam or 64qam, got " + scheme);
  if (sps < hilrig::rf::kMinSamplesPerSymbol || sps > hilrig::rf::kMaxSamplesPerSymbol)
    throw py::value_error("samples_per_symbol must be in [2, 64]");
  if (!(rolloff > 0 && rolloff <= 1)) throw py::value_error("rolloff must be in (0, 1]");
  return {*s, sps, rolloff, amplitude, payload_seed};
}

CArray complex_array(const std::vector<cd>& x) {
  CArray out(py::ssize_t(x.size()));
  std::copy(x.begin(), x.end(), out.mutable_data());
  return out;
}

}  // namespace

void hilrig_bind_rf(py::module_& m) {
  // The core's bounds the DSL checks a case against (hostlib/dsl/rf.py), from here rather than copied.
  m.attr("RF_FRAME_SYMBOLS") = py::int_(hilrig::rf::kFrameSymbols);
  m.attr("RF_MIN_SAMPLES_PER_SYMBOL") = py::int_(hilrig::rf::kMinSamplesPerSymbol);
  m.attr("RF_MAX_SAMPLES_PER_SYMBOL") = py::int_(hilrig::rf::kMaxSamplesPerSymbol);
  m.attr("RF_MAX_LINEWIDTH_OF_RATE") = py::float_(hilrig::rf::kMaxLinewidthOfRate);
  m.attr("RF_MAX_MODEM_SCO_PPM") = py::float_(hilrig::rf::kMaxModemScoPpm);
  // The tone analyzer's segment (tone_analyzer.hpp); the reference's TONE_SEGMENT_SAMPLES, COARSE_SEGMENTS, MEDIUM_BLOCK.
  m.attr("RF_TONE_SEGMENT_SAMPLES") = py::int_(hilrig::rf::kToneSegmentSamples);
  m.attr("RF_COARSE_SEGMENTS") = py::int_(hilrig::rf::kCoarseSegments);
  m.attr("RF_MEDIUM_BLOCK") = py::int_(hilrig::rf::kMediumBlock);
  m.def("rf_max_modem_cfo_hz", &hilrig::rf::max_modem_cfo_hz, py::arg("fs_hz"), py::arg("samples_per_symbol"),
        "The largest carrier offset the modulation analyzer acquires, with room (rf::max_modem_cfo_hz).");
  m.def("rf_modem_cfo_reach_hz", &hilrig::rf::modem_cfo_reach_hz, py::arg("fs_hz"), py::arg("samples_per_symbol"),
        "The modulation analyzer's carrier search reach: an offset beyond it is misread (rf::modem_cfo_reach_hz).");
  m.def(
      "rf_min_modem_samples",
      [](unsigned samples_per_symbol) {
        hilrig::rf::ModulationSpec spec;
        spec.samples_per_symbol = samples_per_symbol;
        return hilrig::rf::min_modem_samples(spec);
      },
      py::arg("samples_per_symbol"),
      "The shortest capture the modulation analyzer takes: two frames and the RRC's span (rf::min_modem_samples).");
  m.def(
      "analyze_tone",
      [](const CArray& x, double fs_hz, const std::vector<double>& aside_hz) {
        auto s = samples(x);
        hilrig::rf::ToneAnalysis a;
        {
          py::gil_scoped_release release;
          a = hilrig::rf::analyze_tone(s, fs_hz, aside_hz);
        }
        return analysis_dict(a);
      },
      py::arg("x"), py::arg("fs_hz"), py::arg("aside_hz") = std::vector<double>{},
      "The figures of a capture holding one dominant tone (the fields of hostlib.reference.rf.ToneAnalysis), "
      "by the reference's algorithm with FFTW (docs/rf.md).");

  m.def(
      "rf_spectrum",
      [](const CArray& x, std::size_t size) {
        auto s = samples(x);
        hilrig::rf::AveragedSpectrum a;
        {
          py::gil_scoped_release release;
          a = hilrig::rf::averaged_spectrum(s, size);
        }
        py::array_t<double> power(py::ssize_t(a.power.size()));
        std::copy(a.power.begin(), a.power.end(), power.mutable_data());
        py::dict d;
        d["power"] = power;
        d["segments"] = a.segments;
        d["enbw_bins"] = a.enbw_bins;
        return d;
      },
      py::arg("x"), py::arg("size"),
      "Welch's averaged spectrum of x: {power (float64 per bin, FFT order; a tone centred on a bin reads A^2), "
      "segments, enbw_bins}: segments of `size` samples, 4-term Blackman-Harris, 50 % overlap (docs/rf.md).");

  py::class_<hilrig::rf::Channel>(m, "RfChannel",
                                  "The core's RF channel: hostlib.reference.rf.Channel's impairments, in its order; "
                                  "the noise is the core's own seeded generator (xoshiro256++, ziggurat).")
      .def(py::init([](double gain_db, std::optional<double> snr_db, double cfo_hz, double iq_gain_db,
                       double iq_phase_deg, cd dc_offset, double c3, std::uint64_t seed, double sco_ppm,
                       double delay_samples, double phase_noise_hz) {
             hilrig::rf::Channel c;
             c.gain_db = gain_db;
             c.snr_db = snr_db;
             c.cfo_hz = cfo_hz;
             c.iq_gain_db = iq_gain_db;
             c.iq_phase_deg = iq_phase_deg;
             c.dc_offset = dc_offset;
             c.c3 = c3;
             c.seed = seed;
             c.sco_ppm = sco_ppm;
             c.delay_samples = delay_samples;
             c.phase_noise_hz = phase_noise_hz;
             return c;
           }),
           py::kw_only(), py::arg("gain_db") = 0.0, py::arg("snr_db") = py::none(), py::arg("cfo_hz") = 0.0,
           py::arg("iq_gain_db") = 0.0, py::arg("iq_phase_deg") = 0.0, py::arg("dc_offset") = cd{},
           py::arg("c3") = 0.0, py::arg("seed") = 0, py::arg("sco_ppm") = 0.0, py::arg("delay_samples") = 0.0,
           py::arg("phase_noise_hz") = 0.0)
      .def(
          "apply",
          [](const hilrig::rf::Channel& c, const CArray& x, double fs_hz) {
            auto s = samples(x);
            std::vector<cd> y;
            {
              py::gil_scoped_release release;
              y = c.apply(s, fs_hz);
            }
            CArray out(py::ssize_t(y.size()));
            std::copy(y.begin(), y.end(), out.mutable_data());
            return out;
          },
          py::arg("x"), py::arg("fs_hz"))
      .def(
          "tone_truth",
          [](const hilrig::rf::Channel& c, double freq_hz, double amplitude, double fs_hz, std::size_t capture_samples) {
            return truth_dict(c.tone_truth(freq_hz, amplitude, fs_hz, capture_samples));
          },
          py::arg("freq_hz"), py::arg("amplitude"), py::arg("fs_hz") = 0.0, py::arg("capture_samples") = 0);

  py::class_<hilrig::rf::SignalSource>(m, "RfSignalSource",
                                       "The simulator's stream-rate source (pattern \"signal\"): tones through the "
                                       "channel, quantised to sc16 frame payloads (rf/signal.hpp).")
      .def(py::init([](const std::vector<std::tuple<double, double, double>>& tones, const hilrig::rf::Channel& channel,
                       double fs_hz) {
             hilrig::rf::SignalSpec spec;
             for (auto [f, a, phase] : tones) spec.tones.push_back({f, a, phase});
             spec.channel = channel;
             return std::make_unique<hilrig::rf::SignalSource>(spec, fs_hz);
           }),
           py::arg("tones"), py::arg("channel"), py::arg("fs_hz"))
      .def(
          "fill_frames",
          [](hilrig::rf::SignalSource& src, std::uint64_t first_tick, std::uint32_t frames,
             std::uint32_t samples_per_frame, std::optional<py::array_t<std::int16_t, py::array::c_style>> into) {
            const std::size_t rails = std::size_t(2) * frames * samples_per_frame;
            py::array_t<std::int16_t, py::array::c_style> out =
                into ? *into : py::array_t<std::int16_t, py::array::c_style>(py::ssize_t(rails));
            if (std::size_t(out.size()) < rails)
              throw py::value_error("fill_frames: `into` holds " + std::to_string(out.size()) + " rails, " +
                                    std::to_string(rails) + " are needed");
            auto* p = out.mutable_data();
            {
              py::gil_scoped_release release;
              for (std::uint32_t f = 0; f < frames; ++f)
                src.fill(first_tick + std::uint64_t(f) * samples_per_frame, samples_per_frame, 1,
                         hilrig::SampleFormat::sc16, p + std::size_t(2) * f * samples_per_frame);
            }
            return out;
          },
          py::arg("first_tick"), py::arg("frames"), py::arg("samples_per_frame"), py::arg("into") = py::none(),
          "Frames of samples_per_frame ticks from first_tick on, one channel, sc16: the interleaved rails "
          "(int16, I then Q), frame after frame as the simulator builds them; into a given array (its first "
          "2*frames*samples_per_frame rails) or a new one.")
      .def_property_readonly("noise_sigma", &hilrig::rf::SignalSource::noise_sigma);

  m.def(
      "rf_multitone",
      [](std::size_t n, const std::vector<std::pair<double, double>>& tones, double fs_hz) {
        std::vector<hilrig::rf::ToneSpec> spec;
        for (auto [f, a] : tones) spec.push_back({f, a, 0.0});
        auto x = hilrig::rf::multitone(n, spec, fs_hz);
        CArray out(py::ssize_t(x.size()));
        std::copy(x.begin(), x.end(), out.mutable_data());
        return out;
      },
      py::arg("n"), py::arg("tones"), py::arg("fs_hz"),
      "Samples 0..n-1 of the sum of tones [(frequency_hz, amplitude), ...] (complex128): the simulator's "
      "signal before the channel (hostlib.reference.rf.multitone).");

  m.def(
      "rf_tone",
      [](std::size_t n, double freq_hz, double fs_hz, double amplitude, double phase_rad) {
        auto x = hilrig::rf::tone(n, freq_hz, fs_hz, amplitude, phase_rad);
        CArray out(py::ssize_t(x.size()));
        std::copy(x.begin(), x.end(), out.mutable_data());
        return out;
      },
      py::arg("n"), py::arg("freq_hz"), py::arg("fs_hz"), py::arg("amplitude") = 0.5, py::arg("phase_rad") = 0.0,
      "A*exp(j(2*pi*freq_hz/fs_hz*n + phase_rad)), n = 0..n-1 (complex128).");

  m.def(
      "rf_modem_frame",
      [](const std::string& scheme, unsigned sps, double rolloff, double amplitude, std::uint64_t payload_seed) {
        const auto spec = modulation_spec(scheme, sps, rolloff, amplitude, payload_seed);
        const auto f = hilrig::rf::modem_frame(spec);
        py::dict d;
        d["symbols"] = complex_array(f.symbols);
        d["bits"] = py::array_t<std::uint8_t>(py::ssize_t(f.bits.size()), f.bits.data());
        d["samples"] = complex_array(f.samples);
        d["taps"] = hilrig::rf::rrc_taps(sps, rolloff);
        d["constellation"] = complex_array(hilrig::rf::constellation(spec.scheme));
        return d;
      },
      py::arg("scheme"), py::arg("samples_per_symbol"), py::arg("rolloff"), py::arg("amplitude"),
      py::arg("payload_seed"),
      "One period of a modulated signal (hostlib.reference.modem.modem_frame): symbols, payload bits, samples, "
      "the RRC taps and the scheme's ideal points.");

  m.def(
      "analyze_modulation",
      [](const CArray& x, double fs_hz, const std::string& scheme, unsigned sps, double rolloff, double amplitude,
         std::uint64_t payload_seed, std::uint64_t start_tick) {
        const auto spec = modulation_spec(scheme, sps, rolloff, amplitude, payload_seed);
        auto s = samples(x);
        if (s.size() < hilrig::rf::min_modem_samples(spec))
          throw py::value_error("analyze_modulation: fewer samples than two frames");
        hilrig::rf::ModemAnalysis a;
        {
          py::gil_scoped_release release;
          a = hilrig::rf::analyze_modulation(s, fs_hz, spec, start_tick);
        }
        py::dict d;
        d["evm_rms_pct"] = a.evm_rms_pct;
        d["evm_peak_pct"] = a.evm_peak_pct;
        d["evm_rms_db"] = a.evm_rms_db;
        d["mer_db"] = a.mer_db;
        d["ber"] = a.ber;
        d["bit_errors"] = a.bit_errors;
        d["bits"] = a.bits;
        d["symbols"] = a.symbols;
        d["cfo_hz"] = a.cfo_hz;
        d["phase_rad"] = a.phase_rad;
        d["gain_db"] = a.gain_db;
        d["preamble_sample"] = a.preamble_sample;
        d["timing_offset_samples"] = a.timing_offset_samples;
        d["sco_ppm"] = a.sco_ppm;
        d["constellation"] = complex_array(a.constellation);
        return d;
      },
      py::arg("x"), py::arg("fs_hz"), py::arg("scheme"), py::arg("samples_per_symbol"), py::arg("rolloff"),
      py::arg("amplitude"), py::arg("payload_seed"), py::arg("start_tick") = 0,
      "The figures of a capture of a modulated signal (the fields of hostlib.reference.modem.ModemAnalysis): "
      "EVM, MER, bit errors, the carrier and the symbol timing found (docs/rf.md \"Modulated signals\"); "
      "start_tick: the stream tick of the capture's first sample.");
}
