// Single-producer single-consumer ring of fixed-size slots in a memfd.
//
// The creator makes an anonymous memfd (mode 0600; it vanishes with the last fd or
// mapping, so a killed process never leaves anything in /dev/shm); the other process
// opens "/proc/<creator pid>/fd/<n>". Head (producer) and tail (consumer) live on
// their own 64-byte cache lines; each side caches the other's index and re-reads it
// only when the cached value says full/empty. Frames are written and checked in
// place in the slot. An idle side sleeps on a shared futex with a short timeout
// (so stop flags are seen), never a forever busy-spin.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace hilrig {

class ShmRing {
 public:
  static constexpr std::uint64_t kMagic = 0x474e495247494c48ull;  // "HLIGRING"
  // Slot lengths live in their own array, not in front of each slot: a 256-byte frame
  // then moves in 4 cache lines instead of 5 (the frame stays 64-byte aligned).
  static constexpr std::size_t kSlotAlignBytes = 64;
  static constexpr std::uint32_t kLayoutVersion = 2;  // 2: lengths in their own array
  // The stride of a slot that carries frames of up to slot_bytes.
  static constexpr std::size_t slot_stride_for(std::size_t slot_bytes) {
    return (slot_bytes + kSlotAlignBytes - 1) / kSlotAlignBytes * kSlotAlignBytes;
  }

  ShmRing() = default;
  ~ShmRing();
  ShmRing(const ShmRing&) = delete;
  ShmRing& operator=(const ShmRing&) = delete;

  // Creates a ring; slot_bytes is the largest frame it carries. Throws std::runtime_error.
  [[nodiscard]] static std::unique_ptr<ShmRing> create(std::uint32_t slot_count, std::uint32_t slot_bytes);
  // Opens a ring created by another process (or this one) by its /proc path.
  [[nodiscard]] static std::unique_ptr<ShmRing> open(const std::string& path);

  const std::string& path() const { return path_; }
  int fd() const { return fd_; }  // the memfd (the USB link's channel locks it to say "alive")
  std::uint32_t slot_count() const;
  std::uint32_t slot_bytes() const;  // max frame bytes per slot
  void close();

  // Producer. acquire() returns a slot to write up to slot_bytes() into, or nullptr
  // when the ring is full; publish(len) makes it visible and wakes a sleeping consumer.
  [[nodiscard]] std::uint8_t* acquire();
  void publish(std::uint32_t len);
  // Batched publishing: publish_deferred() hands the slot on locally, flush_published()
  // makes every deferred slot visible with one store (and one wake if needed). The
  // wait functions flush first, so a deferred slot never deadlocks the pair.
  void publish_deferred(std::uint32_t len);
  void flush_published();
  // Blocks up to timeout_ns for a free slot (futex); nullptr on timeout.
  [[nodiscard]] std::uint8_t* acquire_wait(std::uint64_t timeout_ns);
  // Producer: slots free right now (re-reads the consumer's index).
  [[nodiscard]] std::uint32_t free_slots();

  // Consumer. peek() returns the oldest frame (and its length) or nullptr when empty;
  // release() frees it.
  [[nodiscard]] const std::uint8_t* peek(std::uint32_t* len);
  void release();
  // Batched releasing, the mirror of publish_deferred/flush_published.
  void release_deferred();
  void flush_released();
  // Blocks up to timeout_ns for a frame (futex); nullptr on timeout.
  [[nodiscard]] const std::uint8_t* peek_wait(std::uint32_t* len, std::uint64_t timeout_ns);

  // The header both processes map (shm_ring.cpp pins its layout with static_asserts).
  struct Header;

 private:
  Header* hdr() const { return reinterpret_cast<Header*>(base_); }
  std::uint8_t* slot_at(std::uint32_t pos) const { return slots_ + std::size_t(pos) * stride_; }
  std::uint32_t next_pos(std::uint32_t pos) const { return pos + 1 == count_ ? 0 : pos + 1; }
  void map(int fd, bool init, std::uint32_t slot_count, std::uint32_t slot_bytes);

  int fd_ = -1;
  void* base_ = nullptr;
  std::size_t map_bytes_ = 0;
  std::string path_;
  std::uint64_t local_head_ = 0, cached_tail_ = 0, published_head_ = 0;  // producer side
  std::uint64_t local_tail_ = 0, cached_head_ = 0, released_tail_ = 0;   // consumer side
  // Read-only geometry copied out of the shared header, and each side's slot position
  // (index % count kept by wrapping): no division and no shared-line load per frame.
  std::uint8_t* slots_ = nullptr;
  std::uint32_t* lengths_ = nullptr;  // lengths_[pos]: bytes published in slot pos
  std::uint32_t count_ = 0, stride_ = 0;
  std::uint32_t head_pos_ = 0, tail_pos_ = 0;
  // Each side prefetches the slot this many ahead: about kPrefetchAheadBytes of
  // stream, 16 frames at 256 bytes, enough to cover a line transfer between cores
  // that do not share a cache (10 interleaved 0.5 s runs: median 25 M frames/s
  // against 22 with 1 KiB); large frames stream through the hardware prefetcher and
  // need only the next.
  static constexpr std::uint32_t kPrefetchAheadBytes = 4096, kPrefetchLineBytes = 256;
  std::uint32_t prefetch_slots_ = 1;
};

}  // namespace hilrig
