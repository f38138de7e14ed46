#include "hilrig/config.hpp"
#include "hilrig/shm_ring.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <stdexcept>

namespace hilrig {
namespace {
using nlohmann::json;

[[noreturn]] void bad(const std::string& where, const std::string& msg) {
  throw std::invalid_argument(where + ": " + msg);
}

double get_number(const json& j, const char* key, double dflt, const std::string& where) {
  if (!j.contains(key) || j[key].is_null()) return dflt;
  if (!j[key].is_number()) bad(where + "." + key, "must be a number, got " + j[key].dump());
  return j[key].get<double>();
}
std::string get_string(const json& j, const char* key, const std::string& dflt, const std::string& where) {
  if (!j.contains(key) || j[key].is_null()) return dflt;
  if (!j[key].is_string()) bad(where + "." + key, "must be a string, got " + j[key].dump());
  return j[key].get<std::string>();
}
std::uint64_t get_uint(const json& j, const char* key, std::uint64_t dflt, std::uint64_t lo, std::uint64_t hi,
                       const std::string& where) {
  double v = get_number(j, key, double(dflt), where);
  if (v != std::floor(v) || v < double(lo) || v > double(hi))
    bad(where + "." + key, "must be a whole number in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                               "], got " + j[key].dump());
  return std::uint64_t(v);
}
}  // namespace

std::uint32_t StreamConfig::socket_buffer_for_rate() const {
  const double frames_per_s = rate_sps / double(samples_per_frame());
  const double want = frames_per_s * double(frame_bytes) * kSocketBufferSeconds;
  std::uint32_t grown = want >= double(kSocketBufferMaxBytes) ? kSocketBufferMaxBytes : std::uint32_t(want);
  return std::max(transport.socket_buffer_bytes, grown);
}

std::uint32_t StreamConfig::ring_slots_for_rate() const {
  const double frames_per_s = rate_sps / double(samples_per_frame());
  const std::uint64_t slot_bytes = ShmRing::slot_stride_for(frame_bytes) + sizeof(std::uint32_t);  // stride + length
  const double cap = double(std::max<std::uint64_t>(kRingMaxBytes / slot_bytes, 2));
  const double want = std::min(std::ceil(frames_per_s * kRingSeconds), cap);
  return std::max(transport.slots, std::uint32_t(want));
}

const char* direction_name(Direction d) {
  switch (d) {
    case Direction::rx: return "rx";
    case Direction::tx: return "tx";
    default: return "loopback";
  }
}

TransportSpec parse_transport(const json& t, const char* where_c) {
  std::string where = where_c;
  if (!t.is_object()) bad(where, "must be an object like {\"kind\": \"udp\", ...}");
  TransportSpec s;
  std::string kind = get_string(t, "kind", "", where);
  if (kind == "udp") {
    s.kind = TransportKind::udp;
    s.host = get_string(t, "host", "127.0.0.1", where);
    s.port = std::uint16_t(get_uint(t, "port", 0, 0, 65535, where));
    s.socket_buffer_bytes = std::uint32_t(get_uint(t, "socket_buffer_bytes", 4u << 20, 0, 1u << 30, where));
    for (auto [key, field] : {std::pair{"gso", &s.gso}, std::pair{"gro", &s.gro}, std::pair{"busy_poll", &s.busy_poll}}) {
      if (!t.contains(key) || t[key].is_null()) continue;
      if (!t[key].is_boolean()) bad(where + "." + key, std::string("must be true or false, got ") + t[key].dump());
      *field = t[key].get<bool>();
    }
  } else if (kind == "shm") {
    s.kind = TransportKind::shm;
    s.path = get_string(t, "path", "", where);
    s.slots = std::uint32_t(get_uint(t, "slots", 256, 2, 1u << 20, where));
  } else {
    bad(where + ".kind", "must be \"udp\" or \"shm\", got " + (t.contains("kind") ? t["kind"].dump() : "nothing"));
  }
  return s;
}

StreamConfig parse_stream_config(const json& j) {
  const std::string where = "stream config";
  if (!j.is_object()) bad(where, "must be an object");
  StreamConfig c;
  std::string dir = get_string(j, "direction", "rx", where);
  if (dir == "rx") c.direction = Direction::rx;
  else if (dir == "tx") c.direction = Direction::tx;
  else if (dir == "loopback") c.direction = Direction::loopback;
  else bad(where + ".direction", "must be rx, tx or loopback, got \"" + dir + "\"");
  c.channels = unsigned(get_uint(j, "channels", 1, 1, 255, where));
  try {
    c.sample_format = parse_sample_format(get_string(j, "sample_format", "sc16", where));
  } catch (const std::invalid_argument& e) {
    bad(where + ".sample_format", e.what());
  }
  c.rate_sps = get_number(j, "rate_sps", 10e6, where);
  if (!(c.rate_sps > 0) || !std::isfinite(c.rate_sps)) bad(where + ".rate_sps", "must be > 0");
  c.frame_bytes = std::uint32_t(get_uint(j, "frame_bytes", 8000, kFrameHeaderBytes + 1, 1u << 24, where));
  if (c.samples_per_frame() == 0)
    bad(where + ".frame_bytes", "too small: " + std::to_string(c.frame_bytes) + " leaves no room for one sample of " +
                                    std::to_string(c.channels) + " channel(s) after the 48-byte header");
  if (j.contains("transport")) c.transport = parse_transport(j["transport"], "stream config.transport");
  if (c.transport.kind == TransportKind::udp && c.frame_bytes > 65507)
    bad(where + ".frame_bytes", "must be <= 65507 for udp (one datagram per frame), got " + std::to_string(c.frame_bytes));
  c.pattern = get_string(j, "pattern", "counter", where);
  if (c.pattern != "counter") bad(where + ".pattern", "only \"counter\" is implemented, got \"" + c.pattern + "\"");
  c.stream_id = std::uint16_t(get_uint(j, "stream_id", 0, 0, 65535, where));
  if (j.contains("crc") && !j["crc"].is_boolean()) bad(where + ".crc", "must be true or false");
  c.crc = j.value("crc", false);
  c.tx_lead_frames = std::uint32_t(get_uint(j, "tx_lead_frames", 0, 0, 1u << 16, where));
  return c;
}

}  // namespace hilrig
