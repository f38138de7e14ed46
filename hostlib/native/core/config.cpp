#include "hilrig/core/config.hpp"
#include "hilrig/io/shm_ring.hpp"
#include "hilrig/rf/phase_noise.hpp"
#include "hilrig/rf/tone_analyzer.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace hilrig {
namespace {
using nlohmann::json;

[[noreturn]] void bad(const std::string& where, const std::string& msg) {
  throw std::invalid_argument(where + ": " + msg);
}

const json& need(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || j[key].is_null()) bad(where + "." + key, "is missing (every key of the config is required)");
  return j[key];
}
double get_number(const json& j, const char* key, const std::string& where) {
  const json& v = need(j, key, where);
  if (!v.is_number()) bad(where + "." + key, "must be a number, got " + v.dump());
  return v.get<double>();
}
std::string get_string(const json& j, const char* key, const std::string& where) {
  const json& v = need(j, key, where);
  if (!v.is_string()) bad(where + "." + key, "must be a string, got " + v.dump());
  return v.get<std::string>();
}
bool get_bool(const json& j, const char* key, const std::string& where) {
  const json& v = need(j, key, where);
  if (!v.is_boolean()) bad(where + "." + key, "must be true or false, got " + v.dump());
  return v.get<bool>();
}
std::uint64_t get_uint(const json& j, const char* key, std::uint64_t lo, std::uint64_t hi, const std::string& where) {
  const json& v = need(j, key, where);
  const bool whole = v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0) ||
                     (v.is_number_float() && v.get<double>() == std::floor(v.get<double>()) && v.get<double>() >= 0 &&
                      v.get<double>() < 1.8e19);
  const std::uint64_t u = !whole ? 0 : v.is_number_float() ? std::uint64_t(v.get<double>()) : v.get<std::uint64_t>();
  if (!whole || u < lo || u > hi)
    bad(where + "." + key, "must be a whole number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + v.dump());
  return u;
}
// Sizing by rate (config.hpp, defaults::kSocketBufferSeconds and kRingSeconds).
std::uint32_t socket_buffer_for_rate(const StreamConfig& c) {
  const double frames_per_s = c.rate_sps / double(c.samples_per_frame());
  const double want = frames_per_s * double(c.frame_bytes) * defaults::kSocketBufferSeconds;
  return want >= double(defaults::kSocketBufferMaxBytes) ? defaults::kSocketBufferMaxBytes : std::uint32_t(want);
}
std::uint32_t ring_slots_for_rate(const StreamConfig& c) {
  const double frames_per_s = c.rate_sps / double(c.samples_per_frame());
  const std::uint64_t slot_bytes = ShmRing::slot_stride_for(c.frame_bytes) + sizeof(std::uint32_t);  // stride + length
  const std::uint64_t cap = std::min<std::uint64_t>(std::max<std::uint64_t>(defaults::kRingMaxBytes / slot_bytes, 2),
                                                    defaults::kRingSlotsAccepted);
  return std::uint32_t(std::min(std::ceil(frames_per_s * defaults::kRingSeconds), double(cap)));
}
}  // namespace

const char* direction_name(Direction d) {
  switch (d) {
    case Direction::rx: return "rx";
    case Direction::tx: return "tx";
    case Direction::rx_tx: return "rx+tx";
    default: return "loopback";
  }
}
const char* transport_kind_name(TransportKind k) {
  return k == TransportKind::udp ? "udp" : k == TransportKind::shm ? "shm" : k == TransportKind::tcp ? "tcp" : "usb";
}
TransportKind parse_transport_kind(const std::string& s, const std::string& where) {
  if (s == "udp") return TransportKind::udp;
  if (s == "shm") return TransportKind::shm;
  if (s == "usb") return TransportKind::usb;
  if (s == "tcp") return TransportKind::tcp;
  bad(where, "must be \"udp\", \"tcp\", \"shm\" or \"usb\", got \"" + s + "\"");
}

