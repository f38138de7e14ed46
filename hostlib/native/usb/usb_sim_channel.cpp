#include "hilrig/usb/usb_sim_channel.hpp"

#include <sys/file.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace hilrig {
namespace {
// Every transfer in flight, a cancel for each, and slack: the rings never fill in
// normal use, so neither side waits on the other for a slot.
std::uint32_t channel_slots(std::uint32_t transfers, unsigned directions) {
  return 2 * transfers * std::max(1u, directions) + 16;
}

std::shared_ptr<ShmRing> ring_at(const nlohmann::json& ep, const char* key) {
  if (!ep.is_object() || !ep.contains("submit_path") || !ep.contains("complete_path"))
    throw std::invalid_argument("usb link endpoint: needs \"submit_path\" and \"complete_path\" (the simulator's configure answer), got " +
                                ep.dump());
  return ShmRing::open(ep[key].get<std::string>());
}
}  // namespace

UsbSimDeviceEnd::UsbSimDeviceEnd(std::uint32_t transfer_bytes, std::uint32_t transfers, unsigned directions)
    : submit_(ShmRing::create(channel_slots(transfers, directions), kUsbSimDescBytes + transfer_bytes)),
      complete_(ShmRing::create(channel_slots(transfers, directions), kUsbSimDescBytes + transfer_bytes)) {
  if (flock(submit_.ring().fd(), LOCK_EX | LOCK_NB) != 0)
    throw std::runtime_error(std::string("usb link: cannot lock its channel: ") + std::strerror(errno));
}

nlohmann::json UsbSimDeviceEnd::endpoint_json() const {
  return {{"submit_path", submit_.ring().path()}, {"complete_path", complete_.ring().path()}};
}

UsbSimHostEnd::UsbSimHostEnd(const nlohmann::json& ep)
    : submit_(ring_at(ep, "submit_path")), complete_(ring_at(ep, "complete_path")) {}

bool UsbSimHostEnd::peer_gone() const {
  // Our own open file description asks for a shared lock: refused while the
  // simulator holds its exclusive one, granted once its process is gone.
  const int fd = submit_.ring().fd();
  if (flock(fd, LOCK_SH | LOCK_NB) != 0) return false;
  flock(fd, LOCK_UN);
  return true;
}

}  // namespace hilrig
