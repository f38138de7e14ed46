#include "spsc.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <thread>

#include <pthread.h>
#include <sched.h>

#include <boost/lockfree/spsc_queue.hpp>

#include "hilrig/core/clock.hpp"
#include "hilrig/core/framer.hpp"
#include "hilrig/core/pattern.hpp"
#include "hilrig/io/shm_ring.hpp"

namespace hilrig::bench {
namespace {
using nlohmann::json;

constexpr std::uint32_t kLabPayloadBytes = 24;

// What a message carries and how it is checked: the lab's 24 bytes (sequence number,
// send time, the number's complement), or a hilrig frame (header + pattern).
class Payload {
 public:
  explicit Payload(std::uint32_t bytes) : bytes_(bytes), cfg_(frame_config(bytes)), framer_(cfg_) {
    if (bytes != kLabPayloadBytes && framer_.frame_len() != bytes)
      throw std::invalid_argument("spsc: a frame payload must be a whole number of samples past the 48-byte header");
  }
  std::uint32_t bytes() const { return bytes_; }
  bool is_frame() const { return bytes_ != kLabPayloadBytes; }

  void write(std::uint8_t* p, std::uint64_t n, std::uint64_t send_ns) const {
    if (!is_frame()) {
      const std::uint64_t words[3] = {n, send_ns, ~n};
      std::memcpy(p, words, sizeof words);
      return;
    }
    framer_.build(n, 0, p);
    set_frame_send_time_ns(p, send_ns);
  }
  bool check(const std::uint8_t* p, std::uint32_t len, std::uint64_t n) const {
    if (len != bytes_) return false;
    if (!is_frame()) {
      std::uint64_t words[3];
      std::memcpy(words, p, sizeof words);
      return words[0] == n && words[2] == ~n;
    }
    return frame_seq(p) == n &&
           pattern_check(n * cfg_.samples_per_frame() * cfg_.channels, p + kFrameHeaderBytes, cfg_.words_per_frame(),
                         cfg_.sample_format) == 0;
  }
  std::uint64_t send_ns(const std::uint8_t* p) const {
    if (!is_frame()) return frame_load<std::uint64_t>(p, 8);
    return frame_load<std::uint64_t>(p, offsetof(FrameHeader, send_time_ns));
  }

 private:
  static StreamConfig frame_config(std::uint32_t bytes) {
    StreamConfig c;
    c.frame_bytes = std::max<std::uint32_t>(bytes, std::uint32_t(kFrameHeaderBytes) + 4);
    return c;
  }
  std::uint32_t bytes_;
  StreamConfig cfg_;
  PatternFramer framer_;
};

// One direction over hilrig's ring: the consumer opens it by path (its own mapping, as
// the other process would). Senders flush when they go idle, so a batched strategy
// publishes exactly what accumulated while the peer was busy.
class RingLink {
 public:
  RingLink(RingPublish how, std::uint32_t slots, std::uint32_t slot_bytes)
      : tx_(ShmRing::create(slots, std::max<std::uint32_t>(slot_bytes, 48), how)), rx_(ShmRing::open(tx_.ring().path(), how)) {}
  std::uint8_t* begin_send() { return tx_.acquire(); }
  void end_send(std::uint32_t len) { tx_.publish_deferred(len); }
  void send_idle() { tx_.flush_published(); }
  const std::uint8_t* peek(std::uint32_t* len) { return rx_.peek(len); }
  void done() { rx_.release_deferred(); }
  void recv_idle() { rx_.flush_released(); }

 private:
  ShmProducer tx_;
  ShmConsumer rx_;
};

// The outside peer: Boost.Lockfree's spsc_queue of fixed-size messages (written into a
// staging buffer and copied in by push, read in place by front()).
template <std::uint32_t kBytes>
class BoostLink {
 public:
  explicit BoostLink(std::uint32_t slots) : q_(slots) {}
  std::uint8_t* begin_send() { return q_.write_available() ? staging_.data() : nullptr; }
  void end_send(std::uint32_t) { q_.push(staging_); }
  void send_idle() {}
  const std::uint8_t* peek(std::uint32_t* len) {
    if (!q_.read_available()) return nullptr;
    *len = kBytes;
    return q_.front().data();
  }
  void done() { q_.pop(); }
  void recv_idle() {}

