// The `uhd` driver's streaming loops on libuhd's C++ API (4.3), counting what
// UHD's benchmark_rate counts, each under its own name (docs/drivers.md).
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "hilrig/radio/radio_stream.hpp"

namespace hilrig {

class UhdRadio {
 public:
  // uhd::device::find(args) as a list of objects (no device is opened).
  static nlohmann::json find(const std::string& args);
  // multi_usrp::make(args); args carry the transport args (num_recv_frames,
  // recv_frame_size, send_frame_size, recv_buff_size ...). Throws on failure.
  explicit UhdRadio(const std::string& args);
  ~UhdRadio();
  UhdRadio(const UhdRadio&) = delete;
  UhdRadio& operator=(const UhdRadio&) = delete;

  // cfg: direction, channels (count), sample_format (otw sc16|sc8; cpu sc16),
  // rate_sps, master_clock_hz (0: leave), stream_args {k: v} (e.g. spp),
  // check_pattern, frequency_hz (optional). Returns requested and coerced rates.
  nlohmann::json configure(const nlohmann::json& cfg);
  void start();
  void stop();
  nlohmann::json stats() const;  // {"rx": {...}, "tx": {...}}
  nlohmann::json info() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> p_;
};

}  // namespace hilrig
