// SoapySDR module `driver=hilrig`: the simulator hilrig-sim as a SoapySDR device.
//
// The device object spawns and controls its own hilrig-sim (SimProcess) and moves
// frames with the native core's UDP or shared-memory transport, so any SoapySDR
// program (SoapySDRUtil, GNU Radio's soapy blocks, hostlib's `soapy` driver) streams
// from the same simulator the `sim` driver uses. The sample rate is coerced like a
// device with an integer divider: rate = master_clock / round(master_clock / asked).
//
// RX: one frame per readStream call at most (the MTU is one frame); the frame's
// sample_tick becomes timeNs, so a client sees lost frames as time gaps; a frame
// flagged OVERFLOW_BEFORE is preceded by one SOAPY_SDR_OVERFLOW return. TX:
// writeStream frames the samples and paces at the rate like a device's flow
// control; readStreamStatus reports the simulator's underruns (SOAPY_SDR_UNDERFLOW)
// and TX sequence errors (SOAPY_SDR_CORRUPTION, as SoapyUHD maps UHD's seq errors).
#include <SoapySDR/Device.hpp>
#include <SoapySDR/Errors.hpp>
#include <SoapySDR/Formats.hpp>
#include <SoapySDR/Logger.hpp>
#include <SoapySDR/Registry.hpp>
#include <SoapySDR/Time.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "hilrig/clock.hpp"
#include "hilrig/config.hpp"
#include "hilrig/frame.hpp"
#include "hilrig/shm_ring.hpp"
#include "hilrig/soapy_simproc.hpp"
#include "hilrig/udp.hpp"

using nlohmann::json;

