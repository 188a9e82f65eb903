// Host (CPU) kernels behind pycoll.kernels: fused flatten / unflatten of many arrays into one
// contiguous buffer, with an optional fused scale and float cast; and single-pass forms of a few
// float ops (erf, gelu, cumsum, batch norm) for the tensor layer. Plain C++17, no Python here:
// bindings.cpp collects pointers and sizes under the GIL, then calls these with the GIL released.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace pycoll {

// The floating types the converting kernels read and write (native byte order).
enum class Float { f16, f32, f64 };

const char* name(Float t);

// Casts the converting kernels serve: identity, f32 <-> f16, f64 <-> f32.
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
// rounded to `to`: the result equals NumPy's (a.astype(wide) * scale).astype(to), bit for bit.
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

// ---------------------------------------------------------------------------------------------
// Float ops whose NumPy form takes many passes over the data (pycoll/kernels/host_math.py).
// T is float or double (cumsum also int64_t); arrays are C-contiguous and do not overlap.

// erf(x), elementwise. float: evaluated in double (polynomial fits to 1e-10) and rounded once:
// correctly rounded but for values within 1e-10 of a rounding boundary; double: std::erf.
template <class T>
void erf(const T* x, T* out, int64_t n);

// Exact gelu, in the dtype's arithmetic step by step as paddle's CPU kernel computes it:
// cdf = 0.5 * (1 + erf(x * sqrt(1/2))), out = x * cdf (cdf is kept for the backward);
// gelu_backward: dx = g * (cdf + x * exp(-0.5 * x * x) / sqrt(2 pi)).
template <class T>
void gelu(const T* x, T* out, T* cdf, int64_t n);
template <class T>
void gelu_backward(const T* x, const T* cdf, const T* g, T* dx, int64_t n);

// Running sums along the middle axis of x viewed as [outer, len, inner], added in sequence from
// the first element (from the last when `reverse`), exactly as NumPy's cumsum adds them; int64
// wraps around on overflow as NumPy's does.
template <class T>
void cumsum(const T* x, T* out, int64_t outer, int64_t len, int64_t inner, bool reverse);

// Batch norm over x viewed as [outer, channels, inner]; per-channel sums are added in double.
// channel_sums: sums[c] = the sum of x; with `mean`, of (x - mean[c])^2 instead (the difference
// rounded to T); with y, also products[c] = the sum of x * y (the products rounded to T).
template <class T>
void channel_sums(const T* x, const T* y, const T* mean, int64_t outer, int64_t channels,
                  int64_t inner, double* sums, double* products);
// xhat = (x - mean) * rstd and out = xhat * weight + bias (weight, bias may be null), in T.
template <class T>
void normalize(const T* x, const T* mean, const T* rstd, const T* weight, const T* bias, T* xhat,
               T* out, int64_t outer, int64_t channels, int64_t inner);
// The input gradient through the batch statistics: gx = ((g - g_mean) - xhat * gxhat_mean) * scale
// (gx may be g itself).
template <class T>
void normalize_backward(const T* g, const T* xhat, const T* g_mean, const T* gxhat_mean,
                        const T* scale, T* gx, int64_t outer, int64_t channels, int64_t inner);

}  // namespace pycoll
