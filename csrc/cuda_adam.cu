// The Adam step on device arrays: see cuda_adam.h. One thread per element (a grid-stride loop);
// every operation through CUDA's round-to-nearest intrinsics, which the compiler never fuses.
#include "cuda_adam.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>

#include "cuda_runtime_util.cuh"

namespace pycoll::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 4096;  // then each thread loops

__device__ inline float add(float a, float b) { return __fadd_rn(a, b); }
__device__ inline float sub(float a, float b) { return __fsub_rn(a, b); }
__device__ inline float mul(float a, float b) { return __fmul_rn(a, b); }
__device__ inline float div(float a, float b) { return __fdiv_rn(a, b); }
__device__ inline float root(float a) { return __fsqrt_rn(a); }
__device__ inline double add(double a, double b) { return __dadd_rn(a, b); }
__device__ inline double sub(double a, double b) { return __dsub_rn(a, b); }
__device__ inline double mul(double a, double b) { return __dmul_rn(a, b); }
__device__ inline double div(double a, double b) { return __ddiv_rn(a, b); }
__device__ inline double root(double a) { return __dsqrt_rn(a); }

// The scalars of one step, rounded to T once on the host (host_adam.cpp rounds them so).
template <class T>
struct Scalars {
    T decay, b1, c1, b2, c2, eps, step;
};

template <class T, bool kMax>
__global__ void __launch_bounds__(kThreads)
    adam_kernel(T* __restrict__ param, const T* __restrict__ grad, T* __restrict__ m,
                T* __restrict__ v, T* __restrict__ v_max, int64_t n, Scalars<T> s) {
    const int64_t stride = int64_t(gridDim.x) * kThreads;
    for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) {
        const T g = grad[i];
        const T mi = add(mul(m[i], s.b1), mul(s.c1, g));
        m[i] = mi;
        T vi = add(mul(v[i], s.b2), mul(s.c2, mul(g, g)));
        v[i] = vi;
        if constexpr (kMax) {  // NumPy's maximum: a NaN on either side is the result
            const T old = v_max[i];
            vi = (old != old || old >= vi) ? old : vi;
            v_max[i] = vi;
        }
        param[i] = sub(mul(param[i], s.decay), div(mul(s.step, mi), add(root(vi), s.eps)));
    }
}

template <class T>
void launch(void* param, const void* grad, void* m, void* v, void* v_max, int64_t n,
            const AdamScalars& a, cudaStream_t stream) {
    const Scalars<T> s{static_cast<T>(a.decay), static_cast<T>(a.beta1),
                       static_cast<T>(a.one_minus_beta1), static_cast<T>(a.beta2),
                       static_cast<T>(a.one_minus_beta2), static_cast<T>(a.epsilon),
                       static_cast<T>(a.step)};
    const auto blocks = static_cast<unsigned>(std::min<int64_t>((n + kThreads - 1) / kThreads, kMaxBlocks));
    auto* p = static_cast<T*>(param);
    auto* ms = static_cast<T*>(m);
    auto* vs = static_cast<T*>(v);
    const auto* gs = static_cast<const T*>(grad);
    if (v_max == nullptr) {
        adam_kernel<T, false><<<blocks, kThreads, 0, stream>>>(p, gs, ms, vs, nullptr, n, s);
    } else {
        adam_kernel<T, true><<<blocks, kThreads, 0, stream>>>(p, gs, ms, vs, static_cast<T*>(v_max), n, s);
    }
}

}  // namespace

void adam_step(Type type, void* param, const void* grad, void* m, void* v, void* v_max, int64_t n,
               const AdamScalars& s, Launch where) {
    if (type != Type::f32 && type != Type::f64) {
        throw std::invalid_argument(std::string("adam_step: no CUDA kernel for ") + name(type) +
                                    " (float32 and float64 only)");
    }
    if (n <= 0) return;
    const auto stream = reinterpret_cast<cudaStream_t>(where.stream);
    DeviceGuard guard(where.device);
    if (type == Type::f32) {
        launch<float>(param, grad, m, v, v_max, n, s, stream);
    } else {
        launch<double>(param, grad, m, v, v_max, n, s, stream);
    }
    check(cudaGetLastError(), "the Adam kernel's launch");
}

}  // namespace pycoll::cuda
