// The simulated device's TX sample clock. A burst starts at its first frame; from then
// the device consumes rate_sps of what arrived. When the clock gets ahead of what
// arrived mid-burst the device underruns and idles until the next frame starts a new
// run. played() is what the device consumed by a moment of its clock: never more than
// the rate allows, so frames a host sends ahead (into the device FIFO, a socket buffer,
// USB transfers in flight) are counted when the device takes them, not when they land.
// Written by the TX thread; played() may be read by any thread.
#pragma once
#include <cstdint>
#include <mutex>

namespace hilrig {

class PlayoutClock {
 public:
  explicit PlayoutClock(double rate_sps) : samples_per_ns_(rate_sps / 1e9) {}

  // Samples of one frame arrived at now_ns; eob ends the burst after them.
  void on_frame(std::uint64_t now_ns, std::uint64_t samples, bool eob) {
    if (!consuming_) {
      consuming_ = true;
      run_t0_ns_ = now_ns;
      run_samples_ = 0;
      publish(now_ns);  // a window may start here: nothing of this run is played yet
    }
    run_samples_ += samples;
    eob_ = eob;
  }

  // Advances the clock to now_ns. True when the device underran: its clock passed what
  // arrived in the middle of a burst (the run ends there; the next frame starts one).
  [[nodiscard]] bool advance(std::uint64_t now_ns) {
    bool underran = false;
    if (consuming_ && !eob_) {
      if (double(now_ns - run_t0_ns_) * samples_per_ns_ > double(run_samples_)) {
        underran = true;
        end_run();
      }
    } else if (eob_) {
      end_run();  // what the burst carried is played out after its end
    }
    publish(now_ns);
    return underran;
  }

  struct Played {
    std::uint64_t samples = 0;  // consumed at the sample clock since the stream began
    std::uint64_t at_ns = 0;    // the moment (CLOCK_MONOTONIC) the count was true; 0: not yet
  };
  Played played() const {
    std::lock_guard<std::mutex> lock(mu_);
    return played_;
  }

 private:
  void end_run() {
    finished_samples_ += run_samples_;
    run_samples_ = 0;
    consuming_ = false;
    eob_ = false;
  }
  void publish(std::uint64_t now_ns) {
    std::uint64_t now_played = finished_samples_;
    if (consuming_) {
      const double due = double(now_ns - run_t0_ns_) * samples_per_ns_;
      now_played += due < double(run_samples_) ? std::uint64_t(due) : run_samples_;
    }
    std::lock_guard<std::mutex> lock(mu_);
    played_ = {now_played, now_ns};
  }

  const double samples_per_ns_;
  bool consuming_ = false, eob_ = false;
  std::uint64_t run_t0_ns_ = 0, run_samples_ = 0, finished_samples_ = 0;
  mutable std::mutex mu_;
  Played played_;
};

}  // namespace hilrig