 private:
  boost::lockfree::spsc_queue<std::array<std::uint8_t, kBytes>> q_;
  alignas(64) std::array<std::uint8_t, kBytes> staging_{};
};

// The two sides run pinned to two distinct CPUs this process may use (the lowest two),
// as the lab's study pins them: left to the scheduler, both threads sometimes share a
// CPU and a run measures time slicing (a bimodal 0.8 vs 3-4 Mops/s at QD 1 here). The
// peer thread is moved by its handle before the caller pins itself, so a spinning
// caller (or a real-time one) never holds the CPU the peer waits to leave. With fewer
// than two CPUs nothing is pinned. The caller's own affinity is restored at the end.
class PinnedPair {
 public:
  explicit PinnedPair(std::thread& peer) {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
    int cpus[2] = {-1, -1};
    for (int c = 0, n = 0; c < CPU_SETSIZE && n < 2; ++c)
      if (CPU_ISSET(c, &allowed)) cpus[n++] = c;
    if (cpus[1] < 0) return;
    saved_ = allowed;
    pinned_ = pin(peer.native_handle(), cpus[1]) && pin(pthread_self(), cpus[0]);
  }
  ~PinnedPair() {
    if (pinned_) pthread_setaffinity_np(pthread_self(), sizeof saved_, &saved_);
  }
  PinnedPair(const PinnedPair&) = delete;
  PinnedPair& operator=(const PinnedPair&) = delete;

 private:
  static bool pin(pthread_t t, int cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return pthread_setaffinity_np(t, sizeof one, &one) == 0;
  }
  cpu_set_t saved_{};
  bool pinned_ = false;
};

struct RunResult {
  std::uint64_t answered = 0, errors = 0;
  double seconds = 0;
  std::vector<std::uint32_t> one_way_ns;  // latency runs: request send to server receipt
};

// An idle side polls; after kPollsBeforeYield empty polls in a row (tens of us, far
// beyond a QD-1 round trip on a quiet machine) it yields the CPU once, so that on a
// shared machine a descheduled peer gets to run instead of a whole slice of spinning.
constexpr unsigned kPollsBeforeYield = 1024;
void idle_poll(unsigned& empty_polls) {
  __builtin_ia32_pause();
  if (++empty_polls >= kPollsBeforeYield) {
    empty_polls = 0;
    sched_yield();
  }
}

// The server answers each request in order with a message of the same payload; the
// client keeps `qd` requests in flight and checks every answer.
template <class Link>
RunResult run_once(Link& req, Link& resp, const Payload& pl, std::uint32_t qd, double seconds, bool latency) {
  RunResult r;
  std::atomic<bool> stop{false};
  std::uint64_t server_errors = 0;
  if (latency) r.one_way_ns.reserve(std::size_t(seconds * 4e6));
  std::thread server([&] {
    std::uint64_t n = 0;
    unsigned empty_polls = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      std::uint32_t len = 0;
      const std::uint8_t* p = req.peek(&len);
      std::uint8_t* s = p ? resp.begin_send() : nullptr;
      if (!s) {
        resp.send_idle();
        req.recv_idle();
        idle_poll(empty_polls);
        continue;
      }
      empty_polls = 0;
      if (latency && r.one_way_ns.size() < r.one_way_ns.capacity())
        r.one_way_ns.push_back(std::uint32_t(std::min<std::uint64_t>(now_ns() - pl.send_ns(p), ~0u)));
      server_errors += !pl.check(p, len, n);
      req.done();  // after the last read of the request
      pl.write(s, n, 0);
      resp.end_send(pl.bytes());
      ++n;
    }
  });
  const PinnedPair pinned(server);
  std::uint64_t sent = 0, got = 0;
  const std::uint64_t t0 = now_ns(), deadline = t0 + std::uint64_t(seconds * 1e9);
  unsigned empty_polls = 0;
  for (std::uint64_t idle = 0;;) {
    for (; sent - got < qd; ++sent) {
      std::uint8_t* s = req.begin_send();
      if (!s) break;
      pl.write(s, sent, latency ? now_ns() : 0);
      req.end_send(pl.bytes());
    }
    std::uint32_t len = 0;
    const std::uint8_t* p = resp.peek(&len);
    if (!p) {
      req.send_idle();
      resp.recv_idle();
      if ((++idle & 255) == 0 && now_ns() >= deadline) break;
      idle_poll(empty_polls);
      continue;
    }
    empty_polls = 0;
    r.errors += !pl.check(p, len, got);
    resp.done();
    if ((++got & 1023) == 0 && now_ns() >= deadline) break;
  }
  r.seconds = double(now_ns() - t0) / 1e9;
  stop.store(true);
  server.join();
  r.answered = got;
  r.errors += server_errors;
  return r;
}

std::uint32_t slots_for(std::uint32_t payload_bytes, std::uint32_t qd) {
  return std::max<std::uint32_t>(2 * qd, payload_bytes > 1024 ? 512 : 1024);
}

template <class MakeLink>
RunResult run_queue(MakeLink&& make, const Payload& pl, std::uint32_t qd, double seconds, bool latency) {
  auto req = make(), resp = make();
  return run_once(*req, *resp, pl, qd, seconds, latency);
}

RunResult run_named(const std::string& queue, const Payload& pl, std::uint32_t qd, double seconds, bool latency) {
  const std::uint32_t slots = slots_for(pl.bytes(), qd);
  if (queue == "boost") {
    switch (pl.bytes()) {
      case 24: return run_queue([&] { return std::make_unique<BoostLink<24>>(slots); }, pl, qd, seconds, latency);
      case 256: return run_queue([&] { return std::make_unique<BoostLink<256>>(slots); }, pl, qd, seconds, latency);
      case 8192: return run_queue([&] { return std::make_unique<BoostLink<8192>>(slots); }, pl, qd, seconds, latency);
      default: throw std::invalid_argument("spsc: boost runs payloads of 24, 256 or 8192 bytes");
    }
  }
  const RingPublish how = parse_ring_publish(queue);
  return run_queue([&] { return std::make_unique<RingLink>(how, slots, pl.bytes()); }, pl, qd, seconds, latency);
}

double percentile(std::vector<std::uint32_t>& v, double q) {
  if (v.empty()) return 0;
  const std::size_t k = std::min(v.size() - 1, std::size_t(q * double(v.size())));
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(k), v.end());
  return v[k];
}
}  // namespace

