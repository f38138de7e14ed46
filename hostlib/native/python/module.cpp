// hostlib._native: the Python face of hilrig_core. Every per-sample loop runs in C++;
// blocking calls release the GIL.
#include <pybind11/complex.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <stdexcept>

#include "json_bridge.hpp"
#include "hilrig/core/config.hpp"
#include "hilrig/core/crc32c.hpp"
#include "hilrig/core/fault_plan.hpp"
#include "hilrig/core/frame.hpp"
#include "hilrig/core/pattern.hpp"
#include "hilrig/core/rx_check.hpp"
#include "hilrig/io/shm_ring.hpp"
#include "hilrig/io/streams.hpp"

namespace py = pybind11;

void hilrig_bind_devices(py::module_& m);  // python/devices.cpp (UHD, SoapySDR)
void hilrig_bind_usb(py::module_& m);      // python/usb.cpp (USB engine, libusb backend)
void hilrig_bind_rf(py::module_& m);       // python/rf.cpp (tone analyzer, channel model)
using nlohmann::json;

namespace {

using hilrig_py::from_json;
using hilrig_py::to_json;

// A complete stream config, its sizes as given (hostlib.transports resolved it once);
// TxStream's also has "dest", the simulator's endpoint, applied to its transport.
hilrig::StreamConfig config_from(const py::dict& d, bool tx) {
  json j = to_json(d);
  std::string where = tx ? "TxStream config" : "RxStream config";
  if (tx && !j.contains("dest")) throw std::invalid_argument(where + ": key \"dest\" (the simulator's endpoint) is missing");
  json dest = tx ? j["dest"] : json();
  if (tx) j.erase("dest");
  hilrig::StreamConfig c = hilrig::stream_config_from_json(j, where);
  if (tx) c.transport = hilrig::transport_at_endpoint(c.transport, dest, where + ".dest");
  return c;
}

hilrig::TransportKind kind_of(const std::string& s) { return hilrig::parse_transport_kind(s, "kind"); }

std::uint8_t get_u8(const py::dict& h, const char* k, std::uint64_t dflt, std::uint64_t max) {
  if (!h.contains(k)) return std::uint8_t(dflt);
  auto v = py::cast<std::uint64_t>(h[k]);
  if (v > max) throw std::invalid_argument(std::string("header.") + k + " out of range");
  return std::uint8_t(v);
}
std::uint64_t get_u(const py::dict& h, const char* k, std::uint64_t dflt, std::uint64_t max) {
  if (!h.contains(k)) return dflt;
  auto v = py::cast<std::uint64_t>(h[k]);
  if (v > max) throw std::invalid_argument(std::string("header.") + k + " out of range");
  return v;
}

hilrig::SampleFormat fmt_of(const std::string& s) { return hilrig::parse_sample_format(s); }

std::string_view view(const py::buffer& b, py::buffer_info& info) {
  info = b.request();
  return {static_cast<const char*>(info.ptr), std::size_t(info.size * info.itemsize)};
}

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "hilrig native core: frames, pattern, transports, streams";
  m.attr("FRAME_HEADER_BYTES") = py::int_(hilrig::kFrameHeaderBytes);

