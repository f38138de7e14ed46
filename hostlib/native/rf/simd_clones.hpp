// Hot per-sample loops compiled twice, for x86-64-v3 (AVX2, FMA) and for the build's
// baseline (x86-64-v2), the copy chosen once when the library loads (GCC's ifunc): the
// build stays portable and a v3 host runs four doubles a vector with fused multiply-adds.
// The copies may differ in the last bits (an FMA rounds once); on one host every call
// runs the same copy, so a sample is the same whichever call computed it. Not under
// ThreadSanitizer, whose runtime is not up yet when the loader runs ifunc resolvers, nor
// under AddressSanitizer (its builds check memory, not speed: one copy compiles faster).
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_THREAD__) && \
    !defined(__SANITIZE_ADDRESS__)
#define HILRIG_SIMD_CLONES_ON 1
#define HILRIG_SIMD_CLONES [[gnu::target_clones("arch=x86-64-v3", "default")]]
#else
#define HILRIG_SIMD_CLONES_ON 0
#define HILRIG_SIMD_CLONES
#endif

namespace hilrig::rf {
// 32- and 64-byte vectors of T (GCC's vector extension): the stream's kernels are written
// once for T = double and float with them (the attribute cannot name a template's
// parameter directly). A 64-byte vector is one AVX-512 register; below AVX-512 it compiles
// to spills, so it is used only in functions built for x86-64-v4.
template <class T>
struct Vec32;
template <>
struct Vec32<double> {
  using type = double __attribute__((vector_size(32)));
};
template <>
struct Vec32<float> {
  using type = float __attribute__((vector_size(32)));
};
template <class T>
using vec32 = typename Vec32<T>::type;
template <class T>
struct Vec64;
template <>
struct Vec64<double> {
  using type = double __attribute__((vector_size(64)));
};
template <>
struct Vec64<float> {
  using type = float __attribute__((vector_size(64)));
};
template <class T>
using vec64 = typename Vec64<T>::type;
}  // namespace hilrig::rf
