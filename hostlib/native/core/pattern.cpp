#include "hilrig/core/pattern.hpp"

#include <immintrin.h>

#include <cstring>

namespace hilrig {
namespace {
// Portable loops (memcpy'd loads: GCC turns them into unaligned vector loads).
template <typename W>
void fill_words(W base, std::uint8_t* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    W w = W(base + W(i));
    std::memcpy(out + i * sizeof(W), &w, sizeof(W));
  }
}
template <typename W>
std::uint64_t check_words(W base, const std::uint8_t* __restrict in, std::size_t n) {
  std::uint64_t errors = 0;
  for (std::size_t i = 0; i < n; ++i) {
    W w;
    std::memcpy(&w, in + i * sizeof(W), sizeof(W));
    errors += (w != W(base + W(i)));
  }
  return errors;
}

// AVX2 (picked at run time; the build targets x86-64-v2 so binaries stay portable).
// The checker compares 32 words per iteration against a running counter vector and
// counts *equal* lanes (cmpeq gives -1, subtracted from an accumulator): no branch,
// no mask extraction in the loop, so it runs at load bandwidth. Unaligned loads and
// stores: a frame payload sits at slot + 48.
template <int Bits>
__attribute__((target("avx2"), always_inline)) inline __m256i add(__m256i a, __m256i b) {
  if constexpr (Bits == 32) return _mm256_add_epi32(a, b);
  else return _mm256_add_epi16(a, b);
}
template <int Bits>
__attribute__((target("avx2"), always_inline)) inline __m256i eq(__m256i a, __m256i b) {
  if constexpr (Bits == 32) return _mm256_cmpeq_epi32(a, b);
  else return _mm256_cmpeq_epi16(a, b);
}

// Every lane = v.
template <int Bits>
__attribute__((target("avx2"), always_inline)) inline __m256i splat(int v) {
  if constexpr (Bits == 32) return _mm256_set1_epi32(v);
  else return _mm256_set1_epi16(short(v));
}
// The expected words first, first + 1, ... of one vector (wrapping at the word size).
template <int Bits>
__attribute__((target("avx2"), always_inline)) inline __m256i counter_vector(std::uint64_t first) {
  if constexpr (Bits == 32)
    return _mm256_add_epi32(_mm256_set1_epi32(int(std::uint32_t(first))), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  else
    return _mm256_add_epi16(_mm256_set1_epi16(short(std::uint16_t(first))),
                            _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
}

// Counts the words that differ (the slow path: only for a payload known to be wrong).
template <int Bits>
__attribute__((target("avx2"))) std::uint64_t count_avx2(std::uint64_t base, const std::uint8_t* in, std::size_t n) {
  constexpr std::size_t kLanes = 256 / Bits, kStep = 4 * kLanes;
  std::size_t i = 0;
  std::uint64_t equal = 0;
  if (n >= kStep) {
    const __m256i inc = splat<Bits>(int(kLanes));
    __m256i e0 = counter_vector<Bits>(base), e1 = add<Bits>(e0, inc), e2 = add<Bits>(e1, inc), e3 = add<Bits>(e2, inc);
    const __m256i inc4 = add<Bits>(add<Bits>(inc, inc), add<Bits>(inc, inc));
    // Per-lane equal counts in 32-bit lanes (16-bit compares are widened by madd).
    __m256i acc = _mm256_setzero_si256();
    const __m256i ones16 = _mm256_set1_epi16(1);
    std::size_t block = 0;
    for (; i + kStep <= n; i += kStep) {
      const std::uint8_t* p = in + i * (Bits / 8);
      __m256i m0 = eq<Bits>(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), e0);
      __m256i m1 = eq<Bits>(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32)), e1);
      __m256i m2 = eq<Bits>(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 64)), e2);
      __m256i m3 = eq<Bits>(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 96)), e3);
      __m256i s;
      if constexpr (Bits == 32) {
        s = _mm256_add_epi32(_mm256_add_epi32(m0, m1), _mm256_add_epi32(m2, m3));
      } else {
        s = _mm256_madd_epi16(_mm256_add_epi16(_mm256_add_epi16(m0, m1), _mm256_add_epi16(m2, m3)), ones16);
      }
      acc = _mm256_sub_epi32(acc, s);
      e0 = add<Bits>(e0, inc4);
      e1 = add<Bits>(e1, inc4);
      e2 = add<Bits>(e2, inc4);
      e3 = add<Bits>(e3, inc4);
      if (++block == (1u << 20)) {  // drain before a 32-bit lane could wrap
        alignas(32) std::uint32_t lanes[8];
        _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc);
        for (std::uint32_t l : lanes) equal += l;
        acc = _mm256_setzero_si256();
        block = 0;
      }
    }
    alignas(32) std::uint32_t lanes[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc);
    for (std::uint32_t l : lanes) equal += l;
  }
  std::uint64_t errors = i - equal;
  if (n < kLanes) {
    using W = std::conditional_t<Bits == 32, std::uint32_t, std::uint16_t>;
    return errors + check_words<W>(W(base + i), in + i * (Bits / 8), n - i);
  }
  // The rest one vector at a time, the last one overlapping the one before it (a
  // 256-byte frame has 52 sc16 words: 32 + 8 + 8 + 4, where a scalar tail of 20 words
  // cost more than all the vectors), its already-checked lanes masked out.
  for (; i < n; i += kLanes) {
    const std::size_t at = i + kLanes <= n ? i : n - kLanes;
    const __m256i m = eq<Bits>(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + at * (Bits / 8))),
                               counter_vector<Bits>(base + at));
    // One mask bit per byte; a word is Bits/8 bytes. Bytes of lanes before i are skipped.
    const std::uint32_t unequal = ~std::uint32_t(_mm256_movemask_epi8(m));
    const std::uint32_t fresh = ~0u << ((i - at) * (Bits / 8));
    errors += std::uint64_t(__builtin_popcount(unequal & fresh)) / (Bits / 8);
  }
  return errors;
}

