// The native streams' threads, built under ThreadSanitizer and under ASan + UBSan
// (CMakeLists: hilrig_streams_tsan / hilrig_streams_asan): the simulator device
// in-process with its RX/TX threads, the host RxStream/TxStream threads, and a third
// thread reading stats() the whole time, as the Python poller does. The counts must
// also be exact (faults injected == faults detected), so a race that loses a count
// fails even where the sanitizer is silent. Plus the radio path's time-stamp
// accounting (radio_stream.hpp) against the frame receiver's rules.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "hilrig/core/clock.hpp"
#include "hilrig/core/config.hpp"
#include "hilrig/core/pattern.hpp"
#include "hilrig/radio/radio_stream.hpp"
#include "hilrig/sim/sim_device.hpp"
#include "hilrig/io/streams.hpp"

using nlohmann::json;

namespace {

// Calls read() in a loop on its own thread until destroyed.
class StatsReader {
 public:
  template <typename F>
  explicit StatsReader(F read) : thread_([this, read] {
      while (!stop_.load()) {
        read();
        ++reads_;
      }
    }) {}
  ~StatsReader() {
    stop_ = true;
    thread_.join();
  }
  std::uint64_t reads() const { return reads_.load(); }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> reads_{0};
  std::thread thread_;
};

// A complete simulator config from the core's defaults (the parsers require every key).
json stream(const char* direction, const std::string& kind) {
  json j = hilrig::to_json(hilrig::default_sim_config(hilrig::parse_transport_kind(kind, "kind"), 4048));
  // 1 MS/s of 1000-sample frames: slow enough for a sanitized build on a busy machine.
  j["direction"] = direction;
  j["channels"] = 1;
  j["sample_format"] = "sc16";
  j["rate_sps"] = 1e6;
  return j;
}

class Streams : public ::testing::TestWithParam<std::string> {};

TEST_P(Streams, RxFaultsCountExactlyWhileStatsAreRead) {
  const json cfg = stream("rx", GetParam());
  hilrig::RxStream rx(hilrig::resolve_stream_config(cfg));
  hilrig::SimDevice sim;
  json req = cfg;
  req["rx_dest"] = rx.endpoint();  // where the simulator sends RX frames
  req["master_clock_hz"] = 100e6;
  req["fifo_frames"] = 4096;
  req["faults"].update({{"seed", 3}, {"drop_frames", 4}, {"corrupt_samples", 9}, {"duplicate_frames", 3}, {"reorder_frames", 2}});
  sim.configure(req);
  rx.start();
  sim.start();
  json final;
  {
    StatsReader reader([&] {
      (void)rx.stats();
      (void)sim.stats();
    });
    hilrig::sleep_for_ns(400'000'000);
    final = sim.stop();
    const std::uint64_t until = hilrig::now_ns() + 1'000'000'000;
    while (!rx.stats().value("eob_received", false) && hilrig::now_ns() < until) hilrig::sleep_for_ns(1'000'000);
    EXPECT_GT(reader.reads(), 10u);
  }
  rx.stop();
  const json st = rx.stats();
  EXPECT_TRUE(st["eob_received"].get<bool>());
  EXPECT_EQ(final["injected_drop_frames"], 4);
  EXPECT_EQ(final["injected_corrupt_samples"], 9);
  EXPECT_EQ(final["injected_duplicate_frames"], 3);
  EXPECT_EQ(final["injected_reorder_frames"], 2);
  EXPECT_EQ(st["missing_frames"], 4);
  EXPECT_EQ(st["dropped_samples"], 4 * 1000);
  EXPECT_EQ(st["pattern_errors"], 9);
  EXPECT_EQ(st["duplicate_frames"], 3);
  EXPECT_EQ(st["reordered_frames"], 2);
  EXPECT_EQ(st["overruns"], 0);
  EXPECT_GT(st["frames_received"].get<std::uint64_t>(), 300u);
}

TEST_P(Streams, TxArrivesWholeWhileStatsAreRead) {
  const json cfg = stream("tx", GetParam());
  hilrig::SimDevice sim;
  json req = cfg;
  req["master_clock_hz"] = 100e6;
  req["fifo_frames"] = 64;
  const json endpoint = sim.configure(req);
  hilrig::StreamConfig host = hilrig::resolve_stream_config(cfg);
  host.transport = hilrig::transport_at_endpoint(host.transport, endpoint, "endpoint");
  hilrig::TxStream tx(host);
  sim.start();
  tx.start();
  {
    StatsReader reader([&] {
      (void)tx.stats();
      (void)sim.stats();
    });
    hilrig::sleep_for_ns(300'000'000);
    tx.stop();
    EXPECT_GT(reader.reads(), 10u);
  }
  const std::uint64_t sent = tx.stats()["frames_sent"];
  const std::uint64_t until = hilrig::now_ns() + 1'000'000'000;
  while (sim.stats()["tx_frames_received"].get<std::uint64_t>() < sent && hilrig::now_ns() < until)
    hilrig::sleep_for_ns(1'000'000);
  const json final = sim.stop();
  EXPECT_GT(sent, 200u);
  EXPECT_EQ(final["tx_frames_received"], sent);
  EXPECT_EQ(final["tx_missing_frames"], 0);
  EXPECT_EQ(final["tx_pattern_errors"], 0);
}

INSTANTIATE_TEST_SUITE_P(Links, Streams, ::testing::Values("udp", "shm"));

// ---------------------------------------------------------------- radio path accounting

struct Packet {
  std::uint64_t tick;
  std::vector<std::uint32_t> words;
};

Packet packet(std::uint64_t tick, std::uint64_t n) {
  Packet p{tick, std::vector<std::uint32_t>(n)};
  hilrig::pattern_fill(tick, p.words.data(), n, hilrig::SampleFormat::sc16);
  return p;
}

// The frame receiver's rules on time stamps: order 0 1 3 2 2 5 with 100-sample packets:
// 3 jumps (one seq error, missing 1 / 100 samples, taken back when 2 arrives late),
// the second 2 is a duplicate (not counted twice), 4 is lost.
TEST(RadioRxAccount, DuplicatesAndReordersByTimeStamp) {
  hilrig::RadioRxCounters c;
  hilrig::RadioRxAccount acc(c, 1, hilrig::SampleFormat::sc16, true);
  acc.set_mtu(100);
  StatsReader reader([&] { (void)hilrig::rx_counters_json(c); });
  for (std::uint64_t k : {0, 1, 3, 2, 2, 5}) {
    Packet p = packet(k * 100, 100);
    const void* buffs[] = {p.words.data()};
    acc.on_packet(100, true, std::int64_t(p.tick), buffs);
  }
  const json j = hilrig::rx_counters_json(c);
  EXPECT_EQ(j["frames_received"], 6);
  EXPECT_EQ(j["samples_received"], 500);  // 0 1 3 2 5: the duplicate's samples not again
  EXPECT_EQ(j["duplicate_frames"], 1);
  EXPECT_EQ(j["reordered_frames"], 1);
  EXPECT_EQ(j["missing_frames"], 1);       // frame 4 only
  EXPECT_EQ(j["dropped_samples"], 100);
  EXPECT_EQ(j["seq_errors"], 2);           // 1 -> 3 and 3 -> 5 (2 is late, not a jump)
  EXPECT_EQ(j["pattern_errors"], 0);
}

// What a driver cannot know is null ("not measured"), never 0.
TEST(RadioRxAccount, WithoutTimeStampsOrPatternCheckCountersAreNotMeasured) {
  hilrig::RadioRxCounters c;
  hilrig::RadioRxAccount acc(c, 1, hilrig::SampleFormat::sc16, false);
  acc.set_mtu(100);
  Packet p = packet(0, 100);
  const void* buffs[] = {p.words.data()};
  acc.on_packet(100, false, 0, buffs);
  const json j = hilrig::rx_counters_json(c);
  EXPECT_EQ(j["samples_received"], 100);
  for (const char* key : {"seq_errors", "missing_frames", "dropped_samples", "duplicate_frames", "reordered_frames",
                          "pattern_errors"})
    EXPECT_TRUE(j[key].is_null()) << key;
}


// Per-channel buffers (a radio API's): each channel's words checked with the core's
// pattern_check_channel; the key set is the core's counters_json plus the radio's own.
TEST(RadioRxAccount, ChecksEachChannelBufferAndSpeaksTheCoreKeys) {
  hilrig::RadioRxCounters c;
  hilrig::RadioRxAccount acc(c, 2, hilrig::SampleFormat::sc16, true);
  acc.set_mtu(100);
  std::vector<std::uint32_t> ch0(100), ch1(100);
  hilrig::pattern_fill_channel(300, 2, 0, ch0.data(), 100, hilrig::SampleFormat::sc16);
  hilrig::pattern_fill_channel(300, 2, 1, ch1.data(), 100, hilrig::SampleFormat::sc16);
  EXPECT_EQ(ch1[1], (300u + 1) * 2 + 1);  // word k = tick * channels + ch
  ch1[7] ^= 1;
  const void* buffs[] = {ch0.data(), ch1.data()};
  acc.on_packet(100, true, 300, buffs);
  const json j = hilrig::rx_counters_json(c);
  EXPECT_EQ(j["pattern_errors"], 1);
  EXPECT_EQ(j["payload_bytes_received"], 100 * 2 * 4);
  json core = hilrig::counters_json(hilrig::RxCounters{});
  core["late_commands"] = 0;
  core["other_errors"] = 0;
  for (const auto& [key, value] : core.items()) EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j.size(), core.size());
  EXPECT_EQ(j["latency_count"], 0);
}

}  // namespace