StreamConfig default_stream_config(TransportKind kind, std::uint32_t frame_bytes) {
  StreamConfig c;
  c.frame_bytes = frame_bytes;
  c.transport.kind = kind;
  c.transport.slots = defaults::ring_slots(frame_bytes);
  return c;
}

SimConfig default_sim_config(TransportKind kind, std::uint32_t frame_bytes) {
  SimConfig s;
  s.stream = default_stream_config(kind, frame_bytes);
  s.fifo_frames = defaults::fifo_frames(frame_bytes);
  return s;
}

// ---------------------------------------------------------------- to_json

json to_json(const TransportSpec& t) {
  if (t.kind == TransportKind::udp)
    return {{"kind", "udp"}, {"host", t.host}, {"port", t.port}, {"socket_buffer_bytes", t.socket_buffer_bytes},
            {"gso", t.gso}, {"gro", t.gro}, {"busy_poll", t.busy_poll}, {"pacing", to_json(t.pacing)}};
  if (t.kind == TransportKind::tcp)
    return {{"kind", "tcp"}, {"host", t.host}, {"port", t.port}, {"socket_buffer_bytes", t.socket_buffer_bytes},
            {"write_bytes", t.write_bytes}, {"congestion", t.congestion}, {"nodelay", t.nodelay}};
  if (t.kind == TransportKind::usb)
    return {{"kind", "usb"}, {"link", t.link}, {"transfer_bytes", t.transfer_bytes}, {"transfers", t.transfers}};
  return {{"kind", "shm"}, {"path", t.path}, {"slots", t.slots}, {"publish", ring_publish_name(t.publish)}};
}

json to_json(const PacingSpec& p) {
  return {{"gap_ns", p.gap_ns}, {"period_ns", p.period_ns}, {"rate_bps", p.rate_bps}};
}

json to_json(const rf::SignalSpec& s) {
  json tones = json::array();
  for (const rf::ToneSpec& t : s.tones)
    tones.push_back({{"frequency_hz", t.frequency_hz}, {"amplitude", t.amplitude}, {"phase_rad", t.phase_rad}});
  const rf::Channel& c = s.channel;
  json modulation = nullptr;
  if (const auto& m = s.modulation)
    modulation = {{"scheme", rf::scheme_name(m->scheme)},
                  {"samples_per_symbol", m->samples_per_symbol},
                  {"rolloff", m->rolloff},
                  {"amplitude", m->amplitude},
                  {"payload_seed", m->payload_seed}};
  return {{"tones", tones},
          {"modulation", modulation},
          {"channel",
           {{"gain_db", c.gain_db},
            {"snr_db", c.snr_db ? json(*c.snr_db) : json(nullptr)},
            {"cfo_hz", c.cfo_hz},
            {"iq_gain_db", c.iq_gain_db},
            {"iq_phase_deg", c.iq_phase_deg},
            {"dc_i", c.dc_offset.real()},
            {"dc_q", c.dc_offset.imag()},
            {"c3", c.c3},
            {"sco_ppm", c.sco_ppm},
            {"delay_samples", c.delay_samples},
            {"phase_noise_hz", c.phase_noise_hz},
            {"seed", c.seed}}},
          {"capture_samples", s.capture_samples}};
}