// The common case first: OR together every (word ^ expected) and test once; only a
// payload with a difference is counted exactly (count_avx2). Half the instructions
// of counting, no per-frame horizontal sum.
template <int Bits>
__attribute__((target("avx2"))) std::uint64_t check_avx2(std::uint64_t base, const std::uint8_t* in, std::size_t n) {
  constexpr std::size_t kLanes = 256 / Bits;
  if (n < kLanes) return count_avx2<Bits>(base, in, n);
  const __m256i inc = splat<Bits>(int(kLanes));
  __m256i e0 = counter_vector<Bits>(base), e1 = add<Bits>(e0, inc);
  const __m256i inc2 = add<Bits>(inc, inc);
  __m256i d0 = _mm256_setzero_si256(), d1 = _mm256_setzero_si256();
  std::size_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    const std::uint8_t* p = in + i * (Bits / 8);
    d0 = _mm256_or_si256(d0, _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), e0));
    d1 = _mm256_or_si256(d1, _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32)), e1));
    e0 = add<Bits>(e0, inc2);
    e1 = add<Bits>(e1, inc2);
  }
  if (i < n) {  // at most two more vectors, the last one ending at word n (overlapping)
    if (i + kLanes < n) {
      d0 = _mm256_or_si256(d0, _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i * (Bits / 8))), e0));
    }
    const std::size_t at = n - kLanes;
    d1 = _mm256_or_si256(d1, _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + at * (Bits / 8))),
                                              counter_vector<Bits>(base + at)));
  }
  const __m256i d = _mm256_or_si256(d0, d1);
  if (_mm256_testz_si256(d, d)) return 0;
  return count_avx2<Bits>(base, in, n);
}

