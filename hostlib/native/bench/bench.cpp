// hilrig-bench: the native half of `make bench` (hostlib/bench drives it, searches
// rates and prints the table). Each subcommand runs one measurement and prints one
// JSON line:
//   udp    --frame-bytes N --rate-fps R (0 = unpaced) --seconds S [--no-gso] [--no-gro]
//          RxStream + TxStream of the library over 127.0.0.1, every sample checked
//   shm    --frame-bytes N --seconds S [--slots K] [--publish STRATEGY]
//          a producer thread builds pattern frames in place in the ring of an
//          RxStream (the product's receiver), which checks every sample in place
//   memcpy --frame-bytes N --seconds S [--slots K]
//          one thread copying each frame into a ring-sized buffer and out again
//   check  --frame-bytes N --seconds S      pattern_check alone over one frame
//   generate --frame-bytes N --seconds S    PatternFramer::build alone into one frame
//          (what the simulator's producer does per frame, nothing else)
//   blast  --frame-bytes N --seconds S [--no-gso] [--no-gro]
//          the UDP rows' limit: the frame I/O layer alone over 127.0.0.1 (FrameSink
//          unpaced, FrameSource counting), no pattern, no check, no accounting
//   pace   --period-ns P --host A --port N --frame-bytes N --seconds S
//          the TX stream's paced sender (TxStream with transport.pacing.period, the
//          rate clock out of its way) to A:N: its achieved period p50 / p99
//   pingpong [--seconds S]                  one-way cache-line transfer between two threads
//   spsc   [--qd 1,32,256] [--payload 24,256,8192] [--queues batched,...,boost] [--runs N]
//          [--seconds S] [--latency-seconds S]
//          the lab's request/response study (spsc.hpp): every ring publish strategy and
//          Boost's spsc_queue, min/median Mops/s, QD-1 latency, the ping-pong bound
#include <sys/resource.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "hilrig/core/clock.hpp"
#include "hilrig/core/framer.hpp"
#include "hilrig/core/pattern.hpp"
#include "hilrig/core/rx_check.hpp"
#include "hilrig/io/frame_sink.hpp"
#include "hilrig/io/frame_source.hpp"
#include "hilrig/io/shm_ring.hpp"
#include "hilrig/io/streams.hpp"
#include "spsc.hpp"

using nlohmann::json;
using namespace hilrig;

