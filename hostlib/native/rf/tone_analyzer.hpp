// The figures of a capture holding one dominant tone (docs/rf.md "The tone analyzer"):
// the algorithm of hostlib/reference/rf.py's analyze_tone, step for step, with FFTW for
// the transforms. Its figures match the reference's on docs/vectors/rf (tests/test_rf.cpp).
#pragma once
#include <complex>
#include <cstddef>
#include <span>
#include <vector>

namespace hilrig::rf {

inline constexpr int kLobeBins = 5;          // bins either side of a peak that hold its Blackman-Harris main lobe
inline constexpr int kHarmonics[] = {2, 3, 4, 5};  // at +-k*f, folded into the band
inline constexpr std::size_t kMinToneSamples = 64;
// A capture longer than this is read as Welch-averaged segments of this many samples (the
// coarse peak's and the residual's spectra); its frequency and sine fit stay the whole
// capture's (docs/rf.md "Long captures"). The reference's TONE_SEGMENT_SAMPLES.
inline constexpr std::size_t kToneSegmentSamples = std::size_t(1) << 16;
inline constexpr std::size_t kCoarseSegments = 8;                        // the coarse peak's segments
inline constexpr std::size_t kMediumBlock = kToneSegmentSamples / 16;    // the medium search's block sums

// Where the segments of `size` samples start: ceil(n / size) of them spread evenly from the
// capture's start to its end (the last ends at n). Throws for size 0 or above n.
std::vector<std::size_t> tone_segment_starts(std::size_t n, std::size_t size);

struct ToneAnalysis {
  double freq_hz = 0;
  double power_dbfs = 0;
  double snr_db = 0;        // tone / noise (harmonics, image, spurs and DC set aside)
  double sinad_db = 0;      // tone / everything else but DC
  double sfdr_dbc = 0;      // tone / the largest other component (image, or the residual's largest lobe); +inf: none
  double thd_dbc = 0;       // harmonics 2..5 / tone; -inf: none above the noise
  double image_dbc = 0;     // the tone's image at -f / tone
  double dc_dbfs = 0;
  double iq_gain_db = 0;    // the imbalance that explains the image: Q rail gain, skew
  double iq_phase_deg = 0;
  double noise_dbfs = 0;    // noise power over the band
  std::size_t n = 0;
};

// Throws std::invalid_argument for fewer than kMinToneSamples samples or fs_hz <= 0.
// aside_hz: other components known to be there (a multitone's other tones): their lobes
// are set aside from the noise, as the harmonics' are (they stay spurs for SFDR).
ToneAnalysis analyze_tone(std::span<const std::complex<double>> x, double fs_hz, std::span<const double> aside_hz = {});

}  // namespace hilrig::rf