  // The stream config's defaults, defined once in hilrig/core/config.hpp.
  m.def("stream_defaults", [] {
    namespace d = hilrig::defaults;
    json keys = json::array();
    for (const char* k : hilrig::kFaultKeys) keys.push_back(k);
    json publish_names = json::array();
    for (hilrig::RingPublish p : hilrig::kRingPublishAll) publish_names.push_back(hilrig::ring_publish_name(p));
    return from_json({{"frame_bytes", d::kFrameBytes}, {"udp_max_frame_bytes", d::kUdpMaxFrameBytes},
                      {"socket_buffer_bytes", d::kSocketBufferBytes}, {"ring_bytes", d::kRingBytes},
                      {"ring_min_slots", d::kRingMinSlots}, {"ring_max_slots", d::kRingMaxSlots},
                      {"fifo_bytes", d::kFifoBytes}, {"fifo_min_frames", d::kFifoMinFrames},
                      {"rate_sps", d::kRateSps}, {"master_clock_hz", d::kMasterClockHz}, {"host", d::kHost},
                      {"usb_link", d::kUsbLink}, {"usb_transfer_bytes", d::kUsbTransferBytes},
                      {"usb_transfers", d::kUsbTransfers}, {"fault_keys", keys},
                      {"ring_publish", hilrig::ring_publish_name(d::kRingPublish)}, {"ring_publish_names", publish_names},
                      {"block_frames", hilrig::RxCounters::kBlockFrames}});
  }, "Every default of the stream config (docs/architecture.md \"Stream config\").");
  m.def("default_stream_config", [](const std::string& kind, std::uint32_t frame_bytes) {
    return from_json(hilrig::to_json(hilrig::default_stream_config(kind_of(kind), frame_bytes)));
  }, py::arg("kind") = "udp", py::arg("frame_bytes") = hilrig::defaults::kFrameBytes,
     "A complete stream config with every default for this transport and frame size.");
  m.def("default_sim_config", [](const std::string& kind, std::uint32_t frame_bytes) {
    return from_json(hilrig::to_json(hilrig::default_sim_config(kind_of(kind), frame_bytes)));
  }, py::arg("kind") = "udp", py::arg("frame_bytes") = hilrig::defaults::kFrameBytes,
     "default_stream_config plus the simulator's master_clock_hz, fifo_frames and faults.");
  m.def("resolve_stream_config", [](const py::dict& partial) {
    return from_json(hilrig::to_json(hilrig::resolve_stream_config(to_json(partial))));
  }, py::arg("partial"),
     "The effective stream config of a partial one: the defaults for its transport and frame size, "
     "checked, udp socket_buffer_bytes and shm slots grown to the rate (docs/architecture.md \"Stream config\"); "
     "ValueError naming a bad key. RxStream/TxStream and the simulator use a config's sizes as given.");
  m.def("check_stream_config", [](const py::dict& d) {
    return from_json(hilrig::to_json(hilrig::stream_config_from_json(to_json(d))));
  }, py::arg("config"), "The config as the core reads it (to_json(from_json(config))); ValueError naming a bad key.");
  m.def("check_sim_config", [](const py::dict& d) {
    return from_json(hilrig::to_json(hilrig::sim_config_from_json(to_json(d))));
  }, py::arg("config"), "check_stream_config for the simulator's configure.");
  m.def("fault_capacity", [](const py::dict& sim_config) {
    const hilrig::SimConfig c = hilrig::sim_config_from_json(to_json(sim_config));
    const auto cap = hilrig::FaultPlan::capacity(c.faults, c.stream);
    return from_json({{"slots_needed", cap.slots_needed}, {"slots_available", cap.slots_available},
                      {"corrupt_samples_per_frame", cap.corrupt_samples_per_frame}, {"last_seq", cap.last_seq},
                      {"fits", cap.fits()}});
  }, py::arg("sim_config"),
     "How many faulty frames the config's faults need and its faults.window_frames holds (docs/architecture.md).");
  m.def("fault_fit", [](const py::dict& faults, std::uint32_t samples_per_frame, std::uint64_t frames_in_run) {
    const auto fit = hilrig::FaultPlan::fit_run(hilrig::faults_from_json(to_json(faults)), samples_per_frame, frames_in_run);
    return from_json({{"faulted_frames", fit.faulted_frames}, {"frames_in_run", fit.frames_in_run},
                      {"placeable_max", fit.placeable_max}, {"frames_needed", fit.frames_needed},
                      {"fits", fit.fits()}});
  }, py::arg("faults"), py::arg("samples_per_frame"), py::arg("frames_in_run"),
     "Whether a run of frames_in_run frames holds every fault placed compactly (FaultPlan::fit_run): "
     "validation's rule, so a case never comes out silently short.");

  m.def(
      "encode_frame",
      [](const py::dict& h, const py::bytes& payload) {
        hilrig::FrameHeader fh;
        fh.magic = std::uint16_t(get_u(h, "magic", hilrig::kFrameMagic, 0xFFFF));
        fh.version = get_u8(h, "version", hilrig::kFrameVersion, 0xFF);
        fh.flags = get_u8(h, "flags", 0, 0xFF);
        fh.stream_id = std::uint16_t(get_u(h, "stream_id", 0, 0xFFFF));
        fh.sample_format = get_u8(h, "sample_format", 1, 0xFF);
        fh.channels = get_u8(h, "channels", 1, 0xFF);
        fh.seq = get_u(h, "seq", 0, ~0ull);
        fh.sample_tick = get_u(h, "sample_tick", 0, ~0ull);
        fh.send_time_ns = get_u(h, "send_time_ns", 0, ~0ull);
        fh.reserved = get_u(h, "reserved", 0, ~0ull);
        std::string p = payload;
        auto out = hilrig::encode_frame(fh, reinterpret_cast<const std::uint8_t*>(p.data()), p.size());
        return py::bytes(reinterpret_cast<const char*>(out.data()), out.size());
      },
      py::arg("header"), py::arg("payload"),
      "Frame bytes for a header dict (field names of docs/frame-format.md) and payload; payload_bytes and "
      "crc32c (when flags has CRC_VALID) are computed.");

  m.def(
      "decode_frame",
      [](const py::buffer& frame) {
        py::buffer_info info;
        auto v = view(frame, info);
        hilrig::FrameHeader h;
        if (const char* err = hilrig::validate_frame(reinterpret_cast<const std::uint8_t*>(v.data()), v.size(), h))
          throw py::value_error(std::string("decode_frame: ") + err);
        py::dict d;
        d["magic"] = h.magic;
        d["version"] = h.version;
        d["flags"] = h.flags;
        d["stream_id"] = h.stream_id;
        d["sample_format"] = h.sample_format;
        d["channels"] = h.channels;
        d["payload_bytes"] = h.payload_bytes;
        d["crc32c"] = h.crc32c;
        d["seq"] = h.seq;
        d["sample_tick"] = h.sample_tick;
        d["send_time_ns"] = h.send_time_ns;
        d["reserved"] = h.reserved;
        return py::make_tuple(d, py::bytes(v.data() + hilrig::kFrameHeaderBytes, h.payload_bytes));
      },
      py::arg("frame"), "(header dict, payload bytes); ValueError naming the broken field when malformed.");

