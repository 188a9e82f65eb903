// The Adam/AdamW step on device arrays in ONE kernel launch (pycoll/kernels/device_math.py), where
// CuPy's array formula takes twelve. Plain C++17 here, so that bindings.cpp builds with the host
// compiler; the kernel lives in cuda_adam.cu.
#pragma once

#include <cstdint>

#include "cuda_kernels.h"  // Type, Launch
#include "host_adam.h"     // AdamScalars

namespace pycoll::cuda {

// host_adam.h's step over `n` elements of `type` (f32 or f64) at device pointers on
// `where.device` (v_max null: no AMSGrad), enqueued on `where.stream`: the same operations in the
// same order, each rounded to nearest in T and never contracted into a fused multiply-add, so
// that a GPU gives the host kernel's bits (subnormals kept, as on the host). Throws
// std::invalid_argument for another type, std::runtime_error when CUDA fails.
void adam_step(Type type, void* param, const void* grad, void* m, void* v, void* v_max, int64_t n,
               const AdamScalars& s, Launch where);

}  // namespace pycoll::cuda
