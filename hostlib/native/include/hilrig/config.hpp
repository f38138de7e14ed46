// Stream config shared by RxStream/TxStream (host) and the simulator's configure.
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "hilrig/frame.hpp"

namespace hilrig {

enum class Direction { rx, tx, loopback };
enum class TransportKind { udp, shm };

struct TransportSpec {
  TransportKind kind = TransportKind::udp;
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::uint32_t socket_buffer_bytes = 4u << 20;  // at least; grown to the rate (StreamConfig::socket_buffer_for_rate)
  bool gso = true;        // udp send: UDP_SEGMENT batches when the kernel takes them
  bool gro = true;        // udp receive: UDP_GRO coalesced receives when the kernel takes them
  bool busy_poll = false; // udp receive: spin on the socket (SO_BUSY_POLL, no poll() sleep)
  std::string path;        // shm: "/proc/<pid>/fd/<n>"; empty = create a ring here
  std::uint32_t slots = 256;
};

struct StreamConfig {
  Direction direction = Direction::rx;
  unsigned channels = 1;
  SampleFormat sample_format = SampleFormat::sc16;
  double rate_sps = 10e6;
  std::uint32_t frame_bytes = 8000;  // whole frame incl. the 48-byte header
  TransportSpec transport;
  std::string pattern = "counter";
  std::uint16_t stream_id = 0;
  bool crc = false;
  std::uint32_t tx_lead_frames = 0;  // TX: frames sent ahead of the rate clock; 0 = automatic

  // Derived: the payload is the largest whole number of ticks that fits frame_bytes.
  std::uint32_t tick_bytes() const { return bytes_per_sample(sample_format) * channels; }
  std::uint32_t samples_per_frame() const { return (frame_bytes - std::uint32_t(kFrameHeaderBytes)) / tick_bytes(); }
  std::uint32_t payload_bytes() const { return samples_per_frame() * tick_bytes(); }
  std::uint32_t words_per_frame() const { return samples_per_frame() * channels; }
  // Socket buffer for this stream: the configured bytes, grown to hold
  // kSocketBufferSeconds of the stream at rate_sps (capped at kSocketBufferMaxBytes,
  // what UHD's docs ask rmem_max to allow), so a scheduling hiccup is absorbed.
  static constexpr double kSocketBufferSeconds = 0.05;
  static constexpr std::uint32_t kSocketBufferMaxBytes = 32u << 20;
  std::uint32_t socket_buffer_for_rate() const;
  // Slots of a host receive ring: the configured slots, grown to kRingSeconds of the
  // stream (at most kRingMaxBytes). A ring of only ~2 ms couples producer and consumer:
  // after any stall they catch up in lock step, waking each other every batch, and
  // on a VM those wake-ups are slow enough that the backlog never drains (issue 4).
  static constexpr double kRingSeconds = 0.05;
  static constexpr std::uint64_t kRingMaxBytes = 256ull << 20;
  std::uint32_t ring_slots_for_rate() const;
};

// Parses and checks a config; throws std::invalid_argument naming the key and what is allowed.
StreamConfig parse_stream_config(const nlohmann::json& j);
TransportSpec parse_transport(const nlohmann::json& j, const char* where);
const char* direction_name(Direction d);

}  // namespace hilrig
