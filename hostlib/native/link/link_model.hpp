// The link model of hilrig-link: what one direction of an emulated network link does to
// each packet, decided by a seeded generator and scheduled in the caller's time (real in
// the emulator, virtual in the tests). No I/O here: the emulator's pump (link_pump.hpp)
// feeds packets in and writes out what falls due.
//
// Per packet, in this order (docs/long-link.md "The model"):
//   1. loss: Bernoulli(loss), then the Gilbert-Elliott chain (loss_bad in the bad state,
//      loss_good in the good one; the state moves good->bad with p, bad->good with r after
//      each packet). A lost packet never reaches the queue.
//   2. duplicate: with probability `duplicate` a second copy follows the packet through
//      the queue (it takes its own share of the rate).
//   3. queue + rate: a token bucket of one packet's depth at rate_bps serialises the
//      packets; a packet that would find more than queue_bytes ahead of it (itself
//      included) is dropped (drop-tail). rate_bps 0: no rate limit and no queue.
//   4. delay: due = serialised + delay_ns + jitter (uniform in [-jitter, +jitter], never
//      below 0). The link keeps its order (a packet is never due before its predecessor),
//      except that with probability `reorder` a packet skips the delay and leaves as soon
//      as it is serialised (netem's reorder), ahead of the packets still in flight.
#pragma once
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hilrig/core/counter.hpp"
#include "hilrig/core/histogram.hpp"

namespace hilrig {

// One direction of a link; the JSON keys are these names (link_spec_from_json).
struct LinkSpec {
  double rate_bps = 0;                // bits per second on the wire (IP packet bytes x 8); 0 = unlimited
  std::uint64_t delay_ns = 0;         // one-way propagation delay
  std::uint64_t jitter_ns = 0;        // +- uniform, order kept
  std::uint64_t queue_bytes = 0;      // drop-tail limit ahead of the rate; 0 = kDefaultQueueBytes
  double loss = 0;                    // Bernoulli loss probability per packet
  double burst_p = 0;                 // Gilbert-Elliott: good -> bad per packet; 0 = no bursts
  double burst_r = 1;                 // Gilbert-Elliott: bad -> good per packet (mean burst 1/r)
  double burst_loss_bad = 1;          // loss probability in the bad state
  double burst_loss_good = 0;         // loss probability in the good state
  double reorder = 0;                 // probability a packet skips the delay (needs delay_ns > 0)
  double duplicate = 0;               // probability a packet is sent twice
  std::uint64_t seed = 1;

  // Linux's default txqueuelen (1000 packets) of 1500-byte packets.
  static constexpr std::uint64_t kDefaultQueueBytes = 1'500'000;
  std::uint64_t queue_limit() const { return queue_bytes ? queue_bytes : kDefaultQueueBytes; }
};

// Every key, the way to_json writes it; the parser requires each key it is given to be
// one of these and fills the rest with LinkSpec's defaults. Throws std::invalid_argument
// "<where>.<key>: ..." for a bad key or value.
LinkSpec link_spec_from_json(const nlohmann::json& j, const std::string& where = "link");
nlohmann::json to_json(const LinkSpec& s);

// What one direction did. Counters: one writer (the direction's thread), any reader.
struct LinkStats {
  Counter packets_in{0}, bytes_in{0};
  Counter packets_out{0}, bytes_out{0};
  Counter dropped_queue{0}, dropped_queue_bytes{0};
  Counter dropped_loss{0};
  Counter duplicated{0};
  Counter reordered{0};              // packets sent ahead of the delay (reorder)
  Counter queue_bytes_max{0};        // the deepest the queue got
  LatencyHistogram delay_ns;         // in to out, as taken out (the model's due time in virtual time)
  LatencyHistogram late_ns;          // taken out after the due time by this much (the pump's timing error)
};
nlohmann::json to_json(const LinkStats& s, const LinkSpec& spec);
// count, p50, p90, p99, p999, max: the report's form of a histogram
nlohmann::json histogram_json(const LatencyHistogram& h);

class LinkModel {
 public:
  explicit LinkModel(const LinkSpec& spec);

  struct Packet {
    std::uint64_t in_ns = 0;
    std::uint64_t due_ns = 0;
    std::uint64_t order = 0;            // arrival order, ties of due_ns leave in it
    std::vector<unsigned char> data;    // the bytes (the tests may leave it empty and give size)
    std::uint32_t size = 0;
  };

  // A packet of `size` bytes arrives at t_ns (non-decreasing over calls). Returns the
  // copies scheduled: 0 (lost or dropped by the queue), 1, or 2 (duplicated).
  unsigned offer(std::uint64_t t_ns, std::vector<unsigned char>&& data, std::uint32_t size);
  unsigned offer(std::uint64_t t_ns, std::uint32_t size) { return offer(t_ns, {}, size); }

  // The earliest due time held, or kNever.
  static constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t next_due() const { return heap_.empty() ? kNever : heap_.front().due_ns; }
  // Takes the next packet due at or before t_ns into out (recording its delay as
  // t_ns - in and its lateness as t_ns - due); false when none is.
  bool pop_due(std::uint64_t t_ns, Packet& out);
  std::size_t in_flight() const { return heap_.size(); }
  // Bytes waiting for the rate at t_ns (the one being serialised included).
  std::uint64_t queued_bytes(std::uint64_t t_ns) const;

  const LinkSpec& spec() const { return spec_; }
  const LinkStats& stats() const { return stats_; }

 private:
  double uniform() { return double(rng_() >> 11) * 0x1.0p-53; }  // [0, 1), the same on every platform
  bool chance(double p) { return p > 0 && (p >= 1 || uniform() < p); }
  bool lost();
  bool enqueue(std::uint64_t t_ns, std::vector<unsigned char>&& data, std::uint32_t size);

  struct Later {
    bool operator()(const Packet& a, const Packet& b) const {
      return a.due_ns != b.due_ns ? a.due_ns > b.due_ns : a.order > b.order;
    }
  };
  LinkSpec spec_;
  std::mt19937_64 rng_;   // the simulator's fault plan draws from the same engine
  bool bad_ = false;      // Gilbert-Elliott state
  double ns_per_byte_ = 0;
  double tx_free_ns_ = 0; // when the serialiser has sent everything queued so far
  std::uint64_t last_due_ = 0;   // the latest due time of an in-order packet (order is kept)
  std::uint64_t order_ = 0;
  std::vector<Packet> heap_;   // a min-heap by (due_ns, order) under Later
  LinkStats stats_;
};

}  // namespace hilrig
