#include "hilrig/io/shm_ring.hpp"

#include <algorithm>
#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "hilrig/core/clock.hpp"

namespace hilrig {

struct alignas(64) ShmRing::Header {
  std::uint64_t magic;
  std::uint32_t version;
  std::uint32_t slot_count;
  std::uint32_t slot_stride;  // slot_bytes rounded up to kSlotAlignBytes (slot_stride_for)
  std::uint32_t slot_bytes;
  std::uint32_t publish;      // RingPublish, fixed by the creator
  alignas(64) std::atomic<std::uint64_t> head;   // next slot the producer fills
  std::atomic<std::uint32_t> head_futex;         // low 32 bits of head, futex word
  std::atomic<std::uint32_t> consumer_waiting;
  alignas(64) std::atomic<std::uint64_t> tail;   // next slot the consumer reads
  std::atomic<std::uint32_t> tail_futex;
  std::atomic<std::uint32_t> producer_waiting;
  alignas(64) std::uint8_t pad[64];
};
// The header is shared between processes (and builds): its layout is pinned here.
// A change to it is a new kLayoutVersion.
static_assert(sizeof(std::atomic<std::uint64_t>) == 8 && std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(sizeof(std::atomic<std::uint32_t>) == 4 && std::atomic<std::uint32_t>::is_always_lock_free);
static_assert(std::is_standard_layout_v<ShmRing::Header>);
static_assert(offsetof(ShmRing::Header, magic) == 0 && offsetof(ShmRing::Header, version) == 8);
static_assert(offsetof(ShmRing::Header, slot_count) == 12 && offsetof(ShmRing::Header, slot_stride) == 16 &&
              offsetof(ShmRing::Header, slot_bytes) == 20 && offsetof(ShmRing::Header, publish) == 24);
static_assert(sizeof(RingPublish) == 4);
static_assert(offsetof(ShmRing::Header, head) == 64 && offsetof(ShmRing::Header, head_futex) == 72 &&
              offsetof(ShmRing::Header, consumer_waiting) == 76);
static_assert(offsetof(ShmRing::Header, tail) == 128 && offsetof(ShmRing::Header, tail_futex) == 136 &&
              offsetof(ShmRing::Header, producer_waiting) == 140);
static_assert(sizeof(ShmRing::Header) == 256 && alignof(ShmRing::Header) == 64);

const char* ring_publish_name(RingPublish p) {
  switch (p) {
    case RingPublish::batched: return "batched";
    case RingPublish::immediate: return "immediate";
    case RingPublish::lamport: return "lamport";
    case RingPublish::flag: return "flag";
    case RingPublish::adaptive: return "adaptive";
  }
  return "unknown";
}

RingPublish parse_ring_publish(std::string_view name) {
  std::string known;
  for (RingPublish p : kRingPublishAll) {
    if (name == ring_publish_name(p)) return p;
    known += std::string(known.empty() ? "" : ", ") + ring_publish_name(p);
  }
  throw std::invalid_argument("shm ring: unknown publish strategy \"" + std::string(name) + "\" (known: " + known + ")");
}

namespace {
constexpr std::size_t kHeaderBytes = 4096;

bool known_publish(std::uint32_t v) { return v <= std::uint32_t(RingPublish::adaptive); }

// A slot's length word, atomic for the strategies that publish through it.
std::atomic_ref<std::uint32_t> length_word(const ShmRing::Layout& lay, std::uint32_t pos) {
  return std::atomic_ref<std::uint32_t>(lay.lengths[pos]);
}
static_assert(std::atomic_ref<std::uint32_t>::is_always_lock_free && std::atomic_ref<std::uint32_t>::required_alignment == 4);

// The full bit a frame written (or read) at ring index `index` carries.
std::uint32_t full_bit_at(const ShmRing::Layout& lay, std::uint64_t index) {
  if (lay.publish == RingPublish::flag) return ShmRing::Layout::kFullBit;
  if (lay.publish == RingPublish::adaptive) return (index / lay.count) % 2 == 0 ? ShmRing::Layout::kFullBit : 0;
  return 0;
}
static_assert(sizeof(ShmRing::kMagic) == 8);

long futex(std::atomic<std::uint32_t>* addr, int op, std::uint32_t val, const timespec* ts) {
  // Shared futex (no FUTEX_PRIVATE_FLAG): the two processes map the same memfd.
  return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(addr), op, val, ts, nullptr, 0);
}
void futex_wait(std::atomic<std::uint32_t>* addr, std::uint32_t expected, std::uint64_t timeout_ns) {
  timespec ts{time_t(timeout_ns / 1000000000ull), long(timeout_ns % 1000000000ull)};
  futex(addr, FUTEX_WAIT, expected, &ts);
}
void futex_wake(std::atomic<std::uint32_t>* addr) { futex(addr, FUTEX_WAKE, 1, nullptr); }

// Before sleeping, poll briefly: the other side usually answers within a few
// microseconds at speed, and a futex sleep + wake costs two syscalls and a context
// switch each way. Bounded (kSpinNs), so an idle side still goes to sleep.
constexpr std::uint64_t kSpinNs = 20'000;
template <typename F>
auto spin(F&& try_once) -> decltype(try_once()) {
  const std::uint64_t until = now_ns() + kSpinNs;
  for (unsigned i = 0;; ++i) {
    for (int k = 0; k < 16; ++k) __builtin_ia32_pause();
    if (auto p = try_once()) return p;
    if ((i & 7) == 7 && now_ns() >= until) return nullptr;
  }
}

// Makes one side's new index visible and wakes the other side if it sleeps on it. All
// seq_cst (a release store plus a full fence on x86): the slot bytes written or read
// before are done for whoever acquires the index, and the stores are ordered before the
// load of the peer's waiting flag (the Dekker pair with wait_for_peer; see
// docs/performance.md).
void store_index(std::atomic<std::uint64_t>& index, std::atomic<std::uint32_t>& futex_word,
                 const std::atomic<std::uint32_t>& peer_waiting, std::uint64_t value) {
  index.store(value, std::memory_order_seq_cst);
  futex_word.store(std::uint32_t(value), std::memory_order_seq_cst);
  if (peer_waiting.load(std::memory_order_seq_cst)) futex_wake(&futex_word);
}

// Waits up to timeout_ns for try_once() to give a slot or frame: polls briefly, then
// announces the wait in `waiting`, re-reads the peer's index (reread) and sleeps on the
// peer's futex word.
template <class TryOnce, class Reread>
auto wait_for_peer(TryOnce&& try_once, Reread&& reread, std::atomic<std::uint32_t>& peer_futex,
                   std::atomic<std::uint32_t>& waiting, std::uint64_t timeout_ns) -> decltype(try_once()) {
  if (auto p = spin(try_once)) return p;
  const std::uint64_t deadline = now_ns() + timeout_ns;
  for (;;) {
    const std::uint32_t seen = peer_futex.load(std::memory_order_seq_cst);
    waiting.store(1, std::memory_order_seq_cst);
    reread();  // after announcing the wait
    if (auto p = try_once()) {
      waiting.store(0, std::memory_order_relaxed);
      return p;
    }
    const std::uint64_t now = now_ns();
    if (now >= deadline) {
      waiting.store(0, std::memory_order_relaxed);
      return nullptr;
    }
    // Bounded wait: a wake lost to a dead peer costs at most 10 ms.
    futex_wait(&peer_futex, seen, std::min<std::uint64_t>(deadline - now, 10'000'000));
  }
}
}  // namespace

ShmRing::~ShmRing() {
  if (base_) munmap(base_, map_bytes_);
  if (fd_ >= 0) ::close(fd_);
}

void ShmRing::map(int fd, bool init, std::uint32_t slot_count, std::uint32_t slot_bytes, RingPublish publish) {
  std::uint32_t stride = std::uint32_t(slot_stride_for(slot_bytes));
  const std::size_t lengths_bytes = slot_stride_for(std::size_t(slot_count) * sizeof(std::uint32_t));
  map_bytes_ = kHeaderBytes + lengths_bytes + std::size_t(slot_count) * stride;
  if (init && ftruncate(fd, off_t(map_bytes_)) != 0)
    throw std::runtime_error(std::string("shm ring: ftruncate failed: ") + std::strerror(errno));
  // MAP_POPULATE: every page is allocated and mapped now, at set-up, on both sides.
  // Without it the first lap through the ring takes a page fault per 4 KiB (two on a
  // VM: guest and host), which at 4 GB/s puts the producer tens of ms behind at start
  // (docs/performance.md "Simulator at 1 GS/s").
  base_ = mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (base_ == MAP_FAILED) {
    base_ = nullptr;
    throw std::runtime_error(std::string("shm ring: mmap failed: ") + std::strerror(errno));
  }
  fd_ = fd;
  auto* h = static_cast<Header*>(base_);
  if (init) {
    h = new (base_) Header{};
    h->magic = kMagic;
    h->version = kLayoutVersion;
    h->slot_count = slot_count;
    h->slot_stride = stride;
    h->slot_bytes = slot_bytes;
    h->publish = std::uint32_t(publish);
  }
  layout_.header = h;
  layout_.lengths = reinterpret_cast<std::uint32_t*>(static_cast<std::uint8_t*>(base_) + kHeaderBytes);
  layout_.slots = static_cast<std::uint8_t*>(base_) + kHeaderBytes + lengths_bytes;
  layout_.count = h->slot_count;
  layout_.stride = h->slot_stride;
  layout_.publish = RingPublish(h->publish);
  layout_.lap_flip = layout_.publish == RingPublish::adaptive ? Layout::kFullBit : 0;
  layout_.prefetch_slots = std::clamp<std::uint32_t>(Layout::kPrefetchAheadBytes / layout_.stride, 1, layout_.count - 1);
}

std::shared_ptr<ShmRing> ShmRing::create(std::uint32_t slot_count, std::uint32_t slot_bytes, RingPublish publish) {
  if (slot_count < 2) throw std::invalid_argument("shm ring: slot_count must be >= 2");
  if (slot_bytes >= Layout::kFullBit) throw std::invalid_argument("shm ring: slot_bytes must be below 2 GiB");
  if (!known_publish(std::uint32_t(publish))) throw std::invalid_argument("shm ring: unknown publish strategy");
  if (slot_bytes < 48) throw std::invalid_argument("shm ring: slot_bytes must hold at least a 48-byte frame header");
  // No MFD_CLOEXEC: a child process may inherit it; others open /proc/<pid>/fd/<n>.
  int fd = memfd_create("hilrig-ring", 0);
  if (fd < 0) throw std::runtime_error(std::string("shm ring: memfd_create failed: ") + std::strerror(errno));
  fchmod(fd, 0600);
  std::shared_ptr<ShmRing> r(new ShmRing());
  try {
    r->map(fd, true, slot_count, slot_bytes, publish);
  } catch (...) {
    ::close(fd);
    throw;
  }
  r->path_ = "/proc/" + std::to_string(getpid()) + "/fd/" + std::to_string(fd);
  return r;
}

std::shared_ptr<ShmRing> ShmRing::open(const std::string& path, RingPublish publish) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("shm ring: cannot open '" + path + "': " + std::strerror(errno));
  Header probe;
  if (pread(fd, &probe, sizeof probe, 0) != ssize_t(sizeof probe) || probe.magic != kMagic || probe.version != kLayoutVersion) {
    ::close(fd);
    throw std::runtime_error("shm ring: '" + path + "' is not a hilrig ring of this layout (magic or version differ)");
  }
  if (probe.publish != std::uint32_t(publish)) {
    ::close(fd);
    const char* theirs = known_publish(probe.publish) ? ring_publish_name(RingPublish(probe.publish)) : "unknown";
    throw std::runtime_error("shm ring: '" + path + "' publishes by \"" + theirs + "\", this end by \"" +
                             ring_publish_name(publish) + "\" (both ends must use one strategy)");
  }
  std::shared_ptr<ShmRing> r(new ShmRing());
  try {
    r->map(fd, false, probe.slot_count, probe.slot_bytes, publish);
  } catch (...) {
    ::close(fd);
    throw;
  }
  r->path_ = path;
  return r;
}

