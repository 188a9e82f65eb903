// Host math kernels: see host_math.h. Single-threaded, vectorized by the compiler, as the copy
// loops of host_kernels.cpp are.
#include "host_math.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "host_exp.h"
#include "simd_clones.h"

namespace pycoll {

// Float ops for the tensor layer. The elementwise loops are branch-free (selects only) so that
// they vectorize; where the CPU has AVX-512 or AVX2 they run in a clone compiled for it
// (simd_clones.h: same values; AVX-512's wider vectors took erf from 10 to 7 ms on 4M floats on
// an AMD EPYC).

namespace {

using fastmath::exp_nonpositive;
using fastmath::horner;

// Chebyshev interpolants of erf, as monomials in a variable s spanning [-1, 1] (fitted once in
// float64 against math.erf; max error 1e-10 relative / absolute, so that the float result is
// correctly rounded but for the rare values within 1e-10 of a rounding boundary):
// |x| < 1: erf(x) = x * P(s), s = 2 x^2 - 1; 1 <= |x| < 3.92: erf(|x|) = Q(s), s = (|x| - 2.46) / 1.46.
// Past 3.92, erf rounds to +-1 in float.
constexpr double kErfSmall[] = {
    0.96546873863756955, -0.14053608902112164, 0.019852497722449618, -0.0022854856122074274,
    0.00021751199063546611, -1.7536914191484954e-05, 1.2316395887612686e-06, -7.5523779230479704e-08,
};
constexpr double kErfLarge[] = {
    0.99949664627799273, 0.0038782109427895062, -0.013928969238470316, 0.030595958845789219,
    -0.045047569182391292, 0.045151089798906023, -0.028445190561463503, 0.006278530366677762,
    0.0073379859980041359, -0.0084761362174923544, 0.0033576001647411943, 0.0008058433276561213,
    -0.001650188982971991, 0.00060741038772802217, 0.00023380871183083712, -0.00021721779588309203,
    -3.7414552530713586e-06, 2.5899076313685833e-05,
};

// erf of a float's value, in double (see kErfSmall).
inline double erf_of_float(double x) {
    const double z = std::fabs(x);
    const double small = x * horner(kErfSmall, 2.0 * x * x - 1.0);
    const double zc = z < 1.0 ? 1.0 : (z > 3.92 ? 3.92 : z);  // NaN stays NaN
    const double large = std::copysign(horner(kErfLarge, (zc - 2.46) * (1 / 1.46)), x);
    const double r = z < 1.0 ? small : large;
    return z >= 3.92 ? std::copysign(1.0, x) : r;
}


PYCOLL_SIMD_CLONES void erf_float(const float* __restrict x, float* __restrict out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(erf_of_float(x[i]));
}

PYCOLL_SIMD_CLONES void gelu_float(const float* __restrict x, float* __restrict out,
                                   float* __restrict cdf, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        const float e = static_cast<float>(erf_of_float(x[i] * 0.70710678118654752f));
        const float c = 0.5f * (1.0f + e);
        cdf[i] = c;
        out[i] = x[i] * c;
    }
}

PYCOLL_SIMD_CLONES void gelu_backward_float(const float* __restrict x, const float* __restrict cdf,
                                            const float* __restrict g, float* __restrict dx,
                                            int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        const float e = static_cast<float>(exp_nonpositive(-0.5f * x[i] * x[i]));
        const float pdf = e / 2.50662827463100050f;
        dx[i] = g[i] * (cdf[i] + x[i] * pdf);
    }
}

// The type running sums add in: integers add as unsigned, where wrapping on overflow is defined
// (and gives NumPy's bits).
template <class T, bool = std::is_integral_v<T>>
struct Accumulator {
    using type = T;
};
template <class T>
struct Accumulator<T, true> {
    using type = std::make_unsigned_t<T>;
};

// The running operations: sums and products, in the accumulator type A.
struct Plus {
    template <class A>
    static A apply(A a, A b) { return a + b; }
};
struct Times {
    template <class A>
    static A apply(A a, A b) { return a * b; }
};

// Sequential running sums (Op Plus) or products (Times) of `rows` rows of `len` contiguous
// elements, eight rows at a time so that eight independent operations are in flight.
template <class Op, class T, class A>
void running_rows(const T* x, T* out, int64_t rows, int64_t len, bool reverse) {
    constexpr int64_t kRows = 8;
    const int64_t first = reverse ? len - 1 : 0;
    const int64_t step = reverse ? -1 : 1;
    int64_t r = 0;
    for (; r + kRows <= rows; r += kRows) {
        const T* xs = x + r * len;
        T* os = out + r * len;
        A acc[kRows];
        for (int64_t k = 0; k < kRows; ++k) acc[k] = static_cast<A>(xs[k * len + first]);
        for (int64_t k = 0; k < kRows; ++k) os[k * len + first] = static_cast<T>(acc[k]);
        for (int64_t j = 1, at = first + step; j < len; ++j, at += step) {
            for (int64_t k = 0; k < kRows; ++k) {
                acc[k] = Op::apply(acc[k], static_cast<A>(xs[k * len + at]));
                os[k * len + at] = static_cast<T>(acc[k]);
            }
        }
    }
    for (; r < rows; ++r) {
        const T* xs = x + r * len;
        T* os = out + r * len;
        A acc = static_cast<A>(xs[first]);
        os[first] = static_cast<T>(acc);
        for (int64_t j = 1, at = first + step; j < len; ++j, at += step) {
            acc = Op::apply(acc, static_cast<A>(xs[at]));
            os[at] = static_cast<T>(acc);
        }
    }
}

