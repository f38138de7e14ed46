// hilrig-bench spsc: the lab's single-producer/single-consumer study on hilrig's ring.
// Two threads, a request ring and a response ring; the client keeps `qd` requests in
// flight, the server answers each. Every publish strategy of the ring, and Boost.
// Lockfree's spsc_queue as the outside peer, at each queue depth and payload; min and
// median Mops/s of `runs` runs; one-way latency at QD 1 and the cache-line ping-pong
// (the physical limit at QD 1) in the same run.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hilrig::bench {

struct SpscOptions {
  std::vector<std::uint32_t> qds{1, 32, 256};
  // 24: the lab's payload (a sequence number and 16 bytes); others: hilrig frames of
  // that many bytes (header + pattern), checked on both sides.
  std::vector<std::uint32_t> payload_bytes{24, 256, 8192};
  std::vector<std::string> queues;  // strategy names and "boost"; empty = all
  unsigned runs = 5;
  double seconds_per_run = 0.5;
  double latency_seconds = 0.3;     // the QD-1 one-way latency run per queue and payload
};

nlohmann::json bench_spsc(const SpscOptions& opt);
// One cache line handed back and forth between two threads: the one-way transfer time.
double pingpong_one_way_ns(double seconds);

}  // namespace hilrig::bench
