// Where the simulator's seeded faults land and what each frame becomes: decided
// once per frame, the same for every link (UDP, shm, USB) and both directions.
#pragma once
#include <cstdint>
#include <vector>

#include "hilrig/core/config.hpp"

namespace hilrig {

class FaultPlan {
 public:
  // What happens to one frame. kSwap: the frame goes out after its successor.
  // kStall (TX): the device stops consuming for stall_ns after this frame.
  enum Kind : std::uint8_t { kSend, kDrop, kDuplicate, kSwap, kCorrupt, kStall };
  struct Entry {
    std::uint64_t seq = 0;
    Kind kind = kSend;
    std::vector<std::uint32_t> words;  // kCorrupt: word indexes in the payload, one per sample
    std::uint32_t xor_mask = 0;        // nonzero within the word width: the word always changes
  };

  // How many faults a run can hold. Faults sit on seq 16 + 4j (no two touch the same
  // or neighbouring frames; a swap uses seq and seq+1). With window_frames, slot j
  // must end before the window (16 + 4j + 1 < window); without, the plan places
  // them compactly in max(2 x faults, 32) slots.
  struct Capacity {
    std::uint64_t slots_needed = 0;     // drop + duplicate + reorder + corrupt frames + stall
    std::uint64_t slots_available = 0;  // in the window (compact: = the pool drawn from)
    std::uint32_t corrupt_samples_per_frame = 0;
    std::uint64_t last_seq = 0;         // highest seq a fault may touch (+1 for a swap)
    bool fits() const { return slots_needed <= slots_available; }
  };
  static Capacity capacity(const FaultSpec& f, const StreamConfig& cfg);
  static Capacity capacity(const FaultSpec& f, std::uint32_t samples_per_frame);
  static constexpr std::uint64_t kMinCompactSlots = 32;  // compact placement draws from at least this many slots
  static constexpr std::uint64_t kSlotsPerFault = 2;     // ... or this many per faulty frame, when that is more

  // Whether a run of frames_in_run frames holds every fault of f placed compactly (how
  // the simulator places them with no window_frames): validation refuses a case whose
  // faults would run past its last frame, and says the most that would fit.
  struct RunFit {
    std::uint64_t faulted_frames = 0;  // = Capacity::slots_needed
    std::uint64_t frames_in_run = 0;
    std::uint64_t placeable_max = 0;   // the most faulty frames such a run holds, all placed
    std::uint64_t frames_needed = 0;   // frames a run needs to place all of f (last_seq + 1)
    bool fits() const { return faulted_frames <= placeable_max; }
  };
  static RunFit fit_run(const FaultSpec& f, std::uint32_t samples_per_frame, std::uint64_t frames_in_run);
  static std::uint64_t window_slots(std::uint64_t window_frames) {
    return window_frames > 17 ? (window_frames - 17 + 3) / 4 : 0;
  }

  // Throws std::invalid_argument when the faults do not fit the window.
  static FaultPlan make(const FaultSpec& f, const StreamConfig& cfg);

  // The fault of frame seq, nullptr for an ordinary frame. Asked in increasing seq
  // order (seq may jump); the cursor makes a fault-free frame cost one compare.
  const Entry* at(std::uint64_t seq) {
    while (next_ < entries_.size() && entries_[next_].seq < seq) ++next_;
    return next_ < entries_.size() && entries_[next_].seq == seq ? &entries_[next_] : nullptr;
  }
  void rewind() { next_ = 0; }
  const std::vector<Entry>& entries() const { return entries_; }
  std::uint64_t stall_ns() const { return stall_ns_; }

  // Applies a kCorrupt entry to a payload of this format.
  static void corrupt(const Entry& e, std::uint8_t* payload, SampleFormat fmt);

 private:
  std::vector<Entry> entries_;  // sorted by seq
  std::size_t next_ = 0;
  std::uint64_t stall_ns_ = 0;
};

}  // namespace hilrig
