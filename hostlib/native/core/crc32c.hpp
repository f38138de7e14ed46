#pragma once
#include <cstddef>
#include <cstdint>

namespace hilrig {
// CRC-32C (Castagnoli, reflected, init/xorout 0xFFFFFFFF): crc32c("123456789") == 0xE3069283.
std::uint32_t crc32c(const void* data, std::size_t len);
}  // namespace hilrig