namespace {

constexpr double kDefaultMasterClockHz = 200e6;
constexpr double kDefaultRateSps = 10e6;
constexpr std::uint32_t kDefaultFrameBytes = 8000;
constexpr std::size_t kMaxChannels = 4;

std::string arg(const SoapySDR::Kwargs& a, const char* key, const std::string& dflt = "") {
  auto it = a.find(key);
  return it == a.end() ? dflt : it->second;
}

long long int_arg(const SoapySDR::Kwargs& a, const char* key, long long dflt) {
  auto it = a.find(key);
  if (it == a.end() || it->second.empty()) return dflt;
  try {
    std::size_t pos = 0;
    long long v = std::stoll(it->second, &pos);
    if (pos != it->second.size()) throw std::invalid_argument("trailing");
    return v;
  } catch (const std::exception&) {
    throw std::invalid_argument(std::string("hilrig: stream arg ") + key + "=" + it->second + " is not an integer");
  }
}

// ---- Sample conversion between the wire format (sc16/sc8 in the frame, channels
// interleaved tick by tick) and a SoapySDR host buffer (CS16/CS8/CF32, one per channel).

// One I or Q value from In to Out, like a device's converters: sc16 <-> sc8 keep or
// restore the high byte; to float divides by full scale, from float rounds.
template <class Out, class In>
Out convert(In v) {
  if constexpr (std::is_same_v<In, Out>) return v;
  else if constexpr (std::is_same_v<Out, float>) return float(v) / (std::is_same_v<In, std::int16_t> ? 32768.0f : 128.0f);
  else if constexpr (std::is_same_v<In, float>) return Out(std::lrint(v * (std::is_same_v<Out, std::int16_t> ? 32767.0f : 127.0f)));
  else if constexpr (std::is_same_v<Out, std::int8_t>) return std::int8_t(v >> 8);
  else return std::int16_t(v * 256);
}

// Channel c (of C) of n ticks: out of a frame payload into one host buffer...
template <class Wire, class Host>
void deinterleave(const Wire* frame, unsigned C, unsigned c, std::uint32_t n, Host* out) {
  if constexpr (std::is_same_v<Wire, Host>) {
    if (C == 1) return void(std::memcpy(out, frame, std::size_t(n) * 2 * sizeof(Wire)));
  }
  for (std::uint32_t i = 0; i < n; ++i) {
    out[2 * i] = convert<Host>(frame[2 * (i * C + c)]);
    out[2 * i + 1] = convert<Host>(frame[2 * (i * C + c) + 1]);
  }
}

// ...and from one host buffer into a frame payload.
template <class Host, class Wire>
void interleave(const Host* in, unsigned C, unsigned c, std::uint32_t n, Wire* frame) {
  if constexpr (std::is_same_v<Wire, Host>) {
    if (C == 1) return void(std::memcpy(frame, in, std::size_t(n) * 2 * sizeof(Wire)));
  }
  for (std::uint32_t i = 0; i < n; ++i) {
    frame[2 * (i * C + c)] = convert<Wire>(in[2 * i]);
    frame[2 * (i * C + c) + 1] = convert<Wire>(in[2 * i + 1]);
  }
}

// Calls f(Wire{}, Host{}) with the C++ types of a stream's wire and host formats.
template <class F>
void with_sample_types(hilrig::SampleFormat wire, const std::string& host, F&& f) {
  auto host_types = [&](auto w) {
    if (host == SOAPY_SDR_CS16) f(w, std::int16_t{});
    else if (host == SOAPY_SDR_CF32) f(w, float{});
    else f(w, std::int8_t{});  // CS8: setupStream admits only these three
  };
  if (wire == hilrig::SampleFormat::sc16) host_types(std::int16_t{});
  else host_types(std::int8_t{});
}

struct Stream {
  int direction = SOAPY_SDR_RX;
  std::string format;  // CS16, CS8, CF32 (host side)
  std::vector<std::size_t> channels;
  hilrig::StreamConfig cfg;
  json faults = json::object();
  std::uint32_t fifo_frames = 0;
  bool active = false;
  // RX
  std::unique_ptr<hilrig::UdpSocket> sock;
  std::unique_ptr<hilrig::UdpRecvBatch> batch;
  std::unique_ptr<hilrig::ShmRing> ring;
  int batch_n = 0, batch_i = 0;
  const std::uint8_t* frame = nullptr;  // current frame (in batch or ring slot)
  hilrig::FrameHeader hdr;
  std::uint32_t frame_ticks = 0, consumed_ticks = 0;
  bool overflow_reported = false;
  std::uint64_t malformed = 0;
  // TX
  std::unique_ptr<hilrig::UdpSocket> txsock;
  std::unique_ptr<hilrig::ShmRing> txring;
  std::vector<std::uint8_t> txbuf;
  std::uint64_t tx_seq = 0, tx_tick = 0, tx_t0_ns = 0;
  bool tx_in_burst = false;
  std::uint64_t seen_underruns = 0, seen_seq_errors = 0, pending_underruns = 0, pending_seq_errors = 0;
  std::uint64_t last_status_poll_ns = 0;
};

class HilrigDevice : public SoapySDR::Device {
 public:
  explicit HilrigDevice(const SoapySDR::Kwargs& args) {
    binary_ = hilrig::find_sim_binary(arg(args, "sim_binary"));
    if (binary_.empty())
      throw std::runtime_error("hilrig: simulator hilrig-sim not found (sim_binary arg, $HILRIG_SIM_BIN, the build tree, PATH)");
    sim_ = std::make_unique<hilrig::SimProcess>(binary_);
    if (args.count("master_clock_rate")) master_clock_hz_ = std::stod(args.at("master_clock_rate"));
    rate_sps_ = coerce(kDefaultRateSps);
  }

  // ---------------------------------------------------------------- identification
  std::string getDriverKey() const override { return "hilrig"; }
  std::string getHardwareKey() const override { return "hilrig-sim"; }
  SoapySDR::Kwargs getHardwareInfo() const override {
    return {{"version", sim_->hello().value("version", "?")},
            {"sim_binary", binary_},
            {"sim_pid", std::to_string(sim_->pid())}};
  }
  size_t getNumChannels(const int) const override { return kMaxChannels; }
  bool getFullDuplex(const int, const size_t) const override { return true; }

  // Time stamps are sample ticks of the stream (readStream's timeNs); the clock
  // itself is the host's monotonic clock.
  bool hasHardwareTime(const std::string& what) const override { return what.empty(); }
  long long getHardwareTime(const std::string&) const override { return (long long)hilrig::now_ns(); }