rf::SignalSpec signal_from_json(const json& j, double rate_sps, const std::string& where) {
  if (!j.is_object()) bad(where, "must be an object");
  auto finite = [&](const json& o, const char* key, const std::string& at, double lo, double hi) {
    const double v = get_number(o, key, at);
    if (!std::isfinite(v) || v < lo || v > hi)
      bad(at + "." + key, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + o[key].dump());
    return v;
  };
  rf::SignalSpec s;
  if (!j.contains("modulation")) bad(where + ".modulation", "is missing (null: the signal is the tones)");
  if (const json& m = j["modulation"]; !m.is_null()) {
    const std::string mw = where + ".modulation";
    if (!m.is_object()) bad(mw, "must be an object or null");
    rf::ModulationSpec spec;
    const std::string name = get_string(m, "scheme", mw);
    const auto scheme = rf::scheme_from_name(name);
    if (!scheme) bad(mw + ".scheme", "must be \"qpsk\", \"16qam\" or \"64qam\", got \"" + name + "\"");
    spec.scheme = *scheme;
    spec.samples_per_symbol =
        unsigned(get_uint(m, "samples_per_symbol", rf::kMinSamplesPerSymbol, rf::kMaxSamplesPerSymbol, mw));
    spec.rolloff = finite(m, "rolloff", mw, 0.01, 1);
    spec.amplitude = finite(m, "amplitude", mw, 0, 1);
    spec.payload_seed = get_uint(m, "payload_seed", 0, ~std::uint64_t(0), mw);
    s.modulation = spec;
  }
  const json& tones = need(j, "tones", where);
  const std::size_t min_tones = s.modulation ? 0 : 1, max_tones = s.modulation ? 0 : 64;
  if (!tones.is_array() || tones.size() < min_tones || tones.size() > max_tones)
    bad(where + ".tones", s.modulation ? "must be empty with a modulation" : "must be a list of 1 to 64 tones");
  for (std::size_t k = 0; k < tones.size(); ++k) {
    const std::string at = where + ".tones[" + std::to_string(k) + "]";
    if (!tones[k].is_object()) bad(at, "must be an object");
    const double nyquist = rate_sps / 2;
    rf::ToneSpec t;
    t.frequency_hz = finite(tones[k], "frequency_hz", at, -nyquist, nyquist);
    t.amplitude = finite(tones[k], "amplitude", at, 0, 1);
    t.phase_rad = finite(tones[k], "phase_rad", at, -1e3, 1e3);
    s.tones.push_back(t);
  }
  const std::string cw = where + ".channel";
  const json& c = need(j, "channel", where);
  if (!c.is_object()) bad(cw, "must be an object");
  s.channel.gain_db = finite(c, "gain_db", cw, -200, 60);
  if (!c.contains("snr_db")) bad(cw + ".snr_db", "is missing (null: no noise)");
  if (!c["snr_db"].is_null()) s.channel.snr_db = finite(c, "snr_db", cw, -50, 300);
  s.channel.cfo_hz = finite(c, "cfo_hz", cw, -rate_sps / 2, rate_sps / 2);
  s.channel.iq_gain_db = finite(c, "iq_gain_db", cw, -20, 20);
  s.channel.iq_phase_deg = finite(c, "iq_phase_deg", cw, -45, 45);
  s.channel.dc_offset = {finite(c, "dc_i", cw, -1, 1), finite(c, "dc_q", cw, -1, 1)};
  s.channel.c3 = finite(c, "c3", cw, -10, 10);
  // Older configs carry no timing or phase noise: absent is 0.
  if (c.contains("sco_ppm")) s.channel.sco_ppm = finite(c, "sco_ppm", cw, -1000, 1000);
  if (c.contains("delay_samples")) s.channel.delay_samples = finite(c, "delay_samples", cw, -1000, 1000);
  if (c.contains("phase_noise_hz")) s.channel.phase_noise_hz = finite(c, "phase_noise_hz", cw, 0, rate_sps * rf::kMaxLinewidthOfRate);
  s.channel.seed = get_uint(c, "seed", 0, ~std::uint64_t(0), cw);
  const std::uint64_t min_capture = s.modulation ? rf::min_modem_samples(*s.modulation) : rf::kMinToneSamples;
  s.capture_samples = std::uint32_t(get_uint(j, "capture_samples", min_capture, kMaxCaptureSamples, where));
  return s;
}

json to_json(const StreamConfig& c) {
  return {{"direction", direction_name(c.direction)},
          {"channels", c.channels},
          {"sample_format", sample_format_name(c.sample_format)},
          {"rate_sps", c.rate_sps},
          {"frame_bytes", c.frame_bytes},
          {"transport", to_json(c.transport)},
          {"pattern", c.pattern},
          {"signal", c.pattern == "signal" ? to_json(c.signal) : json(nullptr)},
          {"stream_id", c.stream_id},
          {"crc", c.crc},
          {"tx_lead_frames", c.tx_lead_frames}};
}

