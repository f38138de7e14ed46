// The RTL core (firmware/rtl/loopback_top as a Verilator model) as the simulator's
// device core: its image check, its counters and run_rtl.
#include "hilrig/sim/sim_device.hpp"

#include <algorithm>
#include <cmath>
#include <netinet/udp.h>
#include <time.h>
#include <cstring>

#include "hilrig/core/clock.hpp"
#include "hilrig/core/framer.hpp"
#include "hilrig/sim/fault_gate.hpp"
#include "hilrig/sim/sim_link.hpp"

namespace hilrig {
using nlohmann::json;

json SimDevice::firmware_json() const {
  if (!rtl_) return {{"firmware", "model"}};
  const RtlImage& im = rtl_->image();
  return {{"firmware", "rtl"},
          {"image", im.image},
          {"fpga_version", im.version},
          {"rtl_git_hash", im.rtl_git_hash},
          {"parameters",
           {{"CHANNELS", im.channels},
            {"SAMPLE_FORMAT", im.sample_format == SampleFormat::sc16 ? "sc16" : "sc8"},
            {"SAMPLES_PER_FRAME", im.samples_per_frame},
            {"CRC_ENABLE", im.crc ? 1 : 0}}}};
}

// The RTL's parameters are elaborated into the model, not registers: a stream must
// match them. The rate dividers are registers: master_clock_hz / rate_sps, whole.
void SimDevice::check_rtl_stream(const SimConfig& sc) const {
  const RtlImage& im = rtl_->image();
  const StreamConfig& c = sc.stream;
  const std::uint32_t tick_bytes = bytes_per_sample(im.sample_format) * im.channels;
  const std::uint32_t frame_bytes = std::uint32_t(kFrameHeaderBytes) + im.samples_per_frame * tick_bytes;
  std::vector<std::string> problems;
  if (c.channels != im.channels) problems.push_back("channels " + std::to_string(c.channels));
  if (c.sample_format != im.sample_format) problems.push_back(std::string("format ") + (c.sample_format == SampleFormat::sc16 ? "sc16" : "sc8"));
  if (c.frame_bytes != frame_bytes) problems.push_back("frame_bytes " + std::to_string(c.frame_bytes));
  if (c.crc != im.crc) problems.push_back(c.crc ? "crc on" : "crc off");
  if (c.stream_id != 0) problems.push_back("stream_id " + std::to_string(c.stream_id));
  if (c.pattern != "counter") problems.push_back("pattern " + c.pattern);
  if (sc.faults.stall_ms) problems.push_back("faults.stall_ms (a consumer stall is not modelled by the RTL)");
  if (c.direction == Direction::rx_tx) problems.push_back("direction rx+tx (loopback_top runs rx, tx or loopback)");
  const double div = sc.master_clock_hz / c.rate_sps;
  const double whole = std::round(div);
  if (whole < 1 || whole > 65535 || std::fabs(div - whole) > 1e-6 * whole)
    problems.push_back("rate: master_clock_hz / rate_sps = " + std::to_string(div) + " is not a whole divider 1..65535");
  if (problems.empty()) return;
  std::string all = "configure: the RTL core " + im.image + " " + im.version + " (loopback_top: " +
                    std::to_string(im.channels) + " channel " + (im.sample_format == SampleFormat::sc16 ? "sc16" : "sc8") +
                    ", " + std::to_string(frame_bytes) + "-byte frames, crc " + (im.crc ? "on" : "off") +
                    ", stream_id 0, pattern counter) cannot run this stream: ";
  for (std::size_t i = 0; i < problems.size(); ++i) all += (i ? "; " : "") + problems[i];
  throw std::invalid_argument(all);
}

void SimDevice::publish_rtl(const RtlCounters& c) {
  auto set = [](C& a, std::uint64_t v) { a.store(v, std::memory_order_relaxed); };
  set(rtl_stats_.cycles, rtl_->cycles());
  set(rtl_stats_.ticks_lost, c.rx_ticks_lost);
  set(rtl_stats_.frames_ok, c.tx_frames_ok);
  set(rtl_stats_.samples_ok, c.tx_samples_ok);
  set(rtl_stats_.malformed, c.tx_malformed_frames);
  set(rtl_stats_.seq_errors, c.tx_seq_errors);
  set(rtl_stats_.missing, c.tx_missing_frames);
  set(rtl_stats_.late, c.tx_late_frames);
  set(rtl_stats_.pattern_errors, c.tx_pattern_errors);
  set(rtl_stats_.consumed_beats, c.tx_consumed_beats);
  set(underruns_, c.tx_underruns);
}

json SimDevice::with_rtl_stats(json s) const {
  auto g = [](const C& a) { return a.load(std::memory_order_relaxed); };
  const std::uint64_t spf = rtl_->image().samples_per_frame;
  s["device_core"] = "rtl";
  s["rtl_cycles"] = g(rtl_stats_.cycles);
  s["rtl_clock_hz"] = configured_ ? cfg_.stream.rate_sps * rtl_rate_div_ : 0.0;
  s["rtl_rate_div"] = rtl_rate_div_;
  s["rtl_thread_cpu_ns"] = g(rtl_stats_.thread_cpu_ns);  // CPU time of the thread clocking the model
  s["rtl_pauses"] = g(rtl_stats_.pauses);
  s["rtl_paused_cycles"] = g(rtl_stats_.paused_cycles);
  s["rtl_rx_ticks_lost"] = g(rtl_stats_.ticks_lost);
  s["tx_frames_received"] = g(rtl_stats_.frames_ok);
  s["tx_samples_received"] = g(rtl_stats_.samples_ok);
  s["tx_seq_errors"] = g(rtl_stats_.seq_errors);
  s["tx_missing_frames"] = g(rtl_stats_.missing);
  s["tx_dropped_samples"] = g(rtl_stats_.missing) * spf;
  s["tx_pattern_errors"] = g(rtl_stats_.pattern_errors);
  s["tx_malformed_frames"] = g(rtl_stats_.malformed);
  s["tx_consumed_beats"] = g(rtl_stats_.consumed_beats);
  // The checker has no duplicate window: a frame below the expected seq is "late"
  // (duplicate or reordered, not told apart); those two are not measured.
  s["tx_late_frames"] = g(rtl_stats_.late);
  s["tx_duplicate_frames"] = nullptr;
  s["tx_reordered_frames"] = nullptr;
  return s;
}

namespace {
std::uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::uint64_t(ts.tv_sec) * 1'000'000'000ull + std::uint64_t(ts.tv_nsec);
}
}  // namespace

