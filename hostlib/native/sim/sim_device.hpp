// The simulated device behind hilrig-sim: real-time RX framing with a bounded FIFO
// that overflows like hardware, TX consumption with underrun detection, TX->RX
// loopback, and seeded fault injection. Controlled by JSON requests (sim/main.cpp).
// Its device core is C++ (PatternFramer, RxChecker), or with use_rtl() the RTL of
// firmware/rtl/loopback_top as a Verilator model (hilrig/rtl/rtl_core.hpp): RX frames come
// out of the RTL packetizer, TX frames go into the RTL checker, the links and the
// fault plan are the same.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "hilrig/core/config.hpp"
#include "hilrig/core/counter.hpp"
#include "hilrig/core/fault_plan.hpp"
#include "hilrig/core/rx_check.hpp"
#include "hilrig/rtl/rtl_core.hpp"
#include "hilrig/io/frame_source.hpp"
#include "hilrig/io/shm_ring.hpp"
#include "hilrig/sim/playout_clock.hpp"
#include "hilrig/sim/sim_link.hpp"
#include "hilrig/io/udp.hpp"
#include "hilrig/usb/usb_sim_channel.hpp"

namespace hilrig {

class SimDevice {
 public:
  SimDevice() = default;
  ~SimDevice();
  // Takes a complete SimConfig JSON (+ optional "rx_dest"); returns the endpoint JSON
  // (TX/loopback: where the host sends; RX: where the sim sends).
  nlohmann::json configure(const nlohmann::json& req);
  // The effective config (to_json(SimConfig)) and where its faults sit.
  nlohmann::json config_json() const;
  nlohmann::json fault_plan_json() const;
  void start();
  nlohmann::json stop();  // RX: last frame carries EOB; returns final stats
  nlohmann::json stats() const;
  bool running() const { return thread_.joinable() || tx_thread_.joinable(); }
  // The RTL as the device core (before configure). firmware_json: what the device runs
  // (hello): {"firmware": "model"} or the RTL image, version and rtl_git_hash.
  void use_rtl(std::unique_ptr<RtlCore> core) { rtl_ = std::move(core); }
  nlohmann::json firmware_json() const;

 private:
  template <class Link>
  void run_rx(Link& link);
  void run_tx();  // tx, loopback, and the TX side of rx+tx
  template <class Link>
  void run_rtl(Link* rx);  // the RTL core, every direction (rx: the RX link, nullptr for tx)
  template <class Link>
  class RtlRun;  // run_rtl's steps (sim_rtl.cpp)
  void check_rtl_stream(const SimConfig& sc) const;
  void reset_counters();

  SimConfig cfg_;
  bool configured_ = false;
  FaultPlan plan_;
  // RX path
  UdpSocket rx_sock_;
  std::unique_ptr<FrameSink> rx_sink_;  // tcp: connected to the host's receiver
  std::unique_ptr<ShmProducer> rx_ring_;
  // TX path (host -> sim)
  std::unique_ptr<FrameSource> tx_in_;
  // USB link (either direction): the channel the host's UsbEngine submits transfers into
  std::unique_ptr<UsbSimDeviceEnd> usb_;

  std::thread thread_;
  std::thread tx_thread_;                   // rx+tx: the TX side runs beside the RX side (thread_)
  std::unique_ptr<UsbSimLink> usb_shared_;  // rx+tx over usb: the one bus both threads use
  std::atomic<bool> stop_{false};

  using C = Counter;
  C frames_sent_{0}, samples_sent_{0}, overflow_events_{0}, overflow_frames_{0}, link_errors_{0};
  C injected_drop_{0}, injected_corrupt_{0}, injected_duplicate_{0}, injected_reorder_{0};
  C underruns_{0}, injected_stalls_{0}, injected_stall_ns_{0};
  // Why RX frames overflowed (issue 4): the link had no room (host consumer slow) or
  // it had room and the producer itself ran late (the sim thread was not running).
  C overflow_link_full_frames_{0}, overflow_late_frames_{0};
  C producer_longest_gap_ns_{0};  // longest time between two passes of the RX loop
  C fifo_peak_frames_{0};         // highest RX FIFO level seen (frames due, not yet on the link)
  std::unique_ptr<RxCounters> tx_;  // what the device received on TX
  std::unique_ptr<PlayoutClock> playout_;  // what the device's TX sample clock consumed
  // The RTL core (use_rtl) and its figures, published by the streaming thread.
  std::unique_ptr<RtlCore> rtl_;
  std::uint16_t rtl_rate_div_ = 1;  // rx_rate_div = tx_rate_div = master_clock_hz / rate_sps
  struct RtlStats {
    C cycles{0}, pauses{0}, paused_cycles{0}, ticks_lost{0}, thread_cpu_ns{0};
    C frames_ok{0}, samples_ok{0}, malformed{0}, seq_errors{0}, missing{0}, late{0}, pattern_errors{0}, consumed_beats{0};
  } rtl_stats_;
  void publish_rtl(const RtlCounters& c);
  nlohmann::json with_rtl_stats(nlohmann::json s) const;
};

}  // namespace hilrig
