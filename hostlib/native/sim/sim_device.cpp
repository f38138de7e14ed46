#include "hilrig/sim/sim_device.hpp"

#include <algorithm>
#include <netinet/udp.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "hilrig/core/clock.hpp"
#include "hilrig/core/framer.hpp"
#include "hilrig/sim/sim_link.hpp"
#include "hilrig/usb/usb_engine.hpp"
#include <time.h>
#include <unistd.h>

namespace hilrig {
using nlohmann::json;

SimDevice::~SimDevice() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  if (tx_thread_.joinable()) tx_thread_.join();
}

json SimDevice::configure(const json& req) {
  if (running()) throw std::runtime_error("configure while streaming: send stop first");
  const SimConfig sc = sim_config_from_json(req);
  const StreamConfig& cfg = sc.stream;
  FaultPlan plan = FaultPlan::make(sc.faults, cfg);
  if (rtl_) check_rtl_stream(sc);

  // Open links first, then commit: a failed configure leaves the old state intact.
  UdpSocket rx_sock, tx_sock;
  std::unique_ptr<ShmRing> rx_ring, tx_ring;
  std::unique_ptr<UsbSimChannel> usb;
  json endpoint;
  if (cfg.transport.kind == TransportKind::usb) {
    // The USB link: a shared channel the host's UsbEngine submits into (docs/usb.md).
    UsbLinkConfig link;
    link.transfer_bytes = cfg.transport.transfer_bytes;
    link.transfers = cfg.transport.transfers;
    const UsbBusParams bus = UsbBusParams::for_link(parse_usb_link_kind(cfg.transport.link));
    const auto problems = usb_geometry_problems(link, std::uint32_t(kFrameHeaderBytes) + cfg.payload_bytes(),
                                                bus.max_packet_bytes, 1, ~std::uint64_t(0));
    if (!problems.empty()) {
      std::string all = "configure.transport (" + cfg.transport.link + " link): " + problems[0];
      for (std::size_t i = 1; i < problems.size(); ++i) all += "; " + problems[i];
      throw std::invalid_argument(all);
    }
    usb = UsbSimChannel::create(link.transfer_bytes, link.transfers, cfg.direction == Direction::tx || cfg.direction == Direction::rx ? 1 : 2);
    endpoint = usb->endpoint_json();
    endpoint["kind"] = "usb";
    endpoint["link"] = cfg.transport.link;
    endpoint["pid"] = getpid();
    cfg_ = sc;
    plan_ = std::move(plan);
    rx_sock_ = UdpSocket();
    tx_sock_ = UdpSocket();
    rx_ring_.reset();
    tx_ring_.reset();
    usb_ = std::move(usb);
    configured_ = true;
    reset_counters();
    return endpoint;
  }
  // "rx_dest" (the host RxStream's endpoint) says where RX frames go; without it the
  // RX destination is "transport" itself. TX listens as "transport" says.
  const bool has_rx_dest = req.contains("rx_dest") && !req["rx_dest"].is_null();
  const TransportSpec t = has_rx_dest ? transport_at_endpoint(cfg.transport, req["rx_dest"], "configure.rx_dest") : cfg.transport;
  const TransportSpec& tl = cfg.transport;  // TX listening side
  const bool both = cfg.direction == Direction::rx_tx;  // independent RX and TX links at once
  if (cfg.direction == Direction::rx || cfg.direction == Direction::loopback || both) {
    if (t.kind == TransportKind::udp) {
      StreamConfig sized = cfg;
      sized.transport = t;
      rx_sock = UdpSocket::connect_to(t.host, t.port, sized.socket_buffer_for_rate());
    } else {
      if (t.path.empty()) throw std::invalid_argument("configure.transport.path: the host's ring path is needed for rx/loopback over shm");
      rx_ring = ShmRing::open(t.path);
      if (rx_ring->slot_bytes() < cfg.frame_bytes)
        throw std::invalid_argument("configure.transport.path: ring slots hold " + std::to_string(rx_ring->slot_bytes()) +
                                    " bytes, frame_bytes is " + std::to_string(cfg.frame_bytes));
    }
  }
  if (cfg.direction == Direction::tx || cfg.direction == Direction::loopback || both) {
    if (tl.kind == TransportKind::udp) {
      // Loopback without rx_dest: transport is the RX destination, so listen on any port.
      std::uint16_t port = (cfg.direction == Direction::tx || has_rx_dest) ? tl.port : 0;
      tx_sock = UdpSocket::bind_to(tl.host, port, cfg.socket_buffer_for_rate());
      if (tl.gro && udp_offload_pays(cfg.frame_bytes)) tx_sock.enable_gro();
      endpoint = {{"kind", "udp"}, {"host", tl.host}, {"port", tx_sock.local_port()},
                  {"socket_buffer_bytes", tl.socket_buffer_bytes},
                  {"socket_buffer_bytes_granted", tx_sock.granted_rcvbuf()}};
    } else {
      tx_ring = ShmRing::create(tl.slots, cfg.frame_bytes);
      endpoint = {{"kind", "shm"}, {"path", tx_ring->path()}, {"slots", tl.slots}};
    }
  } else if (t.kind == TransportKind::udp) {
    endpoint = {{"kind", "udp"}, {"host", t.host}, {"port", t.port}, {"socket_buffer_bytes_granted", rx_sock.granted_sndbuf()}};
  } else {
    endpoint = {{"kind", "shm"}, {"path", t.path}};
  }
  cfg_ = sc;
  plan_ = std::move(plan);
  rx_sock_ = std::move(rx_sock);
  tx_sock_ = std::move(tx_sock);
  rx_ring_ = std::move(rx_ring);
  tx_ring_ = std::move(tx_ring);
  usb_.reset();
  configured_ = true;
  reset_counters();
  return endpoint;
}

