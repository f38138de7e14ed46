// hostlib._native bindings of the USB engine with its libusb-1.0 backend (docs/usb.md):
// UsbStream (a device's bulk stream), usb_geometry_problems and usbfs_memory_limit_bytes
// (the rig checks them before a run). Blocking calls release the GIL.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "json_bridge.hpp"
#include "hilrig/usb/usb_engine.hpp"
#include "hilrig/usb/usb_libusb.hpp"
#include "hilrig/usb/usb_model_backend.hpp"
#include "hilrig/usb/usb_sim_backend.hpp"

namespace py = pybind11;
using nlohmann::json;

namespace {
using hilrig_py::from_json;
using hilrig_py::to_json;

// The stream config with transport {"kind": "usb", <UsbLinkConfig keys>, "device": {vid_pid, serial, interface}}
// (a real board over libusb), {"kind": "usb", ..., "link", "sim": <hilrig-sim's configure endpoint>} (the
// simulator's USB link) or {"kind": "usb", ..., "link": "usb2"|"usb3"} (a device simulated in-process
// over the bus model).
struct UsbStream {
  explicit UsbStream(const json& config) {
    if (!config.contains("transport") || !config["transport"].is_object())
      throw std::invalid_argument("UsbStream config: key \"transport\" ({\"kind\": \"usb\", ...}) is missing");
    const json& t = config["transport"];
    if (t.value("kind", std::string()) != "usb")
      throw std::invalid_argument("UsbStream config: transport.kind must be \"usb\", got " + t.value("kind", std::string("nothing")));
    const hilrig::UsbLinkConfig link = hilrig::parse_usb_link(t);
    // The stream config's own usb transport (the frame geometry is the engine's to check).
    json rest = config;
    rest["transport"] = {{"kind", "usb"}, {"link", t.value("link", std::string(hilrig::defaults::kUsbLink))},
                         {"transfer_bytes", link.transfer_bytes}, {"transfers", link.transfers}};
    const hilrig::StreamConfig cfg = hilrig::parse_stream_config(rest);
    std::unique_ptr<hilrig::UsbBackend> backend;
    if (t.contains("device"))
      backend = std::make_unique<hilrig::LibusbBackend>(hilrig::parse_usb_match(t["device"]));
    else if (t.contains("sim"))  // the simulator's USB link: transfers go to hilrig-sim over the shared channel
      backend = std::make_unique<hilrig::UsbSimBackend>(hilrig::parse_usb_link_kind(t.value("link", std::string(hilrig::defaults::kUsbLink))), t["sim"]);
    else if (t.contains("link"))  // no device: the in-process device over the bus model
      backend = std::make_unique<hilrig::UsbModelBackend>(hilrig::parse_usb_link_kind(t["link"].get<std::string>()), cfg,
                                                          t.value("fifo_bytes", std::uint64_t(0)));
    else
      throw std::invalid_argument("UsbStream config: transport needs \"device\" (a real board) or \"link\": usb2|usb3 (the bus model)");
    engine = std::make_unique<hilrig::UsbEngine>(std::move(backend), cfg, link);
  }
  std::unique_ptr<hilrig::UsbEngine> engine;
};

}  // namespace

void hilrig_bind_usb(py::module_& m) {
  m.attr("HAVE_LIBUSB") = true;
  py::register_exception<hilrig::UsbDeviceAbsent>(m, "UsbDeviceAbsent", PyExc_RuntimeError);
  m.def("usbfs_memory_limit_bytes", [] { return hilrig::usbfs_memory_limit_bytes(); },
        "The kernel's usbfs buffer limit (usbfs_memory_mb; 16 MiB when the file is absent).");
  m.def(
      "usb_geometry_problems",
      [](const py::dict& transport, std::uint32_t frame_bytes, std::uint32_t max_packet_bytes, unsigned directions,
         std::uint64_t limit_bytes) {
        return hilrig::usb_geometry_problems(hilrig::parse_usb_link(to_json(transport)), frame_bytes, max_packet_bytes,
                                             directions, limit_bytes);
      },
      py::arg("transport"), py::arg("frame_bytes"), py::arg("max_packet_bytes"), py::arg("directions"),
      py::arg("limit_bytes"));
  py::class_<UsbStream>(m, "UsbStream")
      .def(py::init([](const py::dict& config) {
             json j = to_json(config);
             py::gil_scoped_release nogil;
             return std::make_unique<UsbStream>(j);
           }),
           py::arg("config"))
      .def_static("find",
                  [](const py::dict& device) {
                    json j = to_json(device);
                    json r;
                    {
                      py::gil_scoped_release nogil;
                      r = hilrig::LibusbBackend::find(hilrig::parse_usb_match(j));
                    }
                    return from_json(r);
                  },
                  py::arg("device"))
      .def("start", [](UsbStream& s) {
        py::gil_scoped_release nogil;
        s.engine->start();
      })
      .def("stop", [](UsbStream& s) {
        py::gil_scoped_release nogil;
        s.engine->stop();
      })
      .def("stats", [](UsbStream& s) { return from_json(s.engine->stats()); })
      .def("error", [](UsbStream& s) { return s.engine->error(); })
      .def("running", [](UsbStream& s) { return s.engine->running(); });
}
