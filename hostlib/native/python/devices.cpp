// hostlib._native bindings of the real-device drivers (issue 5): SoapyRadio and
// UhdRadio, each present when the build found its library (HAVE_SOAPY / HAVE_UHD).
// Blocking calls release the GIL; errors are RuntimeError with the library's text.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "json_bridge.hpp"

#ifdef HILRIG_HAVE_SOAPY
#include "hilrig/radio/soapy_driver.hpp"
#endif
#ifdef HILRIG_HAVE_UHD
#include "hilrig/radio/uhd_driver.hpp"
#endif

namespace py = pybind11;
using nlohmann::json;

namespace {
using hilrig_py::from_json;
using hilrig_py::to_json;

// One binding for both radios (same interface): `lister` is the class's static
// device search (SoapyRadio.enumerate / UhdRadio.find). Blocking calls release the GIL.
template <typename Radio, typename Lister>
[[maybe_unused]] void bind_radio(py::module_& m, const char* name, const char* lister_name, Lister lister) {
  py::class_<Radio>(m, name)
      .def(py::init([](const std::string& args) {
             py::gil_scoped_release nogil;
             return std::make_unique<Radio>(args);
           }),
           py::arg("args"))
      .def_static(lister_name, [lister](const std::string& args) {
        json r;
        {
          py::gil_scoped_release nogil;
          r = lister(args);
        }
        return from_json(r);
      }, py::arg("args") = "")
      .def("configure", [](Radio& r, const py::dict& cfg) {
        json j = to_json(cfg), out;
        {
          py::gil_scoped_release nogil;
          out = r.configure(j);
        }
        return from_json(out);
      })
      .def("start", &Radio::start, py::call_guard<py::gil_scoped_release>())
      .def("stop", &Radio::stop, py::call_guard<py::gil_scoped_release>())
      .def("stats", [](const Radio& r) {
        json out;
        {
          py::gil_scoped_release nogil;
          out = r.stats();
        }
        return from_json(out);
      })
      .def("info", [](const Radio& r) { return from_json(r.info()); });
}
}  // namespace

void hilrig_bind_devices(py::module_& m) {
#ifdef HILRIG_HAVE_SOAPY
  m.attr("HAVE_SOAPY") = true;
  m.attr("SOAPY_MODULE_DIR") = HILRIG_SOAPY_MODULE_DIR;  // where libhilrigSupport.so is built
  bind_radio<hilrig::SoapyRadio>(m, "SoapyRadio", "enumerate",
                                 [](const std::string& args) { return hilrig::SoapyRadio::enumerate(args); });
#else
  m.attr("HAVE_SOAPY") = false;
#endif
#ifdef HILRIG_HAVE_UHD
  m.attr("HAVE_UHD") = true;
  bind_radio<hilrig::UhdRadio>(m, "UhdRadio", "find",
                               [](const std::string& args) { return hilrig::UhdRadio::find(args); });
#else
  m.attr("HAVE_UHD") = false;
#endif
}
