// A TUN device (layer 3, no packet-info header) created inside a named network
// namespace. The device is not persistent: it exists while the returned fd is open,
// so a killed emulator leaves no device behind.
#pragma once
#include <string>

namespace hilrig {

// Creates TUN device `name` in the namespace bound at /run/netns/<netns> (`ip netns add`;
// empty: the caller's own namespace) and returns its fd (non-blocking, close-on-exec).
// Only the calling thread enters the namespace, and returns to its own before this
// returns. Throws std::runtime_error naming the step that failed.
int open_tun(const std::string& netns, const std::string& name);

}  // namespace hilrig