  // ---------------------------------------------------------------- rates
  void setMasterClockRate(const double rate) override {
    if (!(rate > 0)) throw std::invalid_argument("hilrig: master clock rate must be > 0");
    master_clock_hz_ = rate;
    rate_sps_ = coerce(rate_sps_);
  }
  double getMasterClockRate() const override { return master_clock_hz_; }
  void setSampleRate(const int, const size_t, const double rate) override { rate_sps_ = coerce(rate); }
  double getSampleRate(const int, const size_t) const override { return rate_sps_; }
  SoapySDR::RangeList getSampleRateRange(const int, const size_t) const override {
    return {SoapySDR::Range(master_clock_hz_ / 65536.0, master_clock_hz_)};
  }
  std::vector<double> listSampleRates(const int, const size_t) const override {
    std::vector<double> r;
    for (int d : {1, 2, 4, 5, 8, 10, 20, 40, 100, 200}) r.push_back(master_clock_hz_ / d);
    return r;
  }

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
  SoapySDR::RangeList getFrequencyRange(const int, const size_t) const override { return {SoapySDR::Range(0, 6e9)}; }
  void setBandwidth(const int, const size_t, const double bw) override { bw_hz_ = bw; }
  double getBandwidth(const int, const size_t) const override { return bw_hz_ > 0 ? bw_hz_ : rate_sps_; }

  // The simulator's own counters (frames sent, overflows, injected faults, TX checks).
  std::vector<std::string> listSensors() const override { return {"sim_stats"}; }
  SoapySDR::ArgInfo getSensorInfo(const std::string& key) const override {
    SoapySDR::ArgInfo info;
    info.key = key;
    info.name = "simulator stats";
    info.type = SoapySDR::ArgInfo::STRING;
    info.description = "JSON object of hilrig-sim's stats (docs/architecture.md)";
    return info;
  }
  std::string readSensor(const std::string& key) const override {
    if (key != "sim_stats") throw std::invalid_argument("hilrig: no sensor " + key + " (has: sim_stats)");
    return sim_->request({{"cmd", "stats"}})["stats"].dump();
  }

  // ---------------------------------------------------------------- streams
  std::vector<std::string> getStreamFormats(const int, const size_t) const override {
    return {SOAPY_SDR_CS16, SOAPY_SDR_CS8, SOAPY_SDR_CF32};
  }
  std::string getNativeStreamFormat(const int, const size_t, double& fullScale) const override {
    fullScale = 32767;
    return SOAPY_SDR_CS16;
  }
  SoapySDR::ArgInfoList getStreamArgsInfo(const int, const size_t) const override {
    SoapySDR::ArgInfoList l;
    auto add = [&](const char* key, const char* value, const char* desc, SoapySDR::ArgInfo::Type t,
                   std::vector<std::string> options = {}) {
      SoapySDR::ArgInfo a;
      a.key = key;
      a.value = value;
      a.name = key;
      a.description = desc;
      a.type = t;
      a.options = options;
      l.push_back(a);
    };
    add("WIRE", "sc16", "sample format between simulator and host", SoapySDR::ArgInfo::STRING, {"sc16", "sc8"});
    add("transport", "udp", "link between simulator and host", SoapySDR::ArgInfo::STRING, {"udp", "shm"});
    add("frame_bytes", "8000", "whole frame incl. 48-byte header (the MTU follows)", SoapySDR::ArgInfo::INT);
    add("host", "127.0.0.1", "udp: address the host receiver binds", SoapySDR::ArgInfo::STRING);
    add("socket_buffer_bytes", "4194304", "udp: SO_RCVBUF/SO_SNDBUF request", SoapySDR::ArgInfo::INT);
    add("slots", "256", "shm: ring slots", SoapySDR::ArgInfo::INT);
    add("fifo_frames", "0", "simulator device FIFO in frames; 0 = 4 MiB worth", SoapySDR::ArgInfo::INT);
    add("fault_seed", "1", "seed of the injected faults", SoapySDR::ArgInfo::INT);
    for (const char* f : {"drop_frames", "corrupt_samples", "duplicate_frames", "reorder_frames"})
      add(f, "0", "RX fault injection count", SoapySDR::ArgInfo::INT);
    return l;
  }

