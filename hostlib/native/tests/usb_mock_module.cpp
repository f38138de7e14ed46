// _usb_mock: the umockdev board of usb_mock_device.hpp for Python tests, so the usb
// driver runs end to end (rig -> engine -> libusb -> usbfs ioctls) without hardware.
// Import it only in a process started with LD_PRELOAD=libumockdev-preload.so.0.
#include <pybind11/pybind11.h>

#include <map>
#include <memory>
#include <string>

#include "usb_mock_device.hpp"

namespace py = pybind11;
using hilrig_test::BulkDevice;

PYBIND11_MODULE(_usb_mock, m) {
  py::class_<BulkDevice>(m, "BulkDevice")
      .def(py::init([] {
        // Asked only once a testbed exists: umockdev answers (and caches) from what the
        // preloaded library does with a testbed's /sys.
        auto d = std::make_unique<BulkDevice>();
        if (!umockdev_in_mock_environment())
          throw std::runtime_error("_usb_mock needs LD_PRELOAD=libumockdev-preload.so.0");
        return d;
      }))
      .def("arm",
           [](BulkDevice& d, const std::string& fault, unsigned at_in_transfer) {
             static const std::map<std::string, BulkDevice::Fault> kinds = {
                 {"stall", BulkDevice::Fault::stall}, {"no_device", BulkDevice::Fault::no_device},
                 {"overflow", BulkDevice::Fault::overflow}, {"short_transfer", BulkDevice::Fault::short_transfer}};
             d.arm(kinds.at(fault), at_in_transfer);
           })
      .def("in_transfers", &BulkDevice::in_transfers)
      .def("out_frames", [](BulkDevice& d) { return d.out_counters.frames_received.load(); })
      .def("out_pattern_errors", [](BulkDevice& d) { return d.out_counters.pattern_errors.load(); })
      .def("out_seq_errors", [](BulkDevice& d) { return d.out_counters.seq_errors.load(); });
}