void SimDevice::reset_counters() {
  for (C* c : {&frames_sent_, &samples_sent_, &overflow_events_, &overflow_frames_, &link_errors_, &injected_drop_,
               &injected_corrupt_, &injected_duplicate_, &injected_reorder_, &underruns_,
               &overflow_link_full_frames_, &overflow_late_frames_, &producer_longest_gap_ns_,
               &fifo_peak_frames_, &injected_stalls_, &injected_stall_ns_})
    c->store(0);
  for (C* c : {&rtl_stats_.cycles, &rtl_stats_.thread_cpu_ns, &rtl_stats_.pauses, &rtl_stats_.paused_cycles, &rtl_stats_.ticks_lost,
               &rtl_stats_.frames_ok, &rtl_stats_.samples_ok, &rtl_stats_.malformed, &rtl_stats_.seq_errors,
               &rtl_stats_.missing, &rtl_stats_.late, &rtl_stats_.pattern_errors, &rtl_stats_.consumed_beats})
    c->store(0);
  tx_ = std::make_unique<RxCounters>();
}

void SimDevice::start() {
  if (!configured_) throw std::runtime_error("start before configure");
  if (running()) throw std::runtime_error("already streaming");
  reset_counters();
  stop_.store(false);
  plan_.rewind();
  if (rtl_) rtl_rate_div_ = std::uint16_t(std::lround(cfg_.master_clock_hz / cfg_.stream.rate_sps));
  const bool both = cfg_.stream.direction == Direction::rx_tx;
  usb_shared_.reset();
  if (both && usb_) {
    const LinkTally tally{frames_sent_, samples_sent_, link_errors_, cfg_.stream.samples_per_frame()};
    usb_shared_ = std::make_unique<UsbSimLink>(
        *usb_, cfg_.stream, tally, std::uint64_t(cfg_.fifo_frames) * (kFrameHeaderBytes + cfg_.stream.payload_bytes()));
    usb_shared_->set_shared_out();
  }
  if (both) tx_thread_ = std::thread([this] { run_tx(); });
  thread_ = std::thread([this] {
    const LinkTally tally{frames_sent_, samples_sent_, link_errors_, cfg_.stream.samples_per_frame()};
    if (rtl_) {
      if (cfg_.stream.direction == Direction::tx) return run_rtl<UdpBatchLink>(nullptr);
      if (usb_) {
        UsbSimLink link(*usb_, cfg_.stream, tally, 0);
        return run_rtl(&link);
      }
      if (rx_ring_) {
        ShmRingLink link(*rx_ring_, cfg_.stream, tally);
        return run_rtl(&link);
      }
      UdpBatchLink link(rx_sock_, cfg_.stream, tally);
      return run_rtl(&link);
    }
    if (cfg_.stream.direction != Direction::rx && cfg_.stream.direction != Direction::rx_tx) return run_tx();
    if (usb_shared_) {
      run_rx(*usb_shared_);
    } else if (usb_) {
      UsbSimLink link(*usb_, cfg_.stream, tally, 0);
      run_rx(link);
    } else if (rx_ring_) {
      ShmRingLink link(*rx_ring_, cfg_.stream, tally);
      run_rx(link);
    } else {
      UdpBatchLink link(rx_sock_, cfg_.stream, tally);
      run_rx(link);
    }
  });
}

