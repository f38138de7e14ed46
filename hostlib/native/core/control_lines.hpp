// The JSON-lines control channel of the core's processes (hilrig-sim, hilrig-link):
// one request per line on stdin, one response line each on stdout. A request that is
// not JSON, or whose handling throws, is answered {"ok": false, "error": "<name>: ..."}
// and the process goes on; blank lines are ignored.
#pragma once
#include <exception>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

namespace hilrig {

// Serves requests until `quit` is set by handle(request, quit) or stdin ends.
// Returns true when a request asked to quit, false at stdin EOF.
template <class Handle>
bool serve_control_lines(const char* name, Handle&& handle) {
  using nlohmann::json;
  std::string line;
  bool quit = false;
  while (!quit && std::getline(std::cin, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json resp;
    try {
      resp = handle(json::parse(line), quit);
    } catch (const json::parse_error& e) {
      resp = {{"ok", false}, {"error", std::string(name) + ": request is not valid JSON: " + e.what()}};
    } catch (const std::exception& e) {
      resp = {{"ok", false}, {"error", std::string(name) + ": " + e.what()}};
    }
    std::cout << resp.dump() << '\n' << std::flush;
  }
  return quit;
}

}  // namespace hilrig