std::uint32_t ShmRing::slot_bytes() const { return header()->slot_bytes; }

// ---- the ends

ShmRingEnd::ShmRingEnd(std::shared_ptr<ShmRing> ring, Kind kind) : ring_(std::move(ring)), kind_(kind) {
  const char* name = kind == Kind::producer ? "producer" : "consumer";
  if (!ring_) throw std::invalid_argument(std::string("shm ring: a ") + name + " needs a ring");
  if (claim().exchange(true)) throw std::logic_error(std::string("shm ring: this mapping has a ") + name + " already");
  lay_ = ring_->layout_;
}

ShmRingEnd::~ShmRingEnd() { claim().store(false); }

std::atomic<bool>& ShmRingEnd::claim() const { return kind_ == Kind::producer ? ring_->has_producer_ : ring_->has_consumer_; }

ShmProducer::ShmProducer(std::shared_ptr<ShmRing> ring) : ShmRingEnd(std::move(ring), Kind::producer) {
  // Opened by path, the ring may be in use already: carry on from where it stands.
  local_head_ = published_head_ = lay_.header->head.load(std::memory_order_acquire);
  cached_tail_ = lay_.header->tail.load(std::memory_order_acquire);
  head_pos_ = std::uint32_t(local_head_ % lay_.count);
  head_full_ = full_bit_at(lay_, local_head_);
}

