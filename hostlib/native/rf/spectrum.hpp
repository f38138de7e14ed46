// The windowed power spectrum the tone analyzer reads: a 4-term Blackman-Harris window
// (sidelobes -92 dB, main lobe +-4 bins) and an FFTW transform of one fixed size; and the
// averaged spectrum a report plots of a whole capture (Welch's method over that window).
#pragma once
#include <complex>
#include <memory>
#include <span>
#include <vector>

struct fftw_plan_s;
struct fftwf_plan_s;

namespace hilrig::rf {

// w[i] = a0 - a1 cos(k) + a2 cos(2k) - a3 cos(3k), k = 2 pi i / n, with cos(k) from an
// exact polar per block of sqrt(n) times a table's (a few ulps) and cos(2k), cos(3k) by
// Chebyshev's recurrence from it: one multiply-add chain per sample, not three cosines.
std::vector<double> blackman_harris(std::size_t n);

class PowerSpectrum {
 public:
  explicit PowerSpectrum(std::size_t n);
  ~PowerSpectrum();
  PowerSpectrum(const PowerSpectrum&) = delete;
  PowerSpectrum& operator=(const PowerSpectrum&) = delete;

  // |FFT(x*w)|^2 / sum(w^2) per bin (bin k at k*fs/n, k >= n/2 negative): white noise of
  // variance s gives s in every bin on average, so the mean over bins is the per-sample power.
  std::vector<double> operator()(std::span<const std::complex<double>> x);
  std::size_t size() const { return n_; }

  // The same without the vector: fill input() with x*w (window()), execute(), then
  // power(k) reads bin k of the transform held (in place: the input is overwritten).
  std::complex<double>* input() { return buf_; }
  const double* window() const { return window_->data(); }
  void execute();
  double power(std::size_t k) const { return std::norm(buf_[k]) / window_power_; }
  double window_power() const { return window_power_; }  // sum(w^2)

 private:
  std::size_t n_;
  std::shared_ptr<const std::vector<double>> window_;  // per size, computed once per process
  double window_power_ = 0;  // sum(w^2)
  std::complex<double>* buf_ = nullptr;   // fftw_malloc'd, n_, kept per size once done; the transform is in place
  fftw_plan_s* plan_ = nullptr;           // per size, planned once per process (never destroyed)
};

// The same transform in single precision, in place, for the tone analyzer's residual: the
// capture less its fitted model, the tone already gone. Float's rounding (~1e-7) is relative
// to what is transformed, the residual itself, so it adds a floor ~140 dB below the noise
// being measured; the transform takes ~0.4x a double one's time and half its memory traffic
// (docs/rf.md "Speed"). FFTW_ESTIMATE, planned once per size and process, as PowerSpectrum.
class ResidualTransform {
 public:
  explicit ResidualTransform(std::size_t n);
  ~ResidualTransform();
  ResidualTransform(const ResidualTransform&) = delete;
  ResidualTransform& operator=(const ResidualTransform&) = delete;
  std::complex<float>* input() { return buf_; }  // n values; the transform replaces them
  void execute();
  std::size_t size() const { return n_; }

 private:
  std::size_t n_;
  std::complex<float>* buf_ = nullptr;  // fftwf_malloc'd (SIMD-aligned)
  fftwf_plan_s* plan_ = nullptr;        // per size, planned once per process
};

// Welch's averaged spectrum of x: segments of `size` samples (size <= x.size()) at a hop
// of size/2 (50 % overlap), each windowed by the 4-term Blackman-Harris window, their
// powers averaged per bin. Normalised by the window's coherent gain: a tone of amplitude A
// centred on a bin reads A^2 there (off centre up to 0.83 dB less: the window's
// scalloping), and white noise of variance s reads s * enbw_bins / size per bin.
struct AveragedSpectrum {
  std::vector<double> power;   // per bin, FFT order (bin k at k*fs/size, k >= size/2 negative)
  std::size_t segments = 0;    // how many were averaged
  double enbw_bins = 0;        // the window's equivalent noise bandwidth, in bins (2.004)
};

AveragedSpectrum averaged_spectrum(std::span<const std::complex<double>> x, std::size_t size);

}  // namespace hilrig::rf
