#include "hilrig/usb/usb_sim_channel.hpp"

#include <sys/file.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace hilrig {

std::unique_ptr<UsbSimChannel> UsbSimChannel::create(std::uint32_t transfer_bytes, std::uint32_t transfers,
                                                     unsigned directions) {
  auto c = std::make_unique<UsbSimChannel>();
  // Every transfer in flight, a cancel for each, and slack: the rings never fill in
  // normal use, so neither side waits on the other for a slot.
  const std::uint32_t slots = 2 * transfers * std::max(1u, directions) + 16;
  c->submit_ = ShmRing::create(slots, kUsbSimDescBytes + transfer_bytes);
  c->complete_ = ShmRing::create(slots, kUsbSimDescBytes + transfer_bytes);
  if (flock(c->submit_->fd(), LOCK_EX | LOCK_NB) != 0)
    throw std::runtime_error(std::string("usb link: cannot lock its channel: ") + std::strerror(errno));
  return c;
}

std::unique_ptr<UsbSimChannel> UsbSimChannel::open(const nlohmann::json& ep) {
  if (!ep.is_object() || !ep.contains("submit_path") || !ep.contains("complete_path"))
    throw std::invalid_argument("usb link endpoint: needs \"submit_path\" and \"complete_path\" (the simulator's configure answer), got " +
                                ep.dump());
  auto c = std::make_unique<UsbSimChannel>();
  c->submit_ = ShmRing::open(ep["submit_path"].get<std::string>());
  c->complete_ = ShmRing::open(ep["complete_path"].get<std::string>());
  return c;
}

nlohmann::json UsbSimChannel::endpoint_json() const {
  return {{"submit_path", submit_->path()}, {"complete_path", complete_->path()}};
}

bool UsbSimChannel::peer_gone() const {
  // Our own open file description asks for a shared lock: refused while the
  // simulator holds its exclusive one, granted once its process is gone.
  if (flock(submit_->fd(), LOCK_SH | LOCK_NB) != 0) return false;
  flock(submit_->fd(), LOCK_UN);
  return true;
}

}  // namespace hilrig