json SimDevice::stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  if (tx_thread_.joinable()) tx_thread_.join();
  return stats();
}

json SimDevice::config_json() const { return configured_ ? to_json(cfg_) : json(nullptr); }

json SimDevice::fault_plan_json() const {
  const FaultPlan::Capacity c = FaultPlan::capacity(cfg_.faults, cfg_.stream);
  return {{"slots_needed", c.slots_needed}, {"slots_available", c.slots_available},
          {"corrupt_samples_per_frame", c.corrupt_samples_per_frame},
          {"last_fault_seq", plan_.entries().empty() ? 0 : plan_.entries().back().seq + 1}};
}

json SimDevice::stats() const {
  auto g = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  json s = {{"frames_sent", g(frames_sent_)},
            {"samples_sent", g(samples_sent_)},
            {"overflow_events", g(overflow_events_)},
            {"overflow_frames", g(overflow_frames_)},
            {"link_errors", g(link_errors_)},
            {"injected_drop_frames", g(injected_drop_)},
            {"injected_corrupt_samples", g(injected_corrupt_)},
            {"injected_duplicate_frames", g(injected_duplicate_)},
            {"injected_reorder_frames", g(injected_reorder_)},
            {"underruns", g(underruns_)},
            {"injected_stalls", g(injected_stalls_)},
            {"injected_stall_ns", g(injected_stall_ns_)},
            {"overflow_link_full_frames", g(overflow_link_full_frames_)},
            {"overflow_late_frames", g(overflow_late_frames_)},
            {"producer_longest_gap_ns", g(producer_longest_gap_ns_)},
            {"fifo_peak_frames", g(fifo_peak_frames_)},
            {"running", running()}};
  // The device's receive side (TX and loopback cases), 0 when there is none. The
  // engine reads dropped/duplicate/reordered as tx_<name> too; without them a TX gap
  // would show as missing frames but zero dropped samples.
  if (rtl_) return with_rtl_stats(s);
  const json tx = tx_ ? counters_json(*tx_) : json::object();
  for (const char* k : {"frames_received", "samples_received", "seq_errors", "missing_frames", "dropped_samples",
                        "duplicate_frames", "reordered_frames", "pattern_errors", "malformed_frames"})
    s[std::string("tx_") + k] = tx_ ? tx[k] : json(0);
  return s;
}

