// The receiver's sampling instants: a sample-clock offset (SCO) and a fractional delay,
// applied to the signal before the channel's other impairments (docs/rf.md "Timing:
// sample-clock offset and fractional delay"). Output sample n is the input read at
//   t_n = n / (1 + sco_ppm * 1e-6) - delay_samples
// by a 32-tap Kaiser-windowed sinc (beta 8) whose taps for a fraction mu of a sample are
// blended linearly between two rows of a table of kPhases + 1 rows. Stateless: sample n
// depends on n and the input around t_n only, so a stream cut into frames gets the same
// samples as one block. hostlib/reference/rf.py `timing` is the same arithmetic.
#pragma once
#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

namespace hilrig::rf {

class TimingStage {
 public:
  static constexpr int kTaps = 32;       // input samples base - 15 .. base + 16
  static constexpr int kPhases = 256;    // table rows for mu = 0, 1/256, ..., 1
  static constexpr double kBeta = 8.0;   // Kaiser window

  TimingStage(double sco_ppm, double delay_samples);
  bool active() const { return active_; }

  // Where output n reads: input index base - 15 .. base + 16, at base + mu.
  struct Read {
    std::int64_t base;
    double mu;  // [0, 1]
  };
  Read where(std::uint64_t n) const {
    // t_n = n - s, s = n * eps/(1+eps) + D: n*r is small, so its fraction keeps its precision
    // at n = 10^12 where n/(1+eps) would not.
    const double s = double(n) * ratio_ + delay_;
    const double q = std::floor(s);
    return {std::int64_t(n) - std::int64_t(q) - 1, 1.0 - (s - q)};
  }

  // y = sum_k h_k(mu) x(base - 15 + k); x(m) for any signed m (zero outside the signal).
  template <class Input>
  std::complex<double> at(std::uint64_t n, Input&& x) const {
    const Read r = where(n);
    const double pos = r.mu * kPhases;
    int row = int(pos);
    if (row >= kPhases) row = kPhases - 1;
    const double frac = pos - row;
    const double* h0 = &table_[std::size_t(row) * kTaps];
    const double* h1 = h0 + kTaps;
    // Four partial sums a rail (taps k = 4i + j into sum j): the adds no longer wait on each
    // other; the reference sums in its own order, so the two agree to rounding, not bit for bit.
    double re[4] = {}, im[4] = {};
    const std::int64_t first = r.base - (kTaps / 2 - 1);
    for (int k = 0; k < kTaps; k += 4) {
      for (int j = 0; j < 4; ++j) {
        const double h = h0[k + j] + frac * (h1[k + j] - h0[k + j]);
        const std::complex<double> v = x(first + k + j);
        re[j] += h * v.real();
        im[j] += h * v.imag();
      }
    }
    return {(re[0] + re[1]) + (re[2] + re[3]), (im[0] + im[1]) + (im[2] + im[3])};
  }

  // The same over a block x[0, size) read as zero outside it; taps wholly inside it read
  // the block directly (the same arithmetic, no per-tap bounds check).
  std::complex<double> at_block(std::uint64_t n, const std::complex<double>* x, std::size_t size) const {
    const Read r = where(n);
    const std::int64_t first = r.base - (kTaps / 2 - 1);
    if (first < 0 || first + kTaps > std::int64_t(size))
      return at(n, [x, size](std::int64_t m) {
        return m >= 0 && std::size_t(m) < size ? x[std::size_t(m)] : std::complex<double>{};
      });
    return at(n, [p = x + first, first](std::int64_t m) { return p[m - first]; });
  }

  // The filter's taps for a fraction mu (the table's blend): for tests and the reference.
  // An active stage's only (an inactive one builds no table; nor do at() and at_block()
  // apply to it).
  std::array<double, kTaps> taps(double mu) const;

 private:
  double ratio_, delay_;
  bool active_;
  std::vector<double> table_;  // (kPhases + 1) rows of kTaps; empty when inactive
};

}  // namespace hilrig::rf
