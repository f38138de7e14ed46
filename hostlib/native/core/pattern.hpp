// The `counter` test pattern: word k of the stream equals k truncated to the word
// width (u32 per sc16 sample, u16 per sc8 sample), k = sample_tick * channels + i.
#pragma once
#include <cstddef>
#include <cstdint>
#include "hilrig/core/frame.hpp"

namespace hilrig {
void pattern_fill(std::uint64_t first_word, void* out, std::size_t n_words, SampleFormat fmt);
// Number of words that differ from the pattern.
std::uint64_t pattern_check(std::uint64_t first_word, const void* in, std::size_t n_words, SampleFormat fmt);
// One channel's own buffer (a radio API's per-channel buffers: UHD, SoapySDR): sample i
// of channel ch (of channels) is stream word (first_tick + i) * channels + ch.
void pattern_fill_channel(std::uint64_t first_tick, unsigned channels, unsigned ch, void* out, std::size_t n_samples,
                          SampleFormat fmt);
std::uint64_t pattern_check_channel(std::uint64_t first_tick, unsigned channels, unsigned ch, const void* in,
                                    std::size_t n_samples, SampleFormat fmt);
}  // namespace hilrig