  SoapySDR::Stream* setupStream(const int direction, const std::string& format, const std::vector<size_t>& channels_in,
                                const SoapySDR::Kwargs& args) override {
    if (format != SOAPY_SDR_CS16 && format != SOAPY_SDR_CS8 && format != SOAPY_SDR_CF32)
      throw std::invalid_argument("hilrig: stream format " + format + " not supported (CS16, CS8, CF32)");
    auto s = std::make_unique<Stream>();
    s->direction = direction;
    s->format = format;
    s->channels = channels_in.empty() ? std::vector<size_t>{0} : channels_in;
    for (std::size_t i = 0; i < s->channels.size(); ++i)
      if (s->channels[i] != i)
        throw std::invalid_argument("hilrig: channels must be 0..N-1 in order (the simulator interleaves them)");
    if (s->channels.size() > kMaxChannels) throw std::invalid_argument("hilrig: at most 4 channels");
    hilrig::StreamConfig& c = s->cfg;
    c.direction = direction == SOAPY_SDR_RX ? hilrig::Direction::rx : hilrig::Direction::tx;
    c.channels = unsigned(s->channels.size());
    c.sample_format = hilrig::parse_sample_format(arg(args, "WIRE", "sc16"));
    c.frame_bytes = std::uint32_t(int_arg(args, "frame_bytes", kDefaultFrameBytes));
    if (c.frame_bytes < hilrig::kFrameHeaderBytes + c.tick_bytes())
      throw std::invalid_argument("hilrig: frame_bytes " + std::to_string(c.frame_bytes) + " holds no sample");
    const std::string kind = arg(args, "transport", "udp");
    if (kind == "udp") {
      c.transport.kind = hilrig::TransportKind::udp;
      c.transport.host = arg(args, "host", "127.0.0.1");
      c.transport.socket_buffer_bytes = std::uint32_t(int_arg(args, "socket_buffer_bytes", 4 << 20));
      if (c.frame_bytes > 65507) throw std::invalid_argument("hilrig: udp frame_bytes must be <= 65507");
    } else if (kind == "shm") {
      c.transport.kind = hilrig::TransportKind::shm;
      c.transport.slots = std::uint32_t(int_arg(args, "slots", 256));
    } else {
      throw std::invalid_argument("hilrig: transport=" + kind + " (allowed: udp, shm)");
    }
    s->fifo_frames = std::uint32_t(int_arg(args, "fifo_frames", 0));
    if (s->fifo_frames == 0) s->fifo_frames = std::max<std::uint32_t>(16, (4u << 20) / c.frame_bytes);
    s->faults = {{"seed", int_arg(args, "fault_seed", 1)},
                 {"drop_frames", int_arg(args, "drop_frames", 0)},
                 {"corrupt_samples", int_arg(args, "corrupt_samples", 0)},
                 {"duplicate_frames", int_arg(args, "duplicate_frames", 0)},
                 {"reorder_frames", int_arg(args, "reorder_frames", 0)}};
    std::lock_guard<std::mutex> lock(mu_);
    for (Stream* other : streams_)
      if (other->direction == direction) throw std::runtime_error("hilrig: one stream per direction");
    if (direction == SOAPY_SDR_RX) {
      // The receiver exists before the simulator is configured, so it knows where to send.
      if (c.transport.kind == hilrig::TransportKind::udp) {
        s->sock = std::make_unique<hilrig::UdpSocket>(
            hilrig::UdpSocket::bind_to(c.transport.host, 0, c.transport.socket_buffer_bytes));
        s->batch = std::make_unique<hilrig::UdpRecvBatch>(32, c.frame_bytes + 1);
      } else {
        s->ring.reset(hilrig::ShmRing::create(c.transport.slots, c.frame_bytes));
      }
    } else {
      s->txbuf.resize(c.frame_bytes);
    }
    streams_.push_back(s.get());
    return reinterpret_cast<SoapySDR::Stream*>(s.release());
  }

