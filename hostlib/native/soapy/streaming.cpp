// driver=hilrig: stream setup, activation, readStream/writeStream and the TX status
// (the device's streaming, as SoapyRTLSDR's Streaming.cpp).
#include <SoapySDR/Errors.hpp>
#include <SoapySDR/Logger.hpp>
#include <SoapySDR/Time.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>

#include "hilrig/core/clock.hpp"
#include "hilrig/core/convert.hpp"
#include "hilrig/core/framer.hpp"
#include "hilrig/io/streams.hpp"
#include "hilrig/soapy/hilrig_soapy.hpp"

using nlohmann::json;

namespace hilrig_soapy {
namespace {
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
}  // namespace

SoapySDR::Stream* HilrigDevice::setupStream(const int direction, const std::string& format, const std::vector<size_t>& channels_in,
                              const SoapySDR::Kwargs& args) {
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
  // SoapyRemote's server hands the device the client's stream args with its own
  // remote:* keys (mtu, window, prot, format): those are the network's, not ours.
  std::map<std::string, std::string> own;
  for (const auto& [key, value] : args)
    if (key.rfind("remote:", 0) != 0) own.emplace(key, value);
  try {
    s->sim = hilrig::sim_config_from_args(own,
                                          direction == SOAPY_SDR_RX ? hilrig::Direction::rx : hilrig::Direction::tx,
                                          unsigned(s->channels.size()), rate_sps_, master_clock_hz_);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("hilrig: ") + e.what());
  }
  const hilrig::StreamConfig& c = s->cfg();
  std::lock_guard<std::mutex> lock(mu_);
  for (Stream* other : streams_)
    if (other->direction == direction) throw std::runtime_error("hilrig: one stream per direction");
  if (direction == SOAPY_SDR_RX) {
    // The receiver exists before the simulator is configured, so it knows where to send:
    // a UDP port of its own, or a ring created here, sized for the rate set now.
    hilrig::StreamConfig rx = hilrig::resolve_stream_config(c, "stream args");
    rx.transport.port = 0;
    rx.transport.path.clear();
    s->src = std::make_unique<hilrig::FrameSource>(rx);
    s->rxc = std::make_unique<hilrig::RxCounters>();
    s->check = std::make_unique<hilrig::RxChecker>(*s->rxc);
  }
  streams_.push_back(s.get());
  return reinterpret_cast<SoapySDR::Stream*>(s.release());
}

void HilrigDevice::closeStream(SoapySDR::Stream* handle) {
  Stream* s = reinterpret_cast<Stream*>(handle);
  if (s->active) deactivateStream(handle, 0, 0);
  std::lock_guard<std::mutex> lock(mu_);
  streams_.erase(std::remove(streams_.begin(), streams_.end(), s), streams_.end());
  delete s;
}

size_t HilrigDevice::getStreamMTU(SoapySDR::Stream* handle) const {
  return reinterpret_cast<Stream*>(handle)->cfg().samples_per_frame();
}

