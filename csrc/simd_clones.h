// PYCOLL_SIMD_CLONES: where the CPU has AVX-512 or AVX2, a loop marked with it runs in a clone
// compiled for them (GCC's target_clones, chosen at load time). The host kernels' loops use it;
// they are written so that every clone gives the same values (no FMA, each operation rounded as
// in the baseline).
#pragma once

#if defined(__GNUC__) && defined(__x86_64__) && defined(__linux__)
#define PYCOLL_SIMD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define PYCOLL_SIMD_CLONES
#endif
