// The simulator's fault gates: the fault plan applied to the frames the device sends
// (RxFaultGate: run_rx with the C++ framer, run_rtl with the RTL's frames) and to the
// frames it receives (TxFaultGate: run_tx with the C++ checker, run_rtl with the RTL's).
#pragma once
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "hilrig/core/config.hpp"
#include "hilrig/core/counter.hpp"
#include "hilrig/core/fault_plan.hpp"
#include "hilrig/core/frame.hpp"

namespace hilrig {

// RX faults, decided once per frame by its seq before it goes on the link: drop
// (never sent), duplicate (sent twice), swap (held until its successor went),
// corrupt (the plan's words changed). Faults never touch neighbouring frames, so
// the successor of a held frame is an ordinary one.
class RxFaultGate {
 public:
  struct Tally {
    Counter &drop, &duplicate, &reorder, &corrupt;
  };
  RxFaultGate(FaultPlan& plan, const StreamConfig& cfg, Tally tally)
      : plan_(plan), cfg_(cfg), tally_(tally), faulty_(!plan.entries().empty()), held_(std::size_t(cfg.frame_bytes) + 64) {}

  // Frame seq onto the link as the plan says; build(out) writes it and returns its
  // length (called twice for a duplicate). False: the link has no room now and
  // nothing was consumed: offer the same frame again.
  template <class Link, class Build>
  bool offer(Link& link, std::uint64_t seq, Build&& build) {
    const FaultPlan::Entry* fault = faulty_ ? plan_.at(seq) : nullptr;
    const FaultPlan::Kind kind = fault ? fault->kind : FaultPlan::kSend;
    if ((holding_ || (kind == FaultPlan::kDuplicate)) && !link.room_for(2)) return false;
    if (kind == FaultPlan::kDrop) {
      counter_add(tally_.drop);
      return true;
    }
    if (kind == FaultPlan::kSwap) {
      held_len_ = build(held_.data());
      holding_ = true;
      return true;
    }
    std::uint8_t* out = link.acquire();
    if (!out) return false;
    const std::uint32_t len = build(out);
    if (kind == FaultPlan::kCorrupt) {
      FaultPlan::corrupt(*fault, out + kFrameHeaderBytes, cfg_.sample_format);
      counter_add(tally_.corrupt, fault->words.size());
    }
    link.commit(len);
    if (kind == FaultPlan::kDuplicate) {
      link.commit(build(link.acquire()));
      counter_add(tally_.duplicate);
    }
    if (holding_) flush(link);  // the successor went first: now the held frame
    return true;
  }
  // A held frame goes out now (after its successor, or at the end of the stream).
  template <class Link>
  void flush(Link& link) {
    if (!holding_) return;
    std::uint8_t* out = link.acquire();
    if (!out) return;
    std::memcpy(out, held_.data(), held_len_);
    link.commit(held_len_);
    holding_ = false;
    counter_add(tally_.reorder);
  }

 private:
  FaultPlan& plan_;
  const StreamConfig& cfg_;
  Tally tally_;
  bool faulty_;
  std::vector<std::uint8_t> held_;
  std::uint32_t held_len_ = 0;
  bool holding_ = false;
};

// TX faults, decided once per received frame by its seq: drop (never seen),
// duplicate (seen twice), swap (held until its successor was seen), corrupt (a
// copy with the plan's words changed), stall (the consumer stops after this batch).
// The same for the C++ checker and the RTL's (run_tx, run_rtl).
class TxFaultGate {
 public:
  struct Tally {
    Counter &drop, &duplicate, &reorder, &corrupt;
  };
  TxFaultGate(FaultPlan& plan, const StreamConfig& cfg, Tally tally)
      : plan_(plan), cfg_(cfg), tally_(tally), faulty_(!plan.entries().empty()),
        scratch_(std::size_t(cfg.frame_bytes) + 64), held_(scratch_.size()) {}

  // deliver(p, len) for each frame the device sees because of this one (0, 1 or 2).
  template <class Deliver>
  void on_frame(const std::uint8_t* p, std::size_t len, Deliver&& deliver) {
    const FaultPlan::Entry* fault = nullptr;
    if (faulty_ && len >= kFrameHeaderBytes && len <= scratch_.size()) {
      fault = plan_.at(frame_seq(p));
    }
    if (!fault) {
      deliver(p, len);
    } else if (fault->kind == FaultPlan::kDrop) {
      counter_add(tally_.drop);
      return;
    } else if (fault->kind == FaultPlan::kDuplicate) {
      deliver(p, len);
      deliver(p, len);
      counter_add(tally_.duplicate);
    } else if (fault->kind == FaultPlan::kSwap) {
      std::memcpy(held_.data(), p, len);
      held_len_ = len;
      holding_ = true;
      return;
    } else if (fault->kind == FaultPlan::kCorrupt) {
      std::memcpy(scratch_.data(), p, len);
      if (len >= kFrameHeaderBytes + std::size_t(cfg_.payload_bytes()))
        FaultPlan::corrupt(*fault, scratch_.data() + kFrameHeaderBytes, cfg_.sample_format);
      deliver(scratch_.data(), len);
      counter_add(tally_.corrupt, fault->words.size());
    } else {  // kStall
      deliver(p, len);
      stall_due_ = true;
    }
    if (holding_) {  // the successor of a swapped frame went first: now the frame itself
      holding_ = false;
      deliver(held_.data(), held_len_);
      counter_add(tally_.reorder);
    }
  }
  // End of stream: a swapped frame whose successor never came. True if one was delivered.
  template <class Deliver>
  bool flush(Deliver&& deliver) {
    if (!holding_) return false;
    holding_ = false;
    deliver(held_.data(), held_len_);
    counter_add(tally_.reorder);
    return true;
  }
  bool take_stall() { return std::exchange(stall_due_, false); }

 private:
  FaultPlan& plan_;
  const StreamConfig& cfg_;
  Tally tally_;
  bool faulty_;
  std::vector<std::uint8_t> scratch_, held_;
  std::size_t held_len_ = 0;
  bool holding_ = false, stall_due_ = false;
};

}  // namespace hilrig