  void closeStream(SoapySDR::Stream* handle) override {
    Stream* s = reinterpret_cast<Stream*>(handle);
    if (s->active) deactivateStream(handle, 0, 0);
    std::lock_guard<std::mutex> lock(mu_);
    streams_.erase(std::remove(streams_.begin(), streams_.end(), s), streams_.end());
    delete s;
  }

  size_t getStreamMTU(SoapySDR::Stream* handle) const override {
    return reinterpret_cast<Stream*>(handle)->cfg.samples_per_frame();
  }

  int activateStream(SoapySDR::Stream* handle, const int, const long long, const size_t) override {
    Stream* s = reinterpret_cast<Stream*>(handle);
    if (s->active) return 0;
    s->cfg.rate_sps = rate_sps_;
    json cfg = {{"direction", s->direction == SOAPY_SDR_RX ? "rx" : "tx"},
                {"channels", s->cfg.channels},
                {"sample_format", hilrig::sample_format_name(s->cfg.sample_format)},
                {"rate_sps", rate_sps_},
                {"frame_bytes", s->cfg.frame_bytes},
                {"pattern", "counter"},
                {"stream_id", 0},
                {"crc", false},
                {"master_clock_hz", master_clock_hz_},
                {"fifo_frames", s->fifo_frames},
                {"faults", s->faults}};
    json transport;
    if (s->cfg.transport.kind == hilrig::TransportKind::udp)
      transport = {{"kind", "udp"}, {"host", s->cfg.transport.host}, {"port", 0},
                   {"socket_buffer_bytes", s->cfg.transport.socket_buffer_bytes}};
    else
      transport = {{"kind", "shm"}, {"slots", s->cfg.transport.slots}};
    cfg["transport"] = transport;
    if (s->direction == SOAPY_SDR_RX) {
      if (s->sock)
        cfg["rx_dest"] = {{"kind", "udp"}, {"host", s->cfg.transport.host}, {"port", s->sock->local_port()},
                          {"socket_buffer_bytes", s->cfg.transport.socket_buffer_bytes}};
      else
        cfg["rx_dest"] = {{"kind", "shm"}, {"path", s->ring->path()}, {"slots", s->cfg.transport.slots}};
    }
    try {
      json req = cfg;
      req["cmd"] = "configure";
      json answer = sim_->request(req);
      if (s->direction == SOAPY_SDR_TX) {
        const json& ep = answer.at("endpoint");
        if (ep.value("kind", "") == "udp")
          s->txsock = std::make_unique<hilrig::UdpSocket>(hilrig::UdpSocket::connect_to(
              ep.value("host", "127.0.0.1"), std::uint16_t(ep.value("port", 0)), s->cfg.transport.socket_buffer_bytes));
        else
          s->txring.reset(hilrig::ShmRing::open(ep.at("path").get<std::string>()));
        s->tx_seq = s->tx_tick = 0;
        s->tx_t0_ns = 0;
        s->tx_in_burst = false;
        s->seen_underruns = s->seen_seq_errors = s->pending_underruns = s->pending_seq_errors = 0;
      }
      sim_->request({{"cmd", "start"}});
    } catch (const std::exception& e) {
      SoapySDR::logf(SOAPY_SDR_ERROR, "hilrig: activateStream: %s", e.what());
      return SOAPY_SDR_STREAM_ERROR;
    }
    s->active = true;
    s->overflow_reported = false;
    return 0;
  }

  int deactivateStream(SoapySDR::Stream* handle, const int, const long long) override {
    Stream* s = reinterpret_cast<Stream*>(handle);
    if (!s->active) return 0;
    s->active = false;
    if (s->direction == SOAPY_SDR_TX && s->tx_in_burst) send_tx_frame(s, nullptr, 0, true, 100000);
    try {
      sim_->request({{"cmd", "stop"}});
    } catch (const std::exception& e) {
      SoapySDR::logf(SOAPY_SDR_ERROR, "hilrig: deactivateStream: %s", e.what());
      return SOAPY_SDR_STREAM_ERROR;
    }
    return 0;
  }

