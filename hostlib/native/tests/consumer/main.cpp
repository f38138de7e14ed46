// Uses the installed core the way a lab's tool would: build a counter-pattern frame,
// decode and check it, then show that a corrupted word is caught; analyze a tone
// through the RF channel (which links FFTW3 through hilrigConfig.cmake). Exit 0 = all agree.
#include <cmath>
#include <cstdio>
#include <vector>

#include "hilrig/core/frame.hpp"
#include "hilrig/core/pattern.hpp"
#include "hilrig/rf/channel.hpp"
#include "hilrig/rf/tone_analyzer.hpp"

int main() {
  using namespace hilrig;
  constexpr std::size_t kWords = 1000;
  constexpr std::uint64_t kFirstWord = 4242;
  std::vector<std::uint32_t> payload(kWords);
  pattern_fill(kFirstWord, payload.data(), kWords, SampleFormat::sc16);

  FrameHeader h;
  h.flags = kFlagCrcValid | kFlagSOB;
  h.seq = 7;
  h.sample_tick = kFirstWord;
  auto frame = encode_frame(h, reinterpret_cast<const std::uint8_t*>(payload.data()), kWords * 4);
  FrameHeader got;
  if (const char* err = validate_frame(frame.data(), frame.size(), got)) {
    std::fprintf(stderr, "valid frame rejected: %s\n", err);
    return 1;
  }
  const auto* words = frame.data() + kFrameHeaderBytes;
  std::uint64_t errors = pattern_check(got.sample_tick, words, kWords, SampleFormat::sc16);
  frame[kFrameHeaderBytes + 40] ^= 0x01;  // one bit of word 10
  std::uint64_t corrupted = pattern_check(got.sample_tick, words, kWords, SampleFormat::sc16);
  bool crc_caught = validate_frame(frame.data(), frame.size(), got) != nullptr;
  std::printf("seq=%llu payload_bytes=%u pattern_errors=%llu after_bitflip=%llu crc_caught=%d\n",
              (unsigned long long)got.seq, got.payload_bytes, (unsigned long long)errors,
              (unsigned long long)corrupted, int(crc_caught));
  rf::Channel channel;
  channel.snr_db = 30;
  const auto tone = rf::analyze_tone(channel.apply(rf::tone(4096, 1.2345e5, 1e6), 1e6), 1e6);
  bool rf_ok = std::abs(tone.snr_db - 30) < 1 && std::abs(tone.freq_hz - 1.2345e5) < 10;
  std::printf("rf: freq_hz=%.3f snr_db=%.2f\n", tone.freq_hz, tone.snr_db);
  return (got.seq == 7 && got.payload_bytes == kWords * 4 && errors == 0 && corrupted == 1 && crc_caught && rf_ok) ? 0 : 1;
}