std::uint8_t* ShmProducer::acquire() {
  // flag: the slot is free once the consumer has cleared its length word (that clear
  // is a release after its last read of the slot).
  if (lay_.publish == RingPublish::flag)
    return length_word(lay_, head_pos_).load(std::memory_order_acquire) == 0 ? lay_.slot_at(head_pos_) : nullptr;
  const std::uint32_t count = lay_.count;
  if (local_head_ - cached_tail_ >= count) {
    cached_tail_ = lay_.header->tail.load(std::memory_order_acquire);
    if (local_head_ - cached_tail_ >= count) return nullptr;
  }
  // The slot prefetch_slots ahead is free already: ask for its first lines for
  // writing now, so their ownership has moved to this core when the framer gets
  // there (a 256-byte frame is otherwise one cross-core miss per line).
  if (local_head_ + lay_.prefetch_slots - cached_tail_ < count) lay_.prefetch_ahead_of<true>(head_pos_);
  return lay_.slot_at(head_pos_);
}

std::uint32_t ShmProducer::free_slots() {
  cached_tail_ = lay_.header->tail.load(std::memory_order_acquire);
  return std::uint32_t(lay_.count - (local_head_ - cached_tail_));
}

void ShmProducer::publish_deferred(std::uint32_t len) {
  const RingPublish how = lay_.publish;
  if (how == RingPublish::batched || how == RingPublish::lamport) {
    lay_.lengths[head_pos_] = len;  // published by the head store in flush_published
  } else if (how == RingPublish::immediate) {
    lay_.lengths[head_pos_] = len;  // published by the head store just below
    lay_.header->head.store(local_head_ + 1, std::memory_order_release);
  } else {
    // flag, adaptive: the release store of the word publishes the slot's bytes.
    length_word(lay_, head_pos_).store(len | head_full_, std::memory_order_release);
  }
  ++local_head_;
  head_pos_ = lay_.next_pos(head_pos_);
  if (head_pos_ == 0) head_full_ ^= lay_.lap_flip;
}

