// SoapySDR module `driver=hilrig`: the simulator hilrig-sim as a SoapySDR device.
//
// The device object spawns and controls its own hilrig-sim (SimProcess) and moves
// frames with the native core's UDP, TCP or shared-memory transport, so any SoapySDR
// program (SoapySDRUtil, GNU Radio's soapy blocks, hostlib's `soapy` driver) streams
// from the same simulator the `sim` driver uses. The sample rate is coerced like a
// device with an integer divider: rate = master_clock / round(master_clock / asked).
//
// Everything but the SoapySDR API is the core's: the stream config and its stream
// args (core/config.hpp), the frame source and sink (io/frame_source.hpp: readStream
// holds one frame between next and release, SoapyRTLSDR's acquire/release shape;
// io/frame_sink.hpp: writeStream's send), the receive accounting (RxChecker:
// sequence, pattern, malformed; sensor rx_stats), the framer and the TX pacer
// (core/tx_pacer.hpp), the conversions (core/convert.hpp, bit-identical to SoapySDR's).
//
// The files, as SoapyRTLSDR splits a device: this header (the device and its
// stream), settings.cpp (identification, rates, RF, sensors, stream args),
// streaming.cpp (setup, activate, read/write), registration.cpp (find and make).
//
// RX: one frame per readStream call at most (the MTU is one frame); the frame's
// sample_tick becomes timeNs, so a client sees lost frames as time gaps; a frame
// flagged OVERFLOW_BEFORE is preceded by one SOAPY_SDR_OVERFLOW return. TX:
// writeStream frames the samples and paces at the rate like a device's flow
// control; readStreamStatus reports the simulator's underruns (SOAPY_SDR_UNDERFLOW)
// and TX sequence errors (SOAPY_SDR_CORRUPTION, as SoapyUHD maps UHD's seq errors).
#pragma once
#include <SoapySDR/Device.hpp>
#include <SoapySDR/Formats.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hilrig/core/config.hpp"
#include "hilrig/core/frame.hpp"
#include "hilrig/core/rx_check.hpp"
#include "hilrig/io/frame_sink.hpp"
#include "hilrig/io/frame_source.hpp"
#include "hilrig/soapy/soapy_simproc.hpp"
#include "hilrig/core/tx_pacer.hpp"

namespace hilrig_soapy {

inline constexpr std::size_t kMaxChannels = 4;

std::string arg(const SoapySDR::Kwargs& a, const char* key, const std::string& dflt = "");

// One stream of the device: its config, and the RX receiver or the TX sender.
struct Stream {
  int direction = SOAPY_SDR_RX;
  std::string format;  // CS16, CS8, CF32 (host side)
  std::vector<std::size_t> channels;
  // The stream config (sim.stream) and the simulator's settings as the stream args ask;
  // resolved (resolve_stream_config) where the receiver and the simulator's link open.
  hilrig::SimConfig sim;
  const hilrig::StreamConfig& cfg() const { return sim.stream; }
  bool active = false;
  // RX: the core's frame source (UDP or a ring this module creates), one frame held at a time
  std::unique_ptr<hilrig::FrameSource> src;
  const std::uint8_t* frame = nullptr;  // the current frame (taken from src, released when consumed)
  hilrig::FrameHeader hdr;
  std::uint32_t frame_ticks = 0, consumed_ticks = 0;
  bool overflow_reported = false;
  std::unique_ptr<hilrig::RxCounters> rxc;
  std::unique_ptr<hilrig::RxChecker> check;
  // TX: the core's frame sink to the simulator's endpoint (made at activateStream)
  std::unique_ptr<hilrig::FrameSink> sink;
  std::unique_ptr<hilrig::TxPacer> pacer;  // samples; restarted by each burst
  std::uint64_t tx_seq = 0, tx_tick = 0, burst_tick = 0;
  bool tx_in_burst = false;
  std::uint64_t seen_underruns = 0, seen_seq_errors = 0, pending_underruns = 0, pending_seq_errors = 0;
  std::uint64_t last_status_poll_ns = 0;
};

class HilrigDevice : public SoapySDR::Device {
 public:
  explicit HilrigDevice(const SoapySDR::Kwargs& args);
  ~HilrigDevice() override = default;

  // ---------------------------------------------------------------- settings.cpp
  std::string getDriverKey() const override { return "hilrig"; }
  std::string getHardwareKey() const override { return "hilrig-sim"; }
  SoapySDR::Kwargs getHardwareInfo() const override;
  size_t getNumChannels(const int) const override { return kMaxChannels; }
  bool getFullDuplex(const int, const size_t) const override { return true; }