// The same along a middle axis: whole rows of `inner` elements at once.
template <class Op, class T, class A>
void running_inner(const T* x, T* out, int64_t outer, int64_t len, int64_t inner, bool reverse) {
    const int64_t first = reverse ? len - 1 : 0;
    const int64_t step = reverse ? -1 : 1;
    for (int64_t o = 0; o < outer; ++o) {
        const T* xs = x + o * len * inner;
        T* os = out + o * len * inner;
        std::memcpy(os + first * inner, xs + first * inner, static_cast<std::size_t>(inner) * sizeof(T));
        for (int64_t j = 1, at = first + step; j < len; ++j, at += step) {
            const T* __restrict xi = xs + at * inner;
            const T* __restrict prev = os + (at - step) * inner;
            T* __restrict oi = os + at * inner;
            for (int64_t i = 0; i < inner; ++i) {
                oi[i] = static_cast<T>(Op::apply(static_cast<A>(prev[i]), static_cast<A>(xi[i])));
            }
        }
    }
}

template <class Op, class T>
void running(const T* x, T* out, int64_t outer, int64_t len, int64_t inner, bool reverse) {
    if (len == 0) return;
    using A = typename Accumulator<T>::type;
    if (inner == 1) {
        running_rows<Op, T, A>(x, out, outer, len, reverse);
    } else {
        running_inner<Op, T, A>(x, out, outer, len, inner, reverse);
    }
}

// The terms the per-channel sums add, in double. Two sums over one run of `inner` elements (a
// row of a few KiB) are two passes over it, the second from the L1 cache (as fast as one pass
// adding both: the additions, not the loads, bound these loops).
template <class T>
struct Plain {  // x
    const T* x;
    double operator()(int64_t i) const { return x[i]; }
};
template <class T>
struct Squared {  // (x - mean)^2, the difference rounded to T
    const T* x;
    T mean;
    double operator()(int64_t i) const {
        const double d = static_cast<T>(x[i] - mean);
        return d * d;
    }
};
template <class T>
struct Product {  // x * y, rounded to T
    const T* x;
    const T* y;
    double operator()(int64_t i) const { return static_cast<T>(x[i] * y[i]); }
};
// The sum of term(i) over n elements, in double with 16 partial sums, which the compiler
// vectorizes (one running sum would wait on each addition; 16 ran 10% faster than 8 and 32
// slower). They are combined in a fixed order, so every clone gives the same bits.
template <class Term>
double add_up(const Term& term, int64_t n) {
    constexpr int kParts = 16;
    double acc[kParts] = {};
    int64_t i = 0;
    for (; i + kParts <= n; i += kParts) {
        for (int k = 0; k < kParts; ++k) acc[k] += term(i + k);
    }
    for (; i < n; ++i) acc[i % kParts] += term(i);
    for (int width = kParts / 2; width > 0; width /= 2) {
        for (int k = 0; k < width; ++k) acc[k] += acc[k + width];
    }
    return acc[0];
}

void erf_loop(const float* x, float* out, int64_t n) { erf_float(x, out, n); }
void erf_loop(const double* x, double* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = std::erf(x[i]);
}

void gelu_loop(const float* x, float* out, float* cdf, int64_t n) { gelu_float(x, out, cdf, n); }
void gelu_loop(const double* x, double* out, double* cdf, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        cdf[i] = 0.5 * (1.0 + std::erf(x[i] * 0.70710678118654752));
        out[i] = x[i] * cdf[i];
    }
}

void gelu_backward_loop(const float* x, const float* cdf, const float* g, float* dx, int64_t n) {
    gelu_backward_float(x, cdf, g, dx, n);
}
void gelu_backward_loop(const double* x, const double* cdf, const double* g, double* dx,
                        int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        dx[i] = g[i] * (cdf[i] + x[i] * (std::exp(-0.5 * x[i] * x[i]) / 2.50662827463100050));
    }
}

template <class T>
inline int64_t sigmoid_from_exp_impl(T* __restrict e, int64_t n) {
    int64_t zeros = 0;
    for (int64_t i = 0; i < n; ++i) {
        const T r = T(1) / (e[i] + T(1));
        e[i] = r;
        zeros += r == T(0);
    }
    return zeros;
}

template <class T>
inline void sigmoid_backward_impl(const T* __restrict out, const T* __restrict g, T* __restrict dx,
                                  int64_t n) {
    for (int64_t i = 0; i < n; ++i) dx[i] = (g[i] * out[i]) * (T(1) - out[i]);
}