// ---------------------------------------------------------------- RX (device -> host)

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
      const FaultPlan::Entry* fault = plan_.at(next_seq);
      const std::uint8_t flags = overflow_pending ? kFlagOverflowBefore : 0;
      if (fault && fault->kind == FaultPlan::kDrop) {
        counter_add(injected_drop_);
        ++next_seq;
        continue;
      }
      if (fault && (fault->kind == FaultPlan::kDuplicate || fault->kind == FaultPlan::kSwap)) {
        const bool swap = fault->kind == FaultPlan::kSwap;
        if (swap && next_seq + 1 >= produced) break;  // the successor is not due yet
        if (!link.room_for(2)) break;                 // both frames of a pair go out together
        link.commit(framer.build(swap ? next_seq + 1 : next_seq, flags, link.acquire()));
        link.commit(framer.build(next_seq, 0, link.acquire()));
        counter_add(swap ? injected_reorder_ : injected_duplicate_);
        next_seq += swap ? 2 : 1;
      } else {
        std::uint8_t* out = link.acquire();
        if (!out) break;
        const std::uint32_t len = framer.build(next_seq, flags, out);
        if (fault && fault->kind == FaultPlan::kCorrupt) {
          FaultPlan::corrupt(*fault, out + kFrameHeaderBytes, cfg.sample_format);
          counter_add(injected_corrupt_, fault->words.size());
        }
        link.commit(len);
        ++next_seq;
      }
      overflow_pending = false;
    }
    link.end_batch(next_seq < produced);
  }
  // Stop: flush what is pending briefly, then one frame flagged EOB (seq next_seq).
  const std::uint8_t eob = std::uint8_t(kFlagEOB | (overflow_pending ? kFlagOverflowBefore : 0));
  link.finish([&](std::uint8_t* out) { return framer.build(next_seq, eob, out); }, now_ns() + 100'000'000);
}

// ---------------------------------------------------------------- TX / loopback (host -> device)

// TX faults, decided once per received frame by its seq: drop (never seen),
// duplicate (seen twice), swap (held until its successor was seen), corrupt (a
// copy with the plan's words changed), stall (the consumer stops after this batch).
// The same for the C++ checker and the RTL's (run_tx, run_rtl).
namespace {
class TxFaultGate {
 public:
  struct Tally {
    Counter &drop, &duplicate, &reorder, &corrupt;
  };
  TxFaultGate(FaultPlan& plan, const StreamConfig& cfg, Tally tally)
      : plan_(plan), cfg_(cfg), tally_(tally), faulty_(!plan.entries().empty()),
        scratch_(std::size_t(cfg.frame_bytes) + 64), held_(scratch_.size()) {}

  // deliver(p, len) for each frame the device sees because of this one (0, 1 or 2).
  template <class Deliver>
  void on_frame(const std::uint8_t* p, std::size_t len, Deliver&& deliver) {
    const FaultPlan::Entry* fault = nullptr;
    if (faulty_ && len >= kFrameHeaderBytes && len <= scratch_.size()) {
      fault = plan_.at(frame_seq(p));
    }
    if (!fault) {
      deliver(p, len);
    } else if (fault->kind == FaultPlan::kDrop) {
      counter_add(tally_.drop);
      return;
    } else if (fault->kind == FaultPlan::kDuplicate) {
      deliver(p, len);
      deliver(p, len);
      counter_add(tally_.duplicate);
    } else if (fault->kind == FaultPlan::kSwap) {
      std::memcpy(held_.data(), p, len);
      held_len_ = len;
      holding_ = true;
      return;
    } else if (fault->kind == FaultPlan::kCorrupt) {
      std::memcpy(scratch_.data(), p, len);
      if (len >= kFrameHeaderBytes + std::size_t(cfg_.payload_bytes()))
        FaultPlan::corrupt(*fault, scratch_.data() + kFrameHeaderBytes, cfg_.sample_format);
      deliver(scratch_.data(), len);
      counter_add(tally_.corrupt, fault->words.size());
    } else {  // kStall
      deliver(p, len);
      stall_due_ = true;
    }
    if (holding_) {  // the successor of a swapped frame went first: now the frame itself
      holding_ = false;
      deliver(held_.data(), held_len_);
      counter_add(tally_.reorder);
    }
  }
  // End of stream: a swapped frame whose successor never came. True if one was delivered.
  template <class Deliver>
  bool flush(Deliver&& deliver) {
    if (!holding_) return false;
    holding_ = false;
    deliver(held_.data(), held_len_);
    counter_add(tally_.reorder);
    return true;
  }
  bool take_stall() { return std::exchange(stall_due_, false); }

