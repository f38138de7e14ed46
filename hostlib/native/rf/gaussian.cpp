#include "hilrig/rf/gaussian.hpp"

#include "hilrig/rf/simd_clones.hpp"

#include <cmath>
#include <cstring>

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

// The generators' next count draws into bits (count a multiple of 16): eight xoshiro256++
// generators, lane j's 64-bit result draws 2j (its low half) and 2j + 1, each word of the
// state as kParts vectors V of 8 / kParts lanes: one AVX-512 register, or two AVX2 ones
// (GCC spills a 64-byte vector it has to split, so the split is written out).
template <class V, std::size_t kParts>
[[gnu::always_inline]] inline void draw_bits_as(std::uint64_t* __restrict state, std::uint32_t* __restrict bits,
                                                std::size_t count) {
  constexpr std::size_t lanes = sizeof(V) / 8;
  static_assert(lanes * kParts == 8);
  V s0[kParts], s1[kParts], s2[kParts], s3[kParts];
  for (std::size_t p = 0; p < kParts; ++p) {
    std::memcpy(&s0[p], state + 0 + lanes * p, sizeof(V));
    std::memcpy(&s1[p], state + 8 + lanes * p, sizeof(V));
    std::memcpy(&s2[p], state + 16 + lanes * p, sizeof(V));
    std::memcpy(&s3[p], state + 24 + lanes * p, sizeof(V));
  }
  for (std::size_t k = 0; k < count; k += 16) {
    for (std::size_t p = 0; p < kParts; ++p) {
      const V sum = s0[p] + s3[p];
      const V result = ((sum << 23) | (sum >> 41)) + s0[p];
      const V t = s1[p] << 17;
      s2[p] ^= s0[p];
      s3[p] ^= s1[p];
      s1[p] ^= s2[p];
      s0[p] ^= s3[p];
      s2[p] ^= t;
      s3[p] = (s3[p] << 45) | (s3[p] >> 19);
      std::memcpy(bits + k + 2 * lanes * p, &result, sizeof result);  // little-endian: low half first
    }
  }
  for (std::size_t p = 0; p < kParts; ++p) {
    std::memcpy(state + 0 + lanes * p, &s0[p], sizeof(V));
    std::memcpy(state + 8 + lanes * p, &s1[p], sizeof(V));
    std::memcpy(state + 16 + lanes * p, &s2[p], sizeof(V));
    std::memcpy(state + 24 + lanes * p, &s3[p], sizeof(V));
  }
}
using u64x4 = std::uint64_t __attribute__((vector_size(32)));
#if HILRIG_SIMD_CLONES_ON
[[gnu::target("default")]]
#endif
void draw_bits(std::uint64_t* state, std::uint32_t* bits, std::size_t count) {
  draw_bits_as<u64x4, 2>(state, bits, count);
}
#if HILRIG_SIMD_CLONES_ON
[[gnu::target("arch=x86-64-v3")]]
void draw_bits(std::uint64_t* state, std::uint32_t* bits, std::size_t count) {
  draw_bits_as<u64x4, 2>(state, bits, count);
}
using u64x8 = std::uint64_t __attribute__((vector_size(64)));
[[gnu::target("arch=x86-64-v4")]]
void draw_bits(std::uint64_t* state, std::uint32_t* bits, std::size_t count) {
  draw_bits_as<u64x8, 1>(state, bits, count);
}
#endif

using v4 = vec32<double>;
using i4 = std::int64_t __attribute__((vector_size(32)));