json to_json(const FaultSpec& f) {
  return {{"seed", f.seed},
          {"drop_frames", f.drop_frames},
          {"corrupt_samples", f.corrupt_samples},
          {"duplicate_frames", f.duplicate_frames},
          {"reorder_frames", f.reorder_frames},
          {"stall_ms", f.stall_ms},
          {"window_frames", f.window_frames},
          {"die_after_ms", f.die_after_ms}};
}

json to_json(const SimConfig& c) {
  json j = to_json(c.stream);
  j["master_clock_hz"] = c.master_clock_hz;
  j["fifo_frames"] = c.fifo_frames;
  j["faults"] = to_json(c.faults);
  return j;
}

// ---------------------------------------------------------------- from_json

static RingPublish publish_from_json(const json& t, const std::string& where) {
  const std::string name = get_string(t, "publish", where);
  try {
    return parse_ring_publish(name);
  } catch (const std::invalid_argument&) {
    std::string known;
    for (RingPublish p : kRingPublishAll) known += std::string(known.empty() ? "\"" : ", \"") + ring_publish_name(p) + "\"";
    bad(where + ".publish", "must be one of " + known + ", got \"" + name + "\"");
  }
}

PacingSpec pacing_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) bad(where, "must be an object like {\"gap_ns\": 4000, \"period_ns\": 0, \"rate_bps\": 0}");
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "gap_ns" && it.key() != "period_ns" && it.key() != "rate_bps")
      bad(where + "." + it.key(), "is not a pacing key (gap_ns, period_ns, rate_bps)");
  PacingSpec p;
  p.gap_ns = get_uint(j, "gap_ns", 0, kPacingMaxNs, where);
  p.period_ns = get_uint(j, "period_ns", 0, kPacingMaxNs, where);
  p.rate_bps = get_uint(j, "rate_bps", 0, kPacingMaxBps, where);
  if ((p.gap_ns != 0) + (p.period_ns != 0) + (p.rate_bps != 0) > 1)
    bad(where, "gives more than one of gap_ns, period_ns, rate_bps; pace by one of them");
  return p;
}

