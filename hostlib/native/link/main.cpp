// hilrig-link: the user-space link emulator between two network namespaces, controlled
// by JSON lines on stdin/stdout like hilrig-sim (one request line -> one response line):
//   hello
//   configure {"a": {"netns", "dev"}, "b": {"netns", "dev"}, "up": <LinkSpec>, "down": <LinkSpec>}
//       creates TUN device a.dev in namespace a.netns and b.dev in b.netns; up carries
//       a -> b, down b -> a (keys: link_model.hpp); answers the effective config
//   start   one thread per direction
//   stats   {"stats": {"up": {...}, "down": {...}, "running_s"}}
//   stop    stops both directions, answers the final stats
//   quit
// At stdin EOF it stops and writes the final stats as one last line ("final": true).
// It dies with its parent (PR_SET_PDEATHSIG), and its TUN devices with it.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <iostream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "hilrig/core/clock.hpp"
#include "hilrig/core/control_lines.hpp"
#include "hilrig/link/link_pump.hpp"
#include "hilrig/link/tun.hpp"

#ifndef HILRIG_VERSION
#define HILRIG_VERSION "0.1.0"
#endif

using nlohmann::json;

namespace {

struct Link {
  int fd_a = -1, fd_b = -1;
  std::unique_ptr<hilrig::LinkPump> up, down;
  json config;
  std::uint64_t started_ns = 0;

  ~Link() { close_all(); }
  void close_all() {
    up.reset();
    down.reset();
    if (fd_a >= 0) ::close(fd_a);
    if (fd_b >= 0) ::close(fd_b);
    fd_a = fd_b = -1;
  }
  json stats() const {
    json s = json::object();
    if (up) s["up"] = up->stats();
    if (down) s["down"] = down->stats();
    s["running_s"] = started_ns ? double(hilrig::now_ns() - started_ns) / 1e9 : 0.0;
    return s;
  }
  void stop() {
    if (up) up->stop();
    if (down) down->stop();
  }
};

std::string side_str(const json& req, const char* side, const char* key) {
  if (!req.contains(side) || !req[side].is_object() || !req[side].contains(key) || !req[side][key].is_string())
    throw std::invalid_argument(std::string("configure.") + side + "." + key + ": must be a string");
  return req[side][key];
}

json handle(Link& link, const json& req, bool& quit) {
  if (!req.is_object() || !req.contains("cmd") || !req["cmd"].is_string())
    return {{"ok", false}, {"error", "request must be a JSON object with a string \"cmd\""}};
  const std::string cmd = req["cmd"];
  if (cmd == "hello") return {{"ok", true}, {"name", "hilrig-link"}, {"version", HILRIG_VERSION}, {"pid", getpid()}};
  if (cmd == "configure") {
    if (link.up) throw std::invalid_argument("configure: already configured (one link per process)");
    const hilrig::LinkSpec up = hilrig::link_spec_from_json(req.value("up", json::object()), "configure.up");
    const hilrig::LinkSpec down = hilrig::link_spec_from_json(req.value("down", json::object()), "configure.down");
    link.fd_a = hilrig::open_tun(side_str(req, "a", "netns"), side_str(req, "a", "dev"));
    link.fd_b = hilrig::open_tun(side_str(req, "b", "netns"), side_str(req, "b", "dev"));
    link.up = std::make_unique<hilrig::LinkPump>(link.fd_a, link.fd_b, up);
    link.down = std::make_unique<hilrig::LinkPump>(link.fd_b, link.fd_a, down);
    link.config = {{"up", hilrig::to_json(up)}, {"down", hilrig::to_json(down)}};
    return {{"ok", true}, {"config", link.config}};
  }
  if (cmd == "start") {
    if (!link.up) throw std::invalid_argument("start: configure first");
    link.started_ns = hilrig::now_ns();
    link.up->start();
    link.down->start();
    return {{"ok", true}};
  }
  if (cmd == "stats") return {{"ok", true}, {"stats", link.stats()}};
  if (cmd == "stop") {
    link.stop();
    return {{"ok", true}, {"stats", link.stats()}};
  }
  if (cmd == "quit") {
    link.stop();
    quit = true;
    return {{"ok", true}, {"stats", link.stats()}};
  }
  return {{"ok", false}, {"error", "unknown cmd \"" + cmd + "\" (allowed: hello, configure, start, stats, stop, quit)"}};
}

}  // namespace

int main(int argc, char**) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) return 1;  // the parent died before prctl took effect
  signal(SIGPIPE, SIG_IGN);
  if (argc > 1) {
    std::cerr << "hilrig-link: takes no arguments (JSON lines on stdin: hello, configure, start, stats, stop, quit)\n";
    return 2;
  }
  std::ios::sync_with_stdio(false);
  Link link;
  const bool quit = hilrig::serve_control_lines(
      "hilrig-link", [&link](const json& request, bool& stop) { return handle(link, request, stop); });
  if (!quit) {
    link.stop();
    std::cout << json{{"ok", true}, {"final", true}, {"stats", link.stats()}}.dump() << '\n' << std::flush;
  }
  return 0;
}
