#include "hilrig/soapy/soapy_simproc.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "hilrig/core/clock.hpp"

extern char** environ;

namespace hilrig {

static bool executable(const std::string& p) { return !p.empty() && access(p.c_str(), X_OK) == 0; }

std::string find_sim_binary(const std::string& explicit_path) {
  if (!explicit_path.empty()) return executable(explicit_path) ? explicit_path : std::string();
  if (const char* env = std::getenv("HILRIG_SIM_BIN"); env && *env) return executable(env) ? env : std::string();
#ifdef HILRIG_DEFAULT_SIM_BIN
  if (executable(HILRIG_DEFAULT_SIM_BIN)) return HILRIG_DEFAULT_SIM_BIN;
#endif
  if (const char* path = std::getenv("PATH")) {
    std::string all = path;
    std::size_t start = 0;
    while (start <= all.size()) {
      std::size_t end = all.find(':', start);
      if (end == std::string::npos) end = all.size();
      std::string cand = all.substr(start, end - start) + "/hilrig-sim";
      if (end > start && executable(cand)) return cand;
      start = end + 1;
    }
  }
  return {};
}

SimProcess::SimProcess(const std::string& binary) : binary_(binary) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("hilrig: pipe for the simulator: ") + std::strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  // Its own process group: a Ctrl-C meant for the host program must reach the host,
  // which then stops the stream and quits the simulator in order (it still dies with
  // its parent through PR_SET_PDEATHSIG).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  char* argv[] = {const_cast<char*>(binary_.c_str()), nullptr};
  int rc = posix_spawn(&pid_, binary_.c_str(), &fa, &attr, argv, environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  ::close(in[0]);
  ::close(out[1]);
  to_child_ = in[1];
  from_child_ = out[0];
  if (rc != 0) {
    ::close(to_child_);
    ::close(from_child_);
    pid_ = -1;
    throw std::runtime_error("hilrig: cannot start simulator " + binary_ + ": " + std::strerror(rc));
  }
  signal(SIGPIPE, SIG_IGN);  // a dead simulator must give an error, not kill the host
  hello_ = request({{"cmd", "hello"}}, 5000);
}

std::string SimProcess::describe_exit() {
  if (!reaped_ && pid_ > 0) {
    if (waitpid(pid_, &status_, WNOHANG) == pid_) reaped_ = true;
  }
  std::string who = "simulator " + binary_ + " (pid " + std::to_string(pid_) + ")";
  if (!reaped_) return who + " stopped answering";
  if (WIFSIGNALED(status_)) return who + " was killed by signal " + std::to_string(WTERMSIG(status_));
  return who + " exited with status " + std::to_string(WEXITSTATUS(status_));
}

nlohmann::json SimProcess::request(nlohmann::json req, int timeout_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string cmd = req.value("cmd", "?");
  std::string line = req.dump() + "\n";
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(to_child_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(describe_exit() + " (while sending \"" + cmd + "\")");
    p += n;
    left -= std::size_t(n);
  }
  // A simulator that left a request unanswered (stopped) gets 1 s per further request,
  // not the full timeout each: the stop and close after a silence stay bounded.
  if (owed_answers_ > 0) timeout_ms = std::min(timeout_ms, 1000);
  const std::uint64_t deadline = now_ns() + std::uint64_t(timeout_ms) * 1000000ull;
  std::size_t nl;
  for (;;) {
    nl = buf_.find('\n');
    if (nl != std::string::npos && owed_answers_ > 0) {  // a late answer to a timed-out request
      buf_.erase(0, nl + 1);
      --owed_answers_;
      continue;
    }
    if (nl != std::string::npos) break;
    std::uint64_t t = now_ns();
    if (t >= deadline) {
      ++owed_answers_;
      throw std::runtime_error("simulator " + binary_ + " did not answer \"" + cmd + "\" within " +
                               std::to_string(timeout_ms) + " ms");
    }
    pollfd pfd{from_child_, POLLIN, 0};
    int r = ::poll(&pfd, 1, int((deadline - t) / 1000000ull) + 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char chunk[65536];
    ssize_t n = ::read(from_child_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      waitpid(pid_, &status_, 0);
      reaped_ = true;
      throw std::runtime_error(describe_exit() + " (waiting for \"" + cmd + "\")");
    }
    buf_.append(chunk, std::size_t(n));
  }
  std::string answer_line = buf_.substr(0, nl);
  buf_.erase(0, nl + 1);
  nlohmann::json answer = nlohmann::json::parse(answer_line, nullptr, false);
  if (answer.is_discarded())
    throw std::runtime_error("simulator answered \"" + cmd + "\" with garbage: " + answer_line.substr(0, 200));
  if (!answer.value("ok", false))
    throw std::runtime_error("simulator refused \"" + cmd + "\": " + answer.value("error", answer.dump()));
  return answer;
}

SimProcess::~SimProcess() {
  if (pid_ <= 0) return;
  if (!reaped_) {
    kill(pid_, SIGCONT);  // a stopped simulator could not hear "quit"
    static const char quit[] = "{\"cmd\":\"quit\"}\n";
    ssize_t ignored = ::write(to_child_, quit, sizeof quit - 1);
    (void)ignored;
  }
  ::close(to_child_);
  // Up to 2 s for a polite exit, then SIGKILL; the process is always reaped.
  for (int i = 0; i < 200 && !reaped_; ++i) {
    if (waitpid(pid_, &status_, WNOHANG) == pid_) reaped_ = true;
    else sleep_for_ns(10000000ull);
  }
  if (!reaped_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, &status_, 0);
  }
  ::close(from_child_);
}

}  // namespace hilrig