TransportSpec transport_from_json(const json& t, const std::string& where) {
  if (!t.is_object()) bad(where, "must be an object like {\"kind\": \"udp\", ...}");
  TransportSpec s;
  s.kind = parse_transport_kind(get_string(t, "kind", where), where + ".kind");
  if (s.kind == TransportKind::udp) {
    s.host = get_string(t, "host", where);
    s.port = std::uint16_t(get_uint(t, "port", 0, 65535, where));
    s.socket_buffer_bytes = std::uint32_t(get_uint(t, "socket_buffer_bytes", 0, 1u << 30, where));
    s.gso = get_bool(t, "gso", where);
    s.gro = get_bool(t, "gro", where);
    s.busy_poll = get_bool(t, "busy_poll", where);
    s.pacing = pacing_from_json(need(t, "pacing", where), where + ".pacing");
  } else if (s.kind == TransportKind::tcp) {
    s.host = get_string(t, "host", where);
    s.port = std::uint16_t(get_uint(t, "port", 0, 65535, where));
    s.socket_buffer_bytes = std::uint32_t(get_uint(t, "socket_buffer_bytes", 0, 1u << 30, where));
    s.write_bytes = std::uint32_t(get_uint(t, "write_bytes", 0, 1u << 30, where));
    s.congestion = get_string(t, "congestion", where);
    // TCP_CONGESTION takes a name of at most TCP_CA_NAME_MAX - 1 (15) characters.
    if (s.congestion.size() > 15 ||
        s.congestion.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
      bad(where + ".congestion", "must be a congestion control name like \"cubic\" or \"bbr\" (empty: the kernel's default), got \"" +
                                     s.congestion + "\"");
    s.nodelay = get_bool(t, "nodelay", where);
  } else if (s.kind == TransportKind::usb) {
    s.link = get_string(t, "link", where);
    if (s.link != "usb2" && s.link != "usb3") bad(where + ".link", "must be \"usb2\" or \"usb3\", got \"" + s.link + "\"");
    s.transfer_bytes = std::uint32_t(get_uint(t, "transfer_bytes", 512, 64u << 20, where));
    s.transfers = std::uint32_t(get_uint(t, "transfers", 1, 4096, where));
  } else {
    s.path = get_string(t, "path", where);
    s.slots = std::uint32_t(get_uint(t, "slots", 2, defaults::kRingSlotsAccepted, where));
    s.publish = publish_from_json(t, where);
  }
  return s;
}

TransportSpec transport_at_endpoint(const TransportSpec& base, const json& ep, const std::string& where) {
  if (!ep.is_object()) bad(where, "must be an endpoint object like {\"kind\": \"udp\", \"host\": .., \"port\": ..}");
  TransportSpec s = base;
  if (parse_transport_kind(get_string(ep, "kind", where), where + ".kind") != base.kind)
    bad(where + ".kind", std::string("must match the stream's transport kind \"") + transport_kind_name(base.kind) + "\"");
  if (s.kind == TransportKind::udp || s.kind == TransportKind::tcp) {
    s.host = get_string(ep, "host", where);
    s.port = std::uint16_t(get_uint(ep, "port", 0, 65535, where));
  } else if (s.kind == TransportKind::usb) {
    // The USB link's endpoint is the shared channel (UsbSimBackend reads it); the spec keeps its keys.
  } else {
    s.path = get_string(ep, "path", where);
    if (ep.contains("slots")) s.slots = std::uint32_t(get_uint(ep, "slots", 2, defaults::kRingSlotsAccepted, where));
    if (ep.contains("publish")) s.publish = publish_from_json(ep, where);
  }
  return s;
}

StreamConfig stream_config_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) bad(where, "must be an object");
  StreamConfig c;
  const std::string dir = get_string(j, "direction", where);
  if (dir == "rx") c.direction = Direction::rx;
  else if (dir == "tx") c.direction = Direction::tx;
  else if (dir == "loopback") c.direction = Direction::loopback;
  else if (dir == "rx+tx") c.direction = Direction::rx_tx;
  else bad(where + ".direction", "must be rx, tx, loopback or rx+tx, got \"" + dir + "\"");
  c.channels = unsigned(get_uint(j, "channels", 1, 255, where));
  try {
    c.sample_format = parse_sample_format(get_string(j, "sample_format", where));
  } catch (const std::invalid_argument& e) {
    bad(where + ".sample_format", e.what());
  }
  c.rate_sps = get_number(j, "rate_sps", where);
  if (!(c.rate_sps > 0) || !std::isfinite(c.rate_sps)) bad(where + ".rate_sps", "must be > 0");
  c.frame_bytes = std::uint32_t(get_uint(j, "frame_bytes", kFrameHeaderBytes + 1, 1u << 24, where));
  if (c.samples_per_frame() == 0)
    bad(where + ".frame_bytes", "too small: " + std::to_string(c.frame_bytes) + " leaves no room for one sample of " +
                                    std::to_string(c.channels) + " channel(s) after the 48-byte header");
  c.transport = transport_from_json(need(j, "transport", where), where + ".transport");
  if (c.transport.kind == TransportKind::udp && c.frame_bytes > defaults::kUdpMaxFrameBytes)
    bad(where + ".frame_bytes", "must be <= " + std::to_string(defaults::kUdpMaxFrameBytes) +
                                    " for udp (one datagram per frame), got " + std::to_string(c.frame_bytes));
  c.pattern = get_string(j, "pattern", where);
  if (c.pattern != "counter" && c.pattern != "signal")
    bad(where + ".pattern", "must be \"counter\" or \"signal\", got \"" + c.pattern + "\"");
  if (!j.contains("signal")) bad(where + ".signal", "is missing (null: no RF signal, pattern counter)");
  if (c.pattern == "signal") {
    if (j["signal"].is_null()) bad(where + ".signal", "pattern \"signal\" needs the signal (tones, channel, capture_samples)");
    if (c.direction != Direction::rx)
      bad(where + ".pattern", "\"signal\" is generated by the device: direction rx only, got " + dir);
    c.signal = signal_from_json(j["signal"], c.rate_sps, where + ".signal");
  } else if (!j["signal"].is_null()) {
    bad(where + ".signal", "must be null with pattern \"counter\" (a signal is carried by pattern \"signal\")");
  }
  c.stream_id = std::uint16_t(get_uint(j, "stream_id", 0, 65535, where));
  c.crc = get_bool(j, "crc", where);
  c.tx_lead_frames = std::uint32_t(get_uint(j, "tx_lead_frames", 0, 1u << 16, where));
  return c;
}

