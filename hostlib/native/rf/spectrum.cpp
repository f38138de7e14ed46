#include "hilrig/rf/spectrum.hpp"

#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <numbers>
#include <stdexcept>
#include <string>
#include <utility>

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
  const std::size_t block = std::max<std::size_t>(1, std::size_t(std::sqrt(double(n))));
  std::vector<double> fine_re(block), fine_im(block);
  for (std::size_t r = 0; r < block; ++r) {
    const auto e = std::polar(1.0, 2 * std::numbers::pi * double(r) / double(n));
    fine_re[r] = e.real(), fine_im[r] = e.imag();
  }
  for (std::size_t i0 = 0; i0 < n; i0 += block) {
    const auto a = std::polar(1.0, 2 * std::numbers::pi * double(i0) / double(n));
    const double ar = a.real(), ai = a.imag();
    const std::size_t count = std::min(block, n - i0);
    double* out = w.data() + i0;
    for (std::size_t r = 0; r < count; ++r) {
      const double c1 = ar * fine_re[r] - ai * fine_im[r];
      const double c2 = 2 * c1 * c1 - 1, c3 = c1 * (2 * c2 - 1);
      out[r] = a0 - a1 * c1 + a2 * c2 - a3 * c3;
    }
  }
  return w;
}

namespace {
// What a PowerSpectrum of a size it has seen before reuses. Bounded: plans are small and
// kept per size; windows for the last kWindowSizes sizes; one idle transform buffer (the
// last one given back), so a process holds at most one capture's buffer it is not using.
// Freed at exit, so a leak checker sees nothing left.
struct SizeCache {
  static constexpr std::size_t kWindowSizes = 4;
  std::map<std::size_t, std::shared_ptr<const std::vector<double>>> windows;
  std::map<std::size_t, fftw_plan> plans;  // in place, on fftw_malloc'd (SIMD-aligned) arrays
  std::map<std::size_t, fftwf_plan> float_plans;  // ResidualTransform's, the same way
  std::size_t idle_size = 0;
  std::complex<double>* idle = nullptr;    // the buffer of the last PowerSpectrum gone
  ~SizeCache() {
    fftw_free(idle);
    for (auto& [n, plan] : plans) fftw_destroy_plan(plan);
    for (auto& [n, plan] : float_plans) fftwf_destroy_plan(plan);
  }
};
SizeCache& size_cache() {
  static SizeCache c;
  return c;
}
}  // namespace

PowerSpectrum::PowerSpectrum(std::size_t n) : n_(n) {
  if (n == 0) throw std::invalid_argument("PowerSpectrum: size 0");
  {
    std::lock_guard lock(planner_mutex());
    auto& cache = size_cache();
    if (!cache.windows.contains(n) && cache.windows.size() >= SizeCache::kWindowSizes) cache.windows.clear();
    auto& w = cache.windows[n];
    if (!w) w = std::make_shared<const std::vector<double>>(blackman_harris(n));
    window_ = w;
    // The buffer an earlier PowerSpectrum of this size left, else a new one: a capture
    // analyzed after another of its size takes no page faults (10^7 samples: 160 MB).
    if (cache.idle && cache.idle_size == n) {
      buf_ = std::exchange(cache.idle, nullptr);
    } else {
      buf_ = reinterpret_cast<std::complex<double>*>(fftw_alloc_complex(n));
    }
    if (!buf_) throw std::runtime_error("PowerSpectrum: cannot allocate size " + std::to_string(n));
    auto& plan = cache.plans[n];
    // FFTW_ESTIMATE: no timing runs, so the plan (and its rounding) is the same every time;
    // planned on this buffer, executed on any other of the same alignment (fftw_execute_dft).
    if (!plan)
      plan = fftw_plan_dft_1d(int(n), reinterpret_cast<fftw_complex*>(buf_), reinterpret_cast<fftw_complex*>(buf_),
                              FFTW_FORWARD, FFTW_ESTIMATE);
    plan_ = plan;
    if (!plan_) {
      fftw_free(buf_);
      throw std::runtime_error("PowerSpectrum: FFTW could not plan size " + std::to_string(n));
    }
  }
  for (double v : *window_) window_power_ += v * v;
}

PowerSpectrum::~PowerSpectrum() {
  // Kept for the next PowerSpectrum of this size (the one idle buffer; one held before is freed).
  std::lock_guard lock(planner_mutex());
  auto& cache = size_cache();
  fftw_free(std::exchange(cache.idle, buf_));
  cache.idle_size = n_;
}

void PowerSpectrum::execute() {
  fftw_execute_dft(plan_, reinterpret_cast<fftw_complex*>(buf_), reinterpret_cast<fftw_complex*>(buf_));
}

std::vector<double> PowerSpectrum::operator()(std::span<const std::complex<double>> x) {
  if (x.size() != n_) throw std::invalid_argument("PowerSpectrum: capture size differs from the plan's");
  const double* w = window();
  for (std::size_t i = 0; i < n_; ++i) buf_[i] = x[i] * w[i];
  execute();
  std::vector<double> p(n_);
  for (std::size_t i = 0; i < n_; ++i) p[i] = power(i);
  return p;
}

ResidualTransform::ResidualTransform(std::size_t n) : n_(n) {
  if (n == 0) throw std::invalid_argument("ResidualTransform: size 0");
  buf_ = reinterpret_cast<std::complex<float>*>(fftwf_alloc_complex(n));
  if (!buf_) throw std::runtime_error("ResidualTransform: cannot allocate size " + std::to_string(n));
  std::lock_guard lock(planner_mutex());  // FFTW's planners share its state: one mutex for both precisions
  auto& plan = size_cache().float_plans[n];
  if (!plan)
    plan = fftwf_plan_dft_1d(int(n), reinterpret_cast<fftwf_complex*>(buf_), reinterpret_cast<fftwf_complex*>(buf_),
                             FFTW_FORWARD, FFTW_ESTIMATE);
  plan_ = plan;
  if (!plan_) {
    fftwf_free(buf_);
    throw std::runtime_error("ResidualTransform: FFTW could not plan size " + std::to_string(n));
  }
}

ResidualTransform::~ResidualTransform() { fftwf_free(buf_); }

void ResidualTransform::execute() {
  fftwf_execute_dft(plan_, reinterpret_cast<fftwf_complex*>(buf_), reinterpret_cast<fftwf_complex*>(buf_));
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