// Fields 0-3 (or 4-7: half 1) of four 64-byte rows as four vectors, field f's lane j from
// row j (a 4x4 transpose; out-parameters, as a vector return in a baseline function would
// change the ABI between copies).
[[gnu::always_inline]] inline void transpose_rows(const double* const* rows, std::size_t half, v4 (&field)[4]) {
  v4 a, b, c, d;
  std::memcpy(&a, rows[0] + 4 * half, sizeof a);
  std::memcpy(&b, rows[1] + 4 * half, sizeof b);
  std::memcpy(&c, rows[2] + 4 * half, sizeof c);
  std::memcpy(&d, rows[3] + 4 * half, sizeof d);
  const v4 ab_even = __builtin_shufflevector(a, b, 0, 4, 2, 6), ab_odd = __builtin_shufflevector(a, b, 1, 5, 3, 7);
  const v4 cd_even = __builtin_shufflevector(c, d, 0, 4, 2, 6), cd_odd = __builtin_shufflevector(c, d, 1, 5, 3, 7);
  field[0] = __builtin_shufflevector(ab_even, cd_even, 0, 1, 4, 5);
  field[1] = __builtin_shufflevector(ab_odd, cd_odd, 0, 1, 4, 5);
  field[2] = __builtin_shufflevector(ab_even, cd_even, 2, 3, 6, 7);
  field[3] = __builtin_shufflevector(ab_odd, cd_odd, 2, 3, 6, 7);
}

}  // namespace

namespace gaussian_detail {
#if HILRIG_SIMD_CLONES_ON
[[gnu::target("default")]] std::size_t settle_round_wide(const SettleRound&, std::size_t) { return kNotWide; }

namespace {
// Field f of the rows of layers index (8 x 8 doubles a row).
[[gnu::target("arch=x86-64-v4"), gnu::always_inline]] inline __m512d row_field(const double* rows, __m256i first,
                                                                                  int f) {
  return _mm512_mask_i32gather_pd(_mm512_setzero_pd(), 0xff, _mm256_add_epi32(first, _mm256_set1_epi32(f)), rows, 8);
}
}  // namespace

// settle_round's arithmetic eight draws a register, fused multiply-adds where GCC fuses
// the four-lane code's (so the same values; zero-masked forms of all lanes, as the plain
// ones read an undefined register GCC warns of): the verdicts as masks, the values scattered to
// their positions, the draws out compressed to the front of pending_ in order; the rare
// sliver and tail draws finished one by one, in order, before.
[[gnu::target("arch=x86-64-v4")]] std::size_t settle_round_wide(const SettleRound& g, std::size_t count) {
  const double* rows = g.rows;
  const __m512d one = _mm512_set1_pd(1.0), zero = _mm512_setzero_pd();
  std::size_t out = 0;
  for (std::size_t e = 0; e < count; e += 8) {
    const __mmask8 valid = count - e >= 8 ? __mmask8(0xff) : __mmask8((1u << (count - e)) - 1);
    const __m256i at = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(g.pending_at + e));
    const __m256i r = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(g.pending_r + e));
    const __m512i word = _mm512_loadu_si512(g.words + e);
    const __m256i first = _mm256_slli_epi32(_mm256_and_si256(r, _mm256_set1_epi32(0x7f)), 3);
    const __m512d outer_x = row_field(rows, first, kOuterX), inner_x = row_field(rows, first, kInnerX);
    const __m512d outer_d = row_field(rows, first, kOuterDensity), inner_d = row_field(rows, first, kInnerDensity);
    const __m512d slope = row_field(rows, first, kSlope), ratio = row_field(rows, first, kRatio);
    const __m512d concavity = row_field(rows, first, kConcavity), base = row_field(rows, first, kBase);
    const __m512d u = _mm512_mul_pd(_mm512_maskz_cvtepi32_pd(0xff, _mm256_srai_epi32(r, 7)), _mm512_set1_pd(0x1.0p-24));
    __m512d x = _mm512_mul_pd(u, outer_x);
    const __m512d height = _mm512_maskz_cvtepu32_pd(0xff, _mm512_maskz_cvtepi64_epi32(0xff, _mm512_maskz_srli_epi64(0xff, word, 32)));
    const __m512d scaled = _mm512_mul_pd(_mm512_add_pd(height, _mm512_set1_pd(0.5)), _mm512_set1_pd(0x1.0p-32));
    const __m512d y = _mm512_fmadd_pd(scaled, _mm512_sub_pd(outer_d, inner_d), inner_d);
    const __m512d ax = _mm512_abs_pd(x), au = _mm512_abs_pd(u);
    const __m512d chord = _mm512_fmadd_pd(_mm512_sub_pd(ax, inner_x), slope, inner_d);
    const __m512d tangent_inner = _mm512_mul_pd(inner_d, _mm512_fnmadd_pd(inner_x, _mm512_sub_pd(ax, inner_x), one));
    const __m512d tangent_outer = _mm512_mul_pd(outer_d, _mm512_fnmadd_pd(outer_x, _mm512_sub_pd(ax, outer_x), one));
    const __mmask8 inner_lower = _mm512_cmp_pd_mask(tangent_inner, tangent_outer, _CMP_LT_OQ);
    const __m512d tangent_low = _mm512_mask_blend_pd(inner_lower, tangent_outer, tangent_inner);
    const __m512d tangent_high = _mm512_mask_blend_pd(inner_lower, tangent_inner, tangent_outer);
    const __mmask8 concave = _mm512_cmp_pd_mask(concavity, zero, _CMP_LT_OQ);
    const __mmask8 convex = _mm512_cmp_pd_mask(concavity, zero, _CMP_GT_OQ);
    const __mmask8 under = (concave & _mm512_cmp_pd_mask(y, chord, _CMP_LE_OQ)) |
                           (convex & _mm512_cmp_pd_mask(y, tangent_high, _CMP_LT_OQ));
    const __mmask8 over = (concave & _mm512_cmp_pd_mask(y, tangent_low, _CMP_GT_OQ)) |
                          (convex & _mm512_cmp_pd_mask(y, chord, _CMP_GE_OQ));
    const __mmask8 inside = _mm512_cmp_pd_mask(au, ratio, _CMP_LT_OQ);
    const __mmask8 in_base = _mm512_cmp_pd_mask(base, zero, _CMP_GT_OQ);
    __mmask8 accepted = valid & (inside | (~in_base & under));
    const __mmask8 tail = valid & ~inside & in_base;
    const __mmask8 undecided = valid & ~inside & ~in_base & ~under & ~over;
    if (tail | undecided) [[unlikely]] {  // the sliver the squeeze leaves, or the tail: in order
      alignas(64) double xs[8], ys[8], us[8];
      _mm512_store_pd(xs, x);
      _mm512_store_pd(ys, y);
      _mm512_store_pd(us, u);
      for (unsigned m = unsigned(tail | undecided); m != 0; m &= m - 1) {
        const unsigned j = unsigned(__builtin_ctz(m));
        if (tail >> j & 1) {
          xs[j] = g.tail(*g.generator, us[j] < 0);
          accepted |= __mmask8(1u << j);
        } else if (ys[j] < std::exp(-0.5 * xs[j] * xs[j])) {
          accepted |= __mmask8(1u << j);
        }
      }
      x = _mm512_load_pd(xs);
    }
    // Every draw's value to its position (an out draw's is written again when it is settled).
    _mm256_mask_i32scatter_ps(g.batch, valid, at, _mm512_maskz_cvtpd_ps(0xff, x), 4);
    const __mmask8 rejected = valid & ~accepted;
    // Compressed in registers and stored whole: out <= e, so the eight lanes written end
    // before the next chunk's draws.
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(g.pending_at + out), _mm256_maskz_compress_epi32(rejected, at));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(g.pending_r + out),
                        _mm256_maskz_compress_epi32(rejected, _mm512_maskz_cvtepi64_epi32(0xff, word)));
    out += unsigned(__builtin_popcount(rejected));
  }
  return out;
}
#else
std::size_t settle_round_wide(const SettleRound&, std::size_t) { return kNotWide; }
#endif
}  // namespace gaussian_detail