 private:
  FaultPlan& plan_;
  const StreamConfig& cfg_;
  Tally tally_;
  bool faulty_;
  std::vector<std::uint8_t> scratch_, held_;
  std::size_t held_len_ = 0;
  bool holding_ = false, stall_due_ = false;
};
}  // namespace

void SimDevice::run_tx() {
  const StreamConfig& cfg = cfg_.stream;
  const bool loop = cfg.direction == Direction::loopback;
  RxChecker check(*tx_);
  int gro = 0;
  socklen_t gro_len = sizeof gro;
  // USB: OUT transfers reach the device through the bus model, draining at the
  // stream's rate through a FIFO of fifo_frames (full: the bus NAKs, the host waits).
  std::unique_ptr<UsbSimLink> usb_own;
  UsbSimLink* usb_link = usb_shared_.get();  // rx+tx: the bus run_rx steps
  if (usb_ && !usb_link) {
    const LinkTally tally{frames_sent_, samples_sent_, link_errors_, cfg.samples_per_frame()};
    usb_own = std::make_unique<UsbSimLink>(*usb_, cfg, tally,
                                           std::uint64_t(cfg_.fifo_frames) * (kFrameHeaderBytes + cfg.payload_bytes()));
    usb_link = usb_own.get();
  }
  if (!tx_ring_ && !usb_) getsockopt(tx_sock_.fd(), IPPROTO_UDP, UDP_GRO, &gro, &gro_len);
  UdpRecvBatch batch(gro ? 16 : 64, std::size_t(cfg.frame_bytes) + 1, gro != 0);
  // Device consumption clock: starts at the first frame of a burst and drains rate_sps.
  bool consuming = false, eob = false;
  std::uint64_t run_t0 = 0, run_samples = 0;
  const double samples_per_ns = cfg.rate_sps / 1e9;
  // Loopback RX side.
  std::uint64_t rx_seq = 0, rx_tick = 0;
  bool overflow_pending = false;
  std::vector<std::uint8_t> out(std::size_t(cfg.frame_bytes) + 64);

  auto loop_back = [&](const std::uint8_t* frame, const FrameHeader& in) {
    // Own RX seq/tick, the host's payload and its original send_time_ns (round trip).
    FrameHeader h = in;
    h.flags = std::uint8_t(kFlagTsValid | (rx_seq == 0 ? kFlagSOB : 0) | (overflow_pending ? kFlagOverflowBefore : 0) |
                           (in.flags & kFlagEOB));
    h.crc32c = 0;
    h.seq = rx_seq++;
    h.sample_tick = rx_tick;
    h.stream_id = cfg.stream_id;
    const std::uint64_t samples = in.payload_bytes / (bytes_per_sample(SampleFormat(in.sample_format)) * in.channels);
    rx_tick += samples;
    const std::size_t len = kFrameHeaderBytes + in.payload_bytes;
    if (usb_link) {  // over usb: into the link's IN FIFO, which the bus moves into the host's IN transfers
      // (the link counts frames sent as the bus moves them; it carries whole frames only)
      if (len != kFrameHeaderBytes + cfg.payload_bytes()) return;
      std::uint8_t* dst = usb_link->acquire();
      write_header(h, dst);
      std::memcpy(dst + kFrameHeaderBytes, frame + kFrameHeaderBytes, in.payload_bytes);
      usb_link->commit(std::uint32_t(len));
      return;
    }
    std::uint8_t* dst = rx_ring_ ? rx_ring_->acquire() : out.data();
    bool ok = false;
    if (dst && len <= (rx_ring_ ? rx_ring_->slot_bytes() : out.size())) {
      write_header(h, dst);
      std::memcpy(dst + kFrameHeaderBytes, frame + kFrameHeaderBytes, in.payload_bytes);
      if (cfg.crc) finish_frame(dst, true, in.send_time_ns);
      if (rx_ring_) {
        rx_ring_->publish(std::uint32_t(len));
        ok = true;
      } else {
        bool busy;
        int err;
        std::size_t l = len;
        ok = udp_send_batch(rx_sock_.fd(), &dst, &l, 1, &busy, &err) == 1;
        if (!ok && err) counter_add(link_errors_);
      }
    }
    if (ok) {
      counter_add(frames_sent_);
      counter_add(samples_sent_, samples);
      overflow_pending = false;
    } else {  // the RX link cannot take it: this frame overflows, its seq stays consumed
      if (!overflow_pending) counter_add(overflow_events_);
      overflow_pending = true;
      counter_add(overflow_frames_);
    }
  };

  auto deliver = [&](const std::uint8_t* p, std::size_t len, std::uint64_t now) {
    FrameHeader h;
    if (!check.on_frame(p, len, now, &h)) return;
    const std::uint64_t samples = h.payload_bytes / (bytes_per_sample(SampleFormat(h.sample_format)) * h.channels);
    if (!consuming) {
      consuming = true;
      run_t0 = now;
      run_samples = 0;
    }
    run_samples += samples;
    eob = (h.flags & kFlagEOB) != 0;
    if (loop) loop_back(p, h);
  };

  TxFaultGate gate(plan_, cfg, {injected_drop_, injected_duplicate_, injected_reorder_, injected_corrupt_});
  auto on_frame = [&](const std::uint8_t* p, std::size_t len, std::uint64_t now) {
    gate.on_frame(p, len, [&](const std::uint8_t* q, std::size_t l) { deliver(q, l, now); });
  };

  while (!stop_.load(std::memory_order_relaxed)) {
    bool got = false;
    if (usb_link) {
      got = usb_link->service_out([&](const std::uint8_t* p, std::uint32_t len) { on_frame(p, len, now_ns()); });
    } else if (tx_ring_) {
      std::uint32_t len = 0;
      for (int i = 0; i < 64; ++i) {
        const std::uint8_t* p = i == 0 ? tx_ring_->peek_wait(&len, 2'000'000) : tx_ring_->peek(&len);
        if (!p) break;
        on_frame(p, std::min<std::uint32_t>(len, tx_ring_->slot_bytes()), now_ns());
        tx_ring_->release();
        got = true;
      }
    } else {
      int n = batch.recv(tx_sock_.fd());
      const std::uint64_t now = now_ns();
      for (int i = 0; i < n; ++i) {
        if (batch.truncated(unsigned(i))) counter_add(tx_->malformed_frames);
        else batch.for_each_datagram(unsigned(i), [&](const std::uint8_t* p, std::size_t len) { on_frame(p, len, now); });
      }
      got = n > 0;
      if (!got) tx_sock_.wait_readable(2);
    }
    check.flush();
    (void)got;
    if (gate.take_stall()) {  // the device's consumer stops; the link backs up meanwhile
      const std::uint64_t from = now_ns(), until = from + plan_.stall_ns();
      while (!stop_.load(std::memory_order_relaxed) && now_ns() < until)
        sleep_for_ns(std::min<std::uint64_t>(until - now_ns(), 10'000'000));
      counter_add(injected_stalls_);
      counter_add(injected_stall_ns_, now_ns() - from);
    }
    // Underrun: the consumption clock got ahead of what arrived, mid-burst.
    if (consuming && !eob) {
      const std::uint64_t now = now_ns();
      if (double(now - run_t0) * samples_per_ns > double(run_samples)) {
        counter_add(underruns_);
        consuming = false;  // the device idles until the next frame restarts it
      }
    } else if (eob) {
      consuming = false;
    }
  }
  if (gate.flush([&](const std::uint8_t* q, std::size_t l) { deliver(q, l, now_ns()); }))
    check.flush();  // a swapped frame whose successor never came
  if (loop) {
    // End of the looped-back RX stream: an empty frame flagged EOB.
    FrameHeader h;
    h.flags = std::uint8_t(kFlagTsValid | kFlagEOB | (overflow_pending ? kFlagOverflowBefore : 0));
    h.stream_id = cfg.stream_id;
    h.sample_format = std::uint8_t(cfg.sample_format);
    h.channels = std::uint8_t(cfg.channels);
    h.seq = rx_seq;
    h.sample_tick = rx_tick;
    h.send_time_ns = now_ns();
    if (usb_link) {
      // The link carries whole frames only: the host ends on its own (no EOB frame).
    } else if (rx_ring_) {
      if (std::uint8_t* s = rx_ring_->acquire_wait(100'000'000)) {
        write_header(h, s);
        rx_ring_->publish(std::uint32_t(kFrameHeaderBytes));
      }
    } else {
      write_header(h, out.data());
      send(rx_sock_.fd(), out.data(), kFrameHeaderBytes, MSG_DONTWAIT);
    }
  }
}

