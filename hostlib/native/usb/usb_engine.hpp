// USB streaming engine: per direction N bulk transfers of S bytes in flight, each
// resubmitted once done with, carrying hilrig frames (docs/usb.md). The IN direction
// is a FrameSource fed by the completed IN transfers (a transfer is a batch, taken and
// released like a UDP batch or ring slots, then resubmitted) and checked by the core's
// RxChecker; OUT transfers are built by PatternFramer; so a USB stream is counted
// exactly like a UDP or shm one. The bytes move through a UsbBackend: libusb-1.0 async
// (usb_libusb.hpp) for real devices, the simulator's USB link (usb_sim_backend.hpp),
// the bus model's in-process device (usb_model_backend.hpp). One event thread per
// engine (one backend context) runs both directions.
#pragma once
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "hilrig/core/config.hpp"
#include "hilrig/core/rx_check.hpp"
#include "hilrig/io/frame_source.hpp"
#include "hilrig/io/streams.hpp"

namespace hilrig {

class PatternFramer;

// How one transfer ended, whatever the backend (libusb: libusb_transfer_status).
enum class UsbStatus : std::uint8_t {
  completed,  // done; actual bytes may be fewer than asked (a short transfer)
  timed_out,  // the transfer's timeout passed; actual bytes still count
  stall,      // the endpoint halted (STALL handshake)
  no_device,  // the device is gone (unplugged, reset away)
  overflow,   // babble: the device sent more than the buffer holds; the data is lost
  cancelled,  // cancelled by us (stop)
  error,      // any other failure
};
const char* usb_status_name(UsbStatus s);

// One bulk transfer as the engine sees it. The backend keeps its own object in
// backend_handle and fills actual/status before calling the completion.
struct UsbTransfer {
  std::uint8_t endpoint = 0;  // bit 7 set: IN
  std::uint8_t* buffer = nullptr;
  std::uint32_t length = 0;  // bytes asked for (IN) or to send (OUT)
  std::uint32_t actual = 0;
  UsbStatus status = UsbStatus::completed;
  std::uint32_t timeout_ms = 0;  // 0 = none
  std::size_t index = 0;         // the engine's slot
  void* backend_handle = nullptr;
  bool in_flight = false;
  std::vector<std::uint8_t> storage;
};

// What a backend gives the engine. All calls but max_packet_bytes/describe happen on
// the engine's event thread (plus prepare/release before start/after the thread ends).
class UsbBackend {
 public:
  using Completion = void (*)(void* engine, UsbTransfer& t);
  virtual ~UsbBackend() = default;
  // Names the device in errors: "usb 1d50:6108 serial X (bus 1, address 4)".
  virtual std::string describe() const = 0;
  // wMaxPacketSize of the endpoint (bulk: 512 at high speed, 1024 at SuperSpeed).
  virtual std::uint32_t max_packet_bytes(std::uint8_t endpoint) const = 0;
  // Binds t to a backend transfer that calls done(engine, t) on completion.
  virtual void prepare(UsbTransfer& t, Completion done, void* engine) = 0;
  // Queues t; on failure returns the status that says why (no_device, stall, error).
  virtual UsbStatus submit(UsbTransfer& t) = 0;
  virtual void cancel(UsbTransfer& t) = 0;
  virtual void release(UsbTransfer& t) = 0;
  // Runs completions for up to timeout_us (the event loop of this backend's context).
  virtual void handle_events(std::uint32_t timeout_us) = 0;
  // What the device side reports about itself, if the backend knows (a simulated device).
  virtual nlohmann::json device_stats() const { return nlohmann::json::object(); }
};

// How frames sit in transfers. packed: whole frames back to back, a transfer holds
// transfer_bytes / frame_bytes of them (a device-side FIFO bridge streaming full
// transfers). short_packet: every frame ends with a short packet, so an IN transfer
// completes after one frame (UHD's B2xx scheme; frame_bytes must not be a multiple of
// the max packet size, or the frame would need a zero-length packet to end).
enum class UsbFraming : std::uint8_t { packed, short_packet };

struct UsbLinkConfig {
  std::uint32_t transfer_bytes = defaults::kUsbTransferBytes;  // S: bytes per bulk transfer
  std::uint32_t transfers = defaults::kUsbTransfers;           // N: transfers in flight per direction
  UsbFraming framing = UsbFraming::packed;
  std::uint8_t endpoint_in = 0x81, endpoint_out = 0x01;
  std::uint32_t timeout_ms = 0;  // per transfer; 0 = none (RxChecker counts idle timeouts)
};

// transport {"kind":"usb", "transfer_bytes", "transfers", "framing": "packed"|"short_packet",
// "endpoint_in", "endpoint_out", "timeout_ms"}; throws std::invalid_argument naming the key.
UsbLinkConfig parse_usb_link(const nlohmann::json& transport);

// The usbfs limit on buffers in flight: /sys/module/usbcore/parameters/usbfs_memory_mb
// (0 there means no limit) where the file exists, else the kernel default 16 MiB.
// path is for tests.
std::uint64_t usbfs_memory_limit_bytes(const char* path = "/sys/module/usbcore/parameters/usbfs_memory_mb");

// Every reason this geometry cannot work, each with its fix (empty = fine).
// directions = 1 (rx or tx) or 2 (both at once); limit_bytes from usbfs_memory_limit_bytes.
std::vector<std::string> usb_geometry_problems(const UsbLinkConfig& link, std::uint32_t frame_bytes,
                                               std::uint32_t max_packet_bytes, unsigned directions,
                                               std::uint64_t limit_bytes);

// USB-only counters (the frame counters are RxCounters / TxCounters).
struct UsbCounters {
  using C = std::atomic<std::uint64_t>;
  C transfers_completed{0}, bytes_transferred{0}, short_transfers{0}, timeouts{0}, stalls{0};
  C no_device{0}, overflows{0}, errors{0}, submit_errors{0}, abandoned{0};
};

class UsbEngine final : private TransferFeed {
 public:
  // cfg.direction: rx (IN only), tx (OUT only), loopback (both). Checks the geometry
  // against the endpoints' max packet size; throws std::invalid_argument with the fix.
  UsbEngine(std::unique_ptr<UsbBackend> backend, const StreamConfig& cfg, const UsbLinkConfig& link);
  ~UsbEngine();
  UsbEngine(const UsbEngine&) = delete;
  UsbEngine& operator=(const UsbEngine&) = delete;

