#include "hilrig/rf/gaussian.hpp"

#include "hilrig/rf/simd_clones.hpp"

#if HILRIG_SIMD_CLONES_ON
#include <immintrin.h>
#endif

namespace hilrig::rf {
namespace {

// The ziggurat's fast path over a batch of draws: out[k] = u*x[i] (i the draw's layer, u
// its uniform); the draws whose |u| is not below the layer's ratio are listed in
// missed_at (in order) for the slow path; returns how many. Both versions compute the
// same doubles (u and the product are exact or rounded once, the same way); the AVX2 one
// reads the tables by gathers, four draws at a time. GCC picks a version at load time.
#if HILRIG_SIMD_CLONES_ON
[[gnu::target("default")]]
#endif
std::size_t ziggurat_fast_path(const std::uint32_t* __restrict bits, std::size_t count, const double* __restrict edge,
                      const double* __restrict ratio, double* __restrict out, std::uint16_t* __restrict missed_at) {
  std::size_t misses = 0;
  for (std::size_t k = 0; k < count; ++k) {
    const std::uint32_t r = bits[k];
    const std::uint32_t i = r & 0x7f;
    const double u = double(std::int32_t(r) >> 7) * 0x1.0p-24;
    out[k] = u * edge[i];
    missed_at[misses] = std::uint16_t(k);
    misses += !(std::fabs(u) < ratio[i]);
  }
  return misses;
}

#if HILRIG_SIMD_CLONES_ON
[[gnu::target("arch=x86-64-v3")]]
std::size_t ziggurat_fast_path(const std::uint32_t* __restrict bits, std::size_t count, const double* __restrict edge,
                      const double* __restrict ratio, double* __restrict out, std::uint16_t* __restrict missed_at) {
  const __m128i layer = _mm_set1_epi32(0x7f);
  const __m256d scale = _mm256_set1_pd(0x1.0p-24);
  const __m256d magnitude = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
  const __m256d zero = _mm256_setzero_pd(), all = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
  std::size_t misses = 0;
  for (std::size_t k = 0; k < count; k += 4) {  // count is a multiple of 4
    const __m128i r = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bits + k));
    const __m128i i = _mm_and_si128(r, layer);
    const __m256d u = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm_srai_epi32(r, 7)), scale);
    // Masked gathers of all lanes: the plain one reads an undefined register GCC warns of.
    const __m256d x = _mm256_mask_i32gather_pd(zero, edge, i, all, 8), q = _mm256_mask_i32gather_pd(zero, ratio, i, all, 8);
    _mm256_storeu_pd(out + k, _mm256_mul_pd(u, x));
    const __m256d below = _mm256_cmp_pd(_mm256_and_pd(u, magnitude), q, _CMP_LT_OQ);
    for (unsigned m = unsigned(~_mm256_movemask_pd(below)) & 0xf; m != 0; m &= m - 1)
      missed_at[misses++] = std::uint16_t(k + unsigned(__builtin_ctz(m)));
  }
  return misses;
}
#endif

}  // namespace

HILRIG_SIMD_CLONES
void ComplexGaussian::refill() {
  // Four xoshiro256++ generators side by side, a vector of four words each (two SSE
  // registers on the baseline); each 64-bit result is two draws, low half first.
  using u64x4 = std::uint64_t __attribute__((vector_size(32)));
  u64x4 s0, s1, s2, s3;
  std::memcpy(&s0, s0_.data(), sizeof s0);
  std::memcpy(&s1, s1_.data(), sizeof s1);
  std::memcpy(&s2, s2_.data(), sizeof s2);
  std::memcpy(&s3, s3_.data(), sizeof s3);
  std::uint32_t* bits = bits_.data();
  for (std::size_t k = 0; k < kBatch / 2; k += kLanes) {
    const u64x4 sum = s0 + s3;
    const u64x4 result = ((sum << 23) | (sum >> 41)) + s0;
    const u64x4 t = s1 << 17;
    s2 ^= s0;
    s3 ^= s1;
    s1 ^= s2;
    s0 ^= s3;
    s2 ^= t;
    s3 = (s3 << 45) | (s3 >> 19);
    std::memcpy(bits + 2 * k, &result, sizeof result);  // little-endian: lane j's low half at 2j, high at 2j + 1
  }
  std::memcpy(s0_.data(), &s0, sizeof s0);
  std::memcpy(s1_.data(), &s1, sizeof s1);
  std::memcpy(s2_.data(), &s2, sizeof s2);
  std::memcpy(s3_.data(), &s3, sizeof s3);
  const std::size_t misses = ziggurat_fast_path(bits, kBatch, t_->x.data(), t_->ratio.data(), batch_.data(), missed_at_.data());
  for (std::size_t m = 0; m < misses; ++m) batch_[missed_at_[m]] = finish(bits[missed_at_[m]]);
  used_ = 0;
}

}  // namespace hilrig::rf