// ---------------------------------------------------------------- the RTL core (firmware/rtl/loopback_top)

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
  std::vector<std::uint8_t> held;
  bool holding = false;          // a swapped frame waits for its successor
  bool hold_late = false;        // the model paused: hold the output until the RTL drops a frame
  std::uint64_t dropped_seen = 0;
  auto put = [&](const std::uint8_t* p, std::uint32_t len) {
    std::uint8_t* out = rx->acquire();
    std::memcpy(out, p, len);
    rx->commit(len);
  };
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
    const FaultPlan::Entry* fault = plan_.at(h.seq);
    if (holding) {  // faults never touch neighbouring frames: this one is ordinary
      if (!rx->room_for(2)) return false;
      put(p, len);
      put(held.data(), std::uint32_t(held.size()));
      holding = false;
      counter_add(injected_reorder_);
    } else if (fault && fault->kind == FaultPlan::kDrop) {
      counter_add(injected_drop_);
    } else if (fault && fault->kind == FaultPlan::kDuplicate) {
      if (!rx->room_for(2)) return false;
      put(p, len);
      put(p, len);
      counter_add(injected_duplicate_);
    } else if (fault && fault->kind == FaultPlan::kSwap) {
      held.assign(p, p + len);
      holding = true;
    } else {
      std::uint8_t* out = rx->acquire();
      if (!out) return false;
      std::memcpy(out, p, len);
      if (fault && fault->kind == FaultPlan::kCorrupt && len > kFrameHeaderBytes) {
        FaultPlan::corrupt(*fault, out + kFrameHeaderBytes, cfg.sample_format);
        counter_add(injected_corrupt_, fault->words.size());
      }
      rx->commit(len);
    }
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
  int gro = 0;
  socklen_t gro_len = sizeof gro;
  if (tx_on && !tx_ring_ && !usb_) getsockopt(tx_sock_.fd(), IPPROTO_UDP, UDP_GRO, &gro, &gro_len);
  UdpRecvBatch batch(gro ? 16 : 64, std::size_t(cfg.frame_bytes) + 1, gro != 0);
  // Frames waiting for tx_axis: the device's FIFO in front of the RTL (at most 256 frames);
  // when it is full the link is not served, so the host waits (a socket buffer or ring
  // fills, the USB bus NAKs) instead of this queue growing at the link's speed.
  const std::uint64_t tx_queue_cap = std::clamp<std::uint64_t>(cfg_.fifo_frames, 4, 256);
  auto pull_tx = [&]() {  // takes what the link holds, up to the device's queue
    if (!tx_on || core.tx_queued_frames() >= tx_queue_cap) return;
    if (usb_out) {
      usb_out->service_out([&](const std::uint8_t* p, std::uint32_t len) { on_frame(p, len); });
    } else if (tx_ring_) {
      std::uint32_t len = 0;
      for (int i = 0; i < 64 && core.tx_queued_frames() < tx_queue_cap; ++i) {
        const std::uint8_t* p = tx_ring_->peek(&len);
        if (!p) break;
        on_frame(p, std::min<std::uint32_t>(len, tx_ring_->slot_bytes()));
        tx_ring_->release();
      }
    } else {
      const int n = batch.recv(tx_sock_.fd());
      for (int i = 0; i < n; ++i) {
        if (batch.truncated(unsigned(i))) counter_add(rtl_stats_.malformed);
        else batch.for_each_datagram(unsigned(i), [&](const std::uint8_t* p, std::size_t len) { on_frame(p, len); });
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
    if (holding) put(held.data(), std::uint32_t(held.size()));
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

}  // namespace hilrig
