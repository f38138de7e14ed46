#include "hilrig/rf/spectrum.hpp"

#include <fftw3.h>

#include <cmath>
#include <mutex>
#include <numbers>
#include <stdexcept>

namespace hilrig::rf {
namespace {
// FFTW's planner (plan creation and destruction) is not thread-safe; fftw_execute is.
std::mutex& planner_mutex() {
  static std::mutex m;
  return m;
}
}  // namespace

std::vector<double> blackman_harris(std::size_t n) {
  constexpr double a0 = 0.35875, a1 = 0.48829, a2 = 0.14128, a3 = 0.01168;
  std::vector<double> w(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double k = 2 * std::numbers::pi * double(i) / double(n);
    w[i] = a0 - a1 * std::cos(k) + a2 * std::cos(2 * k) - a3 * std::cos(3 * k);
  }
  return w;
}

PowerSpectrum::PowerSpectrum(std::size_t n) : n_(n), window_(blackman_harris(n)) {
  if (n == 0) throw std::invalid_argument("PowerSpectrum: size 0");
  for (double v : window_) window_power_ += v * v;
  std::lock_guard lock(planner_mutex());
  in_ = reinterpret_cast<std::complex<double>*>(fftw_alloc_complex(n));
  out_ = reinterpret_cast<std::complex<double>*>(fftw_alloc_complex(n));
  // FFTW_ESTIMATE: no timing runs, so the plan (and its rounding) is the same every time.
  plan_ = fftw_plan_dft_1d(int(n), reinterpret_cast<fftw_complex*>(in_), reinterpret_cast<fftw_complex*>(out_),
                           FFTW_FORWARD, FFTW_ESTIMATE);
  if (!in_ || !out_ || !plan_) throw std::runtime_error("PowerSpectrum: FFTW could not plan size " + std::to_string(n));
}

PowerSpectrum::~PowerSpectrum() {
  std::lock_guard lock(planner_mutex());
  fftw_destroy_plan(plan_);
  fftw_free(in_);
  fftw_free(out_);
}

std::vector<double> PowerSpectrum::operator()(std::span<const std::complex<double>> x) {
  if (x.size() != n_) throw std::invalid_argument("PowerSpectrum: capture size differs from the plan's");
  for (std::size_t i = 0; i < n_; ++i) in_[i] = x[i] * window_[i];
  fftw_execute(plan_);
  std::vector<double> p(n_);
  for (std::size_t i = 0; i < n_; ++i) p[i] = std::norm(out_[i]) / window_power_;
  return p;
}

AveragedSpectrum averaged_spectrum(std::span<const std::complex<double>> x, std::size_t size) {
  if (size == 0 || size > x.size()) throw std::invalid_argument("averaged_spectrum: segment size 0 or above the capture's");
  double sum = 0, sum_sq = 0;
  for (double v : blackman_harris(size)) {
    sum += v;
    sum_sq += v * v;
  }
  PowerSpectrum spectrum_of(size);   // |FFT(x*w)|^2 / sum(w^2)
  AveragedSpectrum out;
  out.power.assign(size, 0.0);
  const std::size_t hop = size / 2 > 0 ? size / 2 : 1;
  for (std::size_t start = 0; start + size <= x.size(); start += hop) {
    const auto p = spectrum_of(x.subspan(start, size));
    for (std::size_t k = 0; k < size; ++k) out.power[k] += p[k];
    ++out.segments;
  }
  // Each segment's bins are |FFT|^2 / sum(w^2); a tone's bin is A^2 sum(w)^2 before that.
  const double to_tone = sum_sq / (sum * sum) / double(out.segments);
  for (double& v : out.power) v *= to_tone;
  out.enbw_bins = double(size) * sum_sq / (sum * sum);
  return out;
}

}  // namespace hilrig::rf
