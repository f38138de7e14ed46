// Frame encode/decode against the binary vectors in docs/vectors (written by the
// Python reference), so C++ and Python agree byte for byte.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "hilrig/core/crc32c.hpp"
#include "hilrig/core/frame.hpp"
#include "hilrig/core/pattern.hpp"

using nlohmann::json;

namespace {
std::vector<std::uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  return {std::istreambuf_iterator<char>(f), {}};
}
json index_json() {
  auto bytes = read_file(std::string(HILRIG_VECTORS_DIR) + "/index.json");
  return json::parse(bytes.begin(), bytes.end());
}
}  // namespace

TEST(Crc32c, KnownCheckValue) {
  const char* s = "123456789";
  EXPECT_EQ(hilrig::crc32c(s, 9), 0xE3069283u);
  EXPECT_EQ(hilrig::crc32c(s, 0), 0u);
}

TEST(FrameVectors, IndexListsVectors) {
  auto idx = index_json();
  ASSERT_GE(idx["vectors"].size(), 8u);
}

TEST(FrameVectors, ValidVectorsDecodeAndReencode) {
  int checked = 0;
  const json idx = index_json();
  for (const auto& v : idx["vectors"]) {
    if (!v["valid"].get<bool>()) continue;
    SCOPED_TRACE(v["file"].get<std::string>());
    auto frame = read_file(std::string(HILRIG_VECTORS_DIR) + "/" + v["file"].get<std::string>());
    ASSERT_EQ(frame.size(), v["frame_bytes"].get<std::size_t>());
    hilrig::FrameHeader h;
    const char* err = hilrig::validate_frame(frame.data(), frame.size(), h);
    ASSERT_EQ(err, nullptr) << err;
    const auto& e = v["header"];
    EXPECT_EQ(h.magic, e["magic"].get<std::uint16_t>());
    EXPECT_EQ(h.version, e["version"].get<std::uint8_t>());
    EXPECT_EQ(h.flags, e["flags"].get<std::uint8_t>());
    EXPECT_EQ(h.stream_id, e["stream_id"].get<std::uint16_t>());
    EXPECT_EQ(h.sample_format, e["sample_format"].get<std::uint8_t>());
    EXPECT_EQ(h.channels, e["channels"].get<std::uint8_t>());
    EXPECT_EQ(h.payload_bytes, e["payload_bytes"].get<std::uint32_t>());
    EXPECT_EQ(h.crc32c, e["crc32c"].get<std::uint32_t>());
    EXPECT_EQ(h.seq, e["seq"].get<std::uint64_t>());
    EXPECT_EQ(h.sample_tick, e["sample_tick"].get<std::uint64_t>());
    EXPECT_EQ(h.send_time_ns, e["send_time_ns"].get<std::uint64_t>());
    auto fmt = hilrig::SampleFormat(h.sample_format);
    EXPECT_EQ(hilrig::pattern_check(v["pattern_first_word"].get<std::uint64_t>(), frame.data() + 48,
                                    v["pattern_words"].get<std::size_t>(), fmt),
              v["pattern_errors"].get<std::uint64_t>());
    // Re-encoding the decoded header and payload gives the same bytes.
    auto again = hilrig::encode_frame(h, frame.data() + 48, h.payload_bytes);
    EXPECT_EQ(again, frame);
    ++checked;
  }
  EXPECT_GE(checked, 5);
}

TEST(FrameVectors, PatternVectorsMatchGenerator) {
  int checked = 0;
  const json idx = index_json();
  for (const auto& v : idx["vectors"]) {
    if (!v["valid"].get<bool>() || v["pattern_errors"].get<int>() != 0) continue;
    ++checked;
    SCOPED_TRACE(v["file"].get<std::string>());
    auto frame = read_file(std::string(HILRIG_VECTORS_DIR) + "/" + v["file"].get<std::string>());
    auto fmt = hilrig::SampleFormat(frame[6]);
    std::vector<std::uint8_t> payload(frame.size() - 48);
    hilrig::pattern_fill(v["pattern_first_word"].get<std::uint64_t>(), payload.data(),
                         v["pattern_words"].get<std::size_t>(), fmt);
    EXPECT_TRUE(std::equal(payload.begin(), payload.end(), frame.begin() + 48));
  }
  EXPECT_GE(checked, 5);
}

TEST(FrameVectors, BrokenVectorsAreRejectedWithTheRightReason) {
  int checked = 0;
  const json idx = index_json();
  for (const auto& v : idx["vectors"]) {
    if (v["valid"].get<bool>()) continue;
    SCOPED_TRACE(v["file"].get<std::string>());
    auto frame = read_file(std::string(HILRIG_VECTORS_DIR) + "/" + v["file"].get<std::string>());
    hilrig::FrameHeader h;
    const char* err = hilrig::validate_frame(frame.data(), frame.size(), h);
    ASSERT_NE(err, nullptr);
    EXPECT_NE(std::string(err).find(v["error"].get<std::string>()), std::string::npos) << err;
    ++checked;
  }
  EXPECT_GE(checked, 5);
}

// The accessors read and write the fields at the offsets docs/frame-format.md gives.
TEST(FrameAccessors, ReadAndWriteTheSpecsOffsets) {
  hilrig::FrameHeader h;
  h.flags = hilrig::kFlagEOB;
  h.sample_format = 2;
  h.channels = 3;
  h.payload_bytes = 0x01020304;
  h.seq = 0x1122334455667788ull;
  std::uint8_t f[hilrig::kFrameHeaderBytes];
  hilrig::write_header(h, f);
  EXPECT_EQ(hilrig::frame_flags(f), f[3]);
  EXPECT_EQ(hilrig::frame_sample_format(f), f[6]);
  EXPECT_EQ(hilrig::frame_channels(f), f[7]);
  EXPECT_EQ(hilrig::frame_payload_bytes(f), 0x01020304u);
  EXPECT_EQ(f[8], 0x04);
  EXPECT_EQ(hilrig::frame_seq(f), h.seq);
  EXPECT_EQ(f[16], 0x88);
  hilrig::set_frame_flags(f, hilrig::kFlagSOB);
  hilrig::set_frame_crc32c(f, 0xAABBCCDDu);
  hilrig::set_frame_send_time_ns(f, 0x0102030405060708ull);
  EXPECT_EQ(f[3], hilrig::kFlagSOB);
  EXPECT_EQ(f[12], 0xDD);
  EXPECT_EQ(f[32], 0x08);
  EXPECT_EQ(f[39], 0x01);
  const hilrig::FrameHeader back = hilrig::read_header(f);
  EXPECT_EQ(back.crc32c, 0xAABBCCDDu);
  EXPECT_EQ(back.send_time_ns, 0x0102030405060708ull);
}
