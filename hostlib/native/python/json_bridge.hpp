// Python objects <-> JSON through Python's json module, shared by every binding file:
// the native core parses one JSON config format for the host, the simulator and the
// radio drivers.
#pragma once
#include <pybind11/pybind11.h>

#include <string>

#include <nlohmann/json.hpp>

namespace hilrig_py {

inline nlohmann::json to_json(const pybind11::object& o) {
  auto dumps = pybind11::module_::import("json").attr("dumps");
  return nlohmann::json::parse(pybind11::cast<std::string>(dumps(o)));
}

inline pybind11::object from_json(const nlohmann::json& j) {
  auto loads = pybind11::module_::import("json").attr("loads");
  return loads(j.dump());
}

}  // namespace hilrig_py
