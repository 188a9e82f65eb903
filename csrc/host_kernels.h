// Host (CPU) kernels behind pycoll.kernels: fused flatten / unflatten of many arrays into one
// contiguous buffer, with an optional fused scale and float cast (the tensor layer's float ops are
// in host_math.h). Plain C++17, no Python here:
// bindings.cpp collects pointers and sizes under the GIL, then calls these with the GIL released.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace pycoll {

// The floating types the converting kernels read and write (native byte order), narrowest first
// (the scale is rounded to the wider of a pair by this order, bf16's to float; f16 and bf16 are
// never paired).
enum class Float { f16, bf16, f32, f64 };

const char* name(Float t);

// Casts the converting kernels serve: identity, f32 <-> f16, f32 <-> bf16, f64 <-> f32.
bool cast_supported(Float from, Float to);

// One array of the list: its first element and its number of elements.
struct Piece {
    void* data;
    int64_t count;
};

// The 64-bit offset table: offsets[i] is where piece i starts in the flat buffer (in elements),
// offsets[n] is the total. 64-bit so that totals past 2**31 elements work.
std::vector<int64_t> offset_table(const std::vector<Piece>& pieces);

// Byte copies for any fixed-size element type: pieces -> flat, and flat -> pieces.
void flatten_bytes(const std::vector<Piece>& pieces, std::size_t itemsize, void* flat);
void unflatten_bytes(const void* flat, std::size_t itemsize, const std::vector<Piece>& pieces);

// Converting copies: each element is read as `from`, optionally multiplied by `scale`, and written
// as `to`. Arithmetic is done in the wider of the two types (the scale rounded to it first), then
// rounded to `to`: the result equals NumPy's (a.astype(wide) * scale).astype(to), bit for bit
// (for bfloat16, wide is float32, as ml_dtypes computes a * scale).
// The pair must satisfy cast_supported (std::invalid_argument otherwise).
void flatten_cast(const std::vector<Piece>& pieces, Float from, void* flat, Float to,
                  std::optional<double> scale);
void unflatten_cast(const void* flat, Float from, const std::vector<Piece>& pieces, Float to,
                    std::optional<double> scale);

// IEEE binary16 <-> binary32/64 at the bit level, rounding to nearest even exactly as NumPy does
// (subnormals, signed zeros, overflow to inf, NaN payload kept as NumPy keeps it).
uint16_t float_to_half(float f);
uint16_t double_to_half(double d);
float half_to_float(uint16_t h);

}  // namespace pycoll
