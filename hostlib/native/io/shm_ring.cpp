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
              offsetof(ShmRing::Header, slot_bytes) == 20);
static_assert(offsetof(ShmRing::Header, head) == 64 && offsetof(ShmRing::Header, head_futex) == 72 &&
              offsetof(ShmRing::Header, consumer_waiting) == 76);
static_assert(offsetof(ShmRing::Header, tail) == 128 && offsetof(ShmRing::Header, tail_futex) == 136 &&
              offsetof(ShmRing::Header, producer_waiting) == 140);
static_assert(sizeof(ShmRing::Header) == 256 && alignof(ShmRing::Header) == 64);

namespace {
constexpr std::size_t kHeaderBytes = 4096;
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
}  // namespace

ShmRing::~ShmRing() { close(); }

void ShmRing::close() {
  if (base_) munmap(base_, map_bytes_);
  base_ = nullptr;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void ShmRing::map(int fd, bool init, std::uint32_t slot_count, std::uint32_t slot_bytes) {
  std::uint32_t stride = std::uint32_t(slot_stride_for(slot_bytes));
  const std::size_t lengths_bytes = slot_stride_for(std::size_t(slot_count) * sizeof(std::uint32_t));
  map_bytes_ = kHeaderBytes + lengths_bytes + std::size_t(slot_count) * stride;
  if (init && ftruncate(fd, off_t(map_bytes_)) != 0)
    throw std::runtime_error(std::string("shm ring: ftruncate failed: ") + std::strerror(errno));
  // MAP_POPULATE: every page is allocated and mapped now, at set-up, on both sides.
  // Without it the first lap through the ring takes a page fault per 4 KiB (two on a
  // VM: guest and host), which at 4 GB/s puts the producer tens of ms behind at start
  // (issue 4, docs/performance.md "Simulator at 1 GS/s").
  base_ = mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (base_ == MAP_FAILED) {
    base_ = nullptr;
    throw std::runtime_error(std::string("shm ring: mmap failed: ") + std::strerror(errno));
  }
  fd_ = fd;
  if (init) {
    auto* h = new (base_) Header{};
    h->magic = kMagic;
    h->version = kLayoutVersion;
    h->slot_count = slot_count;
    h->slot_stride = stride;
    h->slot_bytes = slot_bytes;
  }
  lengths_ = reinterpret_cast<std::uint32_t*>(static_cast<std::uint8_t*>(base_) + kHeaderBytes);
  slots_ = static_cast<std::uint8_t*>(base_) + kHeaderBytes + slot_stride_for(std::size_t(slot_count) * sizeof(std::uint32_t));
  count_ = hdr()->slot_count;
  stride_ = hdr()->slot_stride;
  prefetch_slots_ = std::clamp<std::uint32_t>(kPrefetchAheadBytes / stride_, 1, count_ - 1);
}

std::unique_ptr<ShmRing> ShmRing::create(std::uint32_t slot_count, std::uint32_t slot_bytes) {
  if (slot_count < 2) throw std::invalid_argument("shm ring: slot_count must be >= 2");
  if (slot_bytes < 48) throw std::invalid_argument("shm ring: slot_bytes must hold at least a 48-byte frame header");
  // No MFD_CLOEXEC: a child process may inherit it; others open /proc/<pid>/fd/<n>.
  int fd = memfd_create("hilrig-ring", 0);
  if (fd < 0) throw std::runtime_error(std::string("shm ring: memfd_create failed: ") + std::strerror(errno));
  fchmod(fd, 0600);
  std::unique_ptr<ShmRing> r(new ShmRing());
  try {
    r->map(fd, true, slot_count, slot_bytes);
  } catch (...) {
    ::close(fd);
    throw;
  }
  r->path_ = "/proc/" + std::to_string(getpid()) + "/fd/" + std::to_string(fd);
  return r;
}

std::unique_ptr<ShmRing> ShmRing::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("shm ring: cannot open '" + path + "': " + std::strerror(errno));
  Header probe;
  if (pread(fd, &probe, sizeof probe, 0) != ssize_t(sizeof probe) || probe.magic != kMagic || probe.version != kLayoutVersion) {
    ::close(fd);
    throw std::runtime_error("shm ring: '" + path + "' is not a hilrig ring of this layout (magic or version differ)");
  }
  std::unique_ptr<ShmRing> r(new ShmRing());
  try {
    r->map(fd, false, probe.slot_count, probe.slot_bytes);
  } catch (...) {
    ::close(fd);
    throw;
  }
  r->path_ = path;
  r->local_head_ = r->cached_head_ = r->published_head_ = r->hdr()->head.load(std::memory_order_acquire);
  r->local_tail_ = r->cached_tail_ = r->released_tail_ = r->hdr()->tail.load(std::memory_order_acquire);
  r->head_pos_ = std::uint32_t(r->local_head_ % r->count_);
  r->tail_pos_ = std::uint32_t(r->local_tail_ % r->count_);
  return r;
}

std::uint32_t ShmRing::slot_count() const { return hdr()->slot_count; }
std::uint32_t ShmRing::slot_bytes() const { return hdr()->slot_bytes; }

std::uint8_t* ShmRing::acquire() {
  if (local_head_ - cached_tail_ >= count_) {
    cached_tail_ = hdr()->tail.load(std::memory_order_acquire);
    if (local_head_ - cached_tail_ >= count_) return nullptr;
  }
  std::uint8_t* s = slot_at(head_pos_);
  if (local_head_ + prefetch_slots_ - cached_tail_ < count_) {
    // The slot prefetch_slots_ ahead is free already: ask for its first lines for
    // writing now, so their ownership has moved to this core when the framer gets
    // there (a 256-byte frame is otherwise one cross-core miss per line).
    std::uint32_t ahead = head_pos_ + prefetch_slots_;
    if (ahead >= count_) ahead -= count_;
    const std::uint8_t* p = slot_at(ahead);
    for (unsigned off = 0; off < kPrefetchLineBytes && off < stride_; off += 64) __builtin_prefetch(p + off, 1);
  }
  return s;
}