// The elementwise loops for each element type, in the baseline and the SIMD clones.
#define PYCOLL_ELEMENTWISE_LOOPS(T)                                                               \
    PYCOLL_SIMD_CLONES int64_t sigmoid_from_exp_loop(T* e, int64_t n) {                           \
        return sigmoid_from_exp_impl(e, n);                                                      \
    }                                                                                            \
    PYCOLL_SIMD_CLONES void sigmoid_backward_loop(const T* out, const T* g, T* dx, int64_t n) {   \
        sigmoid_backward_impl(out, g, dx, n);                                                    \
    }
PYCOLL_ELEMENTWISE_LOOPS(float)
PYCOLL_ELEMENTWISE_LOOPS(double)
#undef PYCOLL_ELEMENTWISE_LOOPS

}  // namespace

template <class T>
void erf(const T* x, T* out, int64_t n) { erf_loop(x, out, n); }
template void erf<float>(const float*, float*, int64_t);
template void erf<double>(const double*, double*, int64_t);

template <class T>
void gelu(const T* x, T* out, T* cdf, int64_t n) { gelu_loop(x, out, cdf, n); }
template void gelu<float>(const float*, float*, float*, int64_t);
template void gelu<double>(const double*, double*, double*, int64_t);

template <class T>
void gelu_backward(const T* x, const T* cdf, const T* g, T* dx, int64_t n) {
    gelu_backward_loop(x, cdf, g, dx, n);
}
template void gelu_backward<float>(const float*, const float*, const float*, float*, int64_t);
template void gelu_backward<double>(const double*, const double*, const double*, double*, int64_t);

template <class T>
void cumsum(const T* x, T* out, int64_t outer, int64_t len, int64_t inner, bool reverse) {
    running<Plus>(x, out, outer, len, inner, reverse);
}
template <class T>
void cumprod(const T* x, T* out, int64_t outer, int64_t len, int64_t inner) {
    running<Times>(x, out, outer, len, inner, false);
}
template <class T>
int64_t sigmoid_from_exp(T* e, int64_t n) { return sigmoid_from_exp_loop(e, n); }
template int64_t sigmoid_from_exp<float>(float*, int64_t);
template int64_t sigmoid_from_exp<double>(double*, int64_t);

template <class T>
void sigmoid_backward(const T* out, const T* g, T* dx, int64_t n) {
    sigmoid_backward_loop(out, g, dx, n);
}
template void sigmoid_backward<float>(const float*, const float*, float*, int64_t);
template void sigmoid_backward<double>(const double*, const double*, double*, int64_t);

template void cumsum<float>(const float*, float*, int64_t, int64_t, int64_t, bool);
template void cumsum<double>(const double*, double*, int64_t, int64_t, int64_t, bool);
template void cumsum<int64_t>(const int64_t*, int64_t*, int64_t, int64_t, int64_t, bool);
template void cumprod<float>(const float*, float*, int64_t, int64_t, int64_t);
template void cumprod<double>(const double*, double*, int64_t, int64_t, int64_t);
template void cumprod<int64_t>(const int64_t*, int64_t*, int64_t, int64_t, int64_t);

