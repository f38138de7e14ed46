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
  UdpSocket rx_sock;
  std::unique_ptr<FrameSink> rx_sink;
  std::unique_ptr<ShmProducer> rx_ring;
  std::unique_ptr<FrameSource> tx_in;
  std::unique_ptr<UsbSimDeviceEnd> usb;
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
    usb = std::make_unique<UsbSimDeviceEnd>(link.transfer_bytes, link.transfers,
                                            cfg.direction == Direction::tx || cfg.direction == Direction::rx ? 1 : 2);
    endpoint = usb->endpoint_json();
    endpoint["kind"] = "usb";
    endpoint["link"] = cfg.transport.link;
    endpoint["pid"] = getpid();
    cfg_ = sc;
    plan_ = std::move(plan);
    rx_sock_ = UdpSocket();
    rx_sink_.reset();
    rx_ring_.reset();
    tx_in_.reset();
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
      rx_sock = UdpSocket::connect_to(t.host, t.port, t.socket_buffer_bytes);
    } else if (t.kind == TransportKind::tcp) {
      if (cfg.direction == Direction::loopback)
        throw std::invalid_argument("configure.transport: the simulator loops back over udp, shm or usb, not tcp");
      StreamConfig to = cfg;
      to.transport = t;
      rx_sink = std::make_unique<FrameSink>(to);  // the host's receiver listens: connect to it
    } else {
      if (t.path.empty()) throw std::invalid_argument("configure.transport.path: the host's ring path is needed for rx/loopback over shm");
      rx_ring = std::make_unique<ShmProducer>(ShmRing::open(t.path, t.publish));
      if (rx_ring->slot_bytes() < cfg.frame_bytes)
        throw std::invalid_argument("configure.transport.path: ring slots hold " + std::to_string(rx_ring->slot_bytes()) +
                                    " bytes, frame_bytes is " + std::to_string(cfg.frame_bytes));
    }
  }
  if (cfg.direction == Direction::tx || cfg.direction == Direction::loopback || both) {
    StreamConfig listen = cfg;
    // Loopback without rx_dest: transport is the RX destination, so listen on any port.
    if (!(cfg.direction == Direction::tx || has_rx_dest)) listen.transport.port = 0;
    listen.transport.path.clear();         // the simulator creates the ring the host sends into
    listen.transport.busy_poll = false;    // the device's consumer sleeps between batches
    tx_in = std::make_unique<FrameSource>(listen);
    const json e = tx_in->endpoint();
    if (tl.kind == TransportKind::udp || tl.kind == TransportKind::tcp)
      endpoint = {{"kind", transport_kind_name(tl.kind)}, {"host", tl.host}, {"port", e["port"]},
                  {"socket_buffer_bytes", tl.socket_buffer_bytes},
                  {"socket_buffer_bytes_granted", e["socket_buffer_bytes_granted"]}};
    else
      endpoint = {{"kind", "shm"}, {"path", e["path"]}, {"slots", e["slots"]}, {"publish", e["publish"]}};
  } else if (t.kind == TransportKind::udp) {
    endpoint = {{"kind", "udp"}, {"host", t.host}, {"port", t.port}, {"socket_buffer_bytes_granted", rx_sock.granted_sndbuf()}};
  } else if (t.kind == TransportKind::tcp) {
    endpoint = {{"kind", "tcp"}, {"host", t.host}, {"port", t.port}, {"tcp", rx_sink->tcp_info()}};
  } else {
    endpoint = {{"kind", "shm"}, {"path", t.path}, {"publish", ring_publish_name(t.publish)}};
  }
  cfg_ = sc;
  plan_ = std::move(plan);
  rx_sock_ = std::move(rx_sock);
  rx_sink_ = std::move(rx_sink);

  rx_ring_ = std::move(rx_ring);
  tx_in_ = std::move(tx_in);
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
  playout_ = std::make_unique<PlayoutClock>(cfg_.stream.rate_sps);
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
      if (rx_sink_) {
        TcpSinkLink link(*rx_sink_, tally);
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
    } else if (rx_sink_) {
      TcpSinkLink link(*rx_sink_, tally);
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
  s["tx_blocks"] = tx_ ? tx["blocks"] : json::array();  // [received, sent] per 100 000 seq
  // What the device's sample clock consumed, and when that was true (TX throughput).
  const PlayoutClock::Played played = playout_ ? playout_->played() : PlayoutClock::Played{};
  s["tx_samples_played"] = played.samples;
  s["tx_played_ns"] = played.at_ns;
  // tcp: the connection's own figures, from the sender's end (RX: this device) or the receiver's (TX).
  if (rx_sink_) s["tcp"] = rx_sink_->tcp_info();
  else if (tx_in_ && tx_in_->kind() == TransportKind::tcp) s["tcp"] = tx_in_->tcp_info();
  return s;
}

}  // namespace hilrig