  int readStream(SoapySDR::Stream* handle, void* const* buffs, const size_t numElems, int& flags, long long& timeNs,
                 const long timeoutUs) override {
    Stream* s = reinterpret_cast<Stream*>(handle);
    if (s->direction != SOAPY_SDR_RX) return SOAPY_SDR_NOT_SUPPORTED;
    flags = 0;
    if (s->frame == nullptr && !next_frame(s, timeoutUs)) return SOAPY_SDR_TIMEOUT;
    if (s->consumed_ticks == 0 && (s->hdr.flags & hilrig::kFlagOverflowBefore) && !s->overflow_reported) {
      // The device FIFO overflowed before this frame: say so once, then deliver it.
      s->overflow_reported = true;
      return SOAPY_SDR_OVERFLOW;
    }
    const std::uint32_t n = std::uint32_t(std::min<std::size_t>(numElems, s->frame_ticks - s->consumed_ticks));
    copy_out(s, buffs, n);
    flags |= SOAPY_SDR_HAS_TIME;
    timeNs = SoapySDR::ticksToTimeNs((long long)(s->hdr.sample_tick + s->consumed_ticks), rate_sps_);
    s->consumed_ticks += n;
    if (s->consumed_ticks >= s->frame_ticks) {
      if (s->hdr.flags & hilrig::kFlagEOB) flags |= SOAPY_SDR_END_BURST;
      release_frame(s);
    } else {
      flags |= SOAPY_SDR_MORE_FRAGMENTS;
    }
    return int(n);
  }

  int writeStream(SoapySDR::Stream* handle, const void* const* buffs, const size_t numElems, int& flags,
                  const long long, const long timeoutUs) override {
    Stream* s = reinterpret_cast<Stream*>(handle);
    if (s->direction != SOAPY_SDR_TX) return SOAPY_SDR_NOT_SUPPORTED;
    if (!s->active) return SOAPY_SDR_STREAM_ERROR;
    const std::uint32_t n = std::uint32_t(std::min<std::size_t>(numElems, s->cfg.samples_per_frame()));
    const bool eob = (flags & SOAPY_SDR_END_BURST) && n == numElems;
    return send_tx_frame(s, buffs, n, eob, timeoutUs);
  }

  int readStreamStatus(SoapySDR::Stream* handle, size_t& chanMask, int& flags, long long& timeNs,
                       const long timeoutUs) override {
    Stream* s = reinterpret_cast<Stream*>(handle);
    if (s->direction != SOAPY_SDR_TX) return SOAPY_SDR_NOT_SUPPORTED;
    chanMask = (std::size_t(1) << s->channels.size()) - 1;
    flags = 0;
    timeNs = 0;
    const std::uint64_t deadline = hilrig::now_ns() + std::uint64_t(std::max(0L, timeoutUs)) * 1000ull;
    while (true) {
      if (s->pending_underruns > 0) {
        --s->pending_underruns;
        return SOAPY_SDR_UNDERFLOW;
      }
      if (s->pending_seq_errors > 0) {
        --s->pending_seq_errors;
        return SOAPY_SDR_CORRUPTION;
      }
      const std::uint64_t t = hilrig::now_ns();
      if (t >= deadline) return SOAPY_SDR_TIMEOUT;
      // Ask the simulator at most every 10 ms: its control pipe is not a data path.
      if (s->active && t - s->last_status_poll_ns >= 10000000ull) {
        s->last_status_poll_ns = t;
        try {
          json st = sim_->request({{"cmd", "stats"}})["stats"];
          std::uint64_t u = st.value("underruns", 0ull), q = st.value("tx_seq_errors", 0ull);
          if (u > s->seen_underruns) s->pending_underruns += u - s->seen_underruns;
          if (q > s->seen_seq_errors) s->pending_seq_errors += q - s->seen_seq_errors;
          s->seen_underruns = std::max(s->seen_underruns, u);
          s->seen_seq_errors = std::max(s->seen_seq_errors, q);
          continue;
        } catch (const std::exception& e) {
          SoapySDR::logf(SOAPY_SDR_ERROR, "hilrig: readStreamStatus: %s", e.what());
          return SOAPY_SDR_STREAM_ERROR;
        }
      }
      hilrig::sleep_for_ns(std::min<std::uint64_t>(deadline - t, 2000000ull));
    }
  }

