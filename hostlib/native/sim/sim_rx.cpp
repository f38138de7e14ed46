// The simulator's RX side (device -> host): frames due at the stream's rate, the
// device FIFO and its overflow, the fault plan, handed to a link.
#include "hilrig/sim/sim_device.hpp"

#include <algorithm>
#include <cstring>
#include <optional>

#include "hilrig/core/clock.hpp"
#include "hilrig/core/framer.hpp"
#include "hilrig/rf/signal.hpp"
#include "hilrig/sim/fault_gate.hpp"
#include "hilrig/sim/sim_link.hpp"

namespace hilrig {

template <class Link>
void SimDevice::run_rx(Link& link) {
  const StreamConfig& cfg = cfg_.stream;
  const std::uint32_t spf = cfg.samples_per_frame();
  const long double frames_per_ns = (long double)cfg.rate_sps / spf / 1e9L;
  const std::uint64_t fifo_cap = cfg_.fifo_frames;
  std::uint64_t next_seq = 0;        // next frame number not yet built
  bool overflow_pending = false;     // the next frame out carries OVERFLOW_BEFORE
  const std::uint64_t t0 = now_ns() + 1'000'000;  // first frame due 1 ms after start
  auto due_count = [&](std::uint64_t now) -> std::uint64_t {
    return now < t0 ? 0 : std::uint64_t((long double)(now - t0) * frames_per_ns) + 1;
  };
  auto due_time = [&](std::uint64_t seq) -> std::uint64_t { return t0 + std::uint64_t((long double)seq / frames_per_ns); };
  const PatternFramer framer(cfg);
  // pattern "signal": the payload is the RF signal at the frame's sample ticks; the
  // header (seq, tick, flags) is the counter pattern's, so every count stays the same.
  std::optional<rf::SignalSource> signal;
  if (cfg.pattern == "signal") signal.emplace(cfg.signal, cfg.rate_sps);
  auto build = [&](std::uint64_t seq, std::uint8_t flags, std::uint8_t* out) -> std::uint32_t {
    if (!signal) return framer.build(seq, flags, out);
    signal->fill(seq * spf, spf, cfg.channels, cfg.sample_format, out + kFrameHeaderBytes);
    return framer.build_header(seq, flags, out);
  };
  RxFaultGate gate(plan_, cfg, {injected_drop_, injected_duplicate_, injected_reorder_, injected_corrupt_});

  std::uint64_t last_pass_ns = 0;
  while (!stop_.load(std::memory_order_relaxed)) {
    const std::uint64_t now = now_ns();
    if (last_pass_ns) counter_max(producer_longest_gap_ns_, now - last_pass_ns);
    last_pass_ns = now;
    const std::uint64_t produced = due_count(now);
    // Backlog = built-but-untaken frames + produced-but-unbuilt frames. The part the
    // link surely has room for (a ring's free slots) is not in the device FIFO: a
    // real device would have moved it over the link while this thread was not running
    // (a VM stall stops the simulator too, never a device), so only the rest can
    // overflow, oldest first. Over UDP the receiver's free socket buffer is unknown
    // here: all of it counts.
    const std::uint64_t backlog = link.pending() + (produced - next_seq);
    const std::uint64_t link_room = backlog > fifo_cap ? link.free_frames() : 0;
    const std::uint64_t fifo = backlog > link_room ? backlog - link_room : 0;
    counter_max(fifo_peak_frames_, fifo);
    if (fifo > fifo_cap) {
      const std::uint64_t excess = fifo - fifo_cap;
      if (!overflow_pending) counter_add(overflow_events_);
      overflow_pending = true;
      counter_add(overflow_frames_, excess);
      // Was the link full (the host is slow) or did this thread run late?
      counter_add(link.full(link_room) ? overflow_link_full_frames_ : overflow_late_frames_, excess);
      next_seq += excess - link.drop_pending(excess);  // discarded frames keep their numbers consumed
    }
    if (link.pending() == 0 && next_seq >= produced) {
      link.idle_until(std::min(due_time(produced), now + 20'000'000));
      continue;
    }
    // Each due frame once: its fault (if any) decides what the link gets.
    while (next_seq < produced && !link.batch_full()) {
      std::uint8_t flags = overflow_pending ? kFlagOverflowBefore : 0;
      const bool taken = gate.offer(link, next_seq, [&](std::uint8_t* out) {
        const std::uint32_t len = build(next_seq, flags, out);
        flags = 0;  // a duplicate's second copy does not repeat the flag
        return len;
      });
      if (!taken) break;
      ++next_seq;
      overflow_pending = false;
    }
    link.end_batch(next_seq < produced);
  }
  // Stop: a frame held for a swap, what is pending (briefly), then one frame flagged EOB (seq next_seq).
  gate.flush(link);
  const std::uint8_t eob = std::uint8_t(kFlagEOB | (overflow_pending ? kFlagOverflowBefore : 0));
  link.finish([&](std::uint8_t* out) { return build(next_seq, eob, out); }, now_ns() + 100'000'000);
}

template void SimDevice::run_rx<UdpBatchLink>(UdpBatchLink&);
template void SimDevice::run_rx<ShmRingLink>(ShmRingLink&);
template void SimDevice::run_rx<TcpSinkLink>(TcpSinkLink&);
template void SimDevice::run_rx<UsbSimLink>(UsbSimLink&);

}  // namespace hilrig