void ComplexGaussian::settle(std::size_t count) {
  while (count > 0) {
    if (spare_used_ + count > kSpare) {  // every draw of the round has its word
      draw_bits(spare_state_[0].data(), reinterpret_cast<std::uint32_t*>(spare_.data()), 2 * kSpare);
      spare_used_ = 0;
    }
    const gaussian_detail::SettleRound round{t_->row[0].v, pending_at_.data(), pending_r_.data(),
                                             spare_.data() + spare_used_, batch_.data(), this, &tail_of};
    std::size_t out = gaussian_detail::settle_round_wide(round, count);
    if (out == gaussian_detail::kNotWide) out = settle_round(count);
    spare_used_ += count;
    count = out;
  }
}

HILRIG_SIMD_CLONES
std::size_t ComplexGaussian::settle_round(std::size_t count) {
  static_assert(kSettleLanes >= 4);
  using enum gaussian_detail::RowField;
  const Tables& t = *t_;
  std::size_t out = 0;  // this round's draws that were out, drawn anew
  {
    for (std::size_t e = 0; e < count; e += 4) {
      const std::uint64_t* word = spare_.data() + spare_used_ + e;
      // Lanes past count are slack: computed and dropped.
      const std::uint32_t* at = pending_at_.data() + e;
      const std::uint32_t* r = pending_r_.data() + e;
      const double* rows[4];
      for (std::size_t j = 0; j < 4; ++j) rows[j] = t.row[r[j] & 0x7f].v;
      v4 lo[4], hi[4];
      transpose_rows(rows, 0, lo);
      transpose_rows(rows, 1, hi);
      const v4 outer_x = lo[kOuterX], inner_x = lo[kInnerX], outer_density = lo[kOuterDensity];
      const v4 inner_density = lo[kInnerDensity], slope = hi[kSlope - 4], ratio = hi[kRatio - 4];
      const i4 concave = hi[kConcavity - 4] < 0, convex = hi[kConcavity - 4] > 0, base = hi[kBase - 4] > 0;
      // The draw's uniform in [-1, 1) (its top 25 bits), the point and the wedge's height.
      using i32x4 = std::int32_t __attribute__((vector_size(16)));
      i32x4 raw;
      std::memcpy(&raw, r, sizeof raw);
      const v4 u = __builtin_convertvector(raw >> 7, v4) * 0x1.0p-24;
      const v4 x = u * outer_x;
      const v4 height = v4{double(word[0] >> 32), double(word[1] >> 32), double(word[2] >> 32), double(word[3] >> 32)};
      const v4 y = inner_density + (height + 0.5) * 0x1.0p-32 * (outer_density - inner_density);
      const v4 ax = x < 0 ? -x : x, au = u < 0 ? -u : u;
      // The density lies between the chord through the wedge's corners and the tangents at
      // them: under the chord where it is concave, over it where convex.
      const v4 chord = inner_density + (ax - inner_x) * slope;
      const v4 tangent_inner = inner_density * (1 - inner_x * (ax - inner_x));
      const v4 tangent_outer = outer_density * (1 - outer_x * (ax - outer_x));
      const v4 tangent_low = tangent_inner < tangent_outer ? tangent_inner : tangent_outer;
      const v4 tangent_high = tangent_inner < tangent_outer ? tangent_outer : tangent_inner;
      const i4 under = (concave & (y <= chord)) | (convex & (y < tangent_high));
      const i4 over = (concave & (y > tangent_low)) | (convex & (y >= chord));
      const i4 inside = au < ratio;
      const i4 verdict = inside ? i4{} + std::int64_t(kAccept)
                         : base ? i4{} + std::int64_t(kTail)
                         : under ? i4{} + std::int64_t(kAccept)
                         : over  ? i4{} + std::int64_t(kReject)
                                 : i4{} + std::int64_t(kUndecided);
      for (std::size_t j = 0; j < 4 && e + j < count; ++j) {
        double value = x[j];
        bool accepted = verdict[j] == kAccept;
        if (verdict[j] >= kUndecided) [[unlikely]] {  // the sliver the squeeze leaves, or the tail
          if (verdict[j] == kTail) {
            value = tail(u[j] < 0), accepted = true;
          } else {
            accepted = y[j] < std::exp(-0.5 * value * value);
          }
        }
        const std::uint32_t position = at[j];
        batch_[position] = float(value);  // an out draw's position is written again when it is settled
        pending_at_[out] = position;
        pending_r_[out] = std::uint32_t(word[j]);
        out += !accepted;
      }
    }
  }
  return out;
}

void ComplexGaussian::refill() {
  draw_bits(state_[0].data(), bits_.data(), kBatch);
  const std::size_t misses =
      ziggurat_fast_path(bits_.data(), kBatch, t_->x_float.data(), t_->ratio_float.data(), batch_.data(), pending_at_.data());
  for (std::size_t m = 0; m < misses; ++m) pending_r_[m] = bits_[pending_at_[m]];
  settle(misses);
  used_ = 0;
}

}  // namespace hilrig::rf
