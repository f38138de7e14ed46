// The RF channel: impairments with known values applied to complex baseband, and the
// figures a tone analyzer should find after them (docs/rf.md "The channel"). Same order
// and formulas as hostlib/reference/rf.py's Channel; the noise is ComplexGaussian's.
#pragma once
#include <complex>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace hilrig::rf {

using cdouble = std::complex<double>;

// A*exp(j(2*pi*freq_hz/fs_hz*n + phase_rad)), n = 0..count-1; its power is A^2.
std::vector<cdouble> tone(std::size_t count, double freq_hz, double fs_hz, double amplitude = 0.5,
                          double phase_rad = 0.0);

// What the channel did to a tone, in the analyzer's terms; nullopt: that impairment is off.
struct ToneTruth {
  double freq_hz = 0;
  double power_dbfs = 0;
  std::optional<double> snr_db;
  std::optional<double> image_dbc;  // the IQ imbalance's image at -f, relative to the tone
  std::optional<double> spur_dbc;   // the per-rail cubic's spur at -3f, relative to the tone
  std::optional<double> dc_dbfs;
};

// The tone analyzer's mean SNR under a Wiener phase of 3 dB linewidth linewidth_hz over a
// capture of n samples at fs_hz (docs/rf.md "Phase noise"), snr_db the AWGN's (nullopt:
// none): the tone keeps exp(-v) of its power coherently, v = s2*n/15 the mean square of
// the walk (step variance s2 = 2*pi*linewidth/fs) less its fitted line; the field's
// spectrum (1 - r^2)/(1 - 2r cos w + r^2), r = exp(-s2/2), beyond the analyzer's lobe of
// +-(kLobeBins + 1/2) bins (of its segment: kToneSegmentSamples at most) reaches the noise bins.
double phase_noise_snr_db(double linewidth_hz, double fs_hz, std::size_t n, std::optional<double> snr_db);

struct Channel {
  double gain_db = 0;
  std::optional<double> snr_db;  // nullopt: no noise
  double cfo_hz = 0;
  double iq_gain_db = 0;    // Q rail gain relative to I
  double iq_phase_deg = 0;  // Q rail skew from 90 degrees
  cdouble dc_offset{};
  double c3 = 0;            // per-rail cubic coefficient
  std::uint64_t seed = 0;
  // The receiver's timing and LO (timing.hpp, phase_noise.hpp), applied to the signal before
  // the impairments above: sample n reads the signal at n / (1 + sco_ppm*1e-6) - delay_samples,
  // then turns by the Wiener phase of 3 dB linewidth phase_noise_hz.
  double sco_ppm = 0;
  double delay_samples = 0;
  double phase_noise_hz = 0;

  // y = mu*x + nu*conj(x): I kept, Q' = g(Q cos(phi) - I sin(phi)).
  std::pair<cdouble, cdouble> iq_mu_nu() const;

  // In order: SCO and fractional delay (the block read as zero outside it), phase noise,
  // gain, CFO, per-rail cubic, IQ imbalance (ChannelPath::distort_block), DC, then
  // complex AWGN of variance P / 10^(snr_db/10), P the mean power of the signal before
  // the DC offset.
  std::vector<cdouble> apply(std::span<const cdouble> x, double fs_hz) const;

  // freq_hz: (f / (1 + sco_ppm*1e-6)) + cfo. Under phase noise snr_db is the mean over walks
  // for a capture of capture_samples at fs_hz (phase_noise_snr_db), not stated without them.
  ToneTruth tone_truth(double freq_hz, double amplitude, double fs_hz = 0, std::size_t capture_samples = 0) const;
};

// The channel's deterministic part with its constants worked out once: what apply() and
// the simulator's stream-rate signal source (signal.hpp) both run, block by block.
class ChannelPath {
 public:
  // Samples are worked on in aligned blocks of kBlock: [m*kBlock, (m+1)*kBlock).
  static constexpr std::size_t kBlock = 1024;
  ChannelPath(const Channel& c, double fs_hz);
  // Gain, CFO at sample n of the stream (its phase is n's, so a stream cut into frames
  // gets the same samples as one block), per-rail cubic, IQ imbalance; no DC, no noise.
  // One sample, every term from its own sincos: the formula the block path is held to.
  cdouble distort(cdouble x, std::uint64_t n) const {
    cdouble v = x * gain_;
    if (cfo_) v *= std::polar(1.0, cfo_step_ * double(n));  // the LO's offset, before the baseband
    if (c3_ != 0) v = {v.real() + c3_ * v.real() * v.real() * v.real(), v.imag() + c3_ * v.imag() * v.imag() * v.imag()};
    return mu_ * v + nu_ * std::conj(v);
  }
  // The same in place on samples n0 .. n0+count-1 as rails re[], im[], all within one
  // aligned block (n0 % kBlock + count <= kBlock). The CFO's phasor at n = m*kBlock + j is
  // exp(j*step*m*kBlock) * exp(j*step*j), each factor an exact polar (the first once per
  // block, the second a table): within a few ulps of distort()'s at any n, and sample n is
  // the same whichever call (whatever frame) computed it. T is double (Channel::apply) or
  // float (the stream's SignalSource: the table and the block's anchor rounded to float).
  template <class T>
  void distort_block(T* re, T* im, std::size_t count, std::uint64_t n0) const;

 private:
  double gain_, cfo_step_, c3_;
  bool cfo_;
  cdouble mu_, nu_;
  std::vector<double> cfo_re_, cfo_im_;  // exp(j*cfo_step*j), j < kBlock (empty: no CFO)
  std::vector<float> cfo_re_f_, cfo_im_f_;  // the same rounded to float
  template <class T>
  const T* cfo_table(bool imag) const;
};

}  // namespace hilrig::rf
