// The RF signal a stream carries in place of the counter pattern (pattern "signal"): a
// sum of tones through the channel, generated at stream rate on the device side (the
// simulator's RX frames), and how much of it the host keeps for analysis
// (docs/rf.md "In the simulator").
#pragma once
#include <array>
#include <complex>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "hilrig/core/frame.hpp"
#include "hilrig/rf/channel.hpp"
#include "hilrig/rf/gaussian.hpp"
#include "hilrig/rf/modulation.hpp"
#include "hilrig/rf/phase_noise.hpp"
#include "hilrig/rf/timing.hpp"

namespace hilrig::rf {

struct ToneSpec {
  double frequency_hz = 0;
  double amplitude = 0.5;  // full scale 1.0; the tone's power is amplitude^2
  double phase_rad = 0;
};

struct SignalSpec {
  std::vector<ToneSpec> tones;        // one: a tone; several: a multitone; none: the modulation's
  std::optional<ModulationSpec> modulation;  // a modulated signal (modulation.hpp) in place of tones
  Channel channel;
  std::uint32_t capture_samples = 0;  // the host keeps this many consecutive samples of channel 0
};

// Full scale of the RF signal in a sample format: an sc16 rail of 32767 is 1.0, sc8 127
// (hostlib.reference.rf.quantize): round to nearest, saturate.
inline constexpr double full_scale(SampleFormat fmt) { return fmt == SampleFormat::sc16 ? 32767.0 : 127.0; }

// Sample n of sum_k A_k exp(j(2 pi f_k n / fs + theta_k)); each tone's phase is reduced
// to one cycle before the sine, so sample n is as exact at n = 10^12 as at n = 0.
cdouble tones_at(std::span<const ToneSpec> tones, std::uint64_t n, double fs_hz);
// Samples [0, count) of the same (hostlib.reference.rf.multitone).
std::vector<cdouble> multitone(std::size_t count, std::span<const ToneSpec> tones, double fs_hz);

// The device side of pattern "signal": the tones (or the modulation's frames, one after
// another: sample n is sample n mod the period of modem_frame) through the channel, quantised into
// frame payloads. Sample n of the stream is its sample tick n, so frames the device
// discards (an overflow) leave no trace in the others' phase. The noise is the channel's
// seeded generator, drawn in the order frames are built; its variance is fixed once:
// P / 10^(snr/10), P the mean power before the DC offset of the noiseless signal over
// its first kPowerSamples samples (Channel::apply's P for a block of that length).
// Each tone's phasor at n = m*kBlock + j is the block's exact polar (tones_at's) times a
// table's exp(j*2*pi*f/fs*j): no drift, and n's sample is the same whatever the frames.
// The channel's timing stage reads the clean signal around each block's sampling instants
// (zero before tick 0), and the phase-noise walk takes its steps block by block in the
// order blocks are built (frames in tick order: the walk of Channel::apply). Both off:
// the block path as it was, one flag test a block. The stream computes in float (the
// same kernels as Channel::apply's, at T = float): its rounding, ~6e-8 of full scale, is
// 2e-3 of an sc16 step, so a sample differs from apply()'s quantised one only where that
// lies within 2e-3 of a step's edge, and then by one step (docs/rf.md "In the simulator").
class SignalSource {
 public:
  static constexpr std::size_t kPowerSamples = std::size_t(1) << 16;
  SignalSource(const SignalSpec& spec, double fs_hz);
  // Ticks [first_tick, first_tick + ticks), every one of `channels` channels the same
  // sample, interleaved as a frame's payload (I then Q, little-endian) in fmt.
  void fill(std::uint64_t first_tick, std::uint32_t ticks, unsigned channels, SampleFormat fmt, void* out);
  double noise_sigma() const { return sigma_; }

 private:
  static constexpr std::size_t kBlock = ChannelPath::kBlock;
  // The clean signal (tones or modulation, no channel) at ticks first .. first+count-1 as
  // rails, zero before tick 0; tones from an exact polar at each kBlock piece's start.
  void clean(std::int64_t first, std::size_t count, float* re, float* im) const;
  // Aligned block m's samples through the channel's timing stage, the phase-noise walk
  // (its next kBlock steps) and deterministic part, no DC, as rails.
  void deterministic(std::uint64_t m, float* re, float* im, PhaseNoise& walk);
  // The block that holds tick n, with DC, in block_re_/block_im_ (kept: frames smaller
  // than a block reuse it).
  void load_block(std::uint64_t m);
  std::vector<ToneSpec> tones_;
  std::vector<float> tone_re_, tone_im_;  // per tone, exp(j*2*pi*f/fs*j) for j < kBlock
  std::vector<float> period_re_, period_im_;  // a modulated signal: one period (modem_frame's samples)
  double fs_hz_;
  ChannelPath path_;
  cdouble dc_;
  double sigma_ = 0;
  ComplexGaussian noise_;
  TimingStage timing_;
  PhaseNoise phase_noise_;
  std::uint64_t block_ = ~std::uint64_t(0);  // the block held (none yet)
  std::vector<float> block_re_, block_im_, work_re_, work_im_;
  std::vector<float> in_re_, in_im_;  // the timing stage's input span for a block (empty: off)
  std::vector<std::int16_t> rails16_;
  std::vector<std::int8_t> rails8_;
};

}  // namespace hilrig::rf
