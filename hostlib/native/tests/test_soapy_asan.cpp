// The SoapySDR module driver=hilrig, the soapy driver's loops (SoapyRadio) and the
// simulator process behind them, all built with AddressSanitizer + UBSan
// (CMakeLists: hilrig_soapy_asan spawning hilrig-sim-asan). The module's sources are
// linked into this test, so its SoapySDR registration is this executable's own.
#include <gtest/gtest.h>

#include <csignal>
#include <string>

#include <nlohmann/json.hpp>

#include "hilrig/core/clock.hpp"
#include "hilrig/radio/soapy_driver.hpp"

using nlohmann::json;

namespace {

json rx_config(const std::string& kind) {
  return {{"direction", "rx"}, {"channels", 1}, {"sample_format", "sc16"}, {"rate_sps", 1e6},
          {"master_clock_hz", 100e6}, {"check_pattern", true},
          {"stream_args", {{"transport", kind}, {"frame_bytes", "4048"}, {"fault_seed", "5"},
                           {"drop_frames", "3"}, {"duplicate_frames", "2"}, {"reorder_frames", "2"},
                           {"corrupt_samples", "7"}}}};
}

class SoapyModule : public ::testing::TestWithParam<std::string> {};

TEST_P(SoapyModule, RxThroughTheModuleCountsWhatTheSimulatorInjected) {
  hilrig::SoapyRadio radio("driver=hilrig");
  radio.configure(rx_config(GetParam()));
  radio.start();
  hilrig::sleep_for_ns(400'000'000);
  radio.stop();
  const json st = radio.stats();
  ASSERT_TRUE(st["device_error"].is_null()) << st.dump();
  const json sim = json::parse(st["sensors"]["sim_stats"].get<std::string>());
  const json& rx = st["rx"];
  EXPECT_GT(rx["frames_received"].get<std::uint64_t>(), 300u);
  EXPECT_EQ(rx["missing_frames"], sim["injected_drop_frames"]);
  EXPECT_EQ(rx["duplicate_frames"], sim["injected_duplicate_frames"]);
  EXPECT_EQ(rx["reordered_frames"], sim["injected_reorder_frames"]);
  EXPECT_EQ(rx["pattern_errors"], sim["injected_corrupt_samples"]);
  EXPECT_EQ(sim["injected_drop_frames"], 3);
}

TEST_P(SoapyModule, TxThroughTheModuleArrivesWhole) {
  hilrig::SoapyRadio radio("driver=hilrig");
  json cfg = rx_config(GetParam());
  cfg["direction"] = "tx";
  cfg["stream_args"] = {{"transport", GetParam()}, {"frame_bytes", "4048"}};
  radio.configure(cfg);
  radio.start();
  hilrig::sleep_for_ns(300'000'000);
  radio.stop();
  const json st = radio.stats();
  ASSERT_TRUE(st["device_error"].is_null()) << st.dump();
  const json sim = json::parse(st["sensors"]["sim_stats"].get<std::string>());
  EXPECT_GT(st["tx"]["samples_sent"].get<std::uint64_t>(), 100000u);
  EXPECT_EQ(sim["tx_pattern_errors"], 0);
}

// A simulator killed mid-run: the radio reports the device error (deactivateStream),
// its status sensor says why, and nothing crashes or hangs.
TEST_P(SoapyModule, KilledSimulatorIsADeviceError) {
  hilrig::SoapyRadio radio("driver=hilrig");
  const int pid = std::stoi(radio.info()["hardware_info"]["sim_pid"].get<std::string>());
  radio.configure(rx_config(GetParam()));
  radio.start();
  hilrig::sleep_for_ns(200'000'000);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  hilrig::sleep_for_ns(200'000'000);
  radio.stop();
  const json st = radio.stats();
  EXPECT_FALSE(st["device_error"].is_null()) << st.dump();
  EXPECT_NE(st["sensors"].value("error", "").find("killed by signal 9"), std::string::npos) << st.dump();
}

INSTANTIATE_TEST_SUITE_P(Links, SoapyModule, ::testing::Values("udp", "tcp", "shm"));

}  // namespace
