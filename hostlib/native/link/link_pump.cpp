#include "hilrig/link/link_pump.hpp"

#include <poll.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "hilrig/core/clock.hpp"

namespace hilrig {

namespace {
constexpr std::uint64_t kIdleWaitNs = 100'000'000;  // the longest sleep: stop() is seen within this
constexpr unsigned kReadBatch = 16;                  // reads per round before due packets are looked at again (~25 us)
constexpr std::size_t kMaxPacket = 65536;
constexpr std::size_t kSpareBuffers = 4096;          // kept for reuse at most
}  // namespace

LinkPump::LinkPump(int fd_in, int fd_out, const LinkSpec& spec) : in_(fd_in), out_(fd_out), model_(spec) {}

void LinkPump::start() {
  if (thread_.joinable()) return;
  stop_.store(false);
  thread_ = std::thread([this] { run(); });
}

void LinkPump::stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

nlohmann::json LinkPump::stats() const {
  nlohmann::json j = to_json(model_.stats(), model_.spec());
  j["in_flight"] = counter_get(in_flight_);
  j["write_errors"] = counter_get(write_errors_);
  j["wakeups"] = counter_get(wakeups_);
  std::lock_guard<std::mutex> lock(error_mutex_);
  j["error"] = error_;
  j["scheduling"] = scheduling_;
  j["wake_gap_ns"] = kWakeGapNs;
  j["read_wait_ns"] = histogram_json(read_wait_ns_);
  return j;
}

// Timer slack 1 ns (a thread's default of 50 us would make every wake-up that late) and
// the lowest real-time priority when the process may have it: woken on time, never
// preempted by the streams it delivers to. The kernel's RT throttling bounds it.
std::string LinkPump::claim_timing() {
  use_fine_timer_slack();
  sched_param p{};
  p.sched_priority = sched_get_priority_min(SCHED_FIFO);
  return pthread_setschedparam(pthread_self(), SCHED_FIFO, &p) == 0 ? "fifo" : "other";
}

void LinkPump::run() {
  {
    const std::string how = claim_timing();
    std::lock_guard<std::mutex> lock(error_mutex_);
    scheduling_ = how;
  }
  std::vector<unsigned char> buf(kMaxPacket);
  std::vector<std::vector<unsigned char>> spare;   // buffers of packets written, reused: no malloc per packet
  LinkModel::Packet pkt;
  std::uint64_t drained_at = 0;   // when the input was last seen empty; 0: woken by input, or its wait recorded
  try {
    std::uint64_t woke = 0;
    while (!stop_.load(std::memory_order_relaxed)) {
      const std::uint64_t woke_before = std::exchange(woke, now_ns());
      bool worked = false;   // wrote or read a packet this round
      while (model_.pop_due(now_ns(), pkt)) {   // each packet's lateness as written
        worked = true;
        // A TUN write hands the packet to the peer namespace's stack; it does not block.
        if (::write(out_, pkt.data.data(), pkt.size) != ssize_t(pkt.size)) counter_add(write_errors_);
        if (spare.size() < kSpareBuffers) spare.push_back(std::move(pkt.data));
      }
      unsigned got = 0;
      for (; got < kReadBatch; ++got) {
        const ssize_t n = ::read(in_, buf.data(), buf.size());
        if (n < 0) {
          if (errno == EAGAIN || errno == EINTR) break;
          throw std::runtime_error(std::string("read from the link's input: ") + std::strerror(errno));
        }
        if (n == 0) break;
        std::vector<unsigned char> data;
        if (!spare.empty()) {
          data = std::move(spare.back());
          spare.pop_back();
        }
        data.assign(buf.begin(), buf.begin() + n);
        const std::uint64_t t = now_ns();
        if (got == 0 && drained_at) read_wait_ns_.record(t - std::exchange(drained_at, 0));
        model_.offer(t, std::move(data), std::uint32_t(n));
      }
      worked = worked || got;
      in_flight_.store(model_.in_flight(), std::memory_order_relaxed);
      if (got == kReadBatch) continue;
      const std::uint64_t now = now_ns();
      drained_at = now;
      const std::uint64_t due = model_.next_due();
      if (due <= now) continue;
      // Rounds with work less than two gaps apart mean load: space them by the gap. An
      // idle link's packet (its round the first in a while) is read and written on time.
      const std::uint64_t listen = woke + kWakeGapNs;
      counter_add(wakeups_);   // the sleep below ends in one
      if (worked && now < listen && woke - woke_before < 2 * kWakeGapNs) {
        sleep_until_ns(listen);   // what falls due or arrives meanwhile waits for this wake-up
        continue;
      }
      const std::uint64_t wait = std::min(due - now, kIdleWaitNs);
      timespec ts{time_t(wait / 1'000'000'000ull), long(wait % 1'000'000'000ull)};
      pollfd p{in_, POLLIN, 0};
      const int r = ::ppoll(&p, 1, &ts, nullptr);
      if (r < 0 && errno != EINTR)
        throw std::runtime_error(std::string("poll on the link's input: ") + std::strerror(errno));
      // Woken by the input itself: its packet waited only the wake-up. Timed out: the
      // input was empty until now.
      drained_at = r > 0 ? 0 : now_ns();
    }
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(error_mutex_);
    error_ = e.what();
  }
}

}  // namespace hilrig
