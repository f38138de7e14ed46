#include "hilrig/sim_device.hpp"

#include <algorithm>
#include <netinet/udp.h>

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "hilrig/clock.hpp"
#include "hilrig/framer.hpp"
#include "hilrig/sim_link.hpp"
#include "hilrig/usb_engine.hpp"
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
      rx_ring.reset(ShmRing::open(t.path));
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
      tx_ring.reset(ShmRing::create(tl.slots, cfg.frame_bytes));
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
  tx_ = std::make_unique<RxCounters>();
}

void SimDevice::start() {
  if (!configured_) throw std::runtime_error("start before configure");
  if (running()) throw std::runtime_error("already streaming");
  reset_counters();
  stop_.store(false);
  plan_.rewind();
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
    if (cfg_.stream.direction != Direction::rx && cfg_.stream.direction != Direction::rx_tx) return run_tx();
    const LinkTally tally{frames_sent_, samples_sent_, link_errors_, cfg_.stream.samples_per_frame()};
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

  // TX faults, decided once per received frame by its seq: drop (never seen),
  // duplicate (seen twice), swap (held until its successor was seen), corrupt (a
  // copy with the plan's words changed), stall (the consumer stops after this batch).
  std::vector<std::uint8_t> scratch(std::size_t(cfg.frame_bytes) + 64), held(scratch.size());
  std::size_t held_len = 0;
  bool holding = false, stall_due = false;
  const bool faulty = !plan_.entries().empty();
  auto on_frame = [&](const std::uint8_t* p, std::size_t len, std::uint64_t now) {
    const FaultPlan::Entry* fault = nullptr;
    if (faulty && len >= kFrameHeaderBytes && len <= scratch.size()) {
      std::uint64_t seq;
      std::memcpy(&seq, p + 16, 8);
      fault = plan_.at(seq);
    }
    if (!fault) {
      deliver(p, len, now);
    } else if (fault->kind == FaultPlan::kDrop) {
      counter_add(injected_drop_);
      return;
    } else if (fault->kind == FaultPlan::kDuplicate) {
      deliver(p, len, now);
      deliver(p, len, now);
      counter_add(injected_duplicate_);
    } else if (fault->kind == FaultPlan::kSwap) {
      std::memcpy(held.data(), p, len);
      held_len = len;
      holding = true;
      return;
    } else if (fault->kind == FaultPlan::kCorrupt) {
      std::memcpy(scratch.data(), p, len);
      if (len >= kFrameHeaderBytes + std::size_t(cfg.payload_bytes()))
        FaultPlan::corrupt(*fault, scratch.data() + kFrameHeaderBytes, cfg.sample_format);
      deliver(scratch.data(), len, now);
      counter_add(injected_corrupt_, fault->words.size());
    } else {  // kStall
      deliver(p, len, now);
      stall_due = true;
    }
    if (holding) {  // the successor of a swapped frame went first: now the frame itself
      holding = false;
      deliver(held.data(), held_len, now);
      counter_add(injected_reorder_);
    }
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
    if (stall_due) {  // the device's consumer stops; the link backs up meanwhile
      stall_due = false;
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
  if (holding) {  // a swapped frame whose successor never came
    deliver(held.data(), held_len, now_ns());
    counter_add(injected_reorder_);
    check.flush();
  }
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

}  // namespace hilrig
