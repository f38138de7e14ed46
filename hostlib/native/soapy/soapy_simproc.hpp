// A child hilrig-sim process and its JSON-lines control channel, for in-process
// users that are not Python (the SoapySDR module driver=hilrig). Same protocol as
// hostlib/drivers/sim.py (docs/architecture.md "Simulator").
#pragma once
#include <sys/types.h>

#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

namespace hilrig {

// Where hilrig-sim is: explicit path, else $HILRIG_SIM_BIN, else the path compiled in
// (HILRIG_DEFAULT_SIM_BIN, the build tree), else "hilrig-sim" on PATH. Empty if none.
std::string find_sim_binary(const std::string& explicit_path);

class SimProcess {
 public:
  // Starts the simulator and says hello; throws std::runtime_error naming the binary.
  explicit SimProcess(const std::string& binary);
  ~SimProcess();  // quit, close, wait, then SIGKILL if needed: always reaped
  SimProcess(const SimProcess&) = delete;
  SimProcess& operator=(const SimProcess&) = delete;

  // One request, one answer; throws std::runtime_error on {"ok":false}, a dead
  // simulator or no answer within timeout_ms. Thread-safe. An answer that comes after
  // its request timed out (a stopped simulator, continued) is skipped, never taken as
  // the answer to a later request.
  nlohmann::json request(nlohmann::json req, int timeout_ms = 10000);
  pid_t pid() const { return pid_; }
  // Alive but a request timed out and its answer has not come yet (e.g. stopped).
  bool unanswered() {
    std::lock_guard<std::mutex> lock(mu_);
    return owed_answers_ > 0 && !reaped_;
  }
  const nlohmann::json& hello() const { return hello_; }

 private:
  std::string describe_exit();
  std::mutex mu_;
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
  std::string buf_, binary_;
  nlohmann::json hello_;
  bool reaped_ = false;
  int owed_answers_ = 0;  // requests that timed out: their answers are still to come
  int status_ = 0;
};

}  // namespace hilrig
