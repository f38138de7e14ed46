// UHD streaming loops. The RX loop is benchmark_rate's: overflow (O) and
// out-of-sequence (D) from rx_metadata_t, dropped samples from gaps in the time
// stamps, late commands and timeouts; TX counts underruns (U, L) and sequence
// errors (S) from the async messages. Names as on the sim path (docs/drivers.md).
#include "hilrig/radio/uhd_driver.hpp"

#include <uhd/device.hpp>
#include <uhd/stream.hpp>
#include <uhd/types/device_addr.hpp>
#include <uhd/property_tree.hpp>
#include <uhd/usrp/multi_usrp.hpp>
#include <uhd/version.hpp>

#include <stdexcept>
#include <vector>

namespace hilrig {

using nlohmann::json;

struct UhdRadio::Impl {
  uhd::usrp::multi_usrp::sptr usrp;
  uhd::rx_streamer::sptr rx;
  uhd::tx_streamer::sptr tx;
  unsigned channels = 1;
  SampleFormat fmt = SampleFormat::sc16;
  double rate_sps = 0;
  bool check_pattern = false;
  std::size_t rx_spp = 0, tx_spp = 0;
  RadioRxCounters rxc;
  RadioTxCounters txc;
  DeviceFault fault;
  std::atomic<bool> stop{false}, tx_done{false}, running{false};
  std::thread rx_thread, tx_thread, async_thread;
  std::string args;

