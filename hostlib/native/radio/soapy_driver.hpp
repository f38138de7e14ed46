// The `soapy` driver's streaming loops on the SoapySDR C++ API (docs/drivers.md).
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "hilrig/radio/radio_stream.hpp"

namespace SoapySDR { class Device; class Stream; }

namespace hilrig {

class SoapyRadio {
 public:
  // SoapySDR::Device::make(args); throws std::runtime_error when no device matches.
  explicit SoapyRadio(const std::string& args);
  ~SoapyRadio();
  SoapyRadio(const SoapyRadio&) = delete;
  SoapyRadio& operator=(const SoapyRadio&) = delete;

  // SoapySDR::Device::enumerate(args) as a list of objects.
  static nlohmann::json enumerate(const std::string& args);

  // cfg: direction rx|tx|loopback, channels (count), sample_format sc16|sc8 (CS16/CS8),
  // rate_sps, master_clock_hz (0: leave), stream_args {k: v}, check_pattern (bool),
  // frequency_hz (optional). Returns the requested and the coerced rates and the MTU.
  nlohmann::json configure(const nlohmann::json& cfg);
  void start();
  void stop();  // joins the threads, deactivates and closes the streams; idempotent
  // {"rx": {...}, "tx": {...}, "sensors": {name: value}, "running": bool,
  //  "device_error": null or the first fatal stream error (docs/drivers.md)}
  nlohmann::json stats() const;
  nlohmann::json info() const;

 private:
  void rx_loop();
  void tx_loop();
  void status_loop();
  void close_streams();

  SoapySDR::Device* dev_ = nullptr;
  SoapySDR::Stream* rx_ = nullptr;
  SoapySDR::Stream* tx_ = nullptr;
  nlohmann::json cfg_;
  unsigned channels_ = 1;
  SampleFormat fmt_ = SampleFormat::sc16;
  double rate_sps_ = 0;
  std::size_t rx_mtu_ = 0, tx_mtu_ = 0;
  bool check_pattern_ = true;
  RadioRxCounters rxc_;
  RadioTxCounters txc_;
  std::atomic<bool> stop_{false}, tx_done_{false};
  std::thread rx_thread_, tx_thread_, status_thread_;
  std::atomic<bool> running_{false};
  DeviceFault fault_;
};

}  // namespace hilrig
