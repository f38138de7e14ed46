#include "hilrig/link/link_pump.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "hilrig/core/clock.hpp"
#include "hilrig/core/tx_pacer.hpp"

namespace hilrig {

namespace {
constexpr std::uint64_t kIdleWaitNs = 100'000'000;  // the longest sleep: stop() is seen within this
constexpr unsigned kReadBatch = 64;                  // reads per round before due packets are looked at again
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
  std::lock_guard<std::mutex> lock(error_mutex_);
  j["error"] = error_;
  return j;
}

void LinkPump::run() {
  std::vector<unsigned char> buf(kMaxPacket);
  std::vector<std::vector<unsigned char>> spare;   // buffers of packets written, reused: no malloc per packet
  LinkModel::Packet pkt;
  try {
    while (!stop_.load(std::memory_order_relaxed)) {
      std::uint64_t now = now_ns();
      while (model_.pop_due(now, pkt)) {
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
        model_.offer(now_ns(), std::move(data), std::uint32_t(n));
      }
      in_flight_.store(model_.in_flight(), std::memory_order_relaxed);
      if (got) continue;
      const std::uint64_t due = model_.next_due();
      now = now_ns();
      if (due <= now) continue;
      const std::uint64_t wait = std::min(due - now, kIdleWaitNs);
      if (wait > TxPacer::kSpinNs) {
        const std::uint64_t sleep = wait - TxPacer::kSpinNs;
        timespec ts{time_t(sleep / 1'000'000'000ull), long(sleep % 1'000'000'000ull)};
        pollfd p{in_, POLLIN, 0};
        if (::ppoll(&p, 1, &ts, nullptr) < 0 && errno != EINTR)
          throw std::runtime_error(std::string("poll on the link's input: ") + std::strerror(errno));
      } else {
        __builtin_ia32_pause();   // the next packet is due within the spin window
      }
    }
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(error_mutex_);
    error_ = e.what();
  }
}

}  // namespace hilrig