namespace {
// Sizes by rate. The socket buffer is a floor (a request the kernel caps anyway); a ring
// of given slots is the case's: a ring far beyond the last-level cache sends every frame
// through DRAM, which at GS/s rates is the limit, so a case may choose a small one.
StreamConfig size_by_rate(StreamConfig c, bool grow_slots) {
  TransportSpec& t = c.transport;
  if (t.kind == TransportKind::udp || t.kind == TransportKind::tcp)
    t.socket_buffer_bytes = std::max(t.socket_buffer_bytes, socket_buffer_for_rate(c));
  if (t.kind == TransportKind::udp && t.pacing.any()) t.gso = false;  // pacing sends one datagram per call
  if (grow_slots && t.kind == TransportKind::shm) t.slots = std::max(t.slots, ring_slots_for_rate(c));
  return c;
}
}  // namespace

StreamConfig resolve_stream_config(const StreamConfig& complete, const std::string& where) {
  return size_by_rate(stream_config_from_json(to_json(complete), where), true);
}

StreamConfig resolve_stream_config(const json& partial, const std::string& where) {
  if (!partial.is_object()) bad(where, "must be an object");
  // The transport kind and frame size pick the defaults (ring slots follow the frame size).
  TransportKind kind = TransportKind::udp;
  if (partial.contains("transport")) {
    const json& t = partial["transport"];
    if (!t.is_object()) bad(where + ".transport", "must be an object like {\"kind\": \"udp\", ...}");
    if (t.contains("kind")) kind = parse_transport_kind(get_string(t, "kind", where + ".transport"), where + ".transport.kind");
  }
  std::uint32_t frame_bytes = defaults::kFrameBytes;
  if (partial.contains("frame_bytes"))
    frame_bytes = std::uint32_t(get_uint(partial, "frame_bytes", kFrameHeaderBytes + 1, 1u << 24, where));
  json j = to_json(default_stream_config(kind, frame_bytes));
  for (auto it = partial.begin(); it != partial.end(); ++it) {
    if (it.key() == "transport") j["transport"].update(it.value());
    else j[it.key()] = it.value();
  }
  const bool slots_given = partial.contains("transport") && partial["transport"].contains("slots");
  return size_by_rate(stream_config_from_json(j, where), !slots_given);
}

FaultSpec faults_from_json(const json& f, const std::string& where) {
  if (!f.is_object()) bad(where, "must be an object");
  for (auto it = f.begin(); it != f.end(); ++it)
    if (std::none_of(std::begin(kFaultKeys), std::end(kFaultKeys), [&](const char* k) { return it.key() == k; })) {
      std::string allowed;
      for (const char* k : kFaultKeys) allowed += std::string(allowed.empty() ? "" : ", ") + k;
      bad(where + "." + it.key(), "unknown fault (allowed: " + allowed + ")");
    }
  FaultSpec s;
  s.seed = get_uint(f, "seed", 0, ~std::uint64_t(0), where);
  for (auto [key, field] : {std::pair{"drop_frames", &s.drop_frames}, std::pair{"corrupt_samples", &s.corrupt_samples},
                            std::pair{"duplicate_frames", &s.duplicate_frames},
                            std::pair{"reorder_frames", &s.reorder_frames}})
    *field = get_uint(f, key, 0, 1000000, where);
  s.stall_ms = get_uint(f, "stall_ms", 0, 60000, where);
  s.window_frames = get_uint(f, "window_frames", 0, std::uint64_t(1) << 48, where);
  s.die_after_ms = get_uint(f, "die_after_ms", 0, 3'600'000, where);
  return s;
}

