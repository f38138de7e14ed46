#include "hilrig/sim_device.hpp"

#include <algorithm>
#include <netinet/udp.h>

#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <stdexcept>

#include "hilrig/clock.hpp"
#include "hilrig/framer.hpp"

namespace hilrig {
namespace {
using nlohmann::json;
void bump(std::atomic<std::uint64_t>& a, std::uint64_t d = 1) {
  a.store(a.load(std::memory_order_relaxed) + d, std::memory_order_relaxed);
}
std::uint64_t fault_count(const json& f, const char* key) {
  if (!f.contains(key)) return 0;
  const json& v = f[key];
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > 1000000)
    throw std::invalid_argument(std::string("configure.faults.") + key + ": must be a whole number in [0, 1000000], got " + v.dump());
  return v.get<std::uint64_t>();
}
}  // namespace

FaultPlan FaultPlan::make(const FaultSpec& f, const StreamConfig& cfg) {
  FaultPlan plan;
  const std::uint32_t spf = cfg.samples_per_frame();
  const std::uint64_t per_frame = std::min<std::uint64_t>(spf, 8);  // corrupted samples per corrupted frame
  const std::uint64_t corrupt_frames = (f.corrupt_samples + per_frame - 1) / per_frame;
  const std::uint64_t total = f.drop_frames + f.duplicate_frames + f.reorder_frames + corrupt_frames;
  if (total == 0) return plan;
  std::mt19937_64 rng(f.seed);
  std::vector<std::uint64_t> pool(std::max<std::uint64_t>(2 * total, 32));
  std::iota(pool.begin(), pool.end(), 0);
  std::shuffle(pool.begin(), pool.end(), rng);
  std::size_t next = 0;
  auto take = [&](Kind k) -> Entry& {
    auto& e = plan.by_seq[16 + 4 * pool[next++]];
    e.kind = k;
    return e;
  };
  for (std::uint64_t i = 0; i < f.drop_frames; ++i) take(kDrop);
  for (std::uint64_t i = 0; i < f.duplicate_frames; ++i) take(kDuplicate);
  for (std::uint64_t i = 0; i < f.reorder_frames; ++i) take(kReorder);
  std::uint64_t left = f.corrupt_samples;
  std::vector<std::uint32_t> samples(spf);
  const std::uint32_t width_mask = cfg.sample_format == SampleFormat::sc16 ? 0xFFFFFFFFu : 0xFFFFu;
  for (std::uint64_t i = 0; i < corrupt_frames; ++i) {
    Entry& e = take(kCorrupt);
    std::uint64_t k = std::min(left, per_frame);
    left -= k;
    // k distinct samples of this frame (partial Fisher-Yates), one random channel each.
    std::iota(samples.begin(), samples.end(), 0u);
    for (std::uint64_t s = 0; s < k; ++s) {
      std::uint64_t j = s + rng() % (spf - s);
      std::swap(samples[s], samples[j]);
      e.words.push_back(samples[s] * cfg.channels + std::uint32_t(rng() % cfg.channels));
    }
    e.xor_mask = std::uint32_t(rng()) & width_mask;
    if (e.xor_mask == 0) e.xor_mask = 0x5A5A5A5Au & width_mask;
  }
  return plan;
}

SimDevice::~SimDevice() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