  void start();
  // Stops: IN transfers are cancelled, OUT sends one more frame flagged EOB; waits at
  // most kStopDeadlineNs for the transfers to come back (a device that never answers
  // is abandoned, counted, never waited on forever). Idempotent.
  void stop();
  bool running() const { return thread_.joinable() && !finished_.load(); }
  // Non-empty after a fatal transfer error (stall, device gone, ...): names the device.
  std::string error() const;
  // {"device", "rx": RxStream keys, "tx": TxStream keys, "usb": usb_* counters, "error",
  //  "device_stats": the backend's device_stats()}.
  nlohmann::json stats() const;
  const UsbBackend& backend() const { return *backend_; }

  static constexpr std::uint64_t kStopDeadlineNs = 2'000'000'000;

 private:
  static void on_complete(void* self, UsbTransfer& t);
  void complete(UsbTransfer& t);
  void run();
  void fail(const std::string& what);
  void submit(UsbTransfer& t);
  void fill_out(UsbTransfer& t, bool eob);
  // The feed of in_ (event thread): completed IN transfers in completion order; the one
  // taken is resubmitted when in_ releases its batch, unless the stream is stopping.
  bool next_transfer(std::uint64_t timeout_ns, Transfer* out) override;
  void release_transfer() override;
  void on_short_transfer() override;

  std::unique_ptr<UsbBackend> backend_;
  StreamConfig cfg_;
  UsbLinkConfig link_;
  std::uint32_t frame_len_ = 0, frames_per_out_ = 1;
  std::vector<std::unique_ptr<UsbTransfer>> transfers_;
  std::thread thread_;
  std::atomic<bool> stop_{false}, finished_{false};
  bool stopping_ = false, eob_sent_ = false;  // event thread only
  unsigned in_flight_ = 0;                    // event thread only
  std::uint64_t tx_seq_ = 0;                  // event thread only
  std::unique_ptr<PatternFramer> framer_;
  std::deque<UsbTransfer*> in_done_;  // event thread only
  UsbTransfer* in_taken_ = nullptr;   // event thread only
  std::unique_ptr<FrameSource> in_;   // rx and loopback
  std::unique_ptr<RxChecker> checker_;
  RxCounters rx_;
  TxCounters tx_;
  UsbCounters usb_;
  mutable std::mutex error_mu_;
  std::string error_;
  std::uint64_t thread_cpu_done_ns_ = 0;
};

}  // namespace hilrig