  // Time stamps are sample ticks of the stream (readStream's timeNs); the clock
  // itself is the host's monotonic clock.
  bool hasHardwareTime(const std::string& what) const override { return what.empty(); }
  long long getHardwareTime(const std::string&) const override;

  void setMasterClockRate(const double rate) override;
  double getMasterClockRate() const override { return master_clock_hz_; }
  void setSampleRate(const int, const size_t, const double rate) override { rate_sps_ = coerce(rate); }
  double getSampleRate(const int, const size_t) const override { return rate_sps_; }
  SoapySDR::RangeList getSampleRateRange(const int, const size_t) const override;
  std::vector<double> listSampleRates(const int, const size_t) const override;

  // The simulator has no RF; frequency, gain and antenna are accepted and remembered
  // so that ordinary SoapySDR programs (GNU Radio's soapy.source) run unmodified.
  std::vector<std::string> listAntennas(const int, const size_t) const override { return {"LOOPBACK"}; }
  std::string getAntenna(const int, const size_t) const override { return "LOOPBACK"; }
  void setAntenna(const int, const size_t, const std::string&) override {}
  std::vector<std::string> listGains(const int, const size_t) const override { return {"SIM"}; }
  void setGain(const int, const size_t, const double value) override { gain_db_ = value; }
  double getGain(const int, const size_t) const override { return gain_db_; }
  SoapySDR::Range getGainRange(const int, const size_t) const override { return SoapySDR::Range(0, 100); }
  void setFrequency(const int, const size_t, const double f, const SoapySDR::Kwargs&) override { freq_hz_ = f; }
  double getFrequency(const int, const size_t) const override { return freq_hz_; }
  SoapySDR::RangeList getFrequencyRange(const int, const size_t) const override;
  void setBandwidth(const int, const size_t, const double bw) override { bw_hz_ = bw; }
  double getBandwidth(const int, const size_t) const override { return bw_hz_ > 0 ? bw_hz_ : rate_sps_; }

  std::vector<std::string> listSensors() const override;
  SoapySDR::ArgInfo getSensorInfo(const std::string& key) const override;
  std::string readSensor(const std::string& key) const override;

  std::vector<std::string> getStreamFormats(const int, const size_t) const override;
  std::string getNativeStreamFormat(const int, const size_t, double& fullScale) const override;
  SoapySDR::ArgInfoList getStreamArgsInfo(const int, const size_t) const override;

  // ---------------------------------------------------------------- streaming.cpp
  SoapySDR::Stream* setupStream(const int direction, const std::string& format, const std::vector<size_t>& channels,
                                const SoapySDR::Kwargs& args) override;
  void closeStream(SoapySDR::Stream* handle) override;
  size_t getStreamMTU(SoapySDR::Stream* handle) const override;
  int activateStream(SoapySDR::Stream* handle, const int flags, const long long timeNs, const size_t numElems) override;
  int deactivateStream(SoapySDR::Stream* handle, const int flags, const long long timeNs) override;
  int readStream(SoapySDR::Stream* handle, void* const* buffs, const size_t numElems, int& flags, long long& timeNs,
                 const long timeoutUs) override;
  int writeStream(SoapySDR::Stream* handle, const void* const* buffs, const size_t numElems, int& flags,
                  const long long timeNs, const long timeoutUs) override;
  int readStreamStatus(SoapySDR::Stream* handle, size_t& chanMask, int& flags, long long& timeNs,
                       const long timeoutUs) override;

 private:
  double coerce(double asked) const;
  bool next_frame(Stream* s, long timeoutUs);
  void release_frame(Stream* s);
  void copy_out(Stream* s, void* const* buffs, std::uint32_t n);
  int send_tx_frame(Stream* s, const void* const* buffs, std::uint32_t n, bool eob, long timeoutUs);

  std::string binary_;
  std::unique_ptr<hilrig::SimProcess> sim_;
  double master_clock_hz_ = hilrig::defaults::kMasterClockHz;
  double rate_sps_ = hilrig::defaults::kRateSps;
  nlohmann::json effective_config_ = nlohmann::json::object();  // the simulator's configure answer "config"
  double gain_db_ = 0, freq_hz_ = 0, bw_hz_ = 0;
  mutable std::mutex mu_;
  std::vector<Stream*> streams_;
};

}  // namespace hilrig_soapy
