// driver=hilrig: identification, rates, RF settings, sensors and stream args
// (the device's settings, as SoapyRTLSDR's Settings.cpp).
#include <SoapySDR/Logger.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "hilrig/core/clock.hpp"
#include "hilrig/core/convert.hpp"
#include "hilrig/soapy/hilrig_soapy.hpp"

using nlohmann::json;

namespace hilrig_soapy {
namespace {
// A live simulator answers a stats request within milliseconds; a stopped one must not
// hold a stats read past the silence bound (1 s floor, docs/metrics.md),
// so the host sees the silence and ends the case as ERROR (device).
constexpr int kStatusTimeoutMs = 1000;
}  // namespace

std::string arg(const SoapySDR::Kwargs& a, const char* key, const std::string& dflt) {
  auto it = a.find(key);
  return it == a.end() ? dflt : it->second;
}

HilrigDevice::HilrigDevice(const SoapySDR::Kwargs& args) {
  binary_ = hilrig::find_sim_binary(arg(args, "sim_binary"));
  if (binary_.empty())
    throw std::runtime_error("hilrig: simulator hilrig-sim not found (sim_binary arg, $HILRIG_SIM_BIN, the build tree, PATH)");
  sim_ = std::make_unique<hilrig::SimProcess>(binary_);
  if (args.count("master_clock_rate")) master_clock_hz_ = std::stod(args.at("master_clock_rate"));
  rate_sps_ = coerce(hilrig::defaults::kRateSps);
}

SoapySDR::Kwargs HilrigDevice::getHardwareInfo() const {
  return {{"version", sim_->hello().value("version", "?")},
          {"sim_binary", binary_},
          {"sim_pid", std::to_string(sim_->pid())}};
}

long long HilrigDevice::getHardwareTime(const std::string&) const { return (long long)hilrig::now_ns(); }

// ---------------------------------------------------------------- rates
void HilrigDevice::setMasterClockRate(const double rate) {
  if (!(rate > 0)) throw std::invalid_argument("hilrig: master clock rate must be > 0");
  master_clock_hz_ = rate;
  rate_sps_ = coerce(rate_sps_);
}

SoapySDR::RangeList HilrigDevice::getSampleRateRange(const int, const size_t) const {
  return {SoapySDR::Range(master_clock_hz_ / 65536.0, master_clock_hz_)};
}

std::vector<double> HilrigDevice::listSampleRates(const int, const size_t) const {
  std::vector<double> r;
  for (int d : {1, 2, 4, 5, 8, 10, 20, 40, 100, 200}) r.push_back(master_clock_hz_ / d);
  return r;
}

double HilrigDevice::coerce(double asked) const {
  if (!(asked > 0)) throw std::invalid_argument("hilrig: sample rate must be > 0");
  double div = std::max(1.0, std::round(master_clock_hz_ / asked));
  return master_clock_hz_ / div;
}

SoapySDR::RangeList HilrigDevice::getFrequencyRange(const int, const size_t) const {
  return {SoapySDR::Range(0, 6e9)};
}

// ---------------------------------------------------------------- sensors
// The simulator's own counters (frames sent, overflows, injected faults, TX checks).
// sim_stats: the simulator's counters; rx_stats: this module's receive accounting
// (RxStream.stats() keys); sim_config: the simulator's effective config (its
// configure answer, to_json of what it parsed).
std::vector<std::string> HilrigDevice::listSensors() const { return {"sim_stats", "rx_stats", "sim_config"}; }

SoapySDR::ArgInfo HilrigDevice::getSensorInfo(const std::string& key) const {
  SoapySDR::ArgInfo info;
  info.key = key;
  info.name = key;
  info.type = SoapySDR::ArgInfo::STRING;
  info.description = "JSON object (docs/architecture.md, docs/drivers.md)";
  // The current reading, as SoapyUHD fills it: GNU Radio 3.10's Python read_sensor
  // returns get_sensor_info(key).value (docs/gnuradio.md).
  info.value = readSensor(key);
  return info;
}

std::string HilrigDevice::readSensor(const std::string& key) const {
  if (key == "sim_stats") {
    try {
      return sim_->request({{"cmd", "stats"}}, kStatusTimeoutMs)["stats"].dump();
    } catch (const std::runtime_error&) {
      // Alive but not answering: no counters this time, the host's silence bound judges.
      if (sim_->unanswered()) return json{{"unanswered_ms", kStatusTimeoutMs}}.dump();
      throw;  // gone: the message says how it ended
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (key == "sim_config") return effective_config_.dump();
  if (key == "rx_stats") {
    for (const Stream* s : streams_)
      if (s->direction == SOAPY_SDR_RX) return hilrig::counters_json(*s->rxc).dump();
    return json::object().dump();
  }
  throw std::invalid_argument("hilrig: no sensor " + key + " (has: sim_stats, rx_stats, sim_config)");
}

// ---------------------------------------------------------------- stream formats and args
std::vector<std::string> HilrigDevice::getStreamFormats(const int, const size_t) const {
  return {SOAPY_SDR_CS16, SOAPY_SDR_CS8, SOAPY_SDR_CF32};
}

std::string HilrigDevice::getNativeStreamFormat(const int, const size_t, double& fullScale) const {
  fullScale = hilrig::kS16FullScale;  // CF32 = CS16 / fullScale, as the conversions do
  return SOAPY_SDR_CS16;
}

// Generated from the core's stream config: every arg, its default, its place.
SoapySDR::ArgInfoList HilrigDevice::getStreamArgsInfo(const int, const size_t) const {
  // Each arg's default from the first transport that has the key (udp, tcp, shm).
  std::vector<json> defaults;
  for (auto kind : {hilrig::TransportKind::udp, hilrig::TransportKind::tcp, hilrig::TransportKind::shm})
    defaults.push_back(hilrig::to_json(hilrig::default_sim_config(kind)));
  SoapySDR::ArgInfoList l;
  for (const hilrig::StreamArg& a : hilrig::stream_args()) {
    SoapySDR::ArgInfo info;
    info.key = info.name = a.key;
    const json::json_pointer ptr(a.pointer);
    const json* found = &defaults.back();
    for (const json& d : defaults)
      if (d.contains(ptr)) {
        found = &d;
        break;
      }
    const json& v = (*found)[ptr];
    info.value = v.is_string() ? v.get<std::string>() : v.dump();
    info.description = a.description;
    info.type = a.type == hilrig::StreamArg::kInt    ? SoapySDR::ArgInfo::INT
                : a.type == hilrig::StreamArg::kBool ? SoapySDR::ArgInfo::BOOL
                                                     : SoapySDR::ArgInfo::STRING;
    info.options = a.options;
    l.push_back(info);
  }
  return l;
}

}  // namespace hilrig_soapy