void ShmProducer::flush_published() {
  if (published_head_ == local_head_) return;
  published_head_ = local_head_;
  ShmRing::Header* h = lay_.header;
  store_index(h->head, h->head_futex, h->consumer_waiting, local_head_);
}

void ShmProducer::publish(std::uint32_t len) {
  publish_deferred(len);
  flush_published();
}

std::uint8_t* ShmProducer::acquire_wait(std::uint64_t timeout_ns) {
  if (auto* p = acquire()) return p;
  flush_published();  // the consumer may be waiting for exactly these slots
  ShmRing::Header* h = lay_.header;
  return wait_for_peer([this] { return acquire(); }, [this, h] { cached_tail_ = h->tail.load(std::memory_order_seq_cst); },
                       h->tail_futex, h->producer_waiting, timeout_ns);
}

ShmConsumer::ShmConsumer(std::shared_ptr<ShmRing> ring) : ShmRingEnd(std::move(ring), Kind::consumer) {
  local_tail_ = released_tail_ = lay_.header->tail.load(std::memory_order_acquire);
  cached_head_ = lay_.header->head.load(std::memory_order_acquire);
  tail_pos_ = std::uint32_t(local_tail_ % lay_.count);
  tail_full_ = full_bit_at(lay_, local_tail_);
}