template <int Bits>
__attribute__((target("avx2"))) void fill_avx2(std::uint64_t base, std::uint8_t* out, std::size_t n) {
  constexpr std::size_t kLanes = 256 / Bits;
  std::size_t i = 0;
  __m256i v = counter_vector<Bits>(base);
  const __m256i inc = splat<Bits>(int(kLanes));
  for (; i + kLanes <= n; i += kLanes) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i * (Bits / 8)), v);
    v = add<Bits>(v, inc);
  }
  if (i == n) return;
  using W = std::conditional_t<Bits == 32, std::uint32_t, std::uint16_t>;
  if (n < kLanes) return fill_words<W>(W(base + i), out + i * (Bits / 8), n - i);
  // The tail as one vector ending at word n: it rewrites a few words with the values
  // they already hold.
  const std::size_t at = n - kLanes;
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + at * (Bits / 8)), counter_vector<Bits>(base + at));
}

const bool kHaveAvx2 = __builtin_cpu_supports("avx2");
}  // namespace

void pattern_fill(std::uint64_t first_word, void* out, std::size_t n_words, SampleFormat fmt) {
  auto* p = static_cast<std::uint8_t*>(out);
  if (fmt == SampleFormat::sc16) {
    if (kHaveAvx2) fill_avx2<32>(first_word, p, n_words);
    else fill_words<std::uint32_t>(std::uint32_t(first_word), p, n_words);
  } else {
    if (kHaveAvx2) fill_avx2<16>(first_word, p, n_words);
    else fill_words<std::uint16_t>(std::uint16_t(first_word), p, n_words);
  }
}

std::uint64_t pattern_check(std::uint64_t first_word, const void* in, std::size_t n_words, SampleFormat fmt) {
  const auto* p = static_cast<const std::uint8_t*>(in);
  if (fmt == SampleFormat::sc16) {
    if (kHaveAvx2) return check_avx2<32>(first_word, p, n_words);
    return check_words<std::uint32_t>(std::uint32_t(first_word), p, n_words);
  }
  if (kHaveAvx2) return check_avx2<16>(first_word, p, n_words);
  return check_words<std::uint16_t>(std::uint16_t(first_word), p, n_words);
}

namespace {
template <typename W>
void fill_strided(std::uint64_t first, unsigned stride, std::uint8_t* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    W w = W(first + std::uint64_t(i) * stride);
    std::memcpy(out + i * sizeof(W), &w, sizeof(W));
  }
}
template <typename W>
std::uint64_t check_strided(std::uint64_t first, unsigned stride, const std::uint8_t* in, std::size_t n) {
  std::uint64_t errors = 0;
  for (std::size_t i = 0; i < n; ++i) {
    W w;
    std::memcpy(&w, in + i * sizeof(W), sizeof(W));
    errors += w != W(first + std::uint64_t(i) * stride);
  }
  return errors;
}
}  // namespace

void pattern_fill_channel(std::uint64_t first_tick, unsigned channels, unsigned ch, void* out, std::size_t n,
                          SampleFormat fmt) {
  if (channels == 1) return pattern_fill(first_tick, out, n, fmt);
  auto* p = static_cast<std::uint8_t*>(out);
  const std::uint64_t first = first_tick * channels + ch;
  if (fmt == SampleFormat::sc16) fill_strided<std::uint32_t>(first, channels, p, n);
  else fill_strided<std::uint16_t>(first, channels, p, n);
}

std::uint64_t pattern_check_channel(std::uint64_t first_tick, unsigned channels, unsigned ch, const void* in,
                                    std::size_t n, SampleFormat fmt) {
  if (channels == 1) return pattern_check(first_tick, in, n, fmt);
  const auto* p = static_cast<const std::uint8_t*>(in);
  const std::uint64_t first = first_tick * channels + ch;
  if (fmt == SampleFormat::sc16) return check_strided<std::uint32_t>(first, channels, p, n);
  return check_strided<std::uint16_t>(first, channels, p, n);
}

}  // namespace hilrig