namespace {

// Channels last (inner == 1: [N, C], NHWC...): each row of `channels` values added into the
// per-channel sums, a loop across the channels that vectorizes. (add_up per element would cost
// its 16 partial sums for one term: 20-50x slower.)
template <class T>
inline void channel_sums_last(const T* x, const T* y, const T* mean, int64_t outer, int64_t channels,
                              double* sums, double* products) {
    for (int64_t o = 0; o < outer; ++o) {
        const T* __restrict xs = x + o * channels;
        if (mean != nullptr) {
            for (int64_t c = 0; c < channels; ++c) {
                const double d = static_cast<T>(xs[c] - mean[c]);
                sums[c] += d * d;
            }
        } else if (y != nullptr) {
            const T* __restrict ys = y + o * channels;
            for (int64_t c = 0; c < channels; ++c) {
                sums[c] += xs[c];
                products[c] += static_cast<T>(xs[c] * ys[c]);
            }
        } else {
            for (int64_t c = 0; c < channels; ++c) sums[c] += xs[c];
        }
    }
}

template <class T>
inline void channel_sums_impl(const T* x, const T* y, const T* mean, int64_t outer, int64_t channels,
                              int64_t inner, double* sums, double* products) {
    for (int64_t c = 0; c < channels; ++c) {
        sums[c] = 0.0;
        if (y != nullptr) products[c] = 0.0;
    }
    if (inner == 1) return channel_sums_last(x, y, mean, outer, channels, sums, products);
    for (int64_t o = 0; o < outer; ++o) {
        for (int64_t c = 0; c < channels; ++c) {
            const int64_t at = (o * channels + c) * inner;
            if (mean != nullptr) {
                sums[c] += add_up(Squared<T>{x + at, mean[c]}, inner);
            } else {
                sums[c] += add_up(Plain<T>{x + at}, inner);
                if (y != nullptr) products[c] += add_up(Product<T>{x + at, y + at}, inner);
            }
        }
    }
}

// Channels last: the same formula per element, looped across each row's channels.
template <class T>
inline void normalize_last(const T* x, const T* mean, const T* rstd, const T* weight, const T* bias, T* xhat,
                           T* out, int64_t outer, int64_t channels) {
    for (int64_t o = 0; o < outer; ++o) {
        const T* __restrict xs = x + o * channels;
        T* __restrict hs = xhat + o * channels;
        T* __restrict os = out + o * channels;
        for (int64_t c = 0; c < channels; ++c) {
            hs[c] = (xs[c] - mean[c]) * rstd[c];
            const T scaled = weight ? hs[c] * weight[c] : hs[c];
            os[c] = bias ? scaled + bias[c] : scaled;
        }
    }
}

template <class T>
inline void normalize_impl(const T* x, const T* mean, const T* rstd, const T* weight, const T* bias, T* xhat,
               T* out, int64_t outer, int64_t channels, int64_t inner) {
    if (inner == 1) return normalize_last(x, mean, rstd, weight, bias, xhat, out, outer, channels);
    for (int64_t o = 0; o < outer; ++o) {
        for (int64_t c = 0; c < channels; ++c) {
            const int64_t at = (o * channels + c) * inner;
            const T m = mean[c], r = rstd[c];
            const T w = weight ? weight[c] : T(1), b = bias ? bias[c] : T(0);
            const T* __restrict xs = x + at;
            T* __restrict hs = xhat + at;
            T* __restrict os = out + at;
            if (weight && bias) {
                for (int64_t i = 0; i < inner; ++i) {
                    hs[i] = (xs[i] - m) * r;
                    os[i] = hs[i] * w + b;
                }
            } else if (weight) {
                for (int64_t i = 0; i < inner; ++i) {
                    hs[i] = (xs[i] - m) * r;
                    os[i] = hs[i] * w;
                }
            } else if (bias) {
                for (int64_t i = 0; i < inner; ++i) {
                    hs[i] = (xs[i] - m) * r;
                    os[i] = hs[i] + b;
                }
            } else {
                for (int64_t i = 0; i < inner; ++i) {
                    hs[i] = (xs[i] - m) * r;
                    os[i] = hs[i];
                }
            }
        }
    }
}

// Channels last: the same formula per element, looped across each row's channels (gx may be g).
template <class T>
inline void normalize_backward_last(const T* g, const T* xhat, const T* g_mean, const T* gxhat_mean,
                                    const T* scale, T* gx, int64_t outer, int64_t channels) {
    for (int64_t o = 0; o < outer; ++o) {
        const T* hs = xhat + o * channels;
        const T* gs = g + o * channels;
        T* os = gx + o * channels;
        for (int64_t c = 0; c < channels; ++c) os[c] = ((gs[c] - g_mean[c]) - hs[c] * gxhat_mean[c]) * scale[c];
    }
}

template <class T>
inline void normalize_backward_impl(const T* g, const T* xhat, const T* g_mean, const T* gxhat_mean,
                        const T* scale, T* gx, int64_t outer, int64_t channels, int64_t inner) {
    if (inner == 1) return normalize_backward_last(g, xhat, g_mean, gxhat_mean, scale, gx, outer, channels);
    for (int64_t o = 0; o < outer; ++o) {
        for (int64_t c = 0; c < channels; ++c) {
            const int64_t at = (o * channels + c) * inner;
            const T gm = g_mean[c], hm = gxhat_mean[c], s = scale[c];
            const T* __restrict hs = xhat + at;
            if (gx == g) {  // in place: one pointer, so that the loop still vectorizes
                T* __restrict io = gx + at;
                for (int64_t i = 0; i < inner; ++i) io[i] = ((io[i] - gm) - hs[i] * hm) * s;
            } else {
                const T* __restrict gs = g + at;
                T* __restrict os = gx + at;
                for (int64_t i = 0; i < inner; ++i) os[i] = ((gs[i] - gm) - hs[i] * hm) * s;
            }
        }
    }
}

// The loops above compiled for each element type, in the baseline and the SIMD clones.
#define PYCOLL_CHANNEL_LOOPS(T)                                                                   \
    PYCOLL_SIMD_CLONES void channel_sums_loop(const T* x, const T* y, const T* mean,             \
                                              int64_t outer, int64_t channels, int64_t inner,    \
                                              double* sums, double* products) {                  \
        channel_sums_impl(x, y, mean, outer, channels, inner, sums, products);                   \
    }                                                                                            \
    PYCOLL_SIMD_CLONES void normalize_loop(const T* x, const T* mean, const T* rstd,             \
                                           const T* weight, const T* bias, T* xhat, T* out,      \
                                           int64_t outer, int64_t channels, int64_t inner) {     \
        normalize_impl(x, mean, rstd, weight, bias, xhat, out, outer, channels, inner);          \
    }                                                                                            \
    PYCOLL_SIMD_CLONES void normalize_backward_loop(const T* g, const T* xhat, const T* g_mean,  \
                                                    const T* gxhat_mean, const T* scale, T* gx,  \
                                                    int64_t outer, int64_t channels,             \
                                                    int64_t inner) {                             \
        normalize_backward_impl(g, xhat, g_mean, gxhat_mean, scale, gx, outer, channels, inner); \
    }
PYCOLL_CHANNEL_LOOPS(float)
PYCOLL_CHANNEL_LOOPS(double)
#undef PYCOLL_CHANNEL_LOOPS

}  // namespace

