// hostlib._native bindings of the real-device drivers: SoapyRadio and UhdRadio, each
// present when the build found its library (HAVE_SOAPY / HAVE_UHD). Blocking calls
// release the GIL; errors are RuntimeError with the library's text.
//
// The libraries' own logs (UHD's console logger, SoapySDR's stdio handler, and the
// SoapySDR modules they load: SoapyRemote's avahi errors on a host without the
// daemon) go to Python's logging as "hilrig.uhd" / "hilrig.soapysdr" records: silent
// unless hilrig logs (-v), then in hilrig's format. UHD_LOG_CONSOLE_LEVEL or
// UHD_LOG_FASTPATH_DISABLE set by the user are left alone.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "json_bridge.hpp"

#ifdef HILRIG_HAVE_SOAPY
#include <SoapySDR/Logger.hpp>

#include "hilrig/radio/soapy_driver.hpp"
#endif
#ifdef HILRIG_HAVE_UHD
#include <uhd/utils/log_add.hpp>

#include "hilrig/radio/uhd_driver.hpp"
#endif

namespace py = pybind11;
using nlohmann::json;

namespace {
using hilrig_py::from_json;
using hilrig_py::to_json;

// Cleared at interpreter exit: a library thread (UHD's log thread) must not enter
// Python once it is shutting down.
std::atomic<bool> g_log_to_python{false};

// One record into Python's logging (any thread: takes the GIL). Python levels.
[[maybe_unused]] void log_to_python(const char* logger, int level, const std::string& message) {
  if (!g_log_to_python.load() || !Py_IsInitialized() || _Py_IsFinalizing()) return;
  py::gil_scoped_acquire gil;
  try {
    py::module_::import("logging").attr("getLogger")(logger).attr("log")(level, message);
  } catch (py::error_already_set& e) {
    // On the main thread a pending signal's handler runs inside this call (Ctrl-C, the
    // CLI's SIGTERM): its KeyboardInterrupt cannot pass through the library's frames, so
    // it is armed again for the interpreter's next check instead of lost with the record.
    if (e.matches(PyExc_KeyboardInterrupt)) PyErr_SetInterrupt();
    else e.discard_as_unraisable("hilrig: forwarding a device library's log record");
  }
}

// Python's level numbers (logging.DEBUG ... logging.CRITICAL).
constexpr int kDebug = 10, kInfo = 20, kWarning = 30, kError = 40, kCritical = 50;

void route_library_logs() {
  // Library records are hilrig's to show: a NullHandler keeps Python's last-resort
  // handler from printing them when hilrig configured no logging.
  py::module_ logging = py::module_::import("logging");
  for (const char* name : {"hilrig.uhd", "hilrig.soapysdr"})
    logging.attr("getLogger")(name).attr("addHandler")(logging.attr("NullHandler")());
  g_log_to_python = true;
  py::module_::import("atexit").attr("register")(py::cpp_function([] { g_log_to_python = false; }));
#ifdef HILRIG_HAVE_SOAPY
  SoapySDR::registerLogHandler([](const SoapySDRLogLevel level, const char* message) {
    const int py_level = level <= SOAPY_SDR_CRITICAL ? kCritical
                         : level == SOAPY_SDR_ERROR  ? kError
                         : level == SOAPY_SDR_WARNING ? kWarning
                         : level <= SOAPY_SDR_INFO    ? kInfo
                                                      : kDebug;
    log_to_python("hilrig.soapysdr", py_level, message);
  });
#endif
#ifdef HILRIG_HAVE_UHD
  // Before UHD's logger exists (it reads these once, when it starts): no console
  // logger, no fast-path O/U/S characters on stderr (the counters count them).
  const bool console_chosen = std::getenv("UHD_LOG_CONSOLE_LEVEL") != nullptr;
  setenv("UHD_LOG_CONSOLE_LEVEL", "off", 0);
  setenv("UHD_LOG_FASTPATH_DISABLE", "1", 0);
  // UHD's log thread calls the logger below holding UHD's logger mutex and then needs the
  // GIL: a call into UHD's log API made holding the GIL could deadlock with it.
  py::gil_scoped_release nogil;
  uhd::log::add_logger("hilrig", [](const uhd::log::logging_info& r) {
    const int py_level = r.verbosity >= uhd::log::fatal     ? kCritical
                         : r.verbosity == uhd::log::error   ? kError
                         : r.verbosity == uhd::log::warning ? kWarning
                         : r.verbosity == uhd::log::info    ? kInfo
                                                            : kDebug;
    log_to_python("hilrig.uhd", py_level, "[" + r.component + "] " + r.message);
  });
  // A logger started earlier in this process (gr-uhd imported first) read no setting of ours.
  if (!console_chosen) uhd::log::set_console_level(uhd::log::off);
#endif
}

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
  route_library_logs();
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