  ~HilrigDevice() override = default;

 private:
  double coerce(double asked) const {
    if (!(asked > 0)) throw std::invalid_argument("hilrig: sample rate must be > 0");
    double div = std::max(1.0, std::round(master_clock_hz_ / asked));
    return master_clock_hz_ / div;
  }

  // Next valid frame into s->frame; false on timeout. Malformed frames are skipped.
  bool next_frame(Stream* s, long timeoutUs) {
    const std::uint64_t deadline = hilrig::now_ns() + std::uint64_t(std::max(0L, timeoutUs)) * 1000ull;
    while (true) {
      const std::uint8_t* f = nullptr;
      std::size_t len = 0;
      if (s->sock) {
        if (s->batch_i >= s->batch_n) {
          s->batch_i = s->batch_n = 0;
          int n = s->batch->recv(s->sock->fd());
          if (n <= 0) {
            const std::uint64_t t = hilrig::now_ns();
            if (t >= deadline) return false;
            s->sock->wait_readable(int(std::min<std::uint64_t>((deadline - t) / 1000000ull + 1, 100)));
            continue;
          }
          s->batch_n = n;
        }
        f = s->batch->data(unsigned(s->batch_i));
        len = s->batch->len(unsigned(s->batch_i));
        if (s->batch->truncated(unsigned(s->batch_i))) len = 0;
      } else {
        std::uint32_t l32 = 0;
        const std::uint64_t t = hilrig::now_ns();
        f = s->ring->peek_wait(&l32, t >= deadline ? 0 : std::min<std::uint64_t>(deadline - t, 100000000ull));
        if (f == nullptr) {
          if (hilrig::now_ns() >= deadline) return false;
          continue;
        }
        len = l32;
      }
      hilrig::FrameHeader h;
      if (len == 0 || hilrig::validate_frame(f, len, h) != nullptr || h.channels != s->cfg.channels ||
          h.sample_format != std::uint8_t(s->cfg.sample_format)) {
        ++s->malformed;
        s->frame = f;  // so release_frame() frees the slot
        release_frame(s);
        continue;
      }
      s->frame = f;
      s->hdr = h;
      s->frame_ticks = h.payload_bytes / s->cfg.tick_bytes();
      s->consumed_ticks = 0;
      s->overflow_reported = false;
      return true;
    }
  }

  void release_frame(Stream* s) {
    if (s->sock) ++s->batch_i;
    else s->ring->release();
    s->frame = nullptr;
  }

  // Deinterleave (and convert) ticks [consumed, consumed+n) of the frame into buffs.
  void copy_out(Stream* s, void* const* buffs, std::uint32_t n) {
    const unsigned C = s->cfg.channels;
    const std::uint8_t* payload = s->frame + hilrig::kFrameHeaderBytes;
    with_sample_types(s->cfg.sample_format, s->format, [&](auto wire, auto host) {
      using Wire = decltype(wire);
      using Host = decltype(host);
      const Wire* in = reinterpret_cast<const Wire*>(payload) + std::size_t(s->consumed_ticks) * C * 2;
      for (unsigned c = 0; c < C; ++c) deinterleave(in, C, c, n, static_cast<Host*>(buffs[c]));
    });
  }

