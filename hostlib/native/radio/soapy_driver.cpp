// SoapySDR streaming loops: counters from readStream/writeStream return codes and
// flags and from readStreamStatus, under the sim path's names (docs/drivers.md).
#include "hilrig/radio/soapy_driver.hpp"

#include <SoapySDR/Device.hpp>
#include <SoapySDR/Errors.hpp>
#include <SoapySDR/Formats.hpp>
#include <SoapySDR/Time.hpp>
#include <SoapySDR/Version.hpp>

#include <stdexcept>
#include <vector>

namespace hilrig {

using nlohmann::json;

static json kwargs_json(const SoapySDR::Kwargs& k) {
  json j = json::object();
  for (const auto& [key, value] : k) j[key] = value;
  return j;
}

json SoapyRadio::enumerate(const std::string& args) {
  json out = json::array();
  for (const auto& k : SoapySDR::Device::enumerate(args)) out.push_back(kwargs_json(k));
  return out;
}

SoapyRadio::SoapyRadio(const std::string& args) {
  try {
    dev_ = SoapySDR::Device::make(args);
  } catch (const std::exception& e) {
    throw std::runtime_error("SoapySDR::Device::make(\"" + args + "\"): " + e.what());
  }
  if (dev_ == nullptr) throw std::runtime_error("SoapySDR::Device::make(\"" + args + "\") returned no device");
}

SoapyRadio::~SoapyRadio() {
  stop();
  close_streams();
  if (dev_ != nullptr) SoapySDR::Device::unmake(dev_);
}

json SoapyRadio::info() const {
  return {{"driver_key", dev_->getDriverKey()}, {"hardware_key", dev_->getHardwareKey()},
          {"hardware_info", kwargs_json(dev_->getHardwareInfo())}, {"soapysdr", SoapySDR::getLibVersion()}};
}

json SoapyRadio::configure(const json& cfg) {
  if (running_) throw std::runtime_error("soapy: configure while streaming");
  close_streams();
  cfg_ = cfg;
  const std::string dir = cfg.value("direction", "rx");
  channels_ = cfg.value("channels", 1u);
  fmt_ = parse_sample_format(cfg.value("sample_format", "sc16"));
  check_pattern_ = cfg.value("check_pattern", true);
  const double asked = cfg.at("rate_sps").get<double>();
  const double mclk = cfg.value("master_clock_hz", 0.0);
  std::vector<std::size_t> chans;
  for (unsigned c = 0; c < channels_; ++c) chans.push_back(c);
  SoapySDR::Kwargs sargs;
  if (cfg.contains("stream_args"))
    for (const auto& [k, v] : cfg["stream_args"].items()) sargs[k] = v.is_string() ? v.get<std::string>() : v.dump();
  const std::string host_fmt = fmt_ == SampleFormat::sc16 ? SOAPY_SDR_CS16 : SOAPY_SDR_CS8;
  if (!sargs.count("WIRE")) sargs["WIRE"] = sample_format_name(fmt_);
  json out = {{"rate_sps_requested", asked}};
  if (mclk > 0) {
    dev_->setMasterClockRate(mclk);
    out["master_clock_hz_requested"] = mclk;
    out["master_clock_hz"] = dev_->getMasterClockRate();
  }
  auto setup = [&](int d) {
    for (std::size_t c : chans) {
      dev_->setSampleRate(d, c, asked);
      if (cfg.contains("frequency_hz")) dev_->setFrequency(d, c, cfg["frequency_hz"].get<double>());
    }
    return dev_->setupStream(d, host_fmt, chans, sargs);
  };
  if (dir == "rx" || dir == "loopback") {
    rx_ = setup(SOAPY_SDR_RX);
    rx_mtu_ = dev_->getStreamMTU(rx_);
    rate_sps_ = dev_->getSampleRate(SOAPY_SDR_RX, 0);
  }
  if (dir == "tx" || dir == "loopback") {
    tx_ = setup(SOAPY_SDR_TX);
    tx_mtu_ = dev_->getStreamMTU(tx_);
    rate_sps_ = dev_->getSampleRate(SOAPY_SDR_TX, 0);
  }
  out["rate_sps"] = rate_sps_;
  out["rx_mtu_samples"] = rx_mtu_;
  out["tx_mtu_samples"] = tx_mtu_;
  return out;
}

void SoapyRadio::close_streams() {
  if (rx_ != nullptr) dev_->closeStream(rx_);
  if (tx_ != nullptr) dev_->closeStream(tx_);
  rx_ = tx_ = nullptr;
}

void SoapyRadio::start() {
  if (running_) return;
  stop_ = false;
  tx_done_ = false;
  fault_.clear();
  // RX first, so the receiver is ready before anything is looped back.
  if (rx_ != nullptr) {
    int r = dev_->activateStream(rx_);
    if (r != 0) throw std::runtime_error(std::string("soapy: activateStream(RX): ") + SoapySDR::errToStr(r));
    rx_thread_ = std::thread([this] { fault_.guard("RX", [this] { rx_loop(); }); });
  }
  if (tx_ != nullptr) {
    int r = dev_->activateStream(tx_);
    if (r != 0) {
      stop_ = true;
      if (rx_thread_.joinable()) rx_thread_.join();
      throw std::runtime_error(std::string("soapy: activateStream(TX): ") + SoapySDR::errToStr(r));
    }
    txc_.start_ns.store(now_ns());
    tx_thread_ = std::thread([this] {
      fault_.guard("TX", [this] { tx_loop(); });
      tx_done_ = true;
    });
    status_thread_ = std::thread([this] { fault_.guard("TX status", [this] { status_loop(); }); });
  }
  running_ = true;
}

void SoapyRadio::rx_loop() {
  RadioRxAccount acc(rxc_, channels_, fmt_, check_pattern_);
  acc.set_mtu(rx_mtu_);
  const std::size_t bytes = rx_mtu_ * bytes_per_sample(fmt_);
  std::vector<std::vector<std::uint8_t>> store(channels_, std::vector<std::uint8_t>(bytes));
  std::vector<void*> buffs(channels_);
  for (unsigned c = 0; c < channels_; ++c) buffs[c] = store[c].data();
  while (!stop_.load(std::memory_order_relaxed)) {
    int flags = 0;
    long long time_ns = 0;
    int r = dev_->readStream(rx_, buffs.data(), rx_mtu_, flags, time_ns, 100000);
    if (r >= 0) {
      const bool has_time = flags & SOAPY_SDR_HAS_TIME;
      acc.on_packet(std::uint64_t(r), has_time, has_time ? SoapySDR::timeNsToTicks(time_ns, rate_sps_) : 0, buffs.data());
      if (flags & SOAPY_SDR_END_BURST) rxc_.eob_received = true;
      continue;
    }
    switch (r) {
      case SOAPY_SDR_TIMEOUT:
        if (acc.started() && !rxc_.eob_received) counter_add(rxc_.timeouts);
        break;
      case SOAPY_SDR_OVERFLOW: acc.on_overflow(false); break;
      case SOAPY_SDR_TIME_ERROR: counter_add(rxc_.late_commands); break;
      case SOAPY_SDR_CORRUPTION: counter_add(rxc_.malformed_frames); break;
      default:
        // SOAPY_SDR_STREAM_ERROR, NOT_SUPPORTED, ...: the stream is broken; the case
        // ends as ERROR (device) with this (docs/drivers.md), nothing more is read.
        counter_add(rxc_.other_errors);
        fault_.set(std::string("readStream(RX) returned ") + SoapySDR::errToStr(r) + " (" + std::to_string(r) + ")");
        return;
    }
  }
}

void SoapyRadio::tx_loop() {
  const unsigned bps = bytes_per_sample(fmt_);
  std::vector<std::vector<std::uint8_t>> store(channels_, std::vector<std::uint8_t>(tx_mtu_ * bps));
  std::vector<const void*> buffs(channels_);
  for (unsigned c = 0; c < channels_; ++c) buffs[c] = store[c].data();
  std::uint64_t tick = 0;
  while (true) {
    const bool last = stop_.load(std::memory_order_relaxed);
    for (unsigned c = 0; c < channels_; ++c) pattern_fill_channel(tick, channels_, c, store[c].data(), tx_mtu_, fmt_);
    int flags = last ? SOAPY_SDR_END_BURST : 0;
    int r = dev_->writeStream(tx_, buffs.data(), tx_mtu_, flags, 0, 100000);
    if (r > 0) {
      counter_add(txc_.frames_sent);
      counter_add(txc_.samples_sent, std::uint64_t(r));
      counter_add(txc_.payload_bytes_sent, std::uint64_t(r) * channels_ * bps);
      txc_.last_send_ns.store(now_ns(), std::memory_order_relaxed);
      tick += std::uint64_t(r);
    } else if (r != SOAPY_SDR_TIMEOUT && r != 0) {
      counter_add(txc_.send_errors);
      fault_.set(std::string("writeStream(TX) returned ") + SoapySDR::errToStr(r) + " (" + std::to_string(r) + ")");
      sleep_for_ns(1000000);
    }
    if (last) break;
  }
  tx_done_ = true;
}

void SoapyRadio::status_loop() {
  // Keeps reading after stop_ until the TX loop has sent its end of burst, so an
  // underrun at the end is still counted; stops when the API says it has no status.
  while (true) {
    std::size_t mask = 0;
    int flags = 0;
    long long t = 0;
    int r = dev_->readStreamStatus(tx_, mask, flags, t, 50000);
    if (r == SOAPY_SDR_UNDERFLOW) counter_add(txc_.underruns);
    else if (r == SOAPY_SDR_CORRUPTION) counter_add(txc_.seq_errors);
    else if (r == SOAPY_SDR_TIME_ERROR) counter_add(txc_.late_commands);
    else if (r == SOAPY_SDR_NOT_SUPPORTED) break;
    else if (r == SOAPY_SDR_STREAM_ERROR) {
      fault_.set("readStreamStatus(TX) returned " + std::string(SoapySDR::errToStr(r)));
      if (tx_done_.load()) break;
      sleep_for_ns(10000000);  // a broken status channel must not spin a core
    }
    if (r == 0 && (flags & SOAPY_SDR_END_BURST)) counter_add(txc_.bursts_acked);
    if (tx_done_.load() && r == SOAPY_SDR_TIMEOUT) break;
  }
}

void SoapyRadio::stop() {
  stop_ = true;
  if (tx_thread_.joinable()) tx_thread_.join();
  if (status_thread_.joinable()) status_thread_.join();
  if (rx_ != nullptr && running_) {
    // Let the end of burst arrive briefly before the receiver stops.
    const std::uint64_t until = now_ns() + 200000000ull;
    while (rx_thread_.joinable() && !rxc_.eob_received && now_ns() < until && tx_ != nullptr) sleep_for_ns(1000000);
  }
  if (rx_thread_.joinable()) rx_thread_.join();
  if (running_) {
    // A device that cannot stop its stream is broken (e.g. the simulator behind
    // driver=hilrig died): say so rather than trust what it counted.
    for (auto [stream, what] : {std::pair{tx_, "TX"}, std::pair{rx_, "RX"}}) {
      if (stream == nullptr) continue;
      const int r = dev_->deactivateStream(stream);
      if (r != 0) fault_.set(std::string("deactivateStream(") + what + ") returned " + SoapySDR::errToStr(r));
    }
  }
  running_ = false;
}

json SoapyRadio::stats() const {
  json sensors = json::object();
  try {
    for (const auto& key : dev_->listSensors()) sensors[key] = dev_->readSensor(key);
  } catch (const std::exception& e) {
    sensors["error"] = e.what();
  }
  const std::string fault = fault_.get();
  return {{"rx", rx_counters_json(rxc_)}, {"tx", tx_counters_json(txc_)}, {"sensors", sensors},
          {"running", running_.load()}, {"device_error", fault.empty() ? json(nullptr) : json(fault)}};
}

}  // namespace hilrig
