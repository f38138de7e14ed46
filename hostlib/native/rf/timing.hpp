// The receiver's sampling instants: a sample-clock offset (SCO) and a fractional delay,
// applied to the signal before the channel's other impairments (docs/rf.md "Timing:
// sample-clock offset and fractional delay"). Output sample n is the input read at
//   t_n = n / (1 + sco_ppm * 1e-6) - delay_samples
// by a 32-tap Kaiser-windowed sinc (beta 8) whose taps for a fraction mu of a sample are
// blended linearly between two rows of a table of kPhases + 1 rows. Stateless: sample n
// depends on n and the input around t_n only, so a stream cut into frames gets the same
// samples as one block. hostlib/reference/rf.py `timing` is the same arithmetic.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

namespace hilrig::rf {

class TimingStage;
namespace timing_detail {
// A group's sums over the taps (timing.cpp).
template <class T, class V>
struct LoadedTaps;
// read()'s loop with V, a vector of T, for the lanes, Taps summing a group (timing.cpp).
template <class T, class V, class Taps = LoadedTaps<T, V>>
void read_groups(const TimingStage& stage, std::uint64_t n0, std::size_t count, const T* in_re, const T* in_im,
                 std::int64_t first, T* out_re, T* out_im);
}  // namespace timing_detail

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

  // Outputs are computed a group at a time, one lane each: 8 doubles or 16 floats (two
  // 32-byte vectors, or one AVX-512 register); kGroup is the most of either.
  template <class T>
  static constexpr std::size_t kLanes = 64 / sizeof(T);
  static constexpr std::size_t kGroup = kLanes<float>;

  // The input ticks outputs n0 .. n0+count-1 read (count >= 1): [first, first + size), with
  // kGroup - 1 ticks of slack at the end that read() loads for lanes it then discards.
  struct Reads {
    std::int64_t first;
    std::size_t size;
  };
  Reads reads(std::uint64_t n0, std::size_t count) const {
    constexpr std::int64_t kBefore = kTaps / 2 - 1, kAfter = kTaps / 2;
    const std::int64_t b0 = where(n0).base, b1 = where(n0 + count - 1).base;  // bases move monotonically with n
    const std::int64_t first = std::min(b0, b1) - kBefore;
    return {first, std::size_t(std::max(b0, b1) + kAfter - first + 1) + kGroup - 1};
  }

  // Outputs n0 .. n0+count-1, y_n = sum_k h_k(mu) x(base - 15 + k), from the input as rails
  // in_re/in_im holding ticks reads(n0, count).first on (reads(...).size of them at least).
  // kLanes<T> consecutive outputs that share a table row and a base offset (an SCO moves
  // them every ~1/(kPhases*|eps|) outputs) are one vector lane each: lane j blends its taps
  // a_k + frac_j*(b_k - a_k) and sums k = 0..31 in order. Every output's arithmetic is its
  // own lane's, so sample n is the same whatever block or group computed it. The reference
  // sums in its own order: the two agree to rounding, not bit for bit. T is double
  // (Channel::apply) or float (the stream's SignalSource, from the table rounded to float).
  template <class T>
  void read(std::uint64_t n0, std::size_t count, const T* in_re, const T* in_im, std::int64_t first, T* out_re,
            T* out_im) const;

  // The filter's taps for a fraction mu in [0, 1] (the table's blend, as read() takes them):
  // the modulation analyzer's interpolator, the tests' and the reference's.
  static std::array<double, kTaps> taps(double mu);

 private:
  template <class T, class V, class Taps>
  friend void timing_detail::read_groups(const TimingStage&, std::uint64_t, std::size_t, const T*, const T*,
                                         std::int64_t, T*, T*);
  // (kPhases + 1) rows of kTaps, built once per process on first use.
  static const std::vector<double>& table();
  // kPhases rows of row p and row p + 1 less row p of table(), in T, interleaved by row:
  // row p's kTaps values, then its kTaps differences.
  template <class T>
  static const std::vector<T>& rows();
  double ratio_, delay_;
  bool active_;
};

}  // namespace hilrig::rf
