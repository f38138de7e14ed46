// The one stream config: its fields, its defaults (defined here and nowhere else),
// its JSON form. Used by RxStream/TxStream (host), the simulator's configure, the
// SoapySDR module's stream args and Python (hostlib.transports reads the defaults
// through hostlib._native). docs/architecture.md "Stream config" lists every key.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hilrig/core/frame.hpp"
#include "hilrig/io/shm_ring.hpp"  // RingPublish
#include "hilrig/rf/signal.hpp"

namespace hilrig {

// Every default of the stream config, once.
namespace defaults {
inline constexpr std::uint32_t kFrameBytes = 8000;              // whole frame incl. the 48-byte header
inline constexpr std::uint32_t kUdpMaxFrameBytes = 65507;       // largest IPv4 UDP payload (65535 - 8 - 20)
inline constexpr std::uint32_t kSocketBufferBytes = 4u << 20;   // SO_RCVBUF/SO_SNDBUF (grown to the rate when resolved)
inline constexpr std::uint64_t kRingBytes = 8u << 20;           // shm ring: slots = this / frame_bytes ...
inline constexpr std::uint32_t kRingMinSlots = 16, kRingMaxSlots = 65536;  // ... within these bounds
inline constexpr std::uint32_t kRingSlotsAccepted = 1u << 20;  // the most slots a config may hold (the parser's bound)
// shm: the ring's publish strategy (docs/performance.md "Publish strategies")
inline constexpr RingPublish kRingPublish = kDefaultRingPublish;
// Sizing by rate (resolve_stream_config): what holds frames between sender and receiver
// holds this long of the stream, so a scheduling hiccup of either side loses nothing.
// The socket buffer at most kSocketBufferMaxBytes (what UHD's docs ask rmem_max to
// allow). A ring of only ~2 ms couples producer and consumer: after any stall they catch
// up in lock step, waking each other every batch, and on a VM those wake-ups are slow
// enough that the backlog never drains; at most kRingMaxBytes of slots.
inline constexpr double kSocketBufferSeconds = 0.05;
inline constexpr std::uint32_t kSocketBufferMaxBytes = 32u << 20;
inline constexpr double kRingSeconds = 0.05;
inline constexpr std::uint64_t kRingMaxBytes = 256ull << 20;
// Simulator device FIFO: 128 MiB worth of frames, like the DRAM FIFO of an X310-class
// radio (~32 ms at 1 GS/s sc16: rides out the ~10 ms stalls of a shared VM, still
// overflows within a second when the host cannot keep up); at least kFifoMinFrames.
inline constexpr std::uint64_t kFifoBytes = 128ull << 20;
inline constexpr std::uint32_t kFifoMinFrames = 16;
inline constexpr std::uint32_t kFifoMaxFrames = 1u << 20;  // the most the simulator accepts (fifo_frames)
inline constexpr double kRateSps = 10e6;
inline constexpr double kMasterClockHz = 200e6;
inline constexpr const char* kHost = "127.0.0.1";
inline constexpr std::uint64_t kFaultSeed = 1;
// USB (docs/usb.md): the bus, and the host's bulk transfers: N of S bytes in flight per direction.
inline constexpr const char* kUsbLink = "usb2";
inline constexpr std::uint32_t kUsbTransferBytes = 16384, kUsbTransfers = 16;
// tcp: how long a sender retries connecting to a receiver that is not listening yet.
inline constexpr std::uint64_t kTcpConnectTimeoutNs = 5'000'000'000;

constexpr std::uint32_t ring_slots(std::uint32_t frame_bytes) {
  const std::uint64_t s = kRingBytes / (frame_bytes ? frame_bytes : 1);
  return std::uint32_t(s < kRingMinSlots ? kRingMinSlots : s > kRingMaxSlots ? kRingMaxSlots : s);
}
constexpr std::uint32_t fifo_frames(std::uint32_t frame_bytes) {
  const std::uint64_t f = kFifoBytes / (frame_bytes ? frame_bytes : 1);
  return std::uint32_t(f < kFifoMinFrames ? kFifoMinFrames : f > kFifoMaxFrames ? kFifoMaxFrames : f);
}
}  // namespace defaults

// rx_tx ("rx+tx"): independent RX and TX streams at once on one device (not an echo).
enum class Direction { rx, tx, loopback, rx_tx };
// tcp: frames back to back on one connection (docs/transports.md); usb: the simulator's USB link (docs/usb.md)
enum class TransportKind { udp, shm, usb, tcp };

// udp send: per-datagram pacing (TxPacer::Datagrams; docs/dsl.md "pacing"). At most one
// field is non-zero; all zero = unpaced. A paced stream sends one datagram per call, so
// the resolved config has gso off.
struct PacingSpec {
  std::uint64_t gap_ns = 0;     // idle time after each send returns (the lab's "gap")
  std::uint64_t period_ns = 0;  // send start to send start
  std::uint64_t rate_bps = 0;   // datagram bits per second: period = frame_bytes * 8 / rate
  bool any() const { return gap_ns || period_ns || rate_bps; }
  // Send start to send start for datagrams of `bytes` (gap: 0, it follows each send).
  std::uint64_t period_for(std::uint32_t bytes) const {
    return period_ns ? period_ns : rate_bps ? std::uint64_t(double(bytes) * 8e9 / double(rate_bps) + 0.5) : 0;
  }
};
inline constexpr std::uint64_t kPacingMaxNs = 1'000'000'000, kPacingMaxBps = 1'000'000'000'000;

struct TransportSpec {
  TransportKind kind = TransportKind::udp;
  std::string host = defaults::kHost;
  std::uint16_t port = 0;
  std::uint32_t socket_buffer_bytes = defaults::kSocketBufferBytes;  // SO_RCVBUF/SO_SNDBUF asked of the kernel (udp, tcp)
  bool gso = true;        // udp send: UDP_SEGMENT batches when the kernel takes them
  bool gro = true;        // udp receive: UDP_GRO coalesced receives when the kernel takes them
  bool busy_poll = false; // udp receive: spin on the socket (SO_BUSY_POLL, no poll() sleep)
  PacingSpec pacing;       // udp send: per-datagram pacing (none by default)
  // tcp (udp's host, port, socket_buffer_bytes too): the receiver listens, the sender connects.
  std::uint32_t write_bytes = 0;  // tcp send: bytes per send() call; 0 = one batch per call
  std::string congestion;         // tcp send: TCP_CONGESTION ("cubic", "bbr", ...); empty = the kernel's default
  bool nodelay = false;           // tcp send: TCP_NODELAY
  std::string path;        // shm: "/proc/<pid>/fd/<n>"; empty = create a ring here
  std::uint32_t slots = defaults::ring_slots(defaults::kFrameBytes);
  RingPublish publish = defaults::kRingPublish;  // shm: how the ring publishes (both ends use it)
  // usb (the simulator's USB link; the host side is a UsbEngine, docs/usb.md): the bus
  // ("usb2" | "usb3") and the host's transfers (N x S bytes in flight per direction).
  std::string link = defaults::kUsbLink;
  std::uint32_t transfer_bytes = defaults::kUsbTransferBytes, transfers = defaults::kUsbTransfers;
};

struct StreamConfig {
  Direction direction = Direction::rx;
  unsigned channels = 1;
  SampleFormat sample_format = SampleFormat::sc16;
  double rate_sps = defaults::kRateSps;
  std::uint32_t frame_bytes = defaults::kFrameBytes;  // whole frame incl. the 48-byte header
  TransportSpec transport;
  // "counter": the payload is the counter pattern, checked word by word; "signal": it is
  // `signal` (RF cases: tones through the channel, generated by the device, rx only),
  // of which the host keeps signal.capture_samples samples for analysis.
  std::string pattern = "counter";
  rf::SignalSpec signal;  // pattern "signal" only; JSON null otherwise
  std::uint16_t stream_id = 0;
  bool crc = false;
  std::uint32_t tx_lead_frames = 0;  // TX: frames sent ahead of the rate clock; 0 = automatic

