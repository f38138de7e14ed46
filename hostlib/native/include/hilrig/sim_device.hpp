// The simulated device behind hilrig-sim: real-time RX framing with a bounded FIFO
// that overflows like hardware, TX consumption with underrun detection, TX->RX
// loopback, and seeded fault injection. Controlled by JSON requests (sim/main.cpp).
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "hilrig/config.hpp"
#include "hilrig/rx_check.hpp"
#include "hilrig/shm_ring.hpp"
#include "hilrig/udp.hpp"

namespace hilrig {

struct FaultSpec {
  std::uint64_t seed = 1;
  std::uint64_t drop_frames = 0, corrupt_samples = 0, duplicate_frames = 0, reorder_frames = 0;
};

// Where the seeded faults land: frame seq -> action. Faults sit on seq 16 + 4*j so that
// no two touch the same or neighbouring frames (a reorder swaps seq and seq+1).
struct FaultPlan {
  enum Kind : std::uint8_t { kDrop, kDuplicate, kReorder, kCorrupt };
  struct Entry {
    Kind kind;
    std::vector<std::uint32_t> words;  // kCorrupt: word indexes in the payload, one per sample
    std::uint32_t xor_mask = 0;        // nonzero within the word width: the word always changes
  };
  std::map<std::uint64_t, Entry> by_seq;
  static FaultPlan make(const FaultSpec& f, const StreamConfig& cfg);
};

class SimDevice {
 public:
  SimDevice() = default;
  ~SimDevice();
  // Returns the endpoint JSON (TX/loopback: where the host sends; RX: where the sim sends).
  nlohmann::json configure(const nlohmann::json& req);
  void start();
  nlohmann::json stop();  // RX: last frame carries EOB; returns final stats
  nlohmann::json stats() const;
  bool running() const { return thread_.joinable(); }

 private:
  // RX link (sim -> host).
  struct RxLink;
  void run_rx();
  void run_tx();  // tx and loopback
  void reset_counters();

  StreamConfig cfg_;
  bool configured_ = false;
  double master_clock_hz_ = 0;
  std::uint32_t fifo_frames_ = 64;
  FaultSpec faults_;
  FaultPlan plan_;
  // RX path
  UdpSocket rx_sock_;
  std::unique_ptr<ShmRing> rx_ring_;
  // TX path (host -> sim)
  UdpSocket tx_sock_;
  std::unique_ptr<ShmRing> tx_ring_;

  std::thread thread_;
  std::atomic<bool> stop_{false};

  using C = std::atomic<std::uint64_t>;
  C frames_sent_{0}, samples_sent_{0}, overflow_events_{0}, overflow_frames_{0}, link_errors_{0};
  C injected_drop_{0}, injected_corrupt_{0}, injected_duplicate_{0}, injected_reorder_{0};
  C underruns_{0};
  // Why RX frames overflowed (issue 4): the link had no room (host consumer slow) or
  // it had room and the producer itself ran late (the sim thread was not running).
  C overflow_link_full_frames_{0}, overflow_late_frames_{0};
  C producer_longest_gap_ns_{0};  // longest time between two passes of the RX loop
  C fifo_peak_frames_{0};         // highest RX FIFO level seen (frames due, not yet on the link)
  std::unique_ptr<RxCounters> tx_;  // what the device received on TX
};

}  // namespace hilrig