  void rx_loop();
  void tx_loop();
  void async_loop();
};

static json addr_json(const uhd::device_addr_t& a) {
  json j = json::object();
  for (const auto& key : a.keys()) j[key] = a[key];
  return j;
}

json UhdRadio::find(const std::string& args) {
  json out = json::array();
  for (const auto& a : uhd::device::find(uhd::device_addr_t(args))) out.push_back(addr_json(a));
  return out;
}

UhdRadio::UhdRadio(const std::string& args) : p_(std::make_unique<Impl>()) {
  p_->args = args;
  p_->usrp = uhd::usrp::multi_usrp::make(uhd::device_addr_t(args));
}

UhdRadio::~UhdRadio() { stop(); }

json UhdRadio::info() const {
  json j = {{"uhd", uhd::get_version_string()}, {"args", p_->args}, {"pp", p_->usrp->get_pp_string()}};
  try {
    j["mboard"] = p_->usrp->get_mboard_name(0);
  } catch (const std::exception&) {
  }
  // The images the device runs, where its property tree has them (not every USRP
  // family does): what a regression across rigs is read against.
  for (const char* key : {"fpga_version", "fw_version"}) {
    try {
      j[key] = p_->usrp->get_tree()->access<std::string>(std::string("/mboards/0/") + key).get();
    } catch (const std::exception&) {
    }
  }
  return j;
}

json UhdRadio::configure(const json& cfg) {
  Impl& p = *p_;
  if (p.running) throw std::runtime_error("uhd: configure while streaming");
  p.rx.reset();
  p.tx.reset();
  const std::string dir = cfg.value("direction", "rx");
  p.channels = cfg.value("channels", 1u);
  p.fmt = parse_sample_format(cfg.value("sample_format", "sc16"));
  p.check_pattern = cfg.value("check_pattern", false);
  const double asked = cfg.at("rate_sps").get<double>();
  const double mclk = cfg.value("master_clock_hz", 0.0);
  json out = {{"rate_sps_requested", asked}};
  if (mclk > 0) {
    p.usrp->set_master_clock_rate(mclk);
    out["master_clock_hz_requested"] = mclk;
    out["master_clock_hz"] = p.usrp->get_master_clock_rate();
  }
  std::vector<std::size_t> chans;
  for (unsigned c = 0; c < p.channels; ++c) chans.push_back(c);
  // cpu sc16: the counter pattern is checked on the integers as they came.
  uhd::stream_args_t sa("sc16", sample_format_name(p.fmt));
  sa.channels = chans;
  std::string extra;
  if (cfg.contains("stream_args"))
    for (const auto& [k, v] : cfg["stream_args"].items())
      extra += (extra.empty() ? "" : ",") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  sa.args = uhd::device_addr_t(extra);
  const bool want_rx = dir == "rx" || dir == "loopback", want_tx = dir == "tx" || dir == "loopback";
  // Rate (and frequency) on every channel of one direction; multi_usrp names its calls per direction.
  using Usrp = uhd::usrp::multi_usrp;
  auto tune = [&](void (Usrp::*set_rate)(double, std::size_t),
                  uhd::tune_result_t (Usrp::*set_freq)(const uhd::tune_request_t&, std::size_t),
                  double (Usrp::*get_rate)(std::size_t)) {
    Usrp& u = *p.usrp;
    for (std::size_t c : chans) {
      (u.*set_rate)(asked, c);
      if (cfg.contains("frequency_hz")) (u.*set_freq)(uhd::tune_request_t(cfg["frequency_hz"].get<double>()), c);
    }
    p.rate_sps = (u.*get_rate)(0);
  };
  if (want_rx) {
    tune(&Usrp::set_rx_rate, &Usrp::set_rx_freq, &Usrp::get_rx_rate);
    p.rx = p.usrp->get_rx_stream(sa);
    p.rx_spp = p.rx->get_max_num_samps();
  }
  if (want_tx) {
    tune(&Usrp::set_tx_rate, &Usrp::set_tx_freq, &Usrp::get_tx_rate);
    p.tx = p.usrp->get_tx_stream(sa);
    p.tx_spp = p.tx->get_max_num_samps();
  }
  out["rate_sps"] = p.rate_sps;
  out["rx_mtu_samples"] = p.rx_spp;
  out["tx_mtu_samples"] = p.tx_spp;
  return out;
}

void UhdRadio::start() {
  Impl& p = *p_;
  if (p.running) return;
  p.stop = false;
  p.tx_done = false;
  p.fault.clear();
  if (p.rx) {
    // Like benchmark_rate: several channels start together at a time in the near future.
    uhd::stream_cmd_t cmd(uhd::stream_cmd_t::STREAM_MODE_START_CONTINUOUS);
    cmd.stream_now = p.channels == 1;
    if (!cmd.stream_now) cmd.time_spec = p.usrp->get_time_now() + uhd::time_spec_t(0.05);
    p.rx->issue_stream_cmd(cmd);
    p.rx_thread = std::thread([&p] { p.fault.guard("RX", [&p] { p.rx_loop(); }); });
  }
  if (p.tx) {
    p.txc.start_ns.store(now_ns());
    p.tx_thread = std::thread([&p] {
      p.fault.guard("TX", [&p] { p.tx_loop(); });
      p.tx_done = true;  // also when the loop threw: the async thread must not wait for it
    });
    p.async_thread = std::thread([&p] { p.fault.guard("async messages", [&p] { p.async_loop(); }); });
  }
  p.running = true;
}

void UhdRadio::Impl::rx_loop() {
  RadioRxAccount acc(rxc, channels, fmt, check_pattern);
  acc.set_mtu(rx_spp);
  std::vector<std::vector<std::uint8_t>> store(channels, std::vector<std::uint8_t>(rx_spp * bytes_per_sample(fmt)));
  std::vector<void*> buffs(channels);
  for (unsigned c = 0; c < channels; ++c) buffs[c] = store[c].data();
  uhd::rx_metadata_t md;
  while (!stop.load(std::memory_order_relaxed)) {
    std::size_t n = rx->recv(buffs, rx_spp, md, 0.1);
    switch (md.error_code) {
      case uhd::rx_metadata_t::ERROR_CODE_NONE:
        acc.on_packet(n, md.has_time_spec, md.has_time_spec ? md.time_spec.to_ticks(rate_sps) : 0, buffs.data());
        if (md.end_of_burst) rxc.eob_received = true;
        break;
      case uhd::rx_metadata_t::ERROR_CODE_OVERFLOW:
        acc.on_overflow(md.out_of_sequence);
        break;
      case uhd::rx_metadata_t::ERROR_CODE_LATE_COMMAND: {
        // benchmark_rate re-issues the stream command to start now.
        counter_add(rxc.late_commands);
        uhd::stream_cmd_t cmd(uhd::stream_cmd_t::STREAM_MODE_START_CONTINUOUS);
        cmd.stream_now = true;
        rx->issue_stream_cmd(cmd);
        break;
      }
      case uhd::rx_metadata_t::ERROR_CODE_TIMEOUT:
        if (acc.started() && !rxc.eob_received) counter_add(rxc.timeouts);
        break;
      case uhd::rx_metadata_t::ERROR_CODE_BAD_PACKET:
        counter_add(rxc.malformed_frames);
        break;
      default:
        // BROKEN_CHAIN, ALIGNMENT: the stream is broken; the case ends as ERROR (device)
        // naming the code (docs/drivers.md), nothing more is read.
        counter_add(rxc.other_errors);
        fault.set("recv returned " + md.strerror());
        return;
    }
  }
  uhd::stream_cmd_t stop_cmd(uhd::stream_cmd_t::STREAM_MODE_STOP_CONTINUOUS);
  rx->issue_stream_cmd(stop_cmd);
  // Drain what is still in flight so the next configure starts clean.
  while (rx->recv(buffs, rx_spp, md, 0.05) > 0 || md.error_code == uhd::rx_metadata_t::ERROR_CODE_OVERFLOW) {
  }
}

void UhdRadio::Impl::tx_loop() {
  const unsigned bps = bytes_per_sample(fmt);
  std::vector<std::vector<std::uint8_t>> store(channels, std::vector<std::uint8_t>(tx_spp * bps));
  std::vector<const void*> buffs(channels);
  for (unsigned c = 0; c < channels; ++c) buffs[c] = store[c].data();
  uhd::tx_metadata_t md;
  md.start_of_burst = true;
  std::uint64_t tick = 0;
  while (true) {
    const bool last = stop.load(std::memory_order_relaxed);
    for (unsigned c = 0; c < channels; ++c) pattern_fill_channel(tick, channels, c, store[c].data(), tx_spp, fmt);
    md.end_of_burst = last;
    std::size_t n = tx->send(buffs, last ? 0 : tx_spp, md, 0.1);
    md.start_of_burst = false;
    if (n > 0) {
      counter_add(txc.frames_sent);
      counter_add(txc.samples_sent, n);
      counter_add(txc.payload_bytes_sent, n * channels * bps);
      txc.last_send_ns.store(now_ns(), std::memory_order_relaxed);
      tick += n;
    }
    if (last) break;
  }
  tx_done = true;
}

void UhdRadio::Impl::async_loop() {
  uhd::async_metadata_t md;
  while (true) {
    if (!tx->recv_async_msg(md, 0.05)) {
      if (tx_done) break;
      continue;
    }
    switch (md.event_code) {
      case uhd::async_metadata_t::EVENT_CODE_UNDERFLOW:
      case uhd::async_metadata_t::EVENT_CODE_UNDERFLOW_IN_PACKET: counter_add(txc.underruns); break;
      case uhd::async_metadata_t::EVENT_CODE_SEQ_ERROR:
      case uhd::async_metadata_t::EVENT_CODE_SEQ_ERROR_IN_BURST: counter_add(txc.seq_errors); break;
      case uhd::async_metadata_t::EVENT_CODE_TIME_ERROR: counter_add(txc.late_commands); break;
      case uhd::async_metadata_t::EVENT_CODE_BURST_ACK: counter_add(txc.bursts_acked); break;
      default: break;
    }
  }
}

void UhdRadio::stop() {
  Impl& p = *p_;
  p.stop = true;
  if (p.tx_thread.joinable()) p.tx_thread.join();
  p.tx_done = true;
  if (p.async_thread.joinable()) p.async_thread.join();
  if (p.rx_thread.joinable()) p.rx_thread.join();
  p.running = false;
}

json UhdRadio::stats() const {
  const std::string fault = p_->fault.get();
  return {{"rx", rx_counters_json(p_->rxc)}, {"tx", tx_counters_json(p_->txc)}, {"running", p_->running.load()},
          {"device_error", fault.empty() ? json(nullptr) : json(fault)}};
}

}  // namespace hilrig
