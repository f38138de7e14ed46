// Seeded complex white Gaussian noise: the same samples for the same seed on every
// platform whose libm rounds exp/log correctly (no std::*_distribution, whose algorithms
// the standard leaves to the library). Not numpy's generator: the channel's noise is
// statistically, not sample-for-sample, the reference's.
//
// Each rail is one standard normal from Marsaglia and Tsang's ziggurat (128 layers, with
// Doornik's independent layer index and uniform, "An improved ziggurat method", 2005): 32
// random bits (7 for the layer, 25 for the uniform), a table look-up and a compare for
// 97.2 % of samples; the rest (the top layer's cap, the wedges, the tail) are settled
// after the batch: a squeeze by chord and tangents, the wedge's exp for a sliver, the
// tail's logs, so the distribution is the exact normal (rejection, not an approximation),
// each value then rounded to float (the fast path's product u*x in float, its test against
// the ratio rounded toward zero so that it accepts only points inside the rectangle; the
// slow path decides the rest in double). The bits come from eight xoshiro256++ generators
// (Blackman and Vigna) run side by side as one vector, seeded through splitmix64; the slow
// path's wedge heights and redraws from a splitmix64 counter, one word per draw settled a
// round (in the order of the batch), its tail from a ninth xoshiro256++. Which values come
// out is fixed by the code below, whatever vectors the host has (the rounding of a squeeze
// test may differ in its last bit where a copy fuses a multiply-add). Normals are made
// kBatch at a time and handed out in order, so a stream cut into frames draws the same
// noise as one block.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace hilrig::rf {

class ComplexGaussian;
namespace gaussian_detail {
// The fields of a layer's row as the slow path reads them: outer and inner edge, their
// densities, the chord's slope, the ratio, the shape (-1 concave, 1 convex, 0 both), 1 for
// the base layer.
enum RowField { kOuterX, kInnerX, kOuterDensity, kInnerDensity, kSlope, kRatio, kConcavity, kBase };
// What a round of the slow path reads and writes (ComplexGaussian::settle_round's).
struct SettleRound {
  const double* rows;  // 8 doubles a layer
  std::uint32_t* pending_at;
  std::uint32_t* pending_r;
  const std::uint64_t* words;  // one a draw
  float* batch;
  ComplexGaussian* generator;
  double (*tail)(ComplexGaussian&, bool negative);
};
// settle_round's arithmetic eight draws at a time where the host has AVX-512; else
// kNotWide, and the caller runs settle_round (gaussian.cpp).
inline constexpr std::size_t kNotWide = ~std::size_t(0);
std::size_t settle_round_wide(const SettleRound& round, std::size_t count);
}  // namespace gaussian_detail

class ComplexGaussian {
 public:
  explicit ComplexGaussian(std::uint64_t seed) {
    auto mix = [](std::uint64_t z) {  // splitmix64's output function, a bijection
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      return z ^ (z >> 31);
    };
    // The seed is mixed before it starts splitmix64's sequence: seeds a multiple of the
    // sequence's step apart (as seed * 0x9e37... + c are) would otherwise start the same
    // sequence a few words apart, and so give the same generators in shifted lanes.
    std::uint64_t at = mix(seed);
    auto splitmix = [&at, &mix] {  // never all zero
      at += 0x9e3779b97f4a7c15ULL;
      return mix(at);
    };
    for (auto* state : {&state_, &spare_state_})
      for (auto& word : *state)
        for (std::uint64_t& lane : word) lane = splitmix();
    for (std::uint64_t& w : slow_) w = splitmix();
  }

