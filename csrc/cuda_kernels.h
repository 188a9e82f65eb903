// CUDA kernels behind pycoll.kernels for device arrays: fused flatten / unflatten of many arrays
// into one contiguous device buffer, with an optional fused scale and float cast, in ONE kernel
// launch on the caller's stream. Plain C++17 here (no CUDA headers), so that bindings.cpp builds
// with the host compiler; the kernels and the CUDA runtime calls live in cuda_kernels.cu.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "host_kernels.h"  // Piece: an array's first element and its number of elements

namespace pycoll::cuda {

// Element types of the device kernels. `bytes` is a plain copy of any dtype: its pieces count
// bytes, not elements. The codes are those the Python side passes (see bindings.cpp).
enum class Type : int { bytes = 0, f16 = 1, bf16 = 2, f32 = 3, f64 = 4 };

const char* name(Type t);
std::size_t size_of(Type t);

// Pairs served: bytes -> bytes (never scaled); identity of f16, bf16, f32 and f64 (scaled);
// f32 <-> f16, f32 <-> bf16 and f32 <-> f64, scaled or not.
bool cast_supported(Type from, Type to);

// Where a call runs: the device of its arrays and a cudaStream_t (0: the legacy default stream).
struct Launch {
    int device;
    std::uintptr_t stream;
};

// Converting copies on the device: each element is read as `from`, optionally multiplied by
// `scale`, and written as `to`. The product is taken in the wider of the two types, with `scale`
// rounded to that type first (bfloat16 counts as float: NumPy with ml_dtypes multiplies it by a
// Python float in float32), then rounded to nearest even to `to`: NumPy's
// (a.astype(wide) * scale).astype(to). For bytes -> bytes, a byte copy.
//
// All pointers are device pointers on `where.device`, aligned to their element size; `flat`
// holds the pieces' total, in order, and overlaps none of them. The copy is only enqueued on
// `where.stream`: it is not finished when these return. Throws std::invalid_argument for a pair
// that is not served and std::runtime_error (with the CUDA error's text) when CUDA fails.
void flatten(const std::vector<Piece>& pieces, Type from, void* flat, Type to,
             std::optional<double> scale, Launch where);
void unflatten(const void* flat, Type from, const std::vector<Piece>& pieces, Type to,
               std::optional<double> scale, Launch where);

// The nvcc that compiled the kernels ("13.0.88") and the CUDA runtime linked in ("13.0").
std::string nvcc_version();
std::string runtime_version();

}  // namespace pycoll::cuda