  // Derived: the payload is the largest whole number of ticks that fits frame_bytes.
  std::uint32_t tick_bytes() const { return bytes_per_sample(sample_format) * channels; }
  std::uint32_t samples_per_frame() const { return (frame_bytes - std::uint32_t(kFrameHeaderBytes)) / tick_bytes(); }
  std::uint32_t payload_bytes() const { return samples_per_frame() * tick_bytes(); }
  std::uint32_t words_per_frame() const { return samples_per_frame() * channels; }
};

// Seeded faults the simulator injects (docs/architecture.md "Simulator"): on the
// direction of the stream (RX: what it sends; TX/loopback: what it receives).
struct FaultSpec {
  std::uint64_t seed = defaults::kFaultSeed;
  std::uint64_t drop_frames = 0, corrupt_samples = 0, duplicate_frames = 0, reorder_frames = 0;
  std::uint64_t stall_ms = 0;       // TX/loopback: the device stops consuming once for this long
  std::uint64_t window_frames = 0;  // faults are placed on seq [16, window_frames); 0 = compact placement
  std::uint64_t die_after_ms = 0;   // hilrig-sim kills itself (SIGKILL) this long after start: the device is gone; 0 = never
  bool any() const { return drop_frames || corrupt_samples || duplicate_frames || reorder_frames || stall_ms; }
};
// The fault keys, in JSON order: one list for the simulator, the SoapySDR module and Python.
inline constexpr const char* kFaultKeys[] = {"seed",           "drop_frames", "corrupt_samples", "duplicate_frames",
                                             "reorder_frames", "stall_ms",    "window_frames",  "die_after_ms"};

// What hilrig-sim's configure takes: the stream plus the device's own settings.
struct SimConfig {
  StreamConfig stream;
  double master_clock_hz = defaults::kMasterClockHz;
  std::uint32_t fifo_frames = defaults::fifo_frames(defaults::kFrameBytes);
  FaultSpec faults;
};

// A config with every default for this transport and frame size (slots and FIFO
// depth follow the frame size).
StreamConfig default_stream_config(TransportKind kind, std::uint32_t frame_bytes = defaults::kFrameBytes);
SimConfig default_sim_config(TransportKind kind, std::uint32_t frame_bytes = defaults::kFrameBytes);

// The effective config, resolved once where a config enters (the case loader through
// hostlib._native.resolve_stream_config, the SoapySDR module's stream args, the bench, a
// test): the defaults for its transport kind and frame size (default_stream_config), the
// given keys over them (transport key by key), checked by stream_config_from_json, then
// sized by rate: udp/tcp socket_buffer_bytes grown to hold kSocketBufferSeconds of the
// stream, and shm slots, unless the partial config gives them, grown to kRingSeconds
// (never shrunk; given slots are kept as given, so resolving twice changes nothing: a
// ring far beyond the last-level cache sends every frame through DRAM, which at GS/s
// rates is the limit, docs/performance.md "Simulator over shm at its limit"). Every
// stream opener (FrameSource, FrameSink, RxStream, TxStream, the simulator) uses a
// config's sizes as given. Throws std::invalid_argument naming the key.
StreamConfig resolve_stream_config(const nlohmann::json& partial, const std::string& where = "stream config");
// The same for a config built in code (every field set): checked, then sized by rate.
StreamConfig resolve_stream_config(const StreamConfig& complete, const std::string& where = "stream config");

// JSON round trip. to_json writes every key; the parsers require every key (a
// missing key is an error naming it, never a silent default) and check ranges;
// they throw std::invalid_argument naming the key and what is allowed.
nlohmann::json to_json(const StreamConfig& c);
nlohmann::json to_json(const TransportSpec& t);
nlohmann::json to_json(const PacingSpec& p);
nlohmann::json to_json(const rf::SignalSpec& s);
rf::SignalSpec signal_from_json(const nlohmann::json& j, double rate_sps, const std::string& where);
// What signal_from_json accepts: at least kMinToneSamples, at most kMaxCaptureSamples.
inline constexpr std::uint32_t kMaxCaptureSamples = 1u << 24;
PacingSpec pacing_from_json(const nlohmann::json& j, const std::string& where);
nlohmann::json to_json(const FaultSpec& f);
nlohmann::json to_json(const SimConfig& c);  // the stream keys + master_clock_hz, fifo_frames, faults
StreamConfig stream_config_from_json(const nlohmann::json& j, const std::string& where = "stream config");
TransportSpec transport_from_json(const nlohmann::json& j, const std::string& where);
FaultSpec faults_from_json(const nlohmann::json& j, const std::string& where = "faults");
SimConfig sim_config_from_json(const nlohmann::json& j, const std::string& where = "configure");
// An endpoint (RxStream::endpoint(), the simulator's answer) applied to a complete
// transport: kind must match; udp and tcp take host/port, shm path (and slots when given);
// every other field keeps base's value.
TransportSpec transport_at_endpoint(const TransportSpec& base, const nlohmann::json& endpoint, const std::string& where);

// The stream args of the SoapySDR module driver=hilrig, generated from the config
// above: key, JSON pointer into to_json(SimConfig), type, what it is.
struct StreamArg {
  const char* key;
  const char* pointer;  // e.g. "/transport/slots"
  enum Type { kInt, kString, kBool } type;
  const char* description;
  std::vector<std::string> options;
};
const std::vector<StreamArg>& stream_args();
// SimConfig from SoapySDR-style string args (unknown keys and bad values throw).
SimConfig sim_config_from_args(const std::map<std::string, std::string>& args, Direction direction, unsigned channels,
                               double rate_sps, double master_clock_hz);

const char* direction_name(Direction d);
const char* transport_kind_name(TransportKind k);
TransportKind parse_transport_kind(const std::string& s, const std::string& where);

}  // namespace hilrig

namespace hilrig {
// Older names of the strict parsers.
inline StreamConfig parse_stream_config(const nlohmann::json& j) { return stream_config_from_json(j); }
inline TransportSpec parse_transport(const nlohmann::json& j, const char* where) { return transport_from_json(j, where); }
}  // namespace hilrig