// Real time: the model's clock runs at rate_sps x rtl_rate_div_ clocks per second of
// wall time (master_clock_hz), caught up on every pass. A model that falls behind by more
// than fifo_frames frame periods cannot keep real time: its clock pauses (the lost time
// is skipped) and rx_axis_tready is held low until the packetizer has dropped a frame,
// so the RTL itself flags OVERFLOW_BEFORE on the next one, as a device does.
template <class Link>
void SimDevice::run_rtl(Link* rx) {
  RtlCore& core = *rtl_;
  const StreamConfig& cfg = cfg_.stream;
  const bool tx_on = cfg.direction != Direction::rx;
  const std::uint16_t div = rtl_rate_div_;
  const double clocks_per_ns = cfg.rate_sps * div / 1e9;
  core.reset(div, div, rx == nullptr);  // TX only: the RX burst ends at once
  const std::uint64_t frame_clocks = std::uint64_t(cfg.samples_per_frame()) * div;
  const std::uint64_t lag_limit = std::max<std::uint64_t>(cfg_.fifo_frames, 4) * frame_clocks;
  const std::uint64_t chunk = std::max<std::uint64_t>(std::uint64_t(clocks_per_ns * 200'000), 256);
  constexpr std::uint64_t kPassNs = 100'000;  // an idle pass sleeps this long
  const std::uint64_t t0 = now_ns() + 1'000'000;
  std::uint64_t paused = 0;
  auto due = [&](std::uint64_t now) -> std::uint64_t {
    const std::uint64_t raw = now < t0 ? 0 : std::uint64_t(double(now - t0) * clocks_per_ns);
    return raw > paused ? raw - paused : 0;
  };

  // ---- RX: each completed frame once through the fault plan to the link
  RxFaultGate rx_gate(plan_, cfg, {injected_drop_, injected_duplicate_, injected_reorder_, injected_corrupt_});
  bool hold_late = false;        // the model paused: hold the output until the RTL drops a frame
  std::uint64_t dropped_seen = 0;
  auto offer = [&]() -> bool {  // false: the link has no room now (the frame stays in the model)
    std::uint32_t len = 0;
    const std::uint8_t* p = core.rx_frame(&len);
    if (!p) return true;
    if (!rx) {  // TX only: the RX side's single EOB frame goes nowhere
      core.take_rx_frame();
      return true;
    }
    if (hold_late) return false;
    const FrameHeader h = read_header(p);
    if (!rx_gate.offer(*rx, h.seq, [&](std::uint8_t* out) {
          std::memcpy(out, p, len);
          return len;
        }))
      return false;
    if (h.flags & kFlagOverflowBefore) counter_add(overflow_events_);
    core.take_rx_frame();
    return true;
  };
  std::uint32_t complete_len = 0;
  auto complete = [&] { return core.rx_frame(&complete_len) != nullptr; };
  auto account = [&]() {  // after each run: the RTL's drops, and its counters for stats()
    const RtlCounters c = core.counters();
    if (c.rx_frames_dropped > dropped_seen) {
      const std::uint64_t n = c.rx_frames_dropped - dropped_seen;
      counter_add(overflow_frames_, n);
      counter_add(hold_late ? overflow_late_frames_ : overflow_link_full_frames_, n);
      dropped_seen = c.rx_frames_dropped;
      hold_late = false;
    }
    publish_rtl(c);
    return c;
  };

  // ---- TX: frames from the link through the fault gate into the model's tx_axis queue
  TxFaultGate gate(plan_, cfg, {injected_drop_, injected_duplicate_, injected_reorder_, injected_corrupt_});
  auto to_core = [&](const std::uint8_t* p, std::size_t len) { core.push_tx_frame(p, std::uint32_t(len)); };
  auto on_frame = [&](const std::uint8_t* p, std::size_t len) { gate.on_frame(p, len, to_core); };
  std::unique_ptr<UsbSimLink> usb_out;
  if (tx_on && usb_) {
    const LinkTally tally{frames_sent_, samples_sent_, link_errors_, cfg.samples_per_frame()};
    usb_out = std::make_unique<UsbSimLink>(*usb_, cfg, tally, std::uint64_t(cfg_.fifo_frames) * cfg.frame_bytes);
  }
  // Frames waiting for tx_axis: the device's FIFO in front of the RTL (at most 256 frames);
  // when it is full the link is not served, so the host waits (a socket buffer or ring
  // fills, the USB bus NAKs) instead of this queue growing at the link's speed.
  const std::uint64_t tx_queue_cap = std::clamp<std::uint64_t>(cfg_.fifo_frames, 4, 256);
  auto pull_tx = [&]() {  // takes what the link holds, up to the device's queue
    if (!tx_on || core.tx_queued_frames() >= tx_queue_cap) return;
    if (usb_out) {
      usb_out->service_out([&](const std::uint8_t* p, std::uint32_t len) { on_frame(p, len); });
    } else if (tx_in_->wait(0)) {
      while (core.tx_queued_frames() < tx_queue_cap) {
        const FrameView f = tx_in_->take();
        if (!f) break;
        if (f.malformed) counter_add(rtl_stats_.malformed);
        else on_frame(f.data, f.len);
        tx_in_->release();
      }
    }
  };

  std::uint64_t last_pass_ns = 0;
  while (!stop_.load(std::memory_order_relaxed)) {
    const std::uint64_t now = now_ns();
    if (last_pass_ns) counter_max(producer_longest_gap_ns_, now - last_pass_ns);
    last_pass_ns = now;
    std::uint64_t target = due(now);
    if (target > core.cycles() + lag_limit) {  // the model cannot keep real time
      const std::uint64_t lost = target - core.cycles();
      paused += lost;
      target = core.cycles();
      counter_add(rtl_stats_.pauses);
      counter_add(rtl_stats_.paused_cycles, lost);
      if (rx) hold_late = true;
    }
    while (core.cycles() < target) {
      pull_tx();
      if (complete()) offer();
      core.run(std::min(target - core.cycles(), chunk));
      account();
      if (complete()) offer();
      if (rx && rx->batch_full()) rx->end_batch(true);
    }
    if (rx) {
      rx->end_batch(false);
      counter_max(fifo_peak_frames_, rx->pending());
    }
    rtl_stats_.thread_cpu_ns.store(thread_cpu_ns(), std::memory_order_relaxed);
    pull_tx();
    if (core.cycles() >= due(now_ns())) {
      if (rx) rx->idle_until(now_ns() + kPassNs);
      else sleep_for_ns(kPassNs);
    }
  }

  if (rx) {
    // Stop: the frame completed while rx_stop is high carries EOB; the link sends it last.
    core.set_rx_stop(true);
    hold_late = false;
    const std::uint64_t deadline = now_ns() + 100'000'000;
    bool eob = false;
    while (!eob && now_ns() < deadline) {
      std::uint32_t len = 0;
      if (const std::uint8_t* p = core.rx_frame(&len)) {
        if (frame_flags(p) & kFlagEOB) {
          eob = true;
          break;
        }
        if (!offer()) rx->end_batch(true);
      }
      core.run(chunk);
      account();
    }
    rx_gate.flush(*rx);
    std::uint32_t len = 0;
    const std::uint8_t* p = eob ? core.rx_frame(&len) : nullptr;
    if (p) {
      if (frame_flags(p) & kFlagOverflowBefore) counter_add(overflow_events_);
      rx->finish([&](std::uint8_t* out) { std::memcpy(out, p, len); return len; }, now_ns() + 100'000'000);
      core.take_rx_frame();
    } else {
      rx->end_batch(false);
    }
  }
  if (tx_on) {
    // The host's last frames (its EOB among them) are checked before the final counters.
    const std::uint64_t deadline = now_ns() + 200'000'000;
    std::uint64_t quiet_since = now_ns();
    bool flushed = false;
    while (now_ns() < deadline) {
      const std::uint64_t before = core.tx_queued_frames();
      pull_tx();
      if (core.tx_queued_frames() != before) quiet_since = now_ns();
      if (core.tx_queued_frames() == 0) {
        const bool quiet = now_ns() - quiet_since > 20'000'000;
        if (!flushed && (quiet || core.counters().tx_eob_seen)) {  // a swapped frame whose successor never came
          flushed = true;
          if (gate.flush(to_core)) continue;
        }
        if (core.counters().tx_eob_seen || quiet) break;
        sleep_for_ns(kPassNs);
        continue;
      }
      core.run(chunk);
      if (complete()) offer();
    }
  }
  account();
}

template void SimDevice::run_rtl<UdpBatchLink>(UdpBatchLink*);
template void SimDevice::run_rtl<ShmRingLink>(ShmRingLink*);
template void SimDevice::run_rtl<UsbSimLink>(UsbSimLink*);

}  // namespace hilrig