  // One sample of E|z|^2 = 1 (1/2 per rail).
  std::complex<double> operator()() {
    const double i = normal(), q = normal();
    return {i * kRail, q * kRail};
  }
  // iq[k] += sigma * sqrt(1/2) * g_k for k < count (rails, not samples), g the next count
  // standard normals: interleaved rails (I, Q, I, ...) get complex samples of
  // E|z|^2 = sigma^2.
  void add(double* iq, std::size_t count, double sigma) {
    const double s = sigma * kRail;
    while (count > 0) {
      if (used_ == kBatch) refill();
      const std::size_t m = std::min(count, kBatch - used_);
      const float* g = batch_.data() + used_;
      for (std::size_t k = 0; k < m; ++k) iq[k] += s * double(g[k]);
      used_ += m, iq += m, count -= m;
    }
  }
  // The same on separate rails: re[k] gets normal 2k, im[k] normal 2k+1 (T double or float).
  template <class T>
  void add(T* re, T* im, std::size_t count, double sigma) {
    add(re, im, re, im, count, sigma);
  }
  // out[k] = in[k] + the same (in and out the same rails, or apart). Always inlined: the
  // stream's callers are built per instruction set, and a copy of its own would be the
  // baseline's.
  template <class T>
  [[gnu::always_inline]] void add(const T* in_re, const T* in_im, T* re, T* im, std::size_t count, double sigma) {
    const T s = T(sigma * kRail);
    while (count > 0) {
      if (used_ == kBatch) refill();
      if (used_ % 2 == 0) {  // whole pairs from the batch (kBatch is even)
        const std::size_t m = std::min(count, (kBatch - used_) / 2);
        const float* g = batch_.data() + used_;
        for (std::size_t k = 0; k < m; ++k) re[k] = in_re[k] + s * T(g[2 * k]), im[k] = in_im[k] + s * T(g[2 * k + 1]);
        used_ += 2 * m, in_re += m, in_im += m, re += m, im += m, count -= m;
      } else {  // a pair across batches
        *re++ = *in_re++ + s * T(normal());
        *im++ = *in_im++ + s * T(normal());
        --count;
      }
    }
  }
  // The next count standard normals, in order (as count calls of normal()), in double or
  // as the generator's floats.
  template <class T>
  void normals(T* out, std::size_t count) {
    while (count > 0) {
      if (used_ == kBatch) refill();
      const std::size_t m = std::min(count, kBatch - used_);
      std::copy(batch_.data() + used_, batch_.data() + used_ + m, out);
      used_ += m, out += m, count -= m;
    }
  }
  // A standard normal (mean 0, variance 1): the next of the batch.
  double normal() {
    if (used_ == kBatch) refill();
    return double(batch_[used_++]);
  }

 private:
  static constexpr int kLayers = 128;
  static constexpr double kR = 3.442619855899;          // the base layer's edge
  static constexpr double kV = 9.91256303526217e-3;     // each layer's area
  static constexpr double kRail = 0.70710678118654752440;  // sqrt(1/2)
  static constexpr std::size_t kLanes = 8;        // xoshiro256++ generators side by side
  static constexpr std::size_t kBatch = 1024;     // normals per refill: kBatch / 2 draws of 64 bits
  static constexpr std::size_t kSettleLanes = 8;  // the slow path's verdicts a vector at a time, at most