const std::uint8_t* ShmConsumer::peek(std::uint32_t* len) {
  const RingPublish how = lay_.publish;
  if (how == RingPublish::flag || (how == RingPublish::adaptive && local_tail_ >= cached_head_)) {
    // The slot's own word says whether it holds this lap's frame (acquire: its bytes
    // are then visible). adaptive re-reads the head once per line of length words, so
    // a long run published by one flush goes back to the cached path (and prefetches).
    const std::uint32_t word = length_word(lay_, tail_pos_).load(std::memory_order_acquire);
    if ((word & ShmRing::Layout::kFullBit) != tail_full_) return nullptr;
    if (how == RingPublish::adaptive && tail_pos_ % 16 == 0) cached_head_ = lay_.header->head.load(std::memory_order_acquire);
    *len = word & ~ShmRing::Layout::kFullBit;
    return lay_.slot_at(tail_pos_);
  }
  if (local_tail_ == cached_head_) {
    cached_head_ = lay_.header->head.load(std::memory_order_acquire);
    if (local_tail_ == cached_head_) return nullptr;
  }
  // The slot prefetch_slots ahead is published already: start pulling its first
  // lines from the producer's core while this one is checked, far enough ahead to
  // cover a cross-core transfer (never touch an unpublished slot: that would steal
  // lines the producer is still writing).
  if (local_tail_ + lay_.prefetch_slots < cached_head_) lay_.prefetch_ahead_of<false>(tail_pos_);
  *len = lay_.lengths[tail_pos_] & ~lay_.lap_flip;  // adaptive: the word's lap bit is not length
  return lay_.slot_at(tail_pos_);
}

void ShmConsumer::release_deferred() {
  const RingPublish how = lay_.publish;
  if (how == RingPublish::flag) {
    length_word(lay_, tail_pos_).store(0, std::memory_order_release);  // after every read of the slot
  } else if (how == RingPublish::immediate || how == RingPublish::lamport) {
    lay_.header->tail.store(local_tail_ + 1, std::memory_order_release);
  }
  ++local_tail_;
  tail_pos_ = lay_.next_pos(tail_pos_);
  if (tail_pos_ == 0) tail_full_ ^= lay_.lap_flip;
}

void ShmConsumer::flush_released() {
  if (released_tail_ == local_tail_) return;
  released_tail_ = local_tail_;
  // Every read of the freed slots happens before the producer may reuse them.
  ShmRing::Header* h = lay_.header;
  store_index(h->tail, h->tail_futex, h->producer_waiting, local_tail_);
}

void ShmConsumer::release() {
  release_deferred();
  flush_released();
}

const std::uint8_t* ShmConsumer::peek_wait(std::uint32_t* len, std::uint64_t timeout_ns) {
  if (auto* p = peek(len)) return p;
  flush_released();  // the producer may be waiting for exactly these slots
  ShmRing::Header* h = lay_.header;
  return wait_for_peer([this, len] { return peek(len); }, [this, h] { cached_head_ = h->head.load(std::memory_order_seq_cst); },
                       h->head_futex, h->consumer_waiting, timeout_ns);
}

}  // namespace hilrig
