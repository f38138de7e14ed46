// The LO's phase noise as a Wiener process (docs/rf.md "Phase noise"): a random walk
//   phi[n] = phi[n-1] + delta_n,  delta_n ~ N(0, 2*pi*linewidth_hz/fs),
// the free-running oscillator of 3 dB (full) linewidth linewidth_hz: its spectrum is a
// Lorentzian, its phase's one-sided PSD L(f) = linewidth/(2*pi*f^2) (f >> linewidth).
// Sample n is multiplied by exp(j*phi[n]), phi[0] = delta_0. Stateful: the walk goes on
// in the order samples are asked for (a stream's blocks: the order they are built, as the
// channel's noise). The steps are standard normals from the channel's generator
// (gaussian.hpp's ziggurat on xoshiro256++), a generator of its own seeded with the
// channel's seed spread, so turning it on does not change the AWGN's samples. Off
// (linewidth 0) it holds no generator and costs nothing.
//
// No sin/cos per sample: every kAnchorSteps steps (counted from the walk's start, so the
// result does not depend on how the samples are asked for) the phase is reduced to
// [-pi, pi] and its exact polar taken; a step's exp(j*phi) is that anchor times
// exp(j*(phi - anchor's phi)) by its Taylor polynomial (|d| <= kPolyMax: error below
// 1e-19 in double, 3e-10 in float), or an exact polar where the piece strayed further
// (a linewidth near the rate). A piece's kAnchorSteps phases are made at once when it
// begins: its normals, the first the anchor's step, are assigned to steps transposed
// (step 8r + j takes normal 8j + r), so that eight runs of eight steps are summed side by
// side as vectors, the runs' totals then carried (phase_noise.cpp).
#pragma once
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <optional>
#include <vector>

#include "hilrig/rf/gaussian.hpp"

namespace hilrig::rf {

// The largest linewidth a stream config takes, as a share of the rate (core/config.cpp):
// beyond it the phase turns by a radian within a few hundred samples.
inline constexpr double kMaxLinewidthOfRate = 0.01;

class PhaseNoise {
 public:
  static constexpr std::size_t kAnchorSteps = 64;
  static constexpr double kPolyMax = 0.5;  // radians from the anchor
  static constexpr std::uint64_t kExactAnchors = 64;  // pieces: one anchor an exact polar

  // The generator's seed from the channel's: a fixed odd multiplier and offset (splitmix64's
  // constants) keep its splitmix64 seeding sequence apart from the AWGN's, seeded with the
  // seed itself.
  static constexpr std::uint64_t spread_seed(std::uint64_t seed) {
    return seed * 0x9E3779B97F4A7C15ULL + 0xD1B54A32D192ED03ULL;
  }

  PhaseNoise(double linewidth_hz, double fs_hz, std::uint64_t seed)
      : sigma_(std::sqrt(2 * std::numbers::pi * linewidth_hz / fs_hz)), active_(linewidth_hz > 0) {
    if (active_) gauss_.emplace(spread_seed(seed));
  }
  bool active() const { return active_; }
  double step_sigma() const { return sigma_; }  // of delta_n, radians

  // exp(j*phi[n]) of the next sample (an active walk only): rotate() of one sample.
  std::complex<double> next() {
    double re = 1, im = 0;
    rotate(&re, &im, 1);
    return {re, im};
  }
  // The next count samples as rails, each turned by its exp(j*phi[n]), in order
  // (phase_noise.cpp). The walk is the same whatever T; T is the rotation's arithmetic:
  // double (Channel::apply) or float (the stream's SignalSource, a shorter polynomial).
  template <class T>
  void rotate(T* re, T* im, std::size_t count);

 private:
  // The next piece: its anchor and its phases less the anchor's in phases_, and whether
  // they all lie within kPolyMax of it.
  void begin_piece();
  double sigma_;
  bool active_;
  std::optional<ComplexGaussian> gauss_;  // none when off
  std::uint64_t steps_ = 0;  // taken so far
  double anchor_phi_ = 0;    // the phase at the current piece's anchor, and its exp(j*)
  std::complex<double> anchor_{1, 0};
  bool within_poly_ = true;  // every phase of the piece within kPolyMax of the anchor's
  std::vector<double> phases_;  // the piece's phases less the anchor's (kAnchorSteps)
};

}  // namespace hilrig::rf