std::uint32_t ShmRing::free_slots() {
  cached_tail_ = hdr()->tail.load(std::memory_order_acquire);
  return std::uint32_t(count_ - (local_head_ - cached_tail_));
}

void ShmRing::publish_deferred(std::uint32_t len) {
  lengths_[head_pos_] = len;  // published by the head store (release) in flush_published
  ++local_head_;
  head_pos_ = next_pos(head_pos_);
}

void ShmRing::flush_published() {
  if (published_head_ == local_head_) return;
  Header* h = hdr();
  published_head_ = local_head_;
  // seq_cst (a release store plus a full fence on x86): the slot bytes written before
  // are visible to whoever acquires head, and the store is ordered before the load of
  // consumer_waiting below (the Dekker pair with peek_wait; see docs/performance.md).
  h->head.store(local_head_, std::memory_order_seq_cst);
  h->head_futex.store(std::uint32_t(local_head_), std::memory_order_seq_cst);
  if (h->consumer_waiting.load(std::memory_order_seq_cst)) futex_wake(&h->head_futex);
}

void ShmRing::publish(std::uint32_t len) {
  publish_deferred(len);
  flush_published();
}

std::uint8_t* ShmRing::acquire_wait(std::uint64_t timeout_ns) {
  if (auto* p = acquire()) return p;
  flush_published();  // the consumer may be waiting for exactly these slots
  if (auto* p = spin([&] { return acquire(); })) return p;
  Header* h = hdr();
  const std::uint64_t deadline = now_ns() + timeout_ns;
  for (;;) {
    std::uint32_t seen = h->tail_futex.load(std::memory_order_seq_cst);
    h->producer_waiting.store(1, std::memory_order_seq_cst);
    cached_tail_ = h->tail.load(std::memory_order_seq_cst);  // re-read after announcing the wait
    if (auto* p = acquire()) {
      h->producer_waiting.store(0, std::memory_order_relaxed);
      return p;
    }
    std::uint64_t now = now_ns();
    if (now >= deadline) {
      h->producer_waiting.store(0, std::memory_order_relaxed);
      return nullptr;
    }
    futex_wait(&h->tail_futex, seen, std::min<std::uint64_t>(deadline - now, 10'000'000));
  }
}

const std::uint8_t* ShmRing::peek(std::uint32_t* len) {
  Header* h = hdr();
  if (local_tail_ == cached_head_) {
    cached_head_ = h->head.load(std::memory_order_acquire);
    if (local_tail_ == cached_head_) return nullptr;
  }
  const std::uint8_t* s = slot_at(tail_pos_);
  if (local_tail_ + prefetch_slots_ < cached_head_) {
    // The slot prefetch_slots_ ahead is published already: start pulling its first
    // lines from the producer's core while this one is checked, far enough ahead to
    // cover a cross-core transfer (never touch an unpublished slot: that would steal
    // lines the producer is still writing).
    std::uint32_t ahead = tail_pos_ + prefetch_slots_;
    if (ahead >= count_) ahead -= count_;
    const std::uint8_t* p = slot_at(ahead);
    for (unsigned off = 0; off < kPrefetchLineBytes && off < stride_; off += 64) __builtin_prefetch(p + off);
  }
  *len = lengths_[tail_pos_];
  return s;
}

void ShmRing::release_deferred() {
  ++local_tail_;
  tail_pos_ = next_pos(tail_pos_);
}

void ShmRing::flush_released() {
  if (released_tail_ == local_tail_) return;
  Header* h = hdr();
  released_tail_ = local_tail_;
  // Release: every read of the freed slots happens before the producer may reuse them.
  h->tail.store(local_tail_, std::memory_order_seq_cst);
  h->tail_futex.store(std::uint32_t(local_tail_), std::memory_order_seq_cst);
  if (h->producer_waiting.load(std::memory_order_seq_cst)) futex_wake(&h->tail_futex);
}

void ShmRing::release() {
  release_deferred();
  flush_released();
}

const std::uint8_t* ShmRing::peek_wait(std::uint32_t* len, std::uint64_t timeout_ns) {
  if (auto* p = peek(len)) return p;
  flush_released();  // the producer may be waiting for exactly these slots
  if (auto* p = spin([&] { return peek(len); })) return p;
  Header* h = hdr();
  const std::uint64_t deadline = now_ns() + timeout_ns;
  for (;;) {
    std::uint32_t seen = h->head_futex.load(std::memory_order_seq_cst);
    h->consumer_waiting.store(1, std::memory_order_seq_cst);
    cached_head_ = h->head.load(std::memory_order_seq_cst);  // re-read after announcing the wait
    if (auto* p = peek(len)) {
      h->consumer_waiting.store(0, std::memory_order_relaxed);
      return p;
    }
    std::uint64_t now = now_ns();
    if (now >= deadline) {
      h->consumer_waiting.store(0, std::memory_order_relaxed);
      return nullptr;
    }
    // Bounded wait: a wake lost to a dead peer costs at most 10 ms.
    futex_wait(&h->head_futex, seen, std::min<std::uint64_t>(deadline - now, 10'000'000));
  }
}

}  // namespace hilrig