json SimDevice::configure(const json& req) {
  if (running()) throw std::runtime_error("configure while streaming: send stop first");
  StreamConfig cfg = parse_stream_config(req);
  std::uint32_t fifo = 64;
  if (req.contains("fifo_frames")) {
    if (!req["fifo_frames"].is_number_integer() || req["fifo_frames"].get<std::int64_t>() < 1 ||
        req["fifo_frames"].get<std::int64_t>() > (1 << 20))
      throw std::invalid_argument("configure.fifo_frames: must be a whole number in [1, 1048576], got " + req["fifo_frames"].dump());
    fifo = req["fifo_frames"].get<std::uint32_t>();
  }
  FaultSpec f;
  if (req.contains("faults") && !req["faults"].is_null()) {
    const json& fj = req["faults"];
    if (!fj.is_object()) throw std::invalid_argument("configure.faults: must be an object");
    for (auto it = fj.begin(); it != fj.end(); ++it) {
      static const char* known[] = {"seed", "drop_frames", "corrupt_samples", "duplicate_frames", "reorder_frames"};
      if (std::none_of(std::begin(known), std::end(known), [&](const char* k) { return it.key() == k; }))
        throw std::invalid_argument("configure.faults." + it.key() +
                                    ": unknown fault (allowed: seed, drop_frames, corrupt_samples, duplicate_frames, reorder_frames)");
    }
    if (fj.contains("seed")) {
      if (!fj["seed"].is_number_integer()) throw std::invalid_argument("configure.faults.seed: must be an integer");
      f.seed = fj["seed"].get<std::uint64_t>();
    }
    f.drop_frames = fault_count(fj, "drop_frames");
    f.corrupt_samples = fault_count(fj, "corrupt_samples");
    f.duplicate_frames = fault_count(fj, "duplicate_frames");
    f.reorder_frames = fault_count(fj, "reorder_frames");
  }
  double mclk = req.contains("master_clock_hz") && req["master_clock_hz"].is_number() ? req["master_clock_hz"].get<double>() : 0;

  // Open links first, then commit: a failed configure leaves the old state intact.
  UdpSocket rx_sock, tx_sock;
  std::unique_ptr<ShmRing> rx_ring, tx_ring;
  json endpoint;
  // "rx_dest" (the host RxStream's endpoint) says where RX frames go; without it the
  // RX destination is "transport" itself. TX listens as "transport" says.
  const bool has_rx_dest = req.contains("rx_dest") && !req["rx_dest"].is_null();
  TransportSpec t = has_rx_dest ? parse_transport(req["rx_dest"], "configure.rx_dest") : cfg.transport;
  if (has_rx_dest && t.kind != cfg.transport.kind)
    throw std::invalid_argument("configure.rx_dest.kind: must match transport.kind");
  if (has_rx_dest && !req["rx_dest"].contains("socket_buffer_bytes")) t.socket_buffer_bytes = cfg.transport.socket_buffer_bytes;
  const TransportSpec& tl = cfg.transport;  // TX listening side
  if (cfg.direction == Direction::rx || cfg.direction == Direction::loopback) {
    if (t.kind == TransportKind::udp) {
      StreamConfig sized = cfg;
      sized.transport.socket_buffer_bytes = t.socket_buffer_bytes;
      rx_sock = UdpSocket::connect_to(t.host, t.port, sized.socket_buffer_for_rate());
    } else {
      if (t.path.empty()) throw std::invalid_argument("configure.transport.path: the host's ring path is needed for rx/loopback over shm");
      rx_ring.reset(ShmRing::open(t.path));
      if (rx_ring->slot_bytes() < cfg.frame_bytes)
        throw std::invalid_argument("configure.transport.path: ring slots hold " + std::to_string(rx_ring->slot_bytes()) +
                                    " bytes, frame_bytes is " + std::to_string(cfg.frame_bytes));
    }
  }
  if (cfg.direction == Direction::tx || cfg.direction == Direction::loopback) {
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
  cfg_ = cfg;
  fifo_frames_ = fifo;
  faults_ = f;
  plan_ = FaultPlan::make(f, cfg);
  master_clock_hz_ = mclk;
  rx_sock_ = std::move(rx_sock);
  tx_sock_ = std::move(tx_sock);
  rx_ring_ = std::move(rx_ring);
  tx_ring_ = std::move(tx_ring);
  configured_ = true;
  reset_counters();
  return endpoint;
}

void SimDevice::reset_counters() {
  for (C* c : {&frames_sent_, &samples_sent_, &overflow_events_, &overflow_frames_, &link_errors_, &injected_drop_,
               &injected_corrupt_, &injected_duplicate_, &injected_reorder_, &underruns_,
               &overflow_link_full_frames_, &overflow_late_frames_, &producer_longest_gap_ns_,
               &fifo_peak_frames_})
    c->store(0);
  tx_ = std::make_unique<RxCounters>();
}

void SimDevice::start() {
  if (!configured_) throw std::runtime_error("start before configure");
  if (running()) throw std::runtime_error("already streaming");
  reset_counters();
  stop_.store(false);
  thread_ = std::thread([this] { cfg_.direction == Direction::rx ? run_rx() : run_tx(); });
}

json SimDevice::stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  return stats();
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

void SimDevice::run_rx() {
  const StreamConfig& cfg = cfg_;
  const std::uint32_t spf = cfg.samples_per_frame();
  const std::uint32_t fb = cfg.frame_bytes;
  const long double frames_per_ns = (long double)cfg.rate_sps / spf / 1e9L;
  const std::uint64_t fifo_cap = fifo_frames_;
  constexpr unsigned kBatch = 32;
  constexpr std::uint64_t kRestampBytes = 64 * 1024;
  // UDP: frames are built back to back in cbuf (equal length, as GSO wants); unsent
  // ones (link busy) stay at the front as `carry` and count as FIFO occupancy.
  // shm: frames are built in place in the slot.
  const std::uint32_t flen = std::uint32_t(kFrameHeaderBytes) + cfg.payload_bytes();
  const unsigned udp_batch = rx_ring_ ? 0 : std::clamp<unsigned>((1u << 20) / flen, 4, 512);
  std::vector<std::uint8_t> cbuf(rx_ring_ ? 0 : std::size_t(udp_batch) * flen + 64);
  auto at = [&](unsigned i) { return cbuf.data() + std::size_t(i) * flen; };
  UdpSender sender = rx_ring_ ? UdpSender() : UdpSender(rx_sock_.fd(), flen, cfg.transport.gso);
  unsigned carry = 0;
  (void)fb;
  std::uint64_t next_seq = 0;        // next frame number not yet built
  bool overflow_pending = false;     // the next frame out carries OVERFLOW_BEFORE
  const std::uint64_t t0 = now_ns() + 1'000'000;  // first frame due 1 ms after start
  auto due_count = [&](std::uint64_t now) -> std::uint64_t {
    return now < t0 ? 0 : std::uint64_t((long double)(now - t0) * frames_per_ns) + 1;
  };
  auto due_time = [&](std::uint64_t seq) -> std::uint64_t { return t0 + std::uint64_t((long double)seq / frames_per_ns); };

  // Builds frame `seq` (with its faults) into out; corrupt faults applied here.
  const PatternFramer framer(cfg);
  auto build = [&](std::uint64_t seq, std::uint8_t flags, std::uint8_t* out, const FaultPlan::Entry* fault) {
    std::uint32_t len = framer.build(seq, flags, out);
    if (fault && fault->kind == FaultPlan::kCorrupt) {
      std::uint8_t* payload = out + kFrameHeaderBytes;
      const unsigned wb = bytes_per_sample(cfg.sample_format);
      for (std::uint32_t w : fault->words) {
        std::uint32_t v = 0;
        std::memcpy(&v, payload + std::size_t(w) * wb, wb);
        v ^= fault->xor_mask;
        std::memcpy(payload + std::size_t(w) * wb, &v, wb);
      }
      bump(injected_corrupt_, fault->words.size());
    }
    return len;
  };
  auto note_sent = [&](std::uint64_t n) {
    bump(frames_sent_, n);
    bump(samples_sent_, n * spf);
  };

  std::uint64_t last_pass_ns = 0;
  while (!stop_.load(std::memory_order_relaxed)) {
    const std::uint64_t now = now_ns();
    if (last_pass_ns && now - last_pass_ns > producer_longest_gap_ns_.load(std::memory_order_relaxed))
      producer_longest_gap_ns_.store(now - last_pass_ns, std::memory_order_relaxed);
    last_pass_ns = now;
    const std::uint64_t produced = due_count(now);
    // Backlog = built-but-unsent frames + produced-but-unbuilt frames. Over shm, the
    // part the ring has room for is not in the device FIFO: a real device would have
    // moved it over the link while this thread was not running (a VM stall stops the
    // simulator too, never a device), so only the rest can overflow, oldest first.
    // Over UDP the receiver's free socket buffer is unknown here: all of it counts.
    const std::uint64_t backlog = carry + (produced - next_seq);
    const std::uint64_t link_room = rx_ring_ && backlog > fifo_cap ? rx_ring_->free_slots() : 0;
    const std::uint64_t fifo = backlog > link_room ? backlog - link_room : 0;
    if (fifo > fifo_peak_frames_.load(std::memory_order_relaxed)) fifo_peak_frames_.store(fifo, std::memory_order_relaxed);
    if (fifo > fifo_cap) {
      std::uint64_t excess = fifo - fifo_cap;
      if (!overflow_pending) bump(overflow_events_);
      overflow_pending = true;
      bump(overflow_frames_, excess);
      // Was the link full (the host is slow) or did this thread run late?
      const bool link_full = rx_ring_ ? link_room == 0 : carry > 0;
      bump(link_full ? overflow_link_full_frames_ : overflow_late_frames_, excess);
      unsigned from_carry = unsigned(std::min<std::uint64_t>(excess, carry));
      if (from_carry) {
        carry -= from_carry;
        if (carry) std::memmove(at(0), at(from_carry), std::size_t(carry) * flen);
        excess -= from_carry;
      }
      next_seq += excess;  // discarded frames keep their numbers consumed
    }
    if (carry == 0 && next_seq >= produced) {
      sleep_until_ns(std::min(due_time(produced), now + 20'000'000));
      continue;
    }

    if (!rx_ring_) {
      // ---- UDP: build the due frames back to back after the carried ones, send them
      // in one GSO/sendmmsg call.
      unsigned n = carry;
      while (n + 2 <= udp_batch && next_seq < produced) {
        auto it = plan_.by_seq.find(next_seq);
        const FaultPlan::Entry* fault = it == plan_.by_seq.end() ? nullptr : &it->second;
        std::uint8_t flags = overflow_pending ? kFlagOverflowBefore : 0;
        if (fault && fault->kind == FaultPlan::kDrop) {
          bump(injected_drop_);
          ++next_seq;
          continue;
        }
        if (fault && fault->kind == FaultPlan::kReorder) {
          if (next_seq + 1 >= produced) break;  // the successor is not due yet
          build(next_seq + 1, flags, at(n), nullptr);
          build(next_seq, 0, at(n + 1), nullptr);
          n += 2;
          next_seq += 2;
          bump(injected_reorder_);
        } else if (fault && fault->kind == FaultPlan::kDuplicate) {
          build(next_seq, flags, at(n), nullptr);
          build(next_seq, 0, at(n + 1), nullptr);
          n += 2;
          ++next_seq;
          bump(injected_duplicate_);
        } else {
          build(next_seq, flags, at(n), fault);
          ++n;
          ++next_seq;
        }
        overflow_pending = false;
      }
      if (n == 0) continue;
      const std::uint64_t ts = now_ns();
      for (unsigned i = carry; i < n; ++i) finish_frame(at(i), cfg.crc, ts);
      bool busy;
      int err;
      int sent = sender.send(at(0), n, &busy, &err);
      unsigned consumed = unsigned(sent);
      if (err) {  // e.g. ECONNREFUSED: no receiver; the frame is lost on the link
        bump(link_errors_);
        ++consumed;
      }
      note_sent(unsigned(sent));
      carry = n - consumed;
      if (carry && consumed) std::memmove(at(0), at(consumed), std::size_t(carry) * flen);
      if (busy) rx_sock_.wait_writable(1);  // the socket buffer is full: give it a moment
    } else {
      // ---- shm: build each frame in place in a free slot. The send time stamp is
      // re-read after every 64 KiB built, not per frame: at 256-byte frames a clock
      // read per frame cost more than building the frame, and the stamp stays within
      // the few microseconds 64 KiB take to build.
      unsigned done = 0;
      std::uint64_t stamp_ns = now_ns(), built_since_stamp = 0;
      auto send_time = [&](std::uint32_t len) {
        built_since_stamp += len;
        if (built_since_stamp >= kRestampBytes) {
          stamp_ns = now_ns();
          built_since_stamp = 0;
        }
        return stamp_ns;
      };
      while (next_seq < produced && done < kBatch) {
        auto it = plan_.by_seq.find(next_seq);
        const FaultPlan::Entry* fault = it == plan_.by_seq.end() ? nullptr : &it->second;
        std::uint8_t flags = overflow_pending ? kFlagOverflowBefore : 0;
        if (fault && fault->kind == FaultPlan::kDrop) {
          bump(injected_drop_);
          ++next_seq;
          continue;
        }
        const bool pair = fault && (fault->kind == FaultPlan::kReorder || fault->kind == FaultPlan::kDuplicate);
        if (fault && fault->kind == FaultPlan::kReorder && next_seq + 1 >= produced) break;
        std::uint8_t* slot = rx_ring_->acquire();
        if (!slot) break;
        if (pair) {
          // Both frames of a pair must fit; publish the first only when the second has room.
          std::uint64_t first = fault->kind == FaultPlan::kReorder ? next_seq + 1 : next_seq;
          std::uint32_t len = build(first, flags, slot, nullptr);
          finish_frame(slot, cfg.crc, send_time(len));
          rx_ring_->publish(len);
          note_sent(1);
          const bool reorder = fault->kind == FaultPlan::kReorder;
          std::uint8_t* slot2 = rx_ring_->acquire_wait(50'000'000);
          if (slot2) {
            len = build(next_seq, 0, slot2, nullptr);
            finish_frame(slot2, cfg.crc, send_time(len));
            rx_ring_->publish(len);
            note_sent(1);
            bump(reorder ? injected_reorder_ : injected_duplicate_);
            overflow_pending = false;
          } else if (reorder) {
            // The consumer is stuck: the late frame is discarded as a device overflow.
            if (!overflow_pending) bump(overflow_events_);
            bump(overflow_frames_);
          }
          next_seq += reorder ? 2 : 1;
          done += 2;
          if (!slot2 && reorder) {
            overflow_pending = true;
            continue;
          }
        } else {
          std::uint32_t len = build(next_seq, flags, slot, fault);
          finish_frame(slot, cfg.crc, send_time(len));
          rx_ring_->publish_deferred(len);  // one head store for the whole batch, below
          note_sent(1);
          ++next_seq;
          ++done;
        }
        overflow_pending = false;
      }
      rx_ring_->flush_published();
      if (next_seq < produced && done < kBatch) rx_ring_->acquire_wait(500'000);  // ring full: wait on the futex
    }
  }

  // Stop: flush the carried frames briefly, then one frame flagged EOB (seq next_seq).
  const std::uint64_t deadline = now_ns() + 100'000'000;
  if (!rx_ring_) {
    unsigned off = 0;
    while (off < carry && now_ns() < deadline) {
      bool busy;
      int err;
      int sent = sender.send(at(off), carry - off, &busy, &err);
      note_sent(unsigned(sent));
      off += unsigned(sent) + (err ? 1 : 0);
      if (busy) rx_sock_.wait_writable(5);
    }
    std::uint8_t* p = at(0);
    std::size_t len = build(next_seq, std::uint8_t(kFlagEOB | (overflow_pending ? kFlagOverflowBefore : 0)), p, nullptr);
    while (now_ns() < deadline) {
      finish_frame(p, cfg.crc, now_ns());
      bool busy;
      int err;
      if (udp_send_batch(rx_sock_.fd(), &p, &len, 1, &busy, &err) == 1) {
        note_sent(1);
        break;
      }
      if (!busy) break;
      rx_sock_.wait_writable(5);
    }
  } else if (std::uint8_t* slot = rx_ring_->acquire_wait(100'000'000)) {
    std::uint32_t len = build(next_seq, std::uint8_t(kFlagEOB | (overflow_pending ? kFlagOverflowBefore : 0)), slot, nullptr);
    finish_frame(slot, cfg.crc, now_ns());
    rx_ring_->publish(len);
    note_sent(1);
  }
}

// ---------------------------------------------------------------- TX / loopback (host -> device)

void SimDevice::run_tx() {
  const StreamConfig& cfg = cfg_;
  const bool loop = cfg.direction == Direction::loopback;
  RxChecker check(*tx_);
  int gro = 0;
  socklen_t gro_len = sizeof gro;
  if (!tx_ring_) getsockopt(tx_sock_.fd(), IPPROTO_UDP, UDP_GRO, &gro, &gro_len);
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
        if (!ok && err) bump(link_errors_);
      }
    }
    if (ok) {
      bump(frames_sent_);
      bump(samples_sent_, samples);
      overflow_pending = false;
    } else {  // the RX link cannot take it: this frame overflows, its seq stays consumed
      if (!overflow_pending) bump(overflow_events_);
      overflow_pending = true;
      bump(overflow_frames_);
    }
  };

  auto on_frame = [&](const std::uint8_t* p, std::size_t len, std::uint64_t now) {
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

  while (!stop_.load(std::memory_order_relaxed)) {
    bool got = false;
    if (tx_ring_) {
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
        if (batch.truncated(unsigned(i))) bump(tx_->malformed_frames);
        else batch.for_each_datagram(unsigned(i), [&](const std::uint8_t* p, std::size_t len) { on_frame(p, len, now); });
      }
      got = n > 0;
      if (!got) tx_sock_.wait_readable(2);
    }
    check.flush();
    (void)got;
    // Underrun: the consumption clock got ahead of what arrived, mid-burst.
    if (consuming && !eob) {
      const std::uint64_t now = now_ns();
      if (double(now - run_t0) * samples_per_ns > double(run_samples)) {
        bump(underruns_);
        consuming = false;  // the device idles until the next frame restarts it
      }
    } else if (eob) {
      consuming = false;
    }
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
    if (rx_ring_) {
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