template <class T>
void channel_sums(const T* x, const T* y, const T* mean, int64_t outer, int64_t channels,
                  int64_t inner, double* sums, double* products) {
    channel_sums_loop(x, y, mean, outer, channels, inner, sums, products);
}

template <class T>
void normalize(const T* x, const T* mean, const T* rstd, const T* weight, const T* bias, T* xhat,
               T* out, int64_t outer, int64_t channels, int64_t inner) {
    normalize_loop(x, mean, rstd, weight, bias, xhat, out, outer, channels, inner);
}
template <class T>
void normalize_backward(const T* g, const T* xhat, const T* g_mean, const T* gxhat_mean,
                        const T* scale, T* gx, int64_t outer, int64_t channels, int64_t inner) {
    normalize_backward_loop(g, xhat, g_mean, gxhat_mean, scale, gx, outer, channels, inner);
}
template void channel_sums<float>(const float*, const float*, const float*, int64_t, int64_t,
                                  int64_t, double*, double*);
template void channel_sums<double>(const double*, const double*, const double*, int64_t, int64_t,
                                   int64_t, double*, double*);

template void normalize<float>(const float*, const float*, const float*, const float*,
                               const float*, float*, float*, int64_t, int64_t, int64_t);
template void normalize<double>(const double*, const double*, const double*, const double*,
                                const double*, double*, double*, int64_t, int64_t, int64_t);
template void normalize_backward<float>(const float*, const float*, const float*, const float*,
                                        const float*, float*, int64_t, int64_t, int64_t);
template void normalize_backward<double>(const double*, const double*, const double*,
                                         const double*, const double*, double*, int64_t, int64_t,
                                         int64_t);

namespace {

// np.add, np.maximum and np.minimum of one element (NumPy's: a NaN on either side wins)
struct AddInto {
    template <class T>
    static T apply(T acc, T x) { return acc + x; }
};
struct MaxInto {
    template <class T>
    static T apply(T acc, T x) { return (acc >= x || acc != acc) ? acc : x; }
};
struct MinInto {
    template <class T>
    static T apply(T acc, T x) { return (acc <= x || acc != acc) ? acc : x; }
};

// target[index[i], :] = Op(target[index[i], :], values[i, :]), i in order (ufunc.at's order)
template <class Op, class T>
int64_t scatter_rows(T* target, int64_t rows, int64_t width, const int64_t* index, int64_t n, const T* values) {
    for (int64_t i = 0; i < n; ++i) {
        if (index[i] < -rows || index[i] >= rows) return i;
    }
    for (int64_t i = 0; i < n; ++i) {
        const int64_t row = index[i] < 0 ? index[i] + rows : index[i];
        T* __restrict dst = target + row * width;
        const T* __restrict src = values + i * width;
        for (int64_t j = 0; j < width; ++j) dst[j] = Op::apply(dst[j], src[j]);
    }
    return -1;
}

}  // namespace

template <class T>
int64_t scatter_add_rows(T* target, int64_t rows, int64_t width, const int64_t* index, int64_t n,
                         const T* values) {
    return scatter_rows<AddInto>(target, rows, width, index, n, values);
}

template <class T>
int64_t scatter_extreme_rows(T* target, int64_t rows, int64_t width, const int64_t* index, int64_t n,
                             const T* values, bool maximum) {
    return maximum ? scatter_rows<MaxInto>(target, rows, width, index, n, values)
                   : scatter_rows<MinInto>(target, rows, width, index, n, values);
}

template int64_t scatter_add_rows<float>(float*, int64_t, int64_t, const int64_t*, int64_t, const float*);
template int64_t scatter_add_rows<double>(double*, int64_t, int64_t, const int64_t*, int64_t, const double*);
template int64_t scatter_extreme_rows<float>(float*, int64_t, int64_t, const int64_t*, int64_t, const float*, bool);
template int64_t scatter_extreme_rows<double>(double*, int64_t, int64_t, const int64_t*, int64_t, const double*,
                                              bool);

