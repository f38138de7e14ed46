// hilrig-sim: a simulated SDR device in its own process, controlled by JSON lines on
// stdin/stdout (one request line -> one response line). It exits when stdin closes
// and, via PR_SET_PDEATHSIG, when its parent dies, so it never outlives the rig.
// --firmware rtl: the device core is the RTL of firmware/rtl/loopback_top (a Verilator
// model, hilrig/rtl/rtl_core.hpp) instead of the C++ one; `hello` names the image it runs.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <chrono>

#include <nlohmann/json.hpp>

#include "hilrig/core/control_lines.hpp"
#include "hilrig/sim/sim_device.hpp"

#ifndef HILRIG_VERSION
#define HILRIG_VERSION "0.1.0"
#endif

using nlohmann::json;

static json handle(hilrig::SimDevice& dev, const json& req, bool& quit) {
  if (!req.is_object() || !req.contains("cmd") || !req["cmd"].is_string())
    return {{"ok", false}, {"error", "request must be a JSON object with a string \"cmd\""}};
  const std::string cmd = req["cmd"];
  if (cmd == "hello") {
    json hello = {{"ok", true}, {"name", "hilrig-sim"}, {"version", HILRIG_VERSION}, {"pid", getpid()}};
    hello.update(dev.firmware_json());
    return hello;
  }
  if (cmd == "configure") {
    json endpoint = dev.configure(req);
    return {{"ok", true}, {"endpoint", endpoint}, {"config", dev.config_json()}, {"fault_plan", dev.fault_plan_json()}};
  }
  if (cmd == "start") {
    dev.start();
    // faults.die_after_ms: the device is gone mid-run, the way a process dies (SIGKILL:
    // no stop, no EOB, its links and locks vanish with it).
    const json cfg = dev.config_json();
    const std::uint64_t die_ms = cfg.is_object() ? cfg["faults"].value("die_after_ms", std::uint64_t(0)) : 0;
    if (die_ms)
      std::thread([die_ms] {
        std::this_thread::sleep_for(std::chrono::milliseconds(die_ms));
        raise(SIGKILL);
      }).detach();
    return {{"ok", true}};
  }
  if (cmd == "stats") return {{"ok", true}, {"stats", dev.stats()}};
  if (cmd == "stop") return {{"ok", true}, {"stats", dev.stop()}};
  if (cmd == "quit") {
    dev.stop();
    quit = true;
    return {{"ok", true}};
  }
  return {{"ok", false}, {"error", "unknown cmd \"" + cmd + "\" (allowed: hello, configure, start, stats, stop, quit)"}};
}

int main(int argc, char** argv) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) return 1;  // the parent died before prctl took effect
  signal(SIGPIPE, SIG_IGN);
  std::ios::sync_with_stdio(false);
  hilrig::SimDevice dev;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const std::string firmware = arg == "--firmware" && i + 1 < argc ? argv[++i]
                                 : arg.rfind("--firmware=", 0) == 0 ? arg.substr(11) : std::string("?");
    if (firmware == "model") continue;
    if (firmware == "rtl") {
      auto core = hilrig::make_loopback_rtl();
      if (!core) {
        std::cerr << "hilrig-sim: --firmware rtl: this build has no RTL model (configured with -DHILRIG_RTL=OFF)\n";
        return 2;
      }
      dev.use_rtl(std::move(core));
      continue;
    }
    std::cerr << "hilrig-sim: unknown argument \"" << arg << "\" (usage: hilrig-sim [--firmware model|rtl])\n";
    return 2;
  }
  hilrig::serve_control_lines("hilrig-sim", [&dev](const json& request, bool& quit) { return handle(dev, request, quit); });
  dev.stop();  // stdin EOF: stop streaming (RX sends EOB) and exit
  return 0;
}
