// Seeded complex white Gaussian noise: the same samples for the same seed on every
// platform whose libm rounds exp/log correctly (no std::*_distribution, whose algorithms
// the standard leaves to the library). Not numpy's generator: the channel's noise is
// statistically, not sample-for-sample, the reference's.
//
// Each rail is one standard normal from Marsaglia and Tsang's ziggurat (128 layers, with
// Doornik's independent layer index and uniform, "An improved ziggurat method", 2005): 32
// random bits (7 for the layer, 25 for the uniform), a table look-up and a compare for
// 97.2 % of samples; the rest (the top layer's cap, the wedges, the tail) take the slow
// path: a squeeze by chord and tangents, the wedge's exp for a sliver, the tail's logs, so the
// distribution is the exact normal (rejection, not an approximation), each value then
// rounded to float (the fast path's product u*x in float, its test against the ratio
// rounded toward zero so that it accepts only points inside the rectangle; the slow path
// decides the rest in double). The bits come from
// four xoshiro256++ generators (Blackman and Vigna) run side by side (a loop the compiler
// vectorises), seeded through splitmix64, and a fifth for the rejection steps: the output
// is fixed by the code below on every platform. Normals are made kBatch at a time and
// handed out in order, so a stream cut into frames draws the same noise as one block.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace hilrig::rf {

class ComplexGaussian {
 public:
  explicit ComplexGaussian(std::uint64_t seed) {
    auto splitmix = [&seed] {  // never all zero
      seed += 0x9e3779b97f4a7c15ULL;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      return z ^ (z >> 31);
    };
    for (auto* word : {&s0_, &s1_, &s2_, &s3_})
      for (std::uint64_t& lane : *word) lane = splitmix();
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
    const T s = T(sigma * kRail);
    while (count > 0) {
      if (used_ == kBatch) refill();
      if (used_ % 2 == 0 && count > 0) {  // whole pairs from the batch (kBatch is even)
        const std::size_t m = std::min(count, (kBatch - used_) / 2);
        const float* g = batch_.data() + used_;
        for (std::size_t k = 0; k < m; ++k) re[k] += s * T(g[2 * k]), im[k] += s * T(g[2 * k + 1]);
        used_ += 2 * m, re += m, im += m, count -= m;
      } else {  // a pair across batches
        *re++ += s * T(normal());
        *im++ += s * T(normal());
        --count;
      }
    }
  }
  // The next count standard normals, in order (as count calls of normal()).
  void normals(double* out, std::size_t count) {
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
  static constexpr std::size_t kLanes = 4;
  static constexpr std::size_t kBatch = 1024;  // normals per refill: kBatch / 2 draws of 64 bits

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
      }
    }
  };
  static const Tables& tables() {
    static const Tables t;
    return t;
  }

  // The next kBatch normals: the four generators' draws, the fast path over all of them,
  // then the few that missed it finished one by one (in order). gaussian.cpp.
  void refill();
  // [-1, 1) from r's top 25 bits (apart from the layer's 7).
  static double uniform_pm1(std::uint32_t r) { return double(std::int32_t(r) >> 7) * 0x1.0p-24; }
  // The ziggurat from draw r on: the fast path, else the wedge or the tail, else anew.
  double finish(std::uint32_t r) {
    const Tables& t = *t_;
    for (;; r = std::uint32_t(next_slow())) {
      const std::size_t i = r & 0x7f;
      const double u = uniform_pm1(r);
      if (std::fabs(u) < t.ratio[i]) return u * t.x[i];
      if (i == 0) return tail(u < 0);
      const double x = u * t.x[i];
      // the wedge: under the density between layer i's edges (from |x| = x[i+1] to x[i])
      const double y = t.density[i + 1] + uniform_open() * (t.density[i] - t.density[i + 1]);
      // The chord between the wedge's corners and the tangents at them decide all but a
      // sliver of points without exp: the density lies between them.
      const double ax = std::fabs(x);
      if (t.shape[i] == Tables::Shape::concave) {
        if (y <= chord(t, i, ax)) return x;  // the chord is under the density
        if (y > std::min(tangent(t, i + 1, ax), tangent(t, i, ax))) continue;  // the tangents over it
      } else if (t.shape[i] == Tables::Shape::convex) {
        if (y >= chord(t, i, ax)) continue;  // the chord is over the density
        if (y < std::max(tangent(t, i + 1, ax), tangent(t, i, ax))) return x;  // the tangents under it
      }
      if (y < std::exp(-0.5 * x * x)) return x;
    }
  }
  // The straight line through layer i's wedge corners (x[i+1], density[i+1]) and (x[i], density[i]) at ax.
  static double chord(const Tables& t, std::size_t i, double ax) {
    return t.density[i + 1] + (ax - t.x[i + 1]) * t.slope[i];
  }
  // The density's tangent at edge x[e] at ax: f(x[e]) (1 - x[e] (ax - x[e])), as f' = -x f.
  static double tangent(const Tables& t, std::size_t e, double ax) {
    return t.density[e] * (1 - t.x[e] * (ax - t.x[e]));
  }
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

  alignas(64) std::array<std::uint64_t, kLanes> s0_{}, s1_{}, s2_{}, s3_{};  // the four generators, word by word
  std::array<std::uint64_t, 4> slow_{};
  const Tables* t_ = &tables();
  std::size_t used_ = kBatch;  // batch_[used_..] not handed out yet
  std::array<std::uint32_t, kBatch> bits_{};
  std::array<float, kBatch> batch_{};
  std::array<std::uint32_t, kBatch> missed_at_{};  // the batch's draws that missed the fast path
};

}  // namespace hilrig::rf