namespace {
double cpu_s() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

struct Args {
  std::map<std::string, std::string> kv;
  bool flag(const std::string& k) const { return kv.count(k) != 0; }
  double num(const std::string& k, double dflt) const {
    auto it = kv.find(k);
    return it == kv.end() ? dflt : std::stod(it->second);
  }
  std::string str(const std::string& k, const std::string& dflt) const {
    auto it = kv.find(k);
    return it == kv.end() ? dflt : it->second;
  }
};

StreamConfig base_config(std::uint32_t frame_bytes, double rate_sps) {
  StreamConfig c;
  c.frame_bytes = frame_bytes;
  c.rate_sps = rate_sps;
  return c;
}

json bench_udp(const Args& a) {
  const auto fb = std::uint32_t(a.num("--frame-bytes", 1472));
  const double fps = a.num("--rate-fps", 0), seconds = a.num("--seconds", 1);
  StreamConfig cfg = base_config(fb, 1.0);
  cfg.rate_sps = fps > 0 ? fps * cfg.samples_per_frame() : 1e15;  // 1e15: unpaced
  cfg.transport.gso = !a.flag("--no-gso");
  cfg.transport.gro = !a.flag("--no-gro");
  cfg.transport.socket_buffer_bytes = std::uint32_t(a.num("--socket-buffer", 4u << 20));
  cfg = resolve_stream_config(cfg, "bench udp");  // the socket buffer grown to the rate, as a case's
  RxStream rx(cfg);
  json ep = rx.endpoint();
  StreamConfig tcfg = cfg;
  tcfg.transport = transport_at_endpoint(cfg.transport, ep, "endpoint");
  tcfg.transport.gso = cfg.transport.gso;
  TxStream tx(tcfg);
  rx.start();
  const double c0 = cpu_s();
  const std::uint64_t t0 = now_ns();
  tx.start();
  sleep_for_ns(std::uint64_t(seconds * 1e9));
  json rx_at_stop = rx.stats();
  tx.stop();
  const std::uint64_t t1 = now_ns();
  const double c1 = cpu_s();
  json ts = tx.stats();
  const std::uint64_t sent = ts["frames_sent"];
  // Drain: what is still in the socket buffer is delivered, not lost.
  const std::uint64_t deadline = now_ns() + 500'000'000;
  while (now_ns() < deadline && rx.stats()["frames_received"].get<std::uint64_t>() < sent) sleep_for_ns(2'000'000);
  rx.stop();
  json rs = rx.stats();
  const double dt = double(t1 - t0) / 1e9;
  const std::uint64_t received = rs["frames_received"];
  return {{"bench", "udp"}, {"frame_bytes", fb}, {"rate_fps_requested", fps}, {"seconds", dt},
          {"frames_sent", sent}, {"frames_received", received},
          {"frames_received_at_stop", rx_at_stop["frames_received"]},
          {"lost_frames", sent > received ? sent - received : 0}, {"missing_frames", rs["missing_frames"]},
          {"pattern_errors", rs["pattern_errors"]}, {"malformed_frames", rs["malformed_frames"]},
          {"send_errors", ts["send_errors"]},
          {"sent_fps", double(sent) / dt}, {"received_fps", double(received) / dt},
          {"cpu_percent", 100.0 * (c1 - c0) / dt},
          {"rx_thread_cpu_percent", 100.0 * double(rs["thread_cpu_ns"].get<std::uint64_t>()) / 1e9 / dt},
          {"gso", ts["gso"]}, {"gro", ep["gro"]}, {"socket_buffer_bytes_granted", ep["socket_buffer_bytes_granted"]},
          {"warnings", rs["warnings"]}};
}

std::uint32_t default_slots(std::uint32_t fb) {
  // The same 8 MiB ring as a case's default (hostlib/transports default_shm_slots).
  return std::clamp<std::uint32_t>((8u << 20) / fb, 16, 65536);
}

json bench_shm(const Args& a) {
  const auto fb = std::uint32_t(a.num("--frame-bytes", 8192 + 48));
  const double seconds = a.num("--seconds", 1);
  const auto slots = std::uint32_t(a.num("--slots", default_slots(fb)));
  // The consumer is the product's own receiver (RxStream: it creates the ring and
  // checks every frame in place in its thread); the rate only sizes the ring, and a
  // low one leaves it at `slots`. The producer opens the ring by path and publishes
  // in batches of 32, as the simulator does.
  StreamConfig cfg = base_config(fb, 1e6);
  cfg.transport.kind = TransportKind::shm;
  cfg.transport.slots = slots;
  if (a.flag("--publish")) cfg.transport.publish = parse_ring_publish(a.kv.at("--publish"));
  cfg = resolve_stream_config(cfg, "bench shm");
  RxStream rx(cfg);
  ShmProducer prod(ShmRing::open(rx.endpoint()["path"].get<std::string>(), cfg.transport.publish));
  std::atomic<bool> stop{false};
  std::uint64_t produced = 0;
  const PatternFramer framer(cfg);
  const std::uint32_t len = framer.frame_len();
  rx.start();
  const double c0 = cpu_s();
  const std::uint64_t t0 = now_ns();
  std::thread producer([&] {
    constexpr unsigned kPublishBatch = 32;
    std::uint64_t seq = 0;
    unsigned pending = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      std::uint8_t* slot = prod.acquire();
      if (!slot) slot = prod.acquire_wait(10'000'000);  // flushes first
      if (!slot) continue;
      framer.build(seq++, 0, slot);
      finish_frame(slot, false, 0);
      prod.publish_deferred(len);
      if (++pending == kPublishBatch) {
        prod.flush_published();
        pending = 0;
      }
    }
    std::uint8_t* slot = prod.acquire_wait(1'000'000'000);
    if (slot) {
      framer.build(seq++, kFlagEOB, slot);
      prod.publish_deferred(len);
    }
    prod.flush_published();
    produced = seq;
  });
  sleep_for_ns(std::uint64_t(seconds * 1e9));
  stop.store(true);
  producer.join();
  const std::uint64_t deadline = now_ns() + 2'000'000'000;
  while (!rx.stats()["eob_received"].get<bool>() && now_ns() < deadline) sleep_for_ns(1'000'000);
  const double c1 = cpu_s();
  rx.stop();
  const json rs = rx.stats();
  const std::uint64_t frames = rs["frames_received"];
  // The receiver's own window: first to last arrival (time stamped per receive batch).
  const double dt = double(rs["last_frame_ns"].get<std::uint64_t>() - rs["first_frame_ns"].get<std::uint64_t>()) / 1e9;
  const double payload = double(rs["payload_bytes_received"].get<std::uint64_t>());
  return {{"bench", "shm"}, {"frame_bytes", fb}, {"slots", slots}, {"publish", ring_publish_name(cfg.transport.publish)}, {"seconds", dt},
          {"frames_produced", produced}, {"frames_received", frames},
          {"missing_frames", rs["missing_frames"]}, {"pattern_errors", rs["pattern_errors"]},
          {"malformed_frames", rs["malformed_frames"]}, {"eob_received", rs["eob_received"]},
          {"frames_per_s", double(frames - 1) / dt}, {"payload_GBps", payload / dt / 1e9},
          {"frame_GBps", double(frames - 1) * len / dt / 1e9},
          {"cpu_percent", 100.0 * (c1 - c0) / (double(now_ns() - t0) / 1e9)}};
}

// One cache line handed back and forth between two threads: the one-way transfer
// time says where the two vCPUs sit (sharing a cache or not), which on a VM the host
// decides and may change from one second to the next. Small-frame shm rates track it.
json bench_pingpong(const Args& a) {
  return {{"bench", "pingpong"}, {"one_way_ns", bench::pingpong_one_way_ns(a.num("--seconds", 0.05))}};
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at <= s.size();) {
    const std::size_t comma = std::min(s.find(',', at), s.size());
    if (comma > at) out.push_back(s.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

json bench_spsc(const Args& a) {
  bench::SpscOptions o;
  auto numbers = [&](const char* key, std::vector<std::uint32_t>& out) {
    if (!a.flag(key)) return;
    out.clear();
    for (const std::string& v : split_list(a.kv.at(key))) out.push_back(std::uint32_t(std::stoul(v)));
  };
  numbers("--qd", o.qds);
  numbers("--payload", o.payload_bytes);
  if (a.flag("--queues")) o.queues = split_list(a.kv.at("--queues"));
  o.runs = unsigned(a.num("--runs", o.runs));
  o.seconds_per_run = a.num("--seconds", o.seconds_per_run);
  o.latency_seconds = a.num("--latency-seconds", o.latency_seconds);
  return bench::bench_spsc(o);
}

json bench_memcpy(const Args& a) {
  const auto fb = std::uint32_t(a.num("--frame-bytes", 8192 + 48));
  const double seconds = a.num("--seconds", 1);
  const auto slots = std::uint32_t(a.num("--slots", default_slots(fb)));
  const std::size_t stride = (std::size_t(fb) + 63) / 64 * 64;
  std::vector<std::uint8_t> src(fb, 0x5a), ring(stride * slots), dst(fb);
  const std::uint64_t t0 = now_ns();
  std::uint64_t n = 0, t1 = t0;
  volatile std::uint8_t sink = 0;
  do {
    for (int k = 0; k < 64; ++k, ++n) {
      std::uint8_t* s = ring.data() + (n % slots) * stride;
      std::memcpy(s, src.data(), fb);  // in
      std::memcpy(dst.data(), s, fb);  // out
      sink = sink + dst[n % fb];
    }
    t1 = now_ns();
  } while (t1 - t0 < std::uint64_t(seconds * 1e9));
  const double dt = double(t1 - t0) / 1e9;
  return {{"bench", "memcpy"}, {"frame_bytes", fb}, {"slots", slots}, {"seconds", dt}, {"frames", n},
          {"frames_per_s", double(n) / dt}, {"frame_GBps", double(n) * fb / dt / 1e9}};
}

json bench_check(const Args& a) {
  const auto fb = std::uint32_t(a.num("--frame-bytes", 8192 + 48));
  const double seconds = a.num("--seconds", 0.5);
  StreamConfig cfg = base_config(fb, 1e6);
  std::vector<std::uint8_t> frame(fb + 64);
  build_pattern_frame(cfg, 7, 0, frame.data());
  const std::uint64_t first = 7ull * cfg.samples_per_frame();
  const std::uint64_t t0 = now_ns();
  std::uint64_t n = 0, errs = 0, t1 = t0;
  do {
    for (int k = 0; k < 64; ++k, ++n)
      errs += pattern_check(first, frame.data() + kFrameHeaderBytes, cfg.words_per_frame(), cfg.sample_format);
    t1 = now_ns();
  } while (t1 - t0 < std::uint64_t(seconds * 1e9));
  const double dt = double(t1 - t0) / 1e9;
  return {{"bench", "check"}, {"frame_bytes", fb}, {"pattern_errors", errs}, {"frames_per_s", double(n) / dt},
          {"payload_GBps", double(n) * cfg.payload_bytes() / dt / 1e9}};
}

json bench_generate(const Args& a) {
  const auto fb = std::uint32_t(a.num("--frame-bytes", 65584));
  const double seconds = a.num("--seconds", 0.5);
  const StreamConfig cfg = base_config(fb, 1e6);
  const PatternFramer framer(cfg);
  std::vector<std::uint8_t> frame(fb + 64);
  const std::uint64_t t0 = now_ns();
  std::uint64_t n = 0, t1 = t0;
  do {
    for (int k = 0; k < 64; ++k, ++n) framer.build(n, 0, frame.data());
    t1 = now_ns();
  } while (t1 - t0 < std::uint64_t(seconds * 1e9));
  const double dt = double(t1 - t0) / 1e9;
  return {{"bench", "generate"}, {"frame_bytes", fb}, {"frames_per_s", double(n) / dt},
          {"samples_per_s", double(n) * cfg.samples_per_frame() / dt},
          {"payload_GBps", double(n) * cfg.payload_bytes() / dt / 1e9}};
}

json bench_blast(const Args& a) {
  const auto fb = std::uint32_t(a.num("--frame-bytes", 1472));
  const double seconds = a.num("--seconds", 1);
  StreamConfig cfg = base_config(fb, 1e15);  // unpaced: sizes the socket buffers to their cap
  cfg.transport.gso = !a.flag("--no-gso");
  cfg.transport.gro = !a.flag("--no-gro");
  cfg = resolve_stream_config(cfg, "bench blast");
  FrameSource src(cfg);
  StreamConfig tcfg = cfg;
  tcfg.transport = transport_at_endpoint(cfg.transport, src.endpoint(), "endpoint");
  tcfg.transport.gso = cfg.transport.gso;
  FrameSink sink(tcfg);
  std::atomic<bool> stop{false};
  std::uint64_t sent = 0;
  std::thread sender([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      unsigned n = 0;
      for (; n < sink.batch_capacity(); ++n) {
        if (!sink.acquire(0)) break;
        sink.commit(fb);  // the bytes as they are: the limit moves them, it does not build them
      }
      sent += sink.flush(now_ns() + 10'000'000, &stop);
    }
  });
  const double c0 = cpu_s();
  std::uint64_t received = 0, bytes = 0, first_ns = 0, last_ns = 0;
  const std::uint64_t end_ns = now_ns() + std::uint64_t(seconds * 1e9);
  while (now_ns() < end_ns) {
    if (!src.wait(10'000'000)) continue;
    while (FrameView f = src.take()) {
      ++received;
      bytes += f.len;
      src.release();
    }
    last_ns = now_ns();
    if (first_ns == 0) first_ns = last_ns;
  }
  stop.store(true);
  sender.join();
  const double c1 = cpu_s();
  const double dt = double(last_ns - first_ns) / 1e9;
  return {{"bench", "blast"}, {"frame_bytes", fb}, {"seconds", dt}, {"frames_sent", sent},
          {"frames_received", received}, {"received_fps", dt > 0 ? double(received) / dt : 0.0},
          {"received_GBps", dt > 0 ? double(bytes) / dt / 1e9 : 0.0}, {"gso", sink.gso_active()},
          {"cpu_percent", 100.0 * (c1 - c0) / seconds}};
}
json bench_pace(const Args& a) {
  StreamConfig cfg = base_config(std::uint32_t(a.num("--frame-bytes", 1430)), 1e15);  // the rate clock never holds a frame
  cfg.direction = Direction::tx;
  cfg.sample_format = SampleFormat::sc8;
  cfg.transport.host = a.str("--host", "127.0.0.1");
  cfg.transport.port = std::uint16_t(a.num("--port", 9));
  cfg.transport.pacing.period_ns = std::uint64_t(a.num("--period-ns", 2000));
  cfg = resolve_stream_config(cfg, "bench pace");
  const double seconds = a.num("--seconds", 1);
  TxStream tx(cfg);
  tx.start();
  sleep_for_ns(std::uint64_t(seconds * 1e9));
  tx.stop();
  json s = tx.stats();
  s["bench"] = "pace";
  s["period_ns"] = cfg.transport.pacing.period_ns;
  s["seconds"] = seconds;
  return s;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: hilrig-bench udp|shm|memcpy|check|generate|blast|pace|pingpong|spsc [--frame-bytes N] [--seconds S] ...\n");
    return 2;
  }
  Args a;
  for (int i = 2; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "--no-gso" || k == "--no-gro") a.kv[k] = "1";
    else if (i + 1 < argc) a.kv[k] = argv[++i];
    else {
      std::fprintf(stderr, "hilrig-bench: %s needs a value\n", k.c_str());
      return 2;
    }
  }
  try {
    const std::string cmd = argv[1];
    json r;
    if (cmd == "udp") r = bench_udp(a);
    else if (cmd == "shm") r = bench_shm(a);
    else if (cmd == "memcpy") r = bench_memcpy(a);
    else if (cmd == "check") r = bench_check(a);
    else if (cmd == "generate") r = bench_generate(a);
    else if (cmd == "blast") r = bench_blast(a);
    else if (cmd == "pace") r = bench_pace(a);
    else if (cmd == "pingpong") r = bench_pingpong(a);
    else if (cmd == "spsc") r = bench_spsc(a);
    else {
      std::fprintf(stderr, "hilrig-bench: unknown command %s (udp, shm, memcpy, check, generate, blast, pace, pingpong, spsc)\n", cmd.c_str());
      return 2;
    }
    std::cout << r.dump() << std::endl;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hilrig-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