double pingpong_one_way_ns(double seconds) {
  struct alignas(64) Line {
    std::atomic<std::uint64_t> v{0};
  };
  Line ping, pong;
  std::atomic<bool> stop{false};
  std::thread echo([&] {
    std::uint64_t seen = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      const std::uint64_t v = ping.v.load(std::memory_order_acquire);
      if (v != seen) {
        seen = v;
        pong.v.store(v, std::memory_order_release);
      }
    }
  });
  const PinnedPair pinned(echo);
  const std::uint64_t t0 = now_ns(), t_end = t0 + std::uint64_t(seconds * 1e9);
  std::uint64_t n = 0, t1 = t0;
  while (t1 < t_end) {
    for (int k = 0; k < 256; ++k) {
      ping.v.store(++n, std::memory_order_release);
      while (pong.v.load(std::memory_order_acquire) != n) {
      }
    }
    t1 = now_ns();
  }
  stop.store(true);
  echo.join();
  return double(t1 - t0) / double(n) / 2;
}

json bench_spsc(const SpscOptions& opt) {
  std::vector<std::string> queues = opt.queues;
  if (queues.empty()) {
    for (RingPublish p : kRingPublishAll) queues.emplace_back(ring_publish_name(p));
    queues.emplace_back("boost");
  }
  json rows = json::array(), latency = json::array();
  std::vector<double> pingpong_ns;
  for (std::uint32_t bytes : opt.payload_bytes) {
    const Payload pl(bytes);
    for (std::uint32_t qd : opt.qds) {
      // Runs interleaved across queues (run k of every queue, then run k+1): a slow
      // second of this shared machine then lands on all of them, not on one.
      std::vector<std::vector<double>> mops(queues.size());
      std::vector<std::uint64_t> errors(queues.size(), 0);
      for (unsigned run = 0; run < opt.runs; ++run) {
        if (qd == 1) pingpong_ns.push_back(pingpong_one_way_ns(0.05));
        for (std::size_t i = 0; i < queues.size(); ++i) {
          const RunResult r = run_named(queues[i], pl, qd, opt.seconds_per_run, false);
          mops[i].push_back(double(r.answered) / r.seconds / 1e6);
          errors[i] += r.errors;
        }
      }
      for (std::size_t i = 0; i < queues.size(); ++i) {
        std::vector<double> sorted = mops[i];
        std::sort(sorted.begin(), sorted.end());
        rows.push_back({{"queue", queues[i]}, {"payload_bytes", bytes}, {"qd", qd}, {"runs", opt.runs},
                        {"mops_min", sorted.front()}, {"mops_median", sorted[sorted.size() / 2]},
                        {"mops_runs", mops[i]}, {"errors", errors[i]}});
      }
    }
    for (const std::string& q : queues) {
      RunResult r = run_named(q, pl, 1, opt.latency_seconds, true);
      latency.push_back({{"queue", q}, {"payload_bytes", bytes}, {"samples", r.one_way_ns.size()},
                         {"one_way_p50_ns", percentile(r.one_way_ns, 0.5)},
                         {"one_way_p99_ns", percentile(r.one_way_ns, 0.99)}, {"errors", r.errors}});
    }
  }
  std::sort(pingpong_ns.begin(), pingpong_ns.end());
  const double line_ns = pingpong_ns.empty() ? 0 : pingpong_ns[pingpong_ns.size() / 2];
  return {{"bench", "spsc"}, {"runs", opt.runs}, {"seconds_per_run", opt.seconds_per_run},
          {"pingpong_one_way_ns", line_ns},
          // A QD-1 round trip moves at least one line each way: the physical bound.
          {"qd1_bound_mops", line_ns > 0 ? 1e3 / (2 * line_ns) : 0},
          {"rows", rows}, {"latency", latency}};
}

}  // namespace hilrig::bench
