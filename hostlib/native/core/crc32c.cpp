#include "hilrig/core/crc32c.hpp"

#include <array>
#include <cstring>
#if defined(__SSE4_2__)
#include <nmmintrin.h>
#endif

namespace hilrig {
namespace {
constexpr std::array<std::uint32_t, 256> make_table() {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr auto kTable = make_table();
}  // namespace

std::uint32_t crc32c(const void* data, std::size_t len) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  std::uint32_t c = 0xFFFFFFFFu;
#if defined(__SSE4_2__)
  // The SSE4.2 crc32 instruction computes exactly CRC-32C, 8 bytes per step.
  std::uint64_t c64 = c;
  while (len >= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    c64 = _mm_crc32_u64(c64, w);
    p += 8;
    len -= 8;
  }
  c = std::uint32_t(c64);
#endif
  while (len--) c = kTable[(c ^ *p++) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}
}  // namespace hilrig
