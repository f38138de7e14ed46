#include "hilrig/link/tun.hpp"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace hilrig {

namespace {
std::runtime_error sys_error(const std::string& what) { return std::runtime_error(what + ": " + std::strerror(errno)); }

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { if (fd_ >= 0) ::close(fd_); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
 private:
  int fd_;
};

int create_tun(const std::string& name) {
  if (name.empty() || name.size() >= IFNAMSIZ)
    throw std::invalid_argument("tun: device name '" + name + "' must have 1.." + std::to_string(IFNAMSIZ - 1) + " characters");
  const int fd = ::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw sys_error("tun: open /dev/net/tun");
  ifreq ifr{};
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  if (::ioctl(fd, TUNSETIFF, &ifr) != 0) {
    const int e = errno;
    ::close(fd);
    errno = e;
    throw sys_error("tun: create device " + name + " (TUNSETIFF)");
  }
  return fd;
}
}  // namespace

int open_tun(const std::string& netns, const std::string& name) {
  if (netns.empty()) return create_tun(name);
  Fd own(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
  if (own.get() < 0) throw sys_error("tun: open /proc/thread-self/ns/net");
  Fd target(::open(("/run/netns/" + netns).c_str(), O_RDONLY | O_CLOEXEC));
  if (target.get() < 0) throw sys_error("tun: network namespace " + netns + " (/run/netns/" + netns + ")");
  if (::setns(target.get(), CLONE_NEWNET) != 0) throw sys_error("tun: enter network namespace " + netns);
  int fd = -1;
  std::string failed;
  try {
    fd = create_tun(name);
  } catch (const std::exception& e) {
    failed = e.what();
  }
  if (::setns(own.get(), CLONE_NEWNET) != 0) {
    if (fd >= 0) ::close(fd);
    throw sys_error("tun: return from network namespace " + netns);
  }
  if (fd < 0) throw std::runtime_error(failed + " in network namespace " + netns);
  return fd;
}

}  // namespace hilrig