namespace {

// Each output row at a time, its windows' cells visited in (d, h, w)-major order across the whole
// row (a loop over the outputs, which vectorizes, strided loads and all), a later cell taken where
// it is greater or is the first NaN: so the first of equal maxima keeps the pick.
template <class T>
inline void max_pool_impl(const T* x, int64_t volumes, const PoolGeometry& g, T* out, int32_t* pick) {
    for (int64_t v = 0; v < volumes; ++v) {
        const T* volume = x + v * g.d * g.h * g.w;
        for (int64_t oz = 0; oz < g.od; ++oz) {
            for (int64_t oy = 0; oy < g.oh; ++oy) {
                T* __restrict best = out + ((v * g.od + oz) * g.oh + oy) * g.ow;
                int32_t* __restrict at = pick + ((v * g.od + oz) * g.oh + oy) * g.ow;
                const T* first = volume + (oz * g.sd * g.h + oy * g.sh) * g.w;
                for (int64_t ox = 0; ox < g.ow; ++ox) {
                    best[ox] = first[ox * g.sw];
                    at[ox] = 0;
                }
                for (int64_t kz = 0; kz < g.kd; ++kz) {
                    for (int64_t ky = 0; ky < g.kh; ++ky) {
                        for (int64_t kx = kz == 0 && ky == 0 ? 1 : 0; kx < g.kw; ++kx) {
                            const T* __restrict cells = volume + ((oz * g.sd + kz) * g.h + oy * g.sh + ky) * g.w + kx;
                            const int32_t j = static_cast<int32_t>((kz * g.kh + ky) * g.kw + kx);
                            for (int64_t ox = 0; ox < g.ow; ++ox) {
                                const T c = cells[ox * g.sw];
                                const bool take = (c > best[ox]) | ((c != c) & (best[ox] == best[ox]));
                                best[ox] = take ? c : best[ox];
                                at[ox] = take ? j : at[ox];
                            }
                        }
                    }
                }
            }
        }
    }
}

PYCOLL_SIMD_CLONES void max_pool_loop(const float* x, int64_t volumes, const PoolGeometry& g, float* out,
                                      int32_t* pick) {
    max_pool_impl(x, volumes, g, out, pick);
}
PYCOLL_SIMD_CLONES void max_pool_loop(const double* x, int64_t volumes, const PoolGeometry& g, double* out,
                                      int32_t* pick) {
    max_pool_impl(x, volumes, g, out, pick);
}

// Each output row at a time, its windows' cells added in (d, h, w)-major order, the first cell
// first (as a running sum over the cells, paddle's order of adding).
template <class T>
inline void sum_pool_impl(const T* x, int64_t volumes, const PoolGeometry& g, T* out) {
    for (int64_t v = 0; v < volumes; ++v) {
        const T* volume = x + v * g.d * g.h * g.w;
        for (int64_t oz = 0; oz < g.od; ++oz) {
            for (int64_t oy = 0; oy < g.oh; ++oy) {
                T* __restrict total = out + ((v * g.od + oz) * g.oh + oy) * g.ow;
                const T* first = volume + (oz * g.sd * g.h + oy * g.sh) * g.w;
                for (int64_t ox = 0; ox < g.ow; ++ox) total[ox] = first[ox * g.sw];
                for (int64_t kz = 0; kz < g.kd; ++kz) {
                    for (int64_t ky = 0; ky < g.kh; ++ky) {
                        for (int64_t kx = kz == 0 && ky == 0 ? 1 : 0; kx < g.kw; ++kx) {
                            const T* __restrict cells = volume + ((oz * g.sd + kz) * g.h + oy * g.sh + ky) * g.w + kx;
                            for (int64_t ox = 0; ox < g.ow; ++ox) total[ox] += cells[ox * g.sw];
                        }
                    }
                }
            }
        }
    }
}

PYCOLL_SIMD_CLONES void sum_pool_loop(const float* x, int64_t volumes, const PoolGeometry& g, float* out) {
    sum_pool_impl(x, volumes, g, out);
}
PYCOLL_SIMD_CLONES void sum_pool_loop(const double* x, int64_t volumes, const PoolGeometry& g, double* out) {
    sum_pool_impl(x, volumes, g, out);
}

}  // namespace

template <class T>
void sum_pool(const T* x, int64_t volumes, const PoolGeometry& at, T* out) {
    sum_pool_loop(x, volumes, at, out);
}

template <class T>
void sum_pool_backward(const T* g, int64_t volumes, const PoolGeometry& at, T* gx) {
    for (int64_t v = 0; v < volumes; ++v) {
        T* volume = gx + v * at.d * at.h * at.w;
        for (int64_t oz = 0; oz < at.od; ++oz) {
            for (int64_t oy = 0; oy < at.oh; ++oy) {
                const T* __restrict grads = g + ((v * at.od + oz) * at.oh + oy) * at.ow;
                for (int64_t kz = 0; kz < at.kd; ++kz) {
                    for (int64_t ky = 0; ky < at.kh; ++ky) {
                        for (int64_t kx = 0; kx < at.kw; ++kx) {
                            T* __restrict cells = volume + ((oz * at.sd + kz) * at.h + oy * at.sh + ky) * at.w + kx;
                            for (int64_t ox = 0; ox < at.ow; ++ox) cells[ox * at.sw] += grads[ox];
                        }
                    }
                }
            }
        }
    }
}

template <class T>
void max_pool(const T* x, int64_t volumes, const PoolGeometry& at, T* out, int32_t* pick) {
    max_pool_loop(x, volumes, at, out, pick);
}

