// The Adam/AdamW step on host arrays: see host_adam.h.
#include "host_adam.h"

#include <cmath>
#include <cstdint>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "simd_clones.h"

namespace pycoll {

namespace {

// sqrt of n values in place, with SSE2's correctly rounded sqrt on x86-64 (the same values as
// std::sqrt and NumPy's): GCC keeps a loop calling std::sqrt scalar, for its errno check, unless
// -fno-math-errno (which the optimize attribute and pragma do not give in GCC 12). Adam's loop
// around it vectorizes as two loops over a block in L1 with this between them (inlined into each
// SIMD clone, which GCC did not do by itself).
inline void sqrt_in_place(float* x, int64_t n) {
    int64_t i = 0;
#if defined(__SSE2__)
    for (; i + 4 <= n; i += 4) _mm_storeu_ps(x + i, _mm_sqrt_ps(_mm_loadu_ps(x + i)));
#endif
    for (; i < n; ++i) x[i] = std::sqrt(x[i]);
}
inline void sqrt_in_place(double* x, int64_t n) {
    int64_t i = 0;
#if defined(__SSE2__)
    for (; i + 2 <= n; i += 2) _mm_storeu_pd(x + i, _mm_sqrt_pd(_mm_loadu_pd(x + i)));
#endif
    for (; i < n; ++i) x[i] = std::sqrt(x[i]);
}

template <class T, bool kMax>
[[gnu::always_inline]] inline void adam_step_impl(T* __restrict param, const T* __restrict grad, T* __restrict m,
                           T* __restrict v, T* __restrict v_max, int64_t n, const AdamScalars& s) {
    const T decay = static_cast<T>(s.decay), b1 = static_cast<T>(s.beta1);
    const T c1 = static_cast<T>(s.one_minus_beta1), b2 = static_cast<T>(s.beta2);
    const T c2 = static_cast<T>(s.one_minus_beta2), eps = static_cast<T>(s.epsilon);
    const T step = static_cast<T>(s.step);
    constexpr int64_t kBlock = 1024;
    T root[kBlock];  // sqrt(v) (or of v_max) of one block
    for (int64_t at = 0; at < n; at += kBlock) {
        const int64_t len = n - at < kBlock ? n - at : kBlock;
        T* __restrict ps = param + at;
        const T* __restrict gs = grad + at;
        T* __restrict ms = m + at;
        T* __restrict vs = v + at;
        for (int64_t i = 0; i < len; ++i) {
            const T g = gs[i];
            ms[i] = ms[i] * b1 + c1 * g;
            T vi = vs[i] * b2 + c2 * (g * g);
            vs[i] = vi;
            if constexpr (kMax) {  // NumPy's maximum: a NaN on either side is the result
                const T old = v_max[at + i];
                vi = ((old != old) | (old >= vi)) ? old : vi;
                v_max[at + i] = vi;
            }
            root[i] = vi;
        }
        sqrt_in_place(root, len);
        for (int64_t i = 0; i < len; ++i) ps[i] = ps[i] * decay - (step * ms[i]) / (root[i] + eps);
    }
}

#define PYCOLL_ADAM_LOOP(T)                                                                       \
    PYCOLL_SIMD_CLONES void adam_step_loop(T* param, const T* grad, T* m, T* v, T* v_max,         \
                                           int64_t n, const AdamScalars& s) {                    \
        if (v_max == nullptr) {                                                                  \
            adam_step_impl<T, false>(param, grad, m, v, v_max, n, s);                            \
        } else {                                                                                 \
            adam_step_impl<T, true>(param, grad, m, v, v_max, n, s);                             \
        }                                                                                        \
    }
PYCOLL_ADAM_LOOP(float)
PYCOLL_ADAM_LOOP(double)
#undef PYCOLL_ADAM_LOOP

}  // namespace

template <class T>
void adam_step(T* param, const T* grad, T* m, T* v, T* v_max, int64_t n, const AdamScalars& s) {
    adam_step_loop(param, grad, m, v, v_max, n, s);
}
template void adam_step<float>(float*, const float*, float*, float*, float*, int64_t,
                               const AdamScalars&);
template void adam_step<double>(double*, const double*, double*, double*, double*, int64_t,
                                const AdamScalars&);

}  // namespace pycoll