SimConfig sim_config_from_json(const json& j, const std::string& where) {
  SimConfig c;
  c.stream = stream_config_from_json(j, where);
  c.master_clock_hz = get_number(j, "master_clock_hz", where);
  if (!(c.master_clock_hz > 0) || !std::isfinite(c.master_clock_hz)) bad(where + ".master_clock_hz", "must be > 0");
  c.fifo_frames = std::uint32_t(get_uint(j, "fifo_frames", 1, defaults::kFifoMaxFrames, where));
  c.faults = faults_from_json(need(j, "faults", where), where + ".faults");
  return c;
}

// ---------------------------------------------------------------- SoapySDR stream args

static std::vector<std::string> ring_publish_names() {
  std::vector<std::string> names;
  for (RingPublish p : kRingPublishAll) names.emplace_back(ring_publish_name(p));
  return names;
}

const std::vector<StreamArg>& stream_args() {
  static const std::vector<StreamArg> table = {
      {"WIRE", "/sample_format", StreamArg::kString, "sample format between simulator and host", {"sc16", "sc8"}},
      {"transport", "/transport/kind", StreamArg::kString, "link between simulator and host", {"udp", "tcp", "shm"}},
      {"frame_bytes", "/frame_bytes", StreamArg::kInt, "whole frame incl. 48-byte header (the MTU follows)", {}},
      {"host", "/transport/host", StreamArg::kString, "udp, tcp: address the host receiver binds", {}},
      {"socket_buffer_bytes", "/transport/socket_buffer_bytes", StreamArg::kInt,
       "udp, tcp: SO_RCVBUF/SO_SNDBUF request (grown to 50 ms of the rate)", {}},
      {"write_bytes", "/transport/write_bytes", StreamArg::kInt, "tcp send: bytes per send() call (0: one batch)", {}},
      {"congestion", "/transport/congestion", StreamArg::kString, "tcp send: TCP_CONGESTION (empty: the kernel's default)", {}},
      {"nodelay", "/transport/nodelay", StreamArg::kBool, "tcp send: TCP_NODELAY", {}},
      {"gso", "/transport/gso", StreamArg::kBool, "udp: UDP_SEGMENT send batches", {}},
      {"gro", "/transport/gro", StreamArg::kBool, "udp: UDP_GRO coalesced receives", {}},
      {"busy_poll", "/transport/busy_poll", StreamArg::kBool, "udp: spin on the socket", {}},
      {"pacing_gap_ns", "/transport/pacing/gap_ns", StreamArg::kInt, "udp send: idle ns after each datagram (0: unpaced)", {}},
      {"pacing_period_ns", "/transport/pacing/period_ns", StreamArg::kInt, "udp send: ns from datagram to datagram (0: unpaced)", {}},
      {"pacing_rate_bps", "/transport/pacing/rate_bps", StreamArg::kInt, "udp send: datagram bits per second (0: unpaced)", {}},
      {"slots", "/transport/slots", StreamArg::kInt, "shm: ring slots (default: 8 MiB worth of frames)", {}},
      {"publish", "/transport/publish", StreamArg::kString, "shm: the ring's publish strategy", ring_publish_names()},
      {"fifo_frames", "/fifo_frames", StreamArg::kInt, "simulator device FIFO in frames (default: 128 MiB worth)", {}},
      {"fault_seed", "/faults/seed", StreamArg::kInt, "seed of the injected faults", {}},
      {"drop_frames", "/faults/drop_frames", StreamArg::kInt, "fault injection: frames dropped", {}},
      {"corrupt_samples", "/faults/corrupt_samples", StreamArg::kInt, "fault injection: samples corrupted", {}},
      {"duplicate_frames", "/faults/duplicate_frames", StreamArg::kInt, "fault injection: frames duplicated", {}},
      {"reorder_frames", "/faults/reorder_frames", StreamArg::kInt, "fault injection: frames swapped with the next", {}},
      {"stall_ms", "/faults/stall_ms", StreamArg::kInt, "fault injection (TX): the device stops consuming once", {}},
      {"fault_window_frames", "/faults/window_frames", StreamArg::kInt,
       "faults are placed on frames [16, this); 0 = compact placement", {}},
      {"die_after_ms", "/faults/die_after_ms", StreamArg::kInt,
       "fault injection: the simulator process kills itself this long after start (device gone); 0 = never", {}},
  };
  return table;
}

