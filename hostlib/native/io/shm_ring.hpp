// Single-producer single-consumer ring of fixed-size slots in a memfd.
//
// The creator makes an anonymous memfd (mode 0600; it vanishes with the last fd or
// mapping, so a killed process never leaves anything in /dev/shm); the other process
// opens "/proc/<creator pid>/fd/<n>". Head (producer) and tail (consumer) live on
// their own 64-byte cache lines; each side caches the other's index and re-reads it
// only when the cached value says full/empty. Frames are written and checked in
// place in the slot. An idle side sleeps on a shared futex with a short timeout
// (so stop flags are seen), never a forever busy-spin.
//
// Three types: ShmRing is the mapping (memfd, mmap, geometry), shared by the ends
// that use it; ShmProducer and ShmConsumer are the two ends, each with only its own
// side's index state and methods, so the type says which side a holder is:
//   auto ring = ShmRing::create(slots, slot_bytes);   // or ShmRing::open(path)
//   ShmConsumer rx(ring);                             // this process reads
//   ... the other process: ShmProducer tx(ShmRing::open(ring->path()));
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace hilrig {

// How the producer makes a frame visible and the consumer frees its slot
// (docs/performance.md "Publish strategies" has the ordering argument of each). Both
// processes must agree: the creator stores it in the shared header and open()
// refuses a ring of another strategy.
//   batched    the head index is stored once per flush_published (and the tail once per
//              flush_released); a slot's length is plain data published by that store.
//   immediate  the head index is stored on every publish, the tail on every release.
//   lamport    head batched as in `batched`; the consumer writes its tail back on every
//              release, so the producer sees free slots at once.
//   flag       FastForward: a slot is full while its length word is non-zero; the
//              producer fills it (release) and the consumer clears it (release) on
//              release; neither reads the other's index on the per-frame path.
//   adaptive   the length word carries a lap bit (no slot byte added): a frame is
//              visible on publish, as with flags, while the consumer frees slots by
//              the batched tail index and the producer checks space against a cached
//              tail, as in `batched`; the consumer takes frames from the cached head
//              (known published) without looking at their word.
enum class RingPublish : std::uint32_t { batched = 0, immediate = 1, lamport = 2, flag = 3, adaptive = 4 };
inline constexpr RingPublish kRingPublishAll[] = {RingPublish::batched, RingPublish::immediate, RingPublish::lamport,
                                                  RingPublish::flag, RingPublish::adaptive};
// The one default (the shm transport's, defaults::kRingPublish, and every ring made
// without naming one): adaptive measured best of the five at QD 1, 32 and 256 and on
// the 256-byte stream (docs/performance.md "The strategies measured").
inline constexpr RingPublish kDefaultRingPublish = RingPublish::adaptive;
const char* ring_publish_name(RingPublish p);
// Throws std::invalid_argument naming the strategies known.
RingPublish parse_ring_publish(std::string_view name);

class ShmRing {
 public:
  static constexpr std::uint64_t kMagic = 0x474e495247494c48ull;  // "HLIGRING"
  // Slot lengths live in their own array, not in front of each slot: a 256-byte frame
  // then moves in 4 cache lines instead of 5 (the frame stays 64-byte aligned).
  static constexpr std::size_t kSlotAlignBytes = 64;
  // 2: lengths in their own array; 3: the publish strategy in the header
  static constexpr std::uint32_t kLayoutVersion = 3;
  // The stride of a slot that carries frames of up to slot_bytes.
  static constexpr std::size_t slot_stride_for(std::size_t slot_bytes) {
    return (slot_bytes + kSlotAlignBytes - 1) / kSlotAlignBytes * kSlotAlignBytes;
  }

  ~ShmRing();
  ShmRing(const ShmRing&) = delete;
  ShmRing& operator=(const ShmRing&) = delete;

  // Creates a ring; slot_bytes is the largest frame it carries. Throws std::runtime_error.
  [[nodiscard]] static std::shared_ptr<ShmRing> create(std::uint32_t slot_count, std::uint32_t slot_bytes,
                                                       RingPublish publish = kDefaultRingPublish);
  // Opens a ring created by another process (or this one) by its /proc path; throws
  // std::runtime_error when its strategy is not `publish`.
  [[nodiscard]] static std::shared_ptr<ShmRing> open(const std::string& path, RingPublish publish = kDefaultRingPublish);

  const std::string& path() const { return path_; }
  int fd() const { return fd_; }  // the memfd (the USB link's channel locks it to say "alive")
  std::uint32_t slot_count() const { return layout_.count; }
  std::uint32_t slot_bytes() const;  // max frame bytes per slot
  RingPublish publish() const { return layout_.publish; }

  // The header both processes map (shm_ring.cpp pins its layout with static_asserts).
  struct Header;

  // Where the shared parts are, copied into each end so that its per-frame path loads
  // neither the mapping object nor the shared header's geometry.
  struct Layout {
    Header* header = nullptr;
    std::uint8_t* slots = nullptr;
    std::uint32_t* lengths = nullptr;  // lengths[pos]: bytes published in slot pos
    std::uint32_t count = 0, stride = 0;
    RingPublish publish = kDefaultRingPublish;
    // Length words of the flag strategies: kFullBit set = the slot holds a frame (flag),
    // or = the lap parity the slot's frame was written in (adaptive; lap 0 writes it set,
    // so a zeroed ring reads empty). lap_flip is what a wrap to slot 0 XORs into the
    // expected bit: kFullBit for adaptive, 0 otherwise.
    static constexpr std::uint32_t kFullBit = 0x80000000u;
    std::uint32_t lap_flip = 0;
    // Each side prefetches the slot this many ahead: about kPrefetchAheadBytes of
    // stream, 16 frames at 256 bytes, enough to cover a line transfer between cores
    // that do not share a cache (10 interleaved 0.5 s runs: median 25 M frames/s
    // against 22 with 1 KiB); large frames stream through the hardware prefetcher and
    // need only the next.
    std::uint32_t prefetch_slots = 1;
    static constexpr std::uint32_t kPrefetchAheadBytes = 4096, kPrefetchLineBytes = 256;

    std::uint8_t* slot_at(std::uint32_t pos) const { return slots + std::size_t(pos) * stride; }
    // Slot positions wrap instead of index % count: no division per frame.
    std::uint32_t next_pos(std::uint32_t pos) const { return pos + 1 == count ? 0 : pos + 1; }
    // Starts pulling the first lines of the slot prefetch_slots after pos into this core.
    template <bool kForWrite>
    void prefetch_ahead_of(std::uint32_t pos) const {
      std::uint32_t ahead = pos + prefetch_slots;
      if (ahead >= count) ahead -= count;
      const std::uint8_t* p = slot_at(ahead);
      for (unsigned off = 0; off < kPrefetchLineBytes && off < stride; off += 64) __builtin_prefetch(p + off, kForWrite ? 1 : 0);
    }
  };

 private:
  friend class ShmRingEnd;
  ShmRing() = default;
  Header* header() const { return layout_.header; }
  void map(int fd, bool init, std::uint32_t slot_count, std::uint32_t slot_bytes, RingPublish publish);

  int fd_ = -1;
  void* base_ = nullptr;
  std::size_t map_bytes_ = 0;
  std::string path_;
  Layout layout_;
  // Single producer, single consumer: at most one end of each kind per mapping in this
  // process (another process's end is on its own mapping).
  std::atomic<bool> has_producer_{false}, has_consumer_{false};
};

// What both ends hold: a handle that keeps the mapping alive, its layout, and the
// claim on the mapping's one end of their kind (given back when the end goes).
class ShmRingEnd {
 public:
  ShmRingEnd(const ShmRingEnd&) = delete;
  ShmRingEnd& operator=(const ShmRingEnd&) = delete;
  const ShmRing& ring() const { return *ring_; }
  std::uint32_t slot_bytes() const { return ring_->slot_bytes(); }

 protected:
  enum class Kind { producer, consumer };
  // Throws std::invalid_argument (no ring) or std::logic_error (the mapping has an end
  // of this kind already).
  ShmRingEnd(std::shared_ptr<ShmRing> ring, Kind kind);
  ~ShmRingEnd();
  ShmRing::Layout lay_;

 private:
  std::atomic<bool>& claim() const;
  std::shared_ptr<ShmRing> ring_;
  Kind kind_;
};

// The producer end. acquire() returns a slot to write up to slot_bytes() into, or
// nullptr when the ring is full; publish(len) makes it visible and wakes a sleeping
// consumer.
class ShmProducer : public ShmRingEnd {
 public:
  explicit ShmProducer(std::shared_ptr<ShmRing> ring);

  [[nodiscard]] std::uint8_t* acquire();
  void publish(std::uint32_t len);
  // Batched publishing: publish_deferred() hands the slot on (visible at once with the
  // immediate, flag and adaptive strategies, at the next flush with batched and
  // lamport), flush_published() makes every deferred slot visible with one store and
  // wakes a sleeping consumer. Flush before going idle: acquire_wait flushes first, so
  // a deferred slot never deadlocks the pair.
  void publish_deferred(std::uint32_t len);
  void flush_published();
  // Blocks up to timeout_ns for a free slot (futex); nullptr on timeout.
  [[nodiscard]] std::uint8_t* acquire_wait(std::uint64_t timeout_ns);
  // Slots free right now (re-reads the consumer's index).
  [[nodiscard]] std::uint32_t free_slots();

 private:
  std::uint64_t local_head_ = 0, cached_tail_ = 0, published_head_ = 0;
  std::uint32_t head_pos_ = 0;  // local_head_ % count, kept by wrapping
  std::uint32_t head_full_ = 0;  // flag/adaptive: the full bit this lap writes into a length word
};

// The consumer end. peek() returns the oldest frame (and its length) or nullptr when
// empty; release() frees it.
class ShmConsumer : public ShmRingEnd {
 public:
  explicit ShmConsumer(std::shared_ptr<ShmRing> ring);

  [[nodiscard]] const std::uint8_t* peek(std::uint32_t* len);
  void release();
  // Batched releasing, the mirror of publish_deferred/flush_published; peek_wait
  // flushes first.
  void release_deferred();
  void flush_released();
  // Blocks up to timeout_ns for a frame (futex); nullptr on timeout.
  [[nodiscard]] const std::uint8_t* peek_wait(std::uint32_t* len, std::uint64_t timeout_ns);

 private:
  std::uint64_t local_tail_ = 0, cached_head_ = 0, released_tail_ = 0;
  std::uint32_t tail_pos_ = 0;  // local_tail_ % count, kept by wrapping
  std::uint32_t tail_full_ = 0;  // flag/adaptive: the full bit a frame of this lap carries
};

}  // namespace hilrig