template <class T>
void max_pool_backward(const T* g, const int32_t* pick, int64_t volumes, const PoolGeometry& at, T* gx) {
    // each window position's offset from its window's first cell: one lookup per output
    std::vector<int64_t> offset(static_cast<size_t>(at.kd * at.kh * at.kw));
    for (int64_t kz = 0; kz < at.kd; ++kz)
        for (int64_t ky = 0; ky < at.kh; ++ky)
            for (int64_t kx = 0; kx < at.kw; ++kx) offset[(kz * at.kh + ky) * at.kw + kx] = (kz * at.h + ky) * at.w + kx;
    for (int64_t v = 0; v < volumes; ++v) {
        T* volume = gx + v * at.d * at.h * at.w;
        for (int64_t oz = 0; oz < at.od; ++oz) {
            for (int64_t oy = 0; oy < at.oh; ++oy) {
                const int64_t row = ((v * at.od + oz) * at.oh + oy) * at.ow;
                T* first = volume + (oz * at.sd * at.h + oy * at.sh) * at.w;
                for (int64_t ox = 0; ox < at.ow; ++ox) first[ox * at.sw + offset[pick[row + ox]]] += g[row + ox];
            }
        }
    }
}

template <class T>
void roi_max_index(const T* x, int64_t c, int64_t h, int64_t w, int64_t rois, const int64_t* image,
                   const int64_t* hs, const int64_t* he, int64_t ph, const int64_t* ws, const int64_t* we,
                   int64_t pw, int64_t* index) {
    for (int64_t r = 0; r < rois; ++r) {
        for (int64_t ch = 0; ch < c; ++ch) {
            const int64_t plane = (image[r] * c + ch) * h * w;
            const T* cells = x + plane;
            int64_t* out = index + (r * c + ch) * ph * pw;
            for (int64_t by = 0; by < ph; ++by) {
                const int64_t y0 = std::max<int64_t>(hs[r * ph + by], 0), y1 = std::min(he[r * ph + by], h);
                for (int64_t bx = 0; bx < pw; ++bx) {
                    const int64_t x0 = std::max<int64_t>(ws[r * pw + bx], 0), x1 = std::min(we[r * pw + bx], w);
                    T best = std::numeric_limits<T>::lowest();
                    int64_t at = -1;
                    for (int64_t y = y0; y < y1; ++y) {
                        for (int64_t xx = x0; xx < x1; ++xx) {
                            const T v = cells[y * w + xx];
                            if (v > best) best = v, at = y * w + xx;
                        }
                    }
                    out[by * pw + bx] = at < 0 ? -1 : plane + at;
                }
            }
        }
    }
}

template <class T>
void roi_sample(const T* x, int64_t c, int64_t h, int64_t w, int64_t rois, const int64_t* image,
                const int64_t* iy, const T* wy, int64_t ph, int64_t k, const int64_t* ix, const T* wx, int64_t pw,
                int64_t kk, T* out) {
    for (int64_t r = 0; r < rois; ++r) {
        const int64_t *rows = iy + r * ph * k, *cols = ix + r * pw * kk;
        const T *row_w = wy + r * ph * k, *col_w = wx + r * pw * kk;
        for (int64_t ch = 0; ch < c; ++ch) {
            const T* plane = x + (image[r] * c + ch) * h * w;
            T* o = out + (r * c + ch) * ph * pw;
            for (int64_t i = 0; i < ph; ++i) {
                for (int64_t j = 0; j < pw; ++j) {
                    T acc = 0;
                    for (int64_t a = 0; a < k; ++a) {
                        const T weight = row_w[i * k + a];
                        if (weight == 0) continue;
                        const T* line = plane + rows[i * k + a] * w;
                        T across = 0;
                        for (int64_t b = 0; b < kk; ++b) across += col_w[j * kk + b] * line[cols[j * kk + b]];
                        acc += weight * across;
                    }
                    o[i * pw + j] = acc;
                }
            }
        }
    }
}

template <class T>
void roi_sample_backward(const T* g, int64_t c, int64_t h, int64_t w, int64_t rois, const int64_t* image,
                         const int64_t* iy, const T* wy, int64_t ph, int64_t k, const int64_t* ix, const T* wx,
                         int64_t pw, int64_t kk, T* grad_x) {
    for (int64_t r = 0; r < rois; ++r) {
        const int64_t *rows = iy + r * ph * k, *cols = ix + r * pw * kk;
        const T *row_w = wy + r * ph * k, *col_w = wx + r * pw * kk;
        for (int64_t ch = 0; ch < c; ++ch) {
            T* plane = grad_x + (image[r] * c + ch) * h * w;
            const T* gr = g + (r * c + ch) * ph * pw;
            for (int64_t i = 0; i < ph; ++i) {
                for (int64_t j = 0; j < pw; ++j) {
                    const T gv = gr[i * pw + j];
                    if (gv == 0) continue;
                    for (int64_t a = 0; a < k; ++a) {
                        const T weight = gv * row_w[i * k + a];
                        if (weight == 0) continue;
                        T* line = plane + rows[i * k + a] * w;
                        for (int64_t b = 0; b < kk; ++b) line[cols[j * kk + b]] += weight * col_w[j * kk + b];
                    }
                }
            }
        }
    }
}

