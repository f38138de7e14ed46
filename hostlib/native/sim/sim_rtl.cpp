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

// A build step for a link (RxFaultGate::offer, Link::finish): the RTL's frame, copied.
auto copy_of(const std::uint8_t* frame, std::uint32_t len) {
  return [frame, len](std::uint8_t* out) {
    std::memcpy(out, frame, len);
    return len;
  };
}
}  // namespace

// One run of the RTL core as the device (run_rtl, every direction): RX frames out of
// the RTL packetizer once through the fault gate onto the link; TX frames from the
// link through the fault gate into the model's tx_axis queue.
//
// Real time: the model's clock runs at rate_sps x rtl_rate_div_ clocks per second of
// wall time (master_clock_hz), caught up on every pass. A model that falls behind by more
// than fifo_frames frame periods cannot keep real time: its clock pauses (the lost time
// is skipped) and rx_axis_tready is held low until the packetizer has dropped a frame,
// so the RTL itself flags OVERFLOW_BEFORE on the next one, as a device does.
template <class Link>
class SimDevice::RtlRun {
 public:
  // rx: the RX link, nullptr for tx.
  RtlRun(SimDevice& dev, Link* rx)
      : dev_(dev), core_(*dev.rtl_), stream_(dev.cfg_.stream), rx_(rx), tx_on_(stream_.direction != Direction::rx),
        clocks_per_ns_(stream_.rate_sps * dev.rtl_rate_div_ / 1e9),
        lag_limit_clocks_(std::max<std::uint64_t>(dev.cfg_.fifo_frames, 4) * stream_.samples_per_frame() * dev.rtl_rate_div_),
        chunk_clocks_(std::max<std::uint64_t>(std::uint64_t(clocks_per_ns_ * 200'000), 256)),
        rx_gate_(dev.plan_, stream_, {dev.injected_drop_, dev.injected_duplicate_, dev.injected_reorder_, dev.injected_corrupt_}),
        tx_gate_(dev.plan_, stream_, {dev.injected_drop_, dev.injected_duplicate_, dev.injected_reorder_, dev.injected_corrupt_}),
        tx_queue_cap_frames_(std::clamp<std::uint64_t>(dev.cfg_.fifo_frames, 4, 256)) {
    core_.reset(dev.rtl_rate_div_, dev.rtl_rate_div_, rx == nullptr);  // TX only: the RX burst ends at once
    t0_ns_ = now_ns() + 1'000'000;
    if (tx_on_ && dev.usb_) {
      const LinkTally tally{dev.frames_sent_, dev.samples_sent_, dev.link_errors_, stream_.samples_per_frame()};
      usb_out_ = std::make_unique<UsbSimLink>(*dev.usb_, stream_, tally, std::uint64_t(dev.cfg_.fifo_frames) * stream_.frame_bytes);
    }
  }

  bool tx_on() const { return tx_on_; }

  // One pass: the model run up to the wall clock, its RX frames offered as they
  // complete, TX frames pulled while the device queue has room; idles when caught up.
  void pass() {
    const std::uint64_t now = now_ns();
    if (last_pass_ns_) counter_max(dev_.producer_longest_gap_ns_, now - last_pass_ns_);
    last_pass_ns_ = now;
    run_to(keep_real_time(due_clocks(now)));
    if (rx_) {
      rx_->end_batch(false);
      counter_max(dev_.fifo_peak_frames_, rx_->pending());
    }
    dev_.rtl_stats_.thread_cpu_ns.store(thread_cpu_ns(), std::memory_order_relaxed);
    pull_tx();
    if (core_.cycles() >= due_clocks(now_ns())) {
      if (rx_) rx_->idle_until(now_ns() + kIdlePassNs);
      else sleep_for_ns(kIdlePassNs);
    }
  }

  // Stop on RX: the frame completed while rx_stop is high carries EOB; the link sends it last.
  void finish_rx() {
    core_.set_rx_stop(true);
    hold_late_ = false;
    const bool eob = run_to_eob(now_ns() + 100'000'000);
    rx_gate_.flush(*rx_);
    std::uint32_t len = 0;
    const std::uint8_t* p = eob ? core_.rx_frame(&len) : nullptr;
    if (!p) {
      rx_->end_batch(false);
      return;
    }
    if (frame_flags(p) & kFlagOverflowBefore) counter_add(dev_.overflow_events_);
    rx_->finish(copy_of(p, len), now_ns() + 100'000'000);
    core_.take_rx_frame();
  }

  // Stop on TX: the host's last frames (its EOB among them) are checked before the
  // final counters; ends when the RTL saw EOB, after 20 ms with nothing new, or at 200 ms.
  void drain_tx() {
    const std::uint64_t deadline = now_ns() + 200'000'000;
    std::uint64_t quiet_since = now_ns();
    bool flushed = false;
    while (now_ns() < deadline) {
      const std::uint64_t before = core_.tx_queued_frames();
      pull_tx();
      if (core_.tx_queued_frames() != before) quiet_since = now_ns();
      if (core_.tx_queued_frames() == 0) {
        const bool quiet = now_ns() - quiet_since > 20'000'000;
        if (!flushed && (quiet || core_.counters().tx_eob_seen)) {  // a swapped frame whose successor never came
          flushed = true;
          if (tx_gate_.flush([this](const std::uint8_t* p, std::size_t len) { to_core(p, len); })) continue;
        }
        if (core_.counters().tx_eob_seen || quiet) break;
        sleep_for_ns(kIdlePassNs);
        continue;
      }
      core_.run(chunk_clocks_);
      if (rx_frame_ready()) offer();
    }
  }

  // After each run of the model: the RTL's dropped RX frames as overflow, its counters for stats().
  void account() {
    const RtlCounters c = core_.counters();
    if (c.rx_frames_dropped > dropped_seen_) {
      const std::uint64_t n = c.rx_frames_dropped - dropped_seen_;
      counter_add(dev_.overflow_frames_, n);
      counter_add(hold_late_ ? dev_.overflow_late_frames_ : dev_.overflow_link_full_frames_, n);
      dropped_seen_ = c.rx_frames_dropped;
      hold_late_ = false;
    }
    dev_.publish_rtl(c);
  }

 private:
  static constexpr std::uint64_t kIdlePassNs = 100'000;  // an idle pass sleeps this long

  // Model clocks due by the wall clock at now_ns, less the time skipped by pauses.
  std::uint64_t due_clocks(std::uint64_t now) const {
    const std::uint64_t raw = now < t0_ns_ ? 0 : std::uint64_t(double(now - t0_ns_) * clocks_per_ns_);
    return raw > paused_clocks_ ? raw - paused_clocks_ : 0;
  }
  // The clock to run to: target, or where the model stands when it is too far behind
  // to keep real time (the model pauses; RX output is held until the RTL drops a frame).
  std::uint64_t keep_real_time(std::uint64_t target) {
    if (target <= core_.cycles() + lag_limit_clocks_) return target;
    const std::uint64_t lost = target - core_.cycles();
    paused_clocks_ += lost;
    counter_add(dev_.rtl_stats_.pauses);
    counter_add(dev_.rtl_stats_.paused_cycles, lost);
    if (rx_) hold_late_ = true;
    return core_.cycles();
  }
  // Runs the model to target in chunks, moving frames both ways between chunks.
  void run_to(std::uint64_t target) {
    while (core_.cycles() < target) {
      pull_tx();
      if (rx_frame_ready()) offer();
      core_.run(std::min(target - core_.cycles(), chunk_clocks_));
      account();
      if (rx_frame_ready()) offer();
      if (rx_ && rx_->batch_full()) rx_->end_batch(true);
    }
  }
  // Runs the model, offering its frames, until the EOB frame is complete (true) or the deadline.
  bool run_to_eob(std::uint64_t deadline_ns) {
    while (now_ns() < deadline_ns) {
      std::uint32_t len = 0;
      if (const std::uint8_t* p = core_.rx_frame(&len)) {
        if (frame_flags(p) & kFlagEOB) return true;
        if (!offer()) rx_->end_batch(true);
      }
      core_.run(chunk_clocks_);
      account();
    }
    return false;
  }

  bool rx_frame_ready() {
    std::uint32_t len = 0;
    return core_.rx_frame(&len) != nullptr;
  }
  // The RTL's completed RX frame once through the fault plan to the link. False: the
  // link has no room now (the frame stays in the model).
  bool offer() {
    std::uint32_t len = 0;
    const std::uint8_t* p = core_.rx_frame(&len);
    if (!p) return true;
    if (!rx_) {  // TX only: the RX side's single EOB frame goes nowhere
      core_.take_rx_frame();
      return true;
    }
    if (hold_late_) return false;
    if (!rx_gate_.offer(*rx_, frame_seq(p), copy_of(p, len))) return false;
    if (frame_flags(p) & kFlagOverflowBefore) counter_add(dev_.overflow_events_);
    core_.take_rx_frame();
    return true;
  }

  void to_core(const std::uint8_t* p, std::size_t len) { core_.push_tx_frame(p, std::uint32_t(len)); }
  void on_tx_frame(const std::uint8_t* p, std::size_t len) {
    tx_gate_.on_frame(p, len, [this](const std::uint8_t* q, std::size_t l) { to_core(q, l); });
  }
  // Takes what the link holds, up to the device's queue in front of tx_axis: when that
  // is full the link is not served, so the host waits (a socket buffer or ring fills,
  // the USB bus NAKs) instead of the queue growing at the link's speed.
  void pull_tx() {
    if (!tx_on_ || core_.tx_queued_frames() >= tx_queue_cap_frames_) return;
    if (usb_out_) {
      usb_out_->service_out([this](const std::uint8_t* p, std::uint32_t len) { on_tx_frame(p, len); });
      return;
    }
    FrameSource& src = *dev_.tx_in_;
    if (!src.wait(0)) return;
    while (core_.tx_queued_frames() < tx_queue_cap_frames_) {
      const FrameView f = src.take();
      if (!f) break;
      if (f.malformed) counter_add(dev_.rtl_stats_.malformed);
      else on_tx_frame(f.data, f.len);
      src.release();
    }
  }

  SimDevice& dev_;
  RtlCore& core_;
  const StreamConfig& stream_;
  Link* rx_;
  const bool tx_on_;
  // The model's clock against the wall clock.
  const double clocks_per_ns_;
  const std::uint64_t lag_limit_clocks_, chunk_clocks_;
  std::uint64_t t0_ns_ = 0, paused_clocks_ = 0, last_pass_ns_ = 0;
  // RX
  RxFaultGate rx_gate_;
  bool hold_late_ = false;  // the model paused: hold the output until the RTL drops a frame
  std::uint64_t dropped_seen_ = 0;
  // TX
  TxFaultGate tx_gate_;
  std::unique_ptr<UsbSimLink> usb_out_;
  const std::uint64_t tx_queue_cap_frames_;  // the device's FIFO in front of the RTL (at most 256 frames)
};

template <class Link>
void SimDevice::run_rtl(Link* rx) {
  RtlRun<Link> run(*this, rx);
  while (!stop_.load(std::memory_order_relaxed)) run.pass();
  if (rx) run.finish_rx();
  if (run.tx_on()) run.drain_tx();
  run.account();
}

template void SimDevice::run_rtl<UdpBatchLink>(UdpBatchLink*);
template void SimDevice::run_rtl<ShmRingLink>(ShmRingLink*);
template void SimDevice::run_rtl<TcpSinkLink>(TcpSinkLink*);
template void SimDevice::run_rtl<UsbSimLink>(UsbSimLink*);

}  // namespace hilrig