  // Frames n ticks of buffs (interleaving channels) and sends it, paced at the rate.
  int send_tx_frame(Stream* s, const void* const* buffs, std::uint32_t n, bool eob, long timeoutUs) {
    const unsigned C = s->cfg.channels;
    const unsigned bps = hilrig::bytes_per_sample(s->cfg.sample_format);
    // Flow control like a device's: at most ~5 ms of samples ahead of the rate clock.
    const std::uint64_t now = hilrig::now_ns();
    if (s->tx_t0_ns == 0) s->tx_t0_ns = now;
    const double lead_ticks = std::max(4.0 * s->cfg.samples_per_frame(), 0.005 * rate_sps_);
    const double due_ns = s->tx_t0_ns + (double(s->tx_tick) - lead_ticks) / rate_sps_ * 1e9;
    if (due_ns > double(now)) {
      const std::uint64_t wait_ns = std::uint64_t(due_ns - double(now));
      if (timeoutUs >= 0 && wait_ns > std::uint64_t(timeoutUs) * 1000ull) return SOAPY_SDR_TIMEOUT;
      hilrig::sleep_for_ns(wait_ns);
    }
    hilrig::FrameHeader h;
    h.flags = std::uint8_t((s->tx_in_burst ? 0 : hilrig::kFlagSOB) | (eob ? hilrig::kFlagEOB : 0) | hilrig::kFlagTsValid);
    h.sample_format = std::uint8_t(s->cfg.sample_format);
    h.channels = std::uint8_t(C);
    h.payload_bytes = n * C * bps;
    h.seq = s->tx_seq;
    h.sample_tick = s->tx_tick;
    std::uint8_t* out = nullptr;
    if (s->txring) {
      out = s->txring->acquire_wait(std::uint64_t(std::max(0L, timeoutUs)) * 1000ull);
      if (out == nullptr) return SOAPY_SDR_TIMEOUT;
    } else {
      out = s->txbuf.data();
    }
    std::uint8_t* payload = out + hilrig::kFrameHeaderBytes;
    if (buffs != nullptr) {
      with_sample_types(s->cfg.sample_format, s->format, [&](auto wire, auto host) {
        using Wire = decltype(wire);
        using Host = decltype(host);
        for (unsigned c = 0; c < C; ++c)
          interleave(static_cast<const Host*>(buffs[c]), C, c, n, reinterpret_cast<Wire*>(payload));
      });
    }
    h.send_time_ns = hilrig::now_ns();
    hilrig::write_header(h, out);
    const std::size_t len = hilrig::kFrameHeaderBytes + h.payload_bytes;
    if (s->txring) {
      s->txring->publish(std::uint32_t(len));
    } else {
      const std::uint64_t deadline = hilrig::now_ns() + std::uint64_t(std::max(0L, timeoutUs)) * 1000ull;
      while (true) {
        std::uint8_t* bufs[1] = {out};
        std::size_t lens[1] = {len};
        bool busy = false;
        int err = 0;
        if (hilrig::udp_send_batch(s->txsock->fd(), bufs, lens, 1, &busy, &err) == 1) break;
        if (!busy) {
          SoapySDR::logf(SOAPY_SDR_ERROR, "hilrig: TX send failed: %s", std::strerror(err));
          return SOAPY_SDR_STREAM_ERROR;
        }
        if (hilrig::now_ns() >= deadline) return SOAPY_SDR_TIMEOUT;
        s->txsock->wait_writable(1);
      }
    }
    ++s->tx_seq;
    s->tx_tick += n;
    s->tx_in_burst = !eob;
    if (eob) s->tx_t0_ns = 0;  // the next burst starts its own clock, like the simulator's consumer
    return int(n);
  }

  std::string binary_;
  std::unique_ptr<hilrig::SimProcess> sim_;
  double master_clock_hz_ = kDefaultMasterClockHz;
  double rate_sps_ = kDefaultRateSps;
  double gain_db_ = 0, freq_hz_ = 0, bw_hz_ = 0;
  std::mutex mu_;
  std::vector<Stream*> streams_;
};

SoapySDR::KwargsList find_hilrig(const SoapySDR::Kwargs& args) {
  // Only when asked for by name: a plain `SoapySDRUtil --find` on a lab machine
  // should list radios, not start simulators.
  if (arg(args, "driver") != "hilrig") return {};
  const std::string binary = hilrig::find_sim_binary(arg(args, "sim_binary"));
  if (binary.empty()) return {};
  SoapySDR::Kwargs r = {{"driver", "hilrig"}, {"label", "hilrig simulator (hilrig-sim)"}, {"serial", "hilrig-sim0"},
                        {"sim_binary", binary}};
  if (args.count("serial") && args.at("serial") != r["serial"]) return {};
  return {r};
}

SoapySDR::Device* make_hilrig(const SoapySDR::Kwargs& args) { return new HilrigDevice(args); }

}  // namespace

static SoapySDR::Registry register_hilrig("hilrig", &find_hilrig, &make_hilrig, SOAPY_SDR_ABI_VERSION);