template <class T>
void psroi_sums(const T* x, int64_t c, int64_t h, int64_t w, int64_t rois, const int64_t* image,
                const int64_t* hs, const int64_t* he, int64_t ph, const int64_t* ws, const int64_t* we, int64_t pw,
                double* out) {
    const int64_t out_c = c / (ph * pw);
    for (int64_t r = 0; r < rois; ++r) {
        for (int64_t o = 0; o < out_c; ++o) {
            for (int64_t i = 0; i < ph; ++i) {
                for (int64_t j = 0; j < pw; ++j) {
                    const T* plane = x + (image[r] * c + (o * ph + i) * pw + j) * h * w;
                    double sum = 0;
                    for (int64_t y = hs[r * ph + i]; y < he[r * ph + i]; ++y) {
                        const T* line = plane + y * w;
                        for (int64_t xx = ws[r * pw + j]; xx < we[r * pw + j]; ++xx) sum += line[xx];
                    }
                    out[((r * out_c + o) * ph + i) * pw + j] = sum;
                }
            }
        }
    }
}

template <class T>
void psroi_sums_backward(const T* g, int64_t c, int64_t h, int64_t w, int64_t rois, const int64_t* image,
                         const int64_t* hs, const int64_t* he, int64_t ph, const int64_t* ws, const int64_t* we,
                         int64_t pw, T* grad_x) {
    const int64_t out_c = c / (ph * pw);
    for (int64_t r = 0; r < rois; ++r) {
        for (int64_t o = 0; o < out_c; ++o) {
            for (int64_t i = 0; i < ph; ++i) {
                for (int64_t j = 0; j < pw; ++j) {
                    const T weight = g[((r * out_c + o) * ph + i) * pw + j];
                    if (weight == 0) continue;
                    T* plane = grad_x + (image[r] * c + (o * ph + i) * pw + j) * h * w;
                    for (int64_t y = hs[r * ph + i]; y < he[r * ph + i]; ++y) {
                        T* line = plane + y * w;
                        for (int64_t xx = ws[r * pw + j]; xx < we[r * pw + j]; ++xx) line[xx] += weight;
                    }
                }
            }
        }
    }
}

template void psroi_sums<float>(const float*, int64_t, int64_t, int64_t, int64_t, const int64_t*, const int64_t*,
                                const int64_t*, int64_t, const int64_t*, const int64_t*, int64_t, double*);
template void psroi_sums<double>(const double*, int64_t, int64_t, int64_t, int64_t, const int64_t*, const int64_t*,
                                 const int64_t*, int64_t, const int64_t*, const int64_t*, int64_t, double*);
template void psroi_sums_backward<float>(const float*, int64_t, int64_t, int64_t, int64_t, const int64_t*,
                                         const int64_t*, const int64_t*, int64_t, const int64_t*, const int64_t*,
                                         int64_t, float*);
template void psroi_sums_backward<double>(const double*, int64_t, int64_t, int64_t, int64_t, const int64_t*,
                                          const int64_t*, const int64_t*, int64_t, const int64_t*, const int64_t*,
                                          int64_t, double*);
template void roi_sample<float>(const float*, int64_t, int64_t, int64_t, int64_t, const int64_t*, const int64_t*,
                                const float*, int64_t, int64_t, const int64_t*, const float*, int64_t, int64_t, float*);
template void roi_sample<double>(const double*, int64_t, int64_t, int64_t, int64_t, const int64_t*, const int64_t*,
                                 const double*, int64_t, int64_t, const int64_t*, const double*, int64_t, int64_t,
                                 double*);
template void roi_sample_backward<float>(const float*, int64_t, int64_t, int64_t, int64_t, const int64_t*,
                                         const int64_t*, const float*, int64_t, int64_t, const int64_t*, const float*,
                                         int64_t, int64_t, float*);
template void roi_sample_backward<double>(const double*, int64_t, int64_t, int64_t, int64_t, const int64_t*,
                                          const int64_t*, const double*, int64_t, int64_t, const int64_t*,
                                          const double*, int64_t, int64_t, double*);
template void roi_max_index<float>(const float*, int64_t, int64_t, int64_t, int64_t, const int64_t*, const int64_t*,
                                   const int64_t*, int64_t, const int64_t*, const int64_t*, int64_t, int64_t*);
template void roi_max_index<double>(const double*, int64_t, int64_t, int64_t, int64_t, const int64_t*,
                                    const int64_t*, const int64_t*, int64_t, const int64_t*, const int64_t*, int64_t,
                                    int64_t*);
template void sum_pool<float>(const float*, int64_t, const PoolGeometry&, float*);
template void sum_pool<double>(const double*, int64_t, const PoolGeometry&, double*);
template void sum_pool_backward<float>(const float*, int64_t, const PoolGeometry&, float*);
template void sum_pool_backward<double>(const double*, int64_t, const PoolGeometry&, double*);
template void max_pool<float>(const float*, int64_t, const PoolGeometry&, float*, int32_t*);
template void max_pool<double>(const double*, int64_t, const PoolGeometry&, double*, int32_t*);
template void max_pool_backward<float>(const float*, const int32_t*, int64_t, const PoolGeometry&, float*);
template void max_pool_backward<double>(const double*, const int32_t*, int64_t, const PoolGeometry&, double*);

}  // namespace pycoll