int HilrigDevice::activateStream(SoapySDR::Stream* handle, const int, const long long, const size_t) {
  Stream* s = reinterpret_cast<Stream*>(handle);
  if (s->active) return 0;
  s->sim.stream.rate_sps = rate_sps_;
  s->sim.master_clock_hz = master_clock_hz_;
  try {
    // s->sim is what the stream args asked; the simulator and the sender run it resolved
    // at the rate set now.
    hilrig::SimConfig run = s->sim;
    run.stream = hilrig::resolve_stream_config(s->sim.stream, "stream args");
    json req = hilrig::to_json(run);
    if (s->direction == SOAPY_SDR_RX) req["rx_dest"] = s->src->endpoint();
    req["cmd"] = "configure";
    json answer = sim_->request(req);
    {
      std::lock_guard<std::mutex> lock(mu_);
      effective_config_ = answer.value("config", json::object());
    }
    if (s->direction == SOAPY_SDR_TX) {
      const hilrig::StreamConfig& c = run.stream;
      const hilrig::TransportSpec dest = hilrig::transport_at_endpoint(c.transport, answer.at("endpoint"), "endpoint");
      hilrig::StreamConfig towards = c;
      towards.transport = dest;
      s->sink = std::make_unique<hilrig::FrameSink>(towards);
      const std::uint64_t lead_frames = hilrig::TxPacer::lead_frames(c, hilrig::TxPacer::link_frames(c, s->sink->ring_slots()));
      s->pacer = std::make_unique<hilrig::TxPacer>(rate_sps_, lead_frames * c.samples_per_frame());
      s->tx_seq = s->tx_tick = 0;
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

int HilrigDevice::deactivateStream(SoapySDR::Stream* handle, const int, const long long) {
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

int HilrigDevice::readStream(SoapySDR::Stream* handle, void* const* buffs, const size_t numElems, int& flags, long long& timeNs,
               const long timeoutUs) {
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

int HilrigDevice::writeStream(SoapySDR::Stream* handle, const void* const* buffs, const size_t numElems, int& flags,
                const long long, const long timeoutUs) {
  Stream* s = reinterpret_cast<Stream*>(handle);
  if (s->direction != SOAPY_SDR_TX) return SOAPY_SDR_NOT_SUPPORTED;
  if (!s->active) return SOAPY_SDR_STREAM_ERROR;
  const std::uint32_t n = std::uint32_t(std::min<std::size_t>(numElems, s->cfg().samples_per_frame()));
  const bool eob = (flags & SOAPY_SDR_END_BURST) && n == numElems;
  return send_tx_frame(s, buffs, n, eob, timeoutUs);
}

int HilrigDevice::readStreamStatus(SoapySDR::Stream* handle, size_t& chanMask, int& flags, long long& timeNs,
                     const long timeoutUs) {
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

// Next valid frame into s->frame; false on timeout. Every frame goes through the
// core's RxChecker (sequence, duplicates, reordering, pattern, latency, gaps);
// malformed ones (and frames of another geometry) are counted and skipped.
bool HilrigDevice::next_frame(Stream* s, long timeoutUs) {
  const std::uint64_t deadline = hilrig::now_ns() + std::uint64_t(std::max(0L, timeoutUs)) * 1000ull;
  const hilrig::StreamConfig& c = s->cfg();
  while (true) {
    const std::uint64_t t = hilrig::now_ns();
    const hilrig::FrameView f = s->src->next(t >= deadline ? 0 : std::min<std::uint64_t>(deadline - t, 100000000ull));
    if (!f) {
      const std::uint64_t t2 = hilrig::now_ns();
      s->check->on_idle(t2, hilrig::kRecvTimeoutNs);
      if (t2 >= deadline) return false;
      continue;
    }
    hilrig::FrameHeader h;
    const bool geometry_ok = !f.malformed && f.len >= hilrig::kFrameHeaderBytes &&
                             hilrig::frame_sample_format(f.data) == std::uint8_t(c.sample_format) &&
                             hilrig::frame_channels(f.data) == c.channels;
    if (!geometry_ok) s->check->on_malformed();
    if (!geometry_ok || !s->check->on_frame(f.data, f.len, hilrig::now_ns(), &h)) {
      s->src->release();
      continue;
    }
    s->check->on_batch_done(hilrig::now_ns());  // one frame per readStream at most: rx_stats never lags
    s->frame = f.data;
    s->hdr = h;
    s->frame_ticks = h.payload_bytes / c.tick_bytes();
    s->consumed_ticks = 0;
    s->overflow_reported = false;
    return true;
  }
}

void HilrigDevice::release_frame(Stream* s) {
  s->src->release();
  s->frame = nullptr;
}

// Deinterleave (and convert) ticks [consumed, consumed+n) of the frame into buffs.
void HilrigDevice::copy_out(Stream* s, void* const* buffs, std::uint32_t n) {
  const unsigned C = s->cfg().channels;
  const std::uint8_t* payload = s->frame + hilrig::kFrameHeaderBytes;
  with_sample_types(s->cfg().sample_format, s->format, [&](auto wire, auto host) {
    using Wire = decltype(wire);
    using Host = decltype(host);
    const Wire* in = reinterpret_cast<const Wire*>(payload) + std::size_t(s->consumed_ticks) * C * 2;
    for (unsigned c = 0; c < C; ++c) hilrig::deinterleave(in, C, c, n, static_cast<Host*>(buffs[c]));
  });
}

// Frames n ticks of buffs (interleaving channels) with the core's framer and sends
// it, paced by the core's TxPacer (the lead TxStream uses) like a device's flow control.
int HilrigDevice::send_tx_frame(Stream* s, const void* const* buffs, std::uint32_t n, bool eob, long timeoutUs) {
  const hilrig::StreamConfig& c = s->cfg();
  const std::uint64_t now = hilrig::now_ns();
  if (!s->tx_in_burst) {  // a burst starts its own clock, like the simulator's consumer
    s->pacer->start(now);
    s->burst_tick = s->tx_tick;
  }
  const std::uint64_t in_burst = s->tx_tick - s->burst_tick;
  if (in_burst >= s->pacer->allowed(now)) {
    const std::uint64_t due = s->pacer->due_ns(in_burst);
    if (timeoutUs >= 0 && due - now > std::uint64_t(timeoutUs) * 1000ull) return SOAPY_SDR_TIMEOUT;
    hilrig::sleep_until_ns(due);
  }
  std::uint8_t* out = s->sink->acquire(std::uint64_t(std::max(0L, timeoutUs)) * 1000ull);
  if (out == nullptr) return SOAPY_SDR_TIMEOUT;
  if (buffs != nullptr) {
    std::uint8_t* payload = out + hilrig::kFrameHeaderBytes;
    with_sample_types(c.sample_format, s->format, [&](auto wire, auto host) {
      using Wire = decltype(wire);
      using Host = decltype(host);
      for (unsigned ch = 0; ch < c.channels; ++ch)
        hilrig::interleave(static_cast<const Host*>(buffs[ch]), c.channels, ch, n, reinterpret_cast<Wire*>(payload));
    });
  }
  const std::uint8_t flags = std::uint8_t((s->tx_in_burst ? 0 : hilrig::kFlagSOB) | (eob ? hilrig::kFlagEOB : 0));
  s->sink->commit(hilrig::write_samples_header(c, s->tx_seq, s->tx_tick, n, flags, out));
  s->sink->pacing_ready(hilrig::now_ns());  // one frame a call: spaced from its hand-over
  // The sink stamps the send time (and CRC) and retries a full socket until the timeout.
  if (s->sink->flush(hilrig::now_ns() + std::uint64_t(std::max(0L, timeoutUs)) * 1000ull) != 1) {
    if (s->sink->error() == 0) return SOAPY_SDR_TIMEOUT;
    SoapySDR::logf(SOAPY_SDR_ERROR, "hilrig: TX send failed: %s", std::strerror(s->sink->error()));
    return SOAPY_SDR_STREAM_ERROR;
  }
  ++s->tx_seq;
  s->tx_tick += n;
  s->tx_in_burst = !eob;
  return int(n);
}

}  // namespace hilrig_soapy
