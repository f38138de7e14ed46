#include "hilrig/pattern.hpp"

#include <cstring>

namespace hilrig {
namespace {
// Plain counted loops over aligned-or-not words (memcpy'd loads are fine: GCC turns
// them into unaligned vector loads) so that GCC vectorises them.
template <typename W>
void fill_words(W base, W* __restrict out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = W(base + W(i));
}
template <typename W>
std::uint64_t check_words(W base, const std::uint8_t* __restrict in, std::size_t n) {
  std::uint64_t errors = 0;
  for (std::size_t i = 0; i < n; ++i) {
    W w;
    std::memcpy(&w, in + i * sizeof(W), sizeof(W));
    errors += (w != W(base + W(i)));
  }
  return errors;
}
}  // namespace

void pattern_fill(std::uint64_t first_word, void* out, std::size_t n_words, SampleFormat fmt) {
  if (fmt == SampleFormat::sc16) {
    // out may be unaligned (a frame slot + 48 is 16-aligned; a Python buffer is not guaranteed).
    if (reinterpret_cast<std::uintptr_t>(out) % alignof(std::uint32_t) == 0) {
      fill_words<std::uint32_t>(std::uint32_t(first_word), static_cast<std::uint32_t*>(out), n_words);
    } else {
      auto* p = static_cast<std::uint8_t*>(out);
      for (std::size_t i = 0; i < n_words; ++i) {
        std::uint32_t w = std::uint32_t(first_word + i);
        std::memcpy(p + 4 * i, &w, 4);
      }
    }
  } else {
    if (reinterpret_cast<std::uintptr_t>(out) % alignof(std::uint16_t) == 0) {
      fill_words<std::uint16_t>(std::uint16_t(first_word), static_cast<std::uint16_t*>(out), n_words);
    } else {
      auto* p = static_cast<std::uint8_t*>(out);
      for (std::size_t i = 0; i < n_words; ++i) {
        std::uint16_t w = std::uint16_t(first_word + i);
        std::memcpy(p + 2 * i, &w, 2);
      }
    }
  }
}

std::uint64_t pattern_check(std::uint64_t first_word, const void* in, std::size_t n_words, SampleFormat fmt) {
  const auto* p = static_cast<const std::uint8_t*>(in);
  if (fmt == SampleFormat::sc16) return check_words<std::uint32_t>(std::uint32_t(first_word), p, n_words);
  return check_words<std::uint16_t>(std::uint16_t(first_word), p, n_words);
}

}  // namespace hilrig