SimConfig sim_config_from_args(const std::map<std::string, std::string>& args, Direction direction, unsigned channels,
                               double rate_sps, double master_clock_hz) {
  auto find = [&](const char* key) -> const StreamArg& {
    for (const StreamArg& a : stream_args())
      if (std::string(a.key) == key) return a;
    throw std::logic_error(key);
  };
  // The defaults for this transport and frame size, then each arg at its place.
  TransportKind kind = TransportKind::udp;
  std::uint32_t frame_bytes = defaults::kFrameBytes;
  json j;
  auto value_of = [&](const StreamArg& a, const std::string& text) -> json {
    const std::string where = std::string("stream arg ") + a.key + "=" + text;
    if (a.type == StreamArg::kString) {
      if (!a.options.empty() && std::find(a.options.begin(), a.options.end(), text) == a.options.end())
        bad(where, "not one of the allowed values");
      return text;
    }
    if (a.type == StreamArg::kBool) {
      if (text == "true" || text == "1") return true;
      if (text == "false" || text == "0") return false;
      bad(where, "must be true/false/1/0");
    }
    try {
      std::size_t pos = 0;
      const long long v = std::stoll(text, &pos);
      if (pos != text.size() || v < 0) throw std::invalid_argument("not a whole number");
      return std::uint64_t(v);
    } catch (const std::exception&) {
      bad(where, "must be a whole number >= 0");
    }
  };
  if (auto it = args.find("transport"); it != args.end())
    kind = parse_transport_kind(value_of(find("transport"), it->second).get<std::string>(), "stream arg transport");
  if (kind == TransportKind::usb) bad("stream arg transport=usb", "driver=hilrig streams over udp or shm");
  if (auto it = args.find("frame_bytes"); it != args.end())
    frame_bytes = std::uint32_t(std::min<std::uint64_t>(value_of(find("frame_bytes"), it->second).get<std::uint64_t>(), 1u << 25));
  SimConfig d = default_sim_config(kind, frame_bytes);
  d.stream.direction = direction;
  d.stream.channels = channels;
  d.stream.rate_sps = rate_sps;
  d.master_clock_hz = master_clock_hz;
  j = to_json(d);
  for (const auto& [key, text] : args) {
    const StreamArg* arg = nullptr;
    for (const StreamArg& a : stream_args())
      if (key == a.key) arg = &a;
    if (!arg) {
      std::string allowed;
      for (const StreamArg& a : stream_args()) allowed += std::string(allowed.empty() ? "" : ", ") + a.key;
      bad("stream arg " + key, "unknown to driver=hilrig (allowed: " + allowed + ")");
    }
    const json::json_pointer ptr(arg->pointer);
    if (!j.contains(ptr))
      bad("stream arg " + key, std::string("does not apply to transport=") + transport_kind_name(kind));
    j[ptr] = value_of(*arg, text);
  }
  return sim_config_from_json(j, "stream args");
}

}  // namespace hilrig