  m.def(
      "crc32c",
      [](const py::buffer& data) {
        py::buffer_info info;
        auto v = view(data, info);
        return hilrig::crc32c(v.data(), v.size());
      },
      py::arg("data"));

  m.def(
      "pattern_fill",
      [](std::uint64_t first_word, std::size_t n_words, const std::string& fmt) {
        auto f = fmt_of(fmt);
        std::string out(n_words * hilrig::bytes_per_sample(f), '\0');
        hilrig::pattern_fill(first_word, out.data(), n_words, f);
        return py::bytes(out);
      },
      py::arg("first_word"), py::arg("n_words"), py::arg("sample_format") = "sc16");

  m.def(
      "pattern_check",
      [](std::uint64_t first_word, const py::buffer& payload, const std::string& fmt) {
        auto f = fmt_of(fmt);
        py::buffer_info info;
        auto v = view(payload, info);
        if (v.size() % hilrig::bytes_per_sample(f))
          throw py::value_error("pattern_check: payload length " + std::to_string(v.size()) + " is not a multiple of the " +
                                fmt + " word size");
        py::gil_scoped_release nogil;
        return hilrig::pattern_check(first_word, v.data(), v.size() / hilrig::bytes_per_sample(f), f);
      },
      py::arg("first_word"), py::arg("payload"), py::arg("sample_format") = "sc16",
      "Number of words that differ from the counter pattern starting at first_word.");

  // A ring mapping held from Python (its path goes to another process); close() lets
  // it go before the garbage collector would.
  struct PyShmRing {
    std::shared_ptr<hilrig::ShmRing> ring;
    const hilrig::ShmRing& get() const {
      if (!ring) throw py::value_error("ShmRing is closed");
      return *ring;
    }
  };
  py::class_<PyShmRing>(m, "ShmRing")
      .def_static(
          "create", [](std::uint32_t slot_count, std::uint32_t slot_bytes) { return PyShmRing{hilrig::ShmRing::create(slot_count, slot_bytes)}; },
          py::arg("slot_count"), py::arg("slot_bytes"))
      .def_property_readonly("path", [](const PyShmRing& r) { return r.get().path(); })
      .def_property_readonly("slot_count", [](const PyShmRing& r) { return r.get().slot_count(); })
      .def_property_readonly("slot_bytes", [](const PyShmRing& r) { return r.get().slot_bytes(); })
      .def("close", [](PyShmRing& r) { r.ring.reset(); })
      .def("__enter__", [](PyShmRing& r) -> PyShmRing& { return r; }, py::return_value_policy::reference)
      .def("__exit__", [](PyShmRing& r, py::args) { r.ring.reset(); });

  py::class_<hilrig::RxStream>(m, "RxStream")
      .def(py::init([](const py::dict& config) { return std::make_unique<hilrig::RxStream>(config_from(config, false)); }),
           py::arg("config"))
      .def("endpoint", [](const hilrig::RxStream& s) { return from_json(s.endpoint()); })
      .def("start", &hilrig::RxStream::start, py::call_guard<py::gil_scoped_release>())
      .def("stop", &hilrig::RxStream::stop, py::call_guard<py::gil_scoped_release>())
      .def("stats", [](const hilrig::RxStream& s) { return from_json(s.stats()); })
      .def(
          "arm_capture",
          [](hilrig::RxStream& s) {
            if (!s.capture()) throw std::invalid_argument("arm_capture: the stream's pattern is not \"signal\"");
            s.capture()->arm();
          },
          "pattern \"signal\": keep signal.capture_samples samples of channel 0 from the next frame on.")
      .def(
          "capture",
          [](hilrig::RxStream& s) -> py::object {
            const hilrig::rf::SampleCapture* c = s.capture();
            if (!c || !c->complete()) return py::none();
            auto x = c->samples();
            py::array_t<std::complex<double>> out(py::ssize_t(x.size()));
            std::copy(x.begin(), x.end(), out.mutable_data());
            py::dict d;
            d["start_tick"] = c->start_tick();
            d["restarts"] = c->restarts();
            d["samples"] = out;
            return d;
          },
          "The complete capture {start_tick, restarts, samples (complex128, full scale 1.0)}, or None "
          "(not armed, not yet complete, or the counter pattern).")
      .def_property_readonly("running", &hilrig::RxStream::running);

  py::class_<hilrig::TxStream>(m, "TxStream")
      .def(py::init([](const py::dict& config) { return std::make_unique<hilrig::TxStream>(config_from(config, true)); }),
           py::arg("config"))
      .def("start", &hilrig::TxStream::start, py::call_guard<py::gil_scoped_release>())
      .def("stop", &hilrig::TxStream::stop, py::call_guard<py::gil_scoped_release>())
      .def("stats", [](const hilrig::TxStream& s) { return from_json(s.stats()); });

  hilrig_bind_devices(m);
  hilrig_bind_usb(m);
  hilrig_bind_rf(m);
}
