// The stream config: defaults, JSON round trip, missing keys, stream args.
#include <gtest/gtest.h>

#include <string>

#include "hilrig/core/config.hpp"

using nlohmann::json;

namespace {
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(Config, DefaultsFollowTheFrameSizeWithinBounds) {
  namespace d = hilrig::defaults;
  EXPECT_EQ(d::ring_slots(8000), (8u << 20) / 8000);
  EXPECT_EQ(d::ring_slots(1u << 24), d::kRingMinSlots);
  EXPECT_EQ(d::ring_slots(64), d::kRingMaxSlots);
  EXPECT_EQ(d::fifo_frames(8000), (128u << 20) / 8000);
  EXPECT_EQ(d::fifo_frames(1u << 24), d::kFifoMinFrames);
  const hilrig::SimConfig s = hilrig::default_sim_config(hilrig::TransportKind::shm, 2000);
  EXPECT_EQ(s.stream.transport.slots, d::ring_slots(2000));
  EXPECT_EQ(s.fifo_frames, d::fifo_frames(2000));
  EXPECT_EQ(s.stream.frame_bytes, 2000u);
  const hilrig::StreamConfig plain;  // the struct's own initialisers are the same defaults
  EXPECT_EQ(hilrig::to_json(plain), hilrig::to_json(hilrig::default_stream_config(hilrig::TransportKind::udp)));
}

TEST(Config, JsonRoundTripIsExact) {
  for (auto kind : {hilrig::TransportKind::udp, hilrig::TransportKind::shm}) {
    hilrig::SimConfig c = hilrig::default_sim_config(kind, 1072);
    c.stream.direction = hilrig::Direction::loopback;
    c.stream.channels = 3;
    c.stream.sample_format = hilrig::SampleFormat::sc8;
    c.stream.rate_sps = 12.5e6;
    c.stream.crc = true;
    c.stream.stream_id = 9;
    c.stream.tx_lead_frames = 17;
    c.stream.transport.gso = false;
    c.stream.transport.path = "/proc/1/fd/3";
    c.master_clock_hz = 122.88e6;
    c.fifo_frames = 77;
    c.faults.seed = 123456789012345ull;
    c.faults.drop_frames = 4;
    c.faults.stall_ms = 250;
    c.faults.window_frames = 1000;
    const json j = hilrig::to_json(c);
    const json back = hilrig::to_json(hilrig::sim_config_from_json(j));
    EXPECT_EQ(back, j);
    EXPECT_EQ(hilrig::to_json(hilrig::stream_config_from_json(j)), hilrig::to_json(c.stream));
  }
}

TEST(Config, EveryMissingKeyIsAnErrorNamingIt) {
  for (auto kind : {hilrig::TransportKind::udp, hilrig::TransportKind::shm}) {
    const json full = hilrig::to_json(hilrig::default_sim_config(kind));
    for (auto it = full.begin(); it != full.end(); ++it) {
      json broken = full;
      broken.erase(it.key());
      EXPECT_NE(error_of([&] { hilrig::sim_config_from_json(broken); }).find(it.key() + ": is missing"), std::string::npos)
          << it.key();
    }
    for (const auto& [key, _] : full["transport"].items()) {
      if (key == "kind") continue;
      json broken = full;
      broken["transport"].erase(key);
      EXPECT_NE(error_of([&] { hilrig::sim_config_from_json(broken); }).find("transport." + key + ": is missing"),
                std::string::npos)
          << key;
    }
    for (const auto& [key, _] : full["faults"].items()) {
      json broken = full;
      broken["faults"].erase(key);
      EXPECT_NE(error_of([&] { hilrig::sim_config_from_json(broken); }).find("faults." + key), std::string::npos) << key;
    }
  }
}

TEST(Config, BadValuesNameTheKeyAndTheLimit) {
  json j = hilrig::to_json(hilrig::default_sim_config(hilrig::TransportKind::udp));
  j["frame_bytes"] = hilrig::defaults::kUdpMaxFrameBytes + 1;
  EXPECT_NE(error_of([&] { hilrig::sim_config_from_json(j); }).find("<= 65507"), std::string::npos);
  j = hilrig::to_json(hilrig::default_sim_config(hilrig::TransportKind::udp));
  j["channels"] = 0;
  EXPECT_NE(error_of([&] { hilrig::sim_config_from_json(j); }).find("channels"), std::string::npos);
  j["channels"] = 1.5;
  EXPECT_NE(error_of([&] { hilrig::sim_config_from_json(j); }).find("whole number"), std::string::npos);
  j["channels"] = 1;
  j["faults"]["explode"] = 1;
  EXPECT_NE(error_of([&] { hilrig::sim_config_from_json(j); }).find("faults.explode: unknown fault"), std::string::npos);
  j["faults"].erase("explode");
  j["transport"]["gro"] = "yes";
  EXPECT_NE(error_of([&] { hilrig::sim_config_from_json(j); }).find("transport.gro: must be true or false"), std::string::npos);
}

TEST(Config, EndpointKeepsTheRestOfTheTransport) {
  hilrig::TransportSpec base = hilrig::default_stream_config(hilrig::TransportKind::udp).transport;
  base.socket_buffer_bytes = 1234567;
  const auto t = hilrig::transport_at_endpoint(base, {{"kind", "udp"}, {"host", "127.0.0.2"}, {"port", 4242}, {"gro", false}}, "ep");
  EXPECT_EQ(t.host, "127.0.0.2");
  EXPECT_EQ(t.port, 4242);
  EXPECT_EQ(t.socket_buffer_bytes, 1234567u);
  EXPECT_TRUE(t.gro);  // only where the endpoint is, not how the stream is set up
  EXPECT_NE(error_of([&] { hilrig::transport_at_endpoint(base, {{"kind", "shm"}, {"path", "x"}}, "ep"); }).find("must match"),
            std::string::npos);
}

TEST(Config, StreamArgsMapOntoTheConfigAndRefuseWhatIsNotThere) {
  const auto c = hilrig::sim_config_from_args({{"transport", "shm"}, {"frame_bytes", "2048"}, {"WIRE", "sc8"},
                                               {"drop_frames", "3"}, {"fault_seed", "9"}, {"fifo_frames", "99"}},
                                              hilrig::Direction::tx, 2, 5e6, 100e6);
  EXPECT_EQ(c.stream.transport.kind, hilrig::TransportKind::shm);
  EXPECT_EQ(c.stream.transport.slots, hilrig::defaults::ring_slots(2048));  // the default for this frame size
  EXPECT_EQ(c.stream.sample_format, hilrig::SampleFormat::sc8);
  EXPECT_EQ(c.stream.direction, hilrig::Direction::tx);
  EXPECT_EQ(c.stream.channels, 2u);
  EXPECT_EQ(c.faults.drop_frames, 3u);
  EXPECT_EQ(c.faults.seed, 9u);
  EXPECT_EQ(c.fifo_frames, 99u);
  EXPECT_EQ(c.master_clock_hz, 100e6);
  const auto d = hilrig::sim_config_from_args({}, hilrig::Direction::rx, 1, 1e6, 200e6);
  EXPECT_EQ(d.fifo_frames, hilrig::defaults::fifo_frames(hilrig::defaults::kFrameBytes));
  EXPECT_EQ(d.stream.transport.socket_buffer_bytes, hilrig::defaults::kSocketBufferBytes);
  auto err = [](std::map<std::string, std::string> a) {
    return error_of([&] { hilrig::sim_config_from_args(a, hilrig::Direction::rx, 1, 1e6, 200e6); });
  };
  EXPECT_NE(err({{"slot", "4"}}).find("unknown to driver=hilrig"), std::string::npos);
  EXPECT_NE(err({{"slots", "4"}}).find("does not apply to transport=udp"), std::string::npos);
  EXPECT_NE(err({{"write_bytes", "4096"}}).find("does not apply to transport=udp"), std::string::npos);
  const auto tcp = hilrig::sim_config_from_args({{"transport", "tcp"}, {"write_bytes", "524288"}, {"congestion", "bbr"},
                                                 {"nodelay", "true"}, {"socket_buffer_bytes", "8388608"}},
                                                hilrig::Direction::rx, 1, 1e6, 200e6);
  EXPECT_EQ(tcp.stream.transport.kind, hilrig::TransportKind::tcp);
  EXPECT_EQ(tcp.stream.transport.write_bytes, 524288u);
  EXPECT_EQ(tcp.stream.transport.congestion, "bbr");
  EXPECT_TRUE(tcp.stream.transport.nodelay);
  EXPECT_EQ(tcp.stream.transport.socket_buffer_bytes, 8u << 20);
  EXPECT_NE(err({{"transport", "tcp"}, {"slots", "4"}}).find("does not apply to transport=tcp"), std::string::npos);
  EXPECT_NE(err({{"frame_bytes", "12x"}}).find("whole number"), std::string::npos);
  EXPECT_NE(err({{"WIRE", "fc32"}}).find("not one of"), std::string::npos);
  // Every arg of the table points at a key of the config.
  for (const auto& a : hilrig::stream_args()) {
    const json u = hilrig::to_json(hilrig::default_sim_config(hilrig::TransportKind::udp));
    const json s = hilrig::to_json(hilrig::default_sim_config(hilrig::TransportKind::shm));
    const json t = hilrig::to_json(hilrig::default_sim_config(hilrig::TransportKind::tcp));
    const json::json_pointer p(a.pointer);
    EXPECT_TRUE(u.contains(p) || s.contains(p) || t.contains(p)) << a.key;
  }
}

TEST(Config, ResolveFillsTheDefaultsOfTheTransportAndFrameSize) {
  const hilrig::StreamConfig plain = hilrig::resolve_stream_config(json::object());
  EXPECT_EQ(hilrig::to_json(plain), hilrig::to_json(hilrig::default_stream_config(hilrig::TransportKind::udp)));
  const hilrig::StreamConfig shm = hilrig::resolve_stream_config(
      json{{"rate_sps", 1e6}, {"frame_bytes", 2000}, {"transport", {{"kind", "shm"}}}, {"crc", true}});
  EXPECT_EQ(shm.transport.slots, hilrig::defaults::ring_slots(2000));  // slots follow the frame size
  EXPECT_TRUE(shm.crc);
  // Given transport keys go over the defaults one by one.
  const hilrig::StreamConfig udp = hilrig::resolve_stream_config(json{{"transport", {{"kind", "udp"}, {"gso", false}}}});
  EXPECT_FALSE(udp.transport.gso);
  EXPECT_TRUE(udp.transport.gro);
  EXPECT_EQ(udp.transport.host, hilrig::defaults::kHost);
}

TEST(Config, ResolveGrowsTheSocketBufferAndAnUngivenRingToTheRateOnce) {
  namespace d = hilrig::defaults;
  auto udp_at = [](double rate) {
    return hilrig::resolve_stream_config(json{{"rate_sps", rate}, {"transport", {{"kind", "udp"}}}}).transport.socket_buffer_bytes;
  };
  EXPECT_EQ(udp_at(1e6), d::kSocketBufferBytes);  // the floor: 50 ms of 4 MB/s is less
  // 100 MS/s of 1988-sample frames: 50 ms is 2515.09 frames of 8000 bytes.
  EXPECT_EQ(udp_at(100e6), std::uint32_t(100e6 / 1988 * 8000 * 0.05));
  EXPECT_EQ(udp_at(1e9), d::kSocketBufferMaxBytes);
  auto shm_at = [](double rate, std::uint32_t frame_bytes, json transport = json{{"kind", "shm"}}) {
    return hilrig::resolve_stream_config(json{{"rate_sps", rate}, {"frame_bytes", frame_bytes}, {"transport", transport}})
        .transport.slots;
  };
  EXPECT_EQ(shm_at(1e6, 65584), d::ring_slots(65584));  // the default: 8 MiB holds more than 50 ms
  EXPECT_EQ(shm_at(1e9, 65584), 3052u);   // ceil(50 ms of 1e9 / 16384 frames/s)
  EXPECT_EQ(shm_at(1e12, 64), d::kRingSlotsAccepted);  // never more than a config may hold
  // Given slots are the case's, at any rate (a ring in the cache may carry more).
  EXPECT_EQ(shm_at(1e6, 65584, json{{"kind", "shm"}, {"slots", 64}}), 64u);
  EXPECT_EQ(shm_at(1e9, 65584, json{{"kind", "shm"}, {"slots", 64}}), 64u);
  // Resolving the effective config again changes nothing; a resolved config passes the parser.
  for (const json& partial : {json{{"rate_sps", 3e8}, {"transport", {{"kind", "udp"}}}},
                              json{{"rate_sps", 3e8}, {"transport", {{"kind", "shm"}}}},
                              json{{"rate_sps", 1e12}, {"frame_bytes", 64}, {"transport", {{"kind", "shm"}}}}}) {
    const hilrig::StreamConfig once = hilrig::resolve_stream_config(partial);
    EXPECT_EQ(hilrig::to_json(hilrig::resolve_stream_config(once)), hilrig::to_json(once)) << partial;
    EXPECT_EQ(hilrig::to_json(hilrig::stream_config_from_json(hilrig::to_json(once))), hilrig::to_json(once)) << partial;
  }
}

TEST(Config, ResolveNamesTheKeyItRefuses) {
  auto err = [](const json& partial) { return error_of([&] { hilrig::resolve_stream_config(partial); }); };
  EXPECT_NE(err(json{{"rate_sps", -1}}).find("stream config.rate_sps: must be > 0"), std::string::npos);
  EXPECT_NE(err(json{{"transport", {{"kind", "sctp"}}}}).find("stream config.transport.kind"), std::string::npos);
  EXPECT_NE(err(json{{"transport", {{"kind", "tcp"}, {"congestion", "No Such"}}}}).find("transport.congestion"),
            std::string::npos);
  EXPECT_NE(err(json{{"frame_bytes", 40}}).find("stream config.frame_bytes"), std::string::npos);
  EXPECT_NE(err(json{{"transport", {{"kind", "shm"}, {"slots", 1}}}}).find("transport.slots"), std::string::npos);
  EXPECT_NE(err(json::array()).find("must be an object"), std::string::npos);
  hilrig::StreamConfig bad;
  bad.channels = 0;  // a config built in code is checked too
  EXPECT_NE(error_of([&] { hilrig::resolve_stream_config(bad); }).find("channels"), std::string::npos);
}

TEST(Config, PacingTakesOneKeyAndTurnsGsoOff) {
  const auto c = hilrig::resolve_stream_config(json{{"frame_bytes", 1430},
                                                    {"transport", {{"kind", "udp"}, {"pacing", {{"gap_ns", 4000}, {"period_ns", 0}, {"rate_bps", 0}}}}}});
  EXPECT_EQ(c.transport.pacing.gap_ns, 4000u);
  EXPECT_FALSE(c.transport.gso);  // a paced stream sends one datagram per call
  EXPECT_EQ(hilrig::to_json(c)["transport"]["pacing"]["gap_ns"], 4000);
  EXPECT_TRUE(hilrig::resolve_stream_config(json{{"transport", {{"kind", "udp"}}}}).transport.gso);  // unpaced: as given
  const std::string two = error_of([] {
    hilrig::pacing_from_json(json{{"gap_ns", 4000}, {"period_ns", 13000}, {"rate_bps", 0}}, "t.pacing");
  });
  EXPECT_NE(two.find("t.pacing: gives more than one"), std::string::npos) << two;
  EXPECT_NE(error_of([] { hilrig::pacing_from_json(json{{"gap_ns", 1}, {"period_ns", 0}}, "p"); }).find("p.rate_bps: is missing"),
            std::string::npos);
  EXPECT_NE(error_of([] { hilrig::pacing_from_json(json{{"gap", 1}}, "p"); }).find("p.gap: is not a pacing key"),
            std::string::npos);
  hilrig::PacingSpec rate;
  rate.rate_bps = 880'000'000;
  EXPECT_EQ(rate.period_for(1430), 13000u);  // 1430 B * 8 / 880 Mbit/s
}
