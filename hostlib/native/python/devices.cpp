// hostlib._native bindings of the real-device drivers (issue 5): SoapyRadio and
// UhdRadio, each present when the build found its library (HAVE_SOAPY / HAVE_UHD).
// Blocking calls release the GIL; errors are RuntimeError with the library's text.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#ifdef HILRIG_HAVE_SOAPY
#include "hilrig/soapy_driver.hpp"
#endif
#ifdef HILRIG_HAVE_UHD
#include "hilrig/uhd_driver.hpp"
#endif

namespace py = pybind11;
using nlohmann::json;

namespace {
[[maybe_unused]] json dev_to_json(const py::object& o) {
  return json::parse(py::cast<std::string>(py::module_::import("json").attr("dumps")(o)));
}
[[maybe_unused]] py::object dev_from_json(const json& j) { return py::module_::import("json").attr("loads")(j.dump()); }
}  // namespace

void hilrig_bind_devices(py::module_& m) {
#ifdef HILRIG_HAVE_SOAPY
  m.attr("HAVE_SOAPY") = true;
  m.attr("SOAPY_MODULE_DIR") = HILRIG_SOAPY_MODULE_DIR;  // where libhilrigSupport.so is built
  py::class_<hilrig::SoapyRadio>(m, "SoapyRadio")
      .def(py::init([](const std::string& args) {
             py::gil_scoped_release nogil;
             return std::make_unique<hilrig::SoapyRadio>(args);
           }),
           py::arg("args"))
      .def_static("enumerate", [](const std::string& args) {
        json r;
        {
          py::gil_scoped_release nogil;
          r = hilrig::SoapyRadio::enumerate(args);
        }
        return dev_from_json(r);
      }, py::arg("args") = "")
      .def("configure", [](hilrig::SoapyRadio& r, const py::dict& cfg) {
        json j = dev_to_json(cfg), out;
        {
          py::gil_scoped_release nogil;
          out = r.configure(j);
        }
        return dev_from_json(out);
      })
      .def("start", &hilrig::SoapyRadio::start, py::call_guard<py::gil_scoped_release>())
      .def("stop", &hilrig::SoapyRadio::stop, py::call_guard<py::gil_scoped_release>())
      .def("stats", [](const hilrig::SoapyRadio& r) {
        json out;
        {
          py::gil_scoped_release nogil;
          out = r.stats();
        }
        return dev_from_json(out);
      })
      .def("info", [](const hilrig::SoapyRadio& r) { return dev_from_json(r.info()); });
#else
  m.attr("HAVE_SOAPY") = false;
#endif
#ifdef HILRIG_HAVE_UHD
  m.attr("HAVE_UHD") = true;
  py::class_<hilrig::UhdRadio>(m, "UhdRadio")
      .def(py::init([](const std::string& args) {
             py::gil_scoped_release nogil;
             return std::make_unique<hilrig::UhdRadio>(args);
           }),
           py::arg("args"))
      .def_static("find", [](const std::string& args) {
        json r;
        {
          py::gil_scoped_release nogil;
          r = hilrig::UhdRadio::find(args);
        }
        return dev_from_json(r);
      }, py::arg("args") = "")
      .def("configure", [](hilrig::UhdRadio& r, const py::dict& cfg) {
        json j = dev_to_json(cfg), out;
        {
          py::gil_scoped_release nogil;
          out = r.configure(j);
        }
        return dev_from_json(out);
      })
      .def("start", &hilrig::UhdRadio::start, py::call_guard<py::gil_scoped_release>())
      .def("stop", &hilrig::UhdRadio::stop, py::call_guard<py::gil_scoped_release>())
      .def("stats", [](const hilrig::UhdRadio& r) { return dev_from_json(r.stats()); })
      .def("info", [](const hilrig::UhdRadio& r) { return dev_from_json(r.info()); });
#else
  m.attr("HAVE_UHD") = false;
#endif
}
