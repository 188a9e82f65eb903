// Host kernels: see host_kernels.h. Single-threaded on purpose: the ranks of a job already share
// the cores, so each copy loop is written to be auto-vectorized by the compiler (-O3) instead.
#include "host_kernels.h"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace pycoll {

const char* name(Float t) {
    switch (t) {
        case Float::f16: return "float16";
        case Float::bf16: return "bfloat16";
        case Float::f32: return "float32";
        case Float::f64: return "float64";
    }
    return "?";
}

// ---------------------------------------------------------------------------------------------
// float16 at the bit level

namespace {

inline uint32_t bits_of(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

inline float float_of(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

}  // namespace

// Branch-free (selects only, signed compares) so that the copy loops vectorize. Rounding is to
// nearest even: in half's normal range by integer arithmetic on the bits; in its subnormal range
// by one IEEE binary32 addition, |f| + 0.5, whose low bits then hold |f| rounded to a multiple
// of 2**-24, half's subnormal step.
uint16_t float_to_half(float f) {
    const uint32_t x = bits_of(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const auto a = static_cast<int32_t>(x & 0x7fffffffu);  // the bits of |f|
    // Add just under half an ulp of half (plus the kept lsb, for ties to even), drop 13 bits and
    // rebias the exponent from 127 to 15; a carry out of the significand lands on the next
    // exponent, up to inf.
    const int32_t normal = (a + 0x0fff + ((a >> 13) & 1) - 0x38000000) >> 13;
    const int32_t subnormal =
        static_cast<int32_t>(bits_of(float_of(static_cast<uint32_t>(a)) + 0.5f)) - 0x3f000000;
    const int32_t payload = (a >> 13) & 0x3ff;  // NaN keeps its top payload bits, as in NumPy,
    const int32_t nan = 0x7c00 | (payload != 0 ? payload : 1);  // and stays a NaN
    int32_t h = a < 0x38800000 ? subnormal : normal;  // below 2**-14: subnormal half or zero
    h = a >= 0x47800000 ? 0x7c00 : h;                 // 65536 and up (and inf): inf
    h = a > 0x7f800000 ? nan : h;
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(h));
}

// Used once per call, for the scale: plain branches, integer rounding only.
uint16_t double_to_half(double d) {
    uint64_t x;
    std::memcpy(&x, &d, sizeof x);
    const auto sign = static_cast<uint16_t>((x >> 48) & 0x8000u);
    const int exp = static_cast<int>((x >> 52) & 0x7ff);
    const uint64_t mant = x & ((uint64_t(1) << 52) - 1);
    if (exp == 0x7ff) {  // inf, or NaN with its top payload bits (as NumPy does)
        auto payload = static_cast<uint16_t>(mant >> 42);
        if (mant != 0 && payload == 0) payload = 1;
        return static_cast<uint16_t>(sign | 0x7c00u | payload);
    }
    const int hexp = exp - 1023 + 15;  // the biased half exponent
    if (hexp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow to inf
    // m >> shift is the truncated half (exponent and significand), m's low `shift` bits the rest.
    uint64_t m;
    int shift;
    if (hexp > 0) {  // normal half
        m = (uint64_t(hexp) << 52) | mant;
        shift = 42;
    } else {  // subnormal half, in units of 2**-24; below 2**-25 everything rounds to zero
        if (hexp < -10) return sign;
        m = mant | (uint64_t(1) << 52);
        shift = 43 - hexp;
    }
    const uint64_t q = m >> shift;
    const uint64_t rest = m & ((uint64_t(1) << shift) - 1);
    const uint64_t halfway = uint64_t(1) << (shift - 1);
    // A carry out of the significand bumps the exponent: the right answer, up to inf.
    const uint64_t rounded = q + ((rest > halfway || (rest == halfway && (q & 1))) ? 1 : 0);
    return static_cast<uint16_t>(sign | rounded);
}

// Exact; branch-free like float_to_half.
float half_to_float(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const auto a = static_cast<int32_t>(h & 0x7fffu);
    const auto shifted = static_cast<uint32_t>(a) << 13;
    const uint32_t normal = shifted + 0x38000000u;      // rebias the exponent from 15 to 127
    const uint32_t inf_nan = shifted | 0x7f800000u;     // NaN keeps its payload
    const uint32_t subnormal = bits_of(static_cast<float>(a) * 0x1p-24f);  // exact, zero too
    uint32_t x = a >= 0x7c00 ? inf_nan : normal;
    x = a < 0x0400 ? subnormal : x;
    return float_of(sign | x);
}

// ---------------------------------------------------------------------------------------------
// Converting copy loops

namespace {

struct Half {
    uint16_t bits;
};
static_assert(sizeof(Half) == 2, "Half must be two bytes");

struct BFloat16 {  // the top half of a float's bits
    uint16_t bits;
};
static_assert(sizeof(BFloat16) == 2, "BFloat16 must be two bytes");

// To nearest even, as ml_dtypes (NumPy's bfloat16) rounds; a NaN stays a quiet NaN of its sign.
// Branch-free like float_to_half.
inline uint16_t float_to_bfloat16(float f) {
    const uint32_t x = bits_of(f);
    const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;  // a carry may reach inf
    const uint32_t nan = ((x >> 16) & 0x8000u) | 0x7fc0u;
    return static_cast<uint16_t>((x & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

inline float bfloat16_to_float(uint16_t b) { return float_of(static_cast<uint32_t>(b) << 16); }

// Value conversions for the loops; the compute type C is float or double, Half goes through float.
template <class To, class From>
inline To cvt(From x) { return static_cast<To>(x); }
template <>
inline float cvt<float, Half>(Half h) { return half_to_float(h.bits); }
template <>
inline Half cvt<Half, float>(float x) { return Half{float_to_half(x)}; }
template <>
inline float cvt<float, BFloat16>(BFloat16 b) { return bfloat16_to_float(b.bits); }
template <>
inline BFloat16 cvt<BFloat16, float>(float x) { return BFloat16{float_to_bfloat16(x)}; }

template <class S, class D, class C, bool kScaled>
void copy_loop(const S* __restrict src, D* __restrict dst, int64_t n, C scale) {
    for (int64_t i = 0; i < n; ++i) {
        C v = cvt<C>(src[i]);
        if constexpr (kScaled) v = v * scale;
        dst[i] = cvt<D>(v);
    }
}

// Type-erased loop: scale is already rounded to the wide type, so converting it to C is exact.
using CopyFn = void (*)(const void* src, void* dst, int64_t n, bool scaled, double scale);

template <class S, class D, class C>
void copy_cast(const void* src, void* dst, int64_t n, bool scaled, double scale) {
    const auto* s = static_cast<const S*>(src);
    auto* d = static_cast<D*>(dst);
    if (scaled) {
        copy_loop<S, D, C, true>(s, d, n, static_cast<C>(scale));
    } else {
        copy_loop<S, D, C, false>(s, d, n, C(1));
    }
}

// The loop for a cast pair, or nullptr when the pair is not served. float16 and bfloat16
// arithmetic runs in float: a product of two halves is exact there, so rounding it once to half
// is correctly rounded; bfloat16 times a float scale is NumPy's float32 product, then rounded.
CopyFn pick(Float from, Float to) {
    using F = Float;
    if (from == to) {
        switch (from) {
            case F::f16: return copy_cast<Half, Half, float>;
            case F::bf16: return copy_cast<BFloat16, BFloat16, float>;
            case F::f32: return copy_cast<float, float, float>;
            case F::f64: return copy_cast<double, double, double>;
        }
    }
    if (from == F::f32 && to == F::f16) return copy_cast<float, Half, float>;
    if (from == F::f16 && to == F::f32) return copy_cast<Half, float, float>;
    if (from == F::f32 && to == F::bf16) return copy_cast<float, BFloat16, float>;
    if (from == F::bf16 && to == F::f32) return copy_cast<BFloat16, float, float>;
    if (from == F::f64 && to == F::f32) return copy_cast<double, float, double>;
    if (from == F::f32 && to == F::f64) return copy_cast<float, double, double>;
    return nullptr;
}

CopyFn pick_or_throw(Float from, Float to) {
    const CopyFn fn = pick(from, to);
    if (fn == nullptr) {
        throw std::invalid_argument(std::string("unsupported cast ") + name(from) + " -> " +
                                    name(to));
    }
    return fn;
}

// The scale rounded to the wider of the two types, as NumPy rounds a Python float operand (to
// float for bfloat16, as the device path does).
double wide_scale(Float from, Float to, double scale) {
    const Float wide = static_cast<int>(from) > static_cast<int>(to) ? from : to;  // enum order
    switch (wide) {
        case Float::f16: return half_to_float(double_to_half(scale));
        case Float::bf16:  // NumPy with ml_dtypes multiplies bfloat16 by a Python float in float32
        case Float::f32: return static_cast<float>(scale);
        case Float::f64: return scale;
    }
    return scale;
}

std::size_t itemsize(Float t) {
    switch (t) {
        case Float::f16: return 2;
        case Float::bf16: return 2;
        case Float::f32: return 4;
        case Float::f64: return 8;
    }
    return 0;
}

}  // namespace

bool cast_supported(Float from, Float to) { return pick(from, to) != nullptr; }

// ---------------------------------------------------------------------------------------------
// Flatten / unflatten

std::vector<int64_t> offset_table(const std::vector<Piece>& pieces) {
    std::vector<int64_t> offsets(pieces.size() + 1);
    offsets[0] = 0;
    for (std::size_t i = 0; i < pieces.size(); ++i) offsets[i + 1] = offsets[i] + pieces[i].count;
    return offsets;
}

void flatten_bytes(const std::vector<Piece>& pieces, std::size_t itemsize, void* flat) {
    const std::vector<int64_t> offsets = offset_table(pieces);
    auto* out = static_cast<char*>(flat);
    for (std::size_t i = 0; i < pieces.size(); ++i) {
        if (pieces[i].count == 0) continue;
        std::memcpy(out + static_cast<std::size_t>(offsets[i]) * itemsize, pieces[i].data,
                    static_cast<std::size_t>(pieces[i].count) * itemsize);
    }
}

void unflatten_bytes(const void* flat, std::size_t itemsize, const std::vector<Piece>& pieces) {
    const std::vector<int64_t> offsets = offset_table(pieces);
    const auto* in = static_cast<const char*>(flat);
    for (std::size_t i = 0; i < pieces.size(); ++i) {
        if (pieces[i].count == 0) continue;
        std::memcpy(pieces[i].data, in + static_cast<std::size_t>(offsets[i]) * itemsize,
                    static_cast<std::size_t>(pieces[i].count) * itemsize);
    }
}

void flatten_cast(const std::vector<Piece>& pieces, Float from, void* flat, Float to,
                  std::optional<double> scale) {
    const CopyFn fn = pick_or_throw(from, to);
    const double s = scale ? wide_scale(from, to, *scale) : 1.0;
    const std::vector<int64_t> offsets = offset_table(pieces);
    auto* out = static_cast<char*>(flat);
    for (std::size_t i = 0; i < pieces.size(); ++i) {
        fn(pieces[i].data, out + static_cast<std::size_t>(offsets[i]) * itemsize(to),
           pieces[i].count, scale.has_value(), s);
    }
}

void unflatten_cast(const void* flat, Float from, const std::vector<Piece>& pieces, Float to,
                    std::optional<double> scale) {
    const CopyFn fn = pick_or_throw(from, to);
    const double s = scale ? wide_scale(from, to, *scale) : 1.0;
    const std::vector<int64_t> offsets = offset_table(pieces);
    const auto* in = static_cast<const char*>(flat);
    for (std::size_t i = 0; i < pieces.size(); ++i) {
        fn(in + static_cast<std::size_t>(offsets[i]) * itemsize(from), pieces[i].data,
           pieces[i].count, scale.has_value(), s);
    }
}

}  // namespace pycoll
