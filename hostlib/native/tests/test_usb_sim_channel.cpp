// The simulator's USB link channel (docs/usb.md "The simulator's USB link"): the
// host tells a dead simulator from a slow one by its lock, and a transfer goes
// through the channel and the device side's bus model back to the host's engine.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "hilrig/usb/usb_sim_channel.hpp"

namespace {
using namespace hilrig;

TEST(UsbSimChannel, PeerGoneOnlyOnceTheCreatorIsDead) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // the "simulator": makes the channel, says where, then lives until killed
    UsbSimDeviceEnd sim(16384, 4, 1);
    const std::string ep = sim.endpoint_json().dump() + "\n";
    if (write(fds[1], ep.data(), ep.size()) != ssize_t(ep.size())) _exit(1);
    for (;;) pause();
  }
  close(fds[1]);
  std::string ep;
  char c;
  while (read(fds[0], &c, 1) == 1 && c != '\n') ep += c;
  close(fds[0]);
  UsbSimHostEnd host(nlohmann::json::parse(ep));
  EXPECT_FALSE(host.peer_gone());
  EXPECT_FALSE(host.peer_gone());  // asking does not take the lock away
  EXPECT_EQ(host.transfer_bytes(), 16384u);
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(host.peer_gone());
}

TEST(UsbSimChannel, SameProcessEndsDoNotLookDead) {
  UsbSimDeviceEnd sim(4096, 2, 1);
  UsbSimHostEnd host(sim.endpoint_json());
  EXPECT_FALSE(host.peer_gone());
  EXPECT_THROW(UsbSimHostEnd(nlohmann::json::object()), std::invalid_argument);
}

}  // namespace
