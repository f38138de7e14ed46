#include "hilrig/rf/gaussian.hpp"

#include "hilrig/rf/simd_clones.hpp"

#if HILRIG_SIMD_CLONES_ON
#include <immintrin.h>
#endif

namespace hilrig::rf {
namespace {

// The ziggurat's fast path over a batch of draws: out[k] = u*x[i] in float (i the draw's
// layer, u its uniform, exact in float); the draws whose |u| is not below the layer's
// ratio are listed in missed_at (in order) for the slow path; returns how many. Both
// versions compute the same floats (u exact, the product rounded once); the AVX2 one reads
// the tables by gathers, eight draws at a time, the AVX-512 one by permutes. GCC picks a
// version at load time.
#if HILRIG_SIMD_CLONES_ON
[[gnu::target("default")]]
#endif
std::size_t ziggurat_fast_path(const std::uint32_t* __restrict bits, std::size_t count, const float* __restrict edge,
                               const float* __restrict ratio, float* __restrict out,
                               std::uint32_t* __restrict missed_at) {
  std::size_t misses = 0;
  for (std::size_t k = 0; k < count; ++k) {
    const std::uint32_t r = bits[k];
    const std::uint32_t i = r & 0x7f;
    const float u = float(std::int32_t(r) >> 7) * 0x1.0p-24f;
    out[k] = u * edge[i];
    missed_at[misses] = std::uint32_t(k);
    misses += !(std::fabs(u) < ratio[i]);
  }
  return misses;
}

#if HILRIG_SIMD_CLONES_ON
[[gnu::target("arch=x86-64-v3")]]
std::size_t ziggurat_fast_path(const std::uint32_t* __restrict bits, std::size_t count, const float* __restrict edge,
                               const float* __restrict ratio, float* __restrict out,
                               std::uint32_t* __restrict missed_at) {
  const __m256i layer = _mm256_set1_epi32(0x7f);
  const __m256 scale = _mm256_set1_ps(0x1.0p-24f);
  const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 zero = _mm256_setzero_ps(), all = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
  std::size_t misses = 0;
  for (std::size_t k = 0; k < count; k += 8) {  // count is a multiple of 8
    const __m256i r = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bits + k));
    const __m256i i = _mm256_and_si256(r, layer);
    const __m256 u = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srai_epi32(r, 7)), scale);
    // Masked gathers of all lanes: the plain one reads an undefined register GCC warns of.
    const __m256 x = _mm256_mask_i32gather_ps(zero, edge, i, all, 4), q = _mm256_mask_i32gather_ps(zero, ratio, i, all, 4);
    _mm256_storeu_ps(out + k, _mm256_mul_ps(u, x));
    const __m256 below = _mm256_cmp_ps(_mm256_and_ps(u, magnitude), q, _CMP_LT_OQ);
    for (unsigned m = unsigned(~_mm256_movemask_ps(below)) & 0xff; m != 0; m &= m - 1)
      missed_at[misses++] = std::uint32_t(k + unsigned(__builtin_ctz(m)));
  }
  return misses;
}

// AVX-512: the 128-entry tables held in eight registers each and read by two-table permutes
// (32 entries a permute, the layer's top two bits choosing among four), sixteen draws at a
// time, no gathers.
[[gnu::target("arch=x86-64-v4")]] inline __m512 lookup128(const __m512* part, __m512i i, __mmask16 bit5, __mmask16 bit6) {
  const __m512 a = _mm512_permutex2var_ps(part[0], i, part[1]), b = _mm512_permutex2var_ps(part[2], i, part[3]);
  const __m512 c = _mm512_permutex2var_ps(part[4], i, part[5]), d = _mm512_permutex2var_ps(part[6], i, part[7]);
  return _mm512_mask_blend_ps(bit6, _mm512_mask_blend_ps(bit5, a, b), _mm512_mask_blend_ps(bit5, c, d));
}

[[gnu::target("arch=x86-64-v4")]]
std::size_t ziggurat_fast_path(const std::uint32_t* __restrict bits, std::size_t count, const float* __restrict edge,
                               const float* __restrict ratio, float* __restrict out,
                               std::uint32_t* __restrict missed_at) {
  __m512 edges[8], ratios[8];
  for (int p = 0; p < 8; ++p) edges[p] = _mm512_loadu_ps(edge + 16 * p), ratios[p] = _mm512_loadu_ps(ratio + 16 * p);
  const __m512i layer = _mm512_set1_epi32(0x7f), bit5 = _mm512_set1_epi32(32), bit6 = _mm512_set1_epi32(64);
  const __m512 scale = _mm512_set1_ps(0x1.0p-24f);
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  std::size_t misses = 0;
  for (std::size_t k = 0; k < count; k += 16) {  // count is a multiple of 16
    const __m512i r = _mm512_loadu_si512(bits + k);
    const __m512i i = _mm512_and_si512(r, layer);
    const __mmask16 b5 = _mm512_test_epi32_mask(i, bit5), b6 = _mm512_test_epi32_mask(i, bit6);
    // Zero-masked forms of all lanes: the plain ones read an undefined register GCC warns of.
    const __m512 u = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(0xffff, _mm512_maskz_srai_epi32(0xffff, r, 7)), scale);
    _mm512_storeu_ps(out + k, _mm512_mul_ps(u, lookup128(edges, i, b5, b6)));
    const __mmask16 missed = _mm512_cmp_ps_mask(_mm512_abs_ps(u), lookup128(ratios, i, b5, b6), _CMP_NLT_UQ);
    _mm512_mask_compressstoreu_epi32(missed_at + misses, missed, _mm512_add_epi32(lane, _mm512_set1_epi32(int(k))));
    misses += unsigned(__builtin_popcount(missed));
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
  const std::size_t misses =
      ziggurat_fast_path(bits, kBatch, t_->x_float.data(), t_->ratio_float.data(), batch_.data(), missed_at_.data());
  for (std::size_t m = 0; m < misses; ++m) batch_[missed_at_[m]] = float(finish(bits[missed_at_[m]]));
  used_ = 0;
}

}  // namespace hilrig::rf