  struct Tables {
    std::array<double, kLayers + 1> x{};  // layer edges: x[0] = V/f(R) (the base with its tail), x[1] = R, x[128] = 0
    std::array<double, kLayers> ratio{};  // x[i+1]/x[i]: |u| below it is inside layer i's rectangle
    std::array<double, kLayers + 1> density{};  // exp(-x[i]^2/2)
    // The density exp(-x^2/2) is concave for |x| < 1 and convex beyond: over a wedge that
    // lies on one side, its chord is below (concave) or above it (convex).
    enum class Shape : std::uint8_t { concave, convex, both };
    std::array<Shape, kLayers> shape{};
    std::array<double, kLayers> slope{};  // of the wedge's chord
    std::array<float, kLayers> x_float{};       // x[i] rounded to float: the fast path's
    std::array<float, kLayers> ratio_float{};   // ratio[i] rounded toward zero
    // Layer i's figures in one row of a cache line, as the slow path reads them (kRow*).
    struct alignas(64) Row {
      double v[8];
    };
    std::array<Row, kLayers> row{};
    Tables() {
      double f = std::exp(-0.5 * kR * kR);
      x[0] = kV / f;
      x[1] = kR;
      x[kLayers] = 0;
      for (int i = 2; i < kLayers; ++i) {
        x[std::size_t(i)] = std::sqrt(-2 * std::log(kV / x[std::size_t(i - 1)] + f));
        f = std::exp(-0.5 * x[std::size_t(i)] * x[std::size_t(i)]);
      }
      for (int i = 0; i < kLayers; ++i) ratio[std::size_t(i)] = x[std::size_t(i + 1)] / x[std::size_t(i)];
      for (int i = 0; i <= kLayers; ++i) density[std::size_t(i)] = std::exp(-0.5 * x[std::size_t(i)] * x[std::size_t(i)]);
      for (std::size_t i = 0; i < std::size_t(kLayers); ++i) {
        shape[i] = x[i] <= 1 ? Shape::concave : x[i + 1] >= 1 ? Shape::convex : Shape::both;
        slope[i] = (density[i] - density[i + 1]) / (x[i] - x[i + 1]);
        x_float[i] = float(x[i]);
        ratio_float[i] = float(ratio[i]);
        if (double(ratio_float[i]) > ratio[i]) ratio_float[i] = std::nextafter(ratio_float[i], 0.0f);
        row[i] = {{x[i], x[i + 1], density[i], density[i + 1], slope[i], ratio[i],
                   shape[i] == Shape::concave ? -1.0 : shape[i] == Shape::convex ? 1.0 : 0.0, i == 0 ? 1.0 : 0.0}};
      }
    }
  };
  static const Tables& tables() {
    static const Tables t;
    return t;
  }

  // The next kBatch normals: the generators' draws and the fast path over them, then the
  // draws that missed it settled (gaussian.cpp).
  void refill();
  // The first `count` of pending_at_ (batch positions) with their draws pending_r_, in
  // rounds: each draw's verdict (inside its layer's rectangle, under the density by the
  // squeeze or exp, in the tail, or out) computed kSettleLanes at a time, each with a
  // spare word (a wedge's height from its high half; a draw out is drawn anew from its low
  // half for the next round), in order (gaussian.cpp).
  void settle(std::size_t count);
  // One round over the first count pending draws, four at a time (or eight:
  // gaussian_detail::settle_round_wide); returns how many were out (now the first of
  // pending_).
  std::size_t settle_round(std::size_t count);
  static double tail_of(ComplexGaussian& g, bool negative) { return g.tail(negative); }
  enum Verdict : std::uint8_t { kAccept, kReject, kUndecided, kTail };
  // Beyond R (Marsaglia's tail method).
  double tail(bool negative) {
    double x, y;
    do {
      x = std::log(uniform_open()) / kR;
      y = std::log(uniform_open());
    } while (-2 * y < x * x);
    return negative ? x - kR : kR - x;
  }
  double uniform_open() { return (double(next_slow() >> 11) + 0.5) * 0x1.0p-53; }  // (0, 1)

  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t next_slow() {  // xoshiro256++
    std::array<std::uint64_t, 4>& s = slow_;
    const std::uint64_t result = rotl(s[0] + s[3], 23) + s[0];
    const std::uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
  }

  alignas(64) std::array<std::array<std::uint64_t, kLanes>, 4> state_{};  // the generators, word by word
  alignas(64) std::array<std::array<std::uint64_t, kLanes>, 4> spare_state_{};  // the slow path's words'
  std::array<std::uint64_t, 4> slow_{};  // the tail's generator
  static constexpr std::size_t kSpare = kBatch;  // words: a round's (at most kBatch draws) are at hand
  alignas(64) std::array<std::uint64_t, kSpare + kSettleLanes> spare_{};  // the slow path's words (and slack)
  std::size_t spare_used_ = kSpare;
  const Tables* t_ = &tables();
  std::size_t used_ = kBatch;  // batch_[used_..] not handed out yet
  alignas(64) std::array<std::uint32_t, kBatch> bits_{};
  alignas(64) std::array<float, kBatch> batch_{};
  // The draws not settled yet: batch positions and draws (kSettleLanes of slack each).
  std::array<std::uint32_t, kBatch + kSettleLanes> pending_at_{}, pending_r_{};
};

}  // namespace hilrig::rf
