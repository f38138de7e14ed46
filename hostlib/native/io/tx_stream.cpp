#include <algorithm>
#include <cmath>
#include <vector>

#include "hilrig/core/clock.hpp"
#include "hilrig/core/counter.hpp"
#include "hilrig/core/framer.hpp"
#include "hilrig/io/streams.hpp"
#include "hilrig/core/tx_pacer.hpp"

namespace hilrig {

TxStream::TxStream(const StreamConfig& cfg) : cfg_(cfg), sink_(cfg) {}

TxStream::~TxStream() { stop(); }

// Frames are built in place (a ring slot: no copy; UDP: the batch one GSO send
// carries) and sent together. A regular batch ends early on stop; the last frame of
// the stream (flags: EOB) is sent while stopping.
unsigned TxStream::send_batch(std::uint64_t seq, unsigned n, std::uint8_t flags, std::uint64_t timeout_ns) {
  const std::atomic<bool>* stop = flags ? nullptr : &thread_.stop_flag();
  const PatternFramer framer(cfg_);
  // Paced datagrams are built one at a time, each after the last one's send: the build
  // falls inside the pacer's wait. A batch built ahead would hold the first datagram
  // back by the whole batch's build, and the catch-up after it would send a burst.
  const bool one_by_one = sink_.pacing().active();
  unsigned sent = 0;
  for (unsigned i = 0; i < n && !(stop && stop->load(std::memory_order_relaxed)); ++i) {
    std::uint8_t* out = sink_.acquire(timeout_ns);
    if (!out) break;
    sink_.commit(framer.build(seq + i, i + 1 == n ? flags : 0, out));
    if (one_by_one) {
      if (sink_.flush(now_ns() + timeout_ns, stop) == 0) return sent;
      ++sent;
    }
  }
  return one_by_one ? sent : sink_.flush(now_ns() + timeout_ns, stop);
}

void TxStream::run() {
  const std::uint32_t spf = cfg_.samples_per_frame();
  const std::uint32_t len = std::uint32_t(kFrameHeaderBytes) + cfg_.payload_bytes();
  // Frames that are due leave in one batch (one GSO/sendmmsg call or one ring
  // publish), at most ~1 MiB at a time.
  TxPacer pacer(cfg_.rate_sps / double(spf),
                TxPacer::lead_frames(cfg_, TxPacer::link_frames(cfg_, sink_.ring_slots())));
  const unsigned max_batch = std::min(sink_.batch_capacity(), std::clamp<unsigned>((1u << 20) / len, 1, 512));
  const std::uint64_t t0 = now_ns();
  pacer.start(t0);
  c_.start_ns.store(t0, std::memory_order_relaxed);
  std::uint64_t seq = 0;
  while (!thread_.stop_requested()) {
    const std::uint64_t now = now_ns();
    const std::uint64_t allowed = pacer.allowed(now);
    if (seq >= allowed) {
      sleep_until_ns(std::min(pacer.due_ns(seq), now + 20'000'000));
      continue;
    }
    const unsigned n = unsigned(std::min<std::uint64_t>(allowed - seq, max_batch));
    if (n < max_batch) sink_.pacing_ready(now);  // the rate clock, not the sender, held these frames
    const unsigned sent = send_batch(seq, n, 0, 50'000'000);
    if (sent) {
      counter_add(c_.frames_sent, sent);
      counter_add(c_.samples_sent, std::uint64_t(sent) * spf);
      counter_add(c_.payload_bytes_sent, std::uint64_t(sent) * cfg_.payload_bytes());
      c_.last_send_ns.store(now_ns(), std::memory_order_relaxed);
    }
    if (sent < n && !thread_.stop_requested()) counter_add(c_.send_errors, n - sent);
    // Frames that could not be sent still consume their numbers (the device sees a gap).
    seq += (sent < n && thread_.stop_requested()) ? sent : n;
  }
  // End of burst: one more frame flagged EOB so the device does not count an underrun.
  if (send_batch(seq, 1, kFlagEOB, 200'000'000) == 1) {
    counter_add(c_.frames_sent);
    counter_add(c_.samples_sent, spf);
    counter_add(c_.payload_bytes_sent, cfg_.payload_bytes());
    c_.last_send_ns.store(now_ns(), std::memory_order_relaxed);
  } else {
    counter_add(c_.send_errors);
  }
}

nlohmann::json TxStream::stats() const {
  auto g = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  const std::uint64_t cpu_ns = thread_.cpu_ns();
  nlohmann::json s = {{"frames_sent", g(c_.frames_sent)},         {"samples_sent", g(c_.samples_sent)},
          {"payload_bytes_sent", g(c_.payload_bytes_sent)}, {"send_errors", g(c_.send_errors)},
          {"start_ns", g(c_.start_ns)},               {"last_send_ns", g(c_.last_send_ns)},
          {"thread_cpu_ns", cpu_ns},
          {"gso", sink_.gso_active()},
          // Per-datagram pacing (transport.pacing): the achieved period, send start to send start.
          {"pacing_period_p50_ns", sink_.pacing().periods().percentile(0.50)},
          {"pacing_period_p99_ns", sink_.pacing().periods().percentile(0.99)},
          {"pacing_period_count", sink_.pacing().periods().count()},
          {"pacing_waits_slept", sink_.pacing().waits_slept()},
          {"pacing_waits_spun", sink_.pacing().waits_spun()},
          {"pacing_sent_late", sink_.pacing().sent_late()},
          {"pacing_schedule_restarts", sink_.pacing().schedule_restarts()},
          {"warnings", sink_.buffer_warning().empty() ? nlohmann::json::array() : nlohmann::json::array({sink_.buffer_warning()})}};
  if (sink_.kind() == TransportKind::tcp) s["tcp"] = sink_.tcp_info();  // the sending end's own figures
  return s;
}

}  // namespace hilrig
