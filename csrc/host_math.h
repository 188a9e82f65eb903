// Single-pass host forms of float ops whose NumPy form takes many passes over the data, for the
// tensor layer (pycoll/kernels/host_math.py). Plain C++17, no Python here: bindings.cpp calls
// these with the GIL released.
#pragma once

#include <cstdint>

namespace pycoll {

// T is float or double (cumsum and cumprod also int64_t); arrays are C-contiguous and do not overlap.

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
// Running products, the same way (NumPy's cumprod's order; int64 wraps around on overflow).
template <class T>
void cumprod(const T* x, T* out, int64_t outer, int64_t len, int64_t inner);

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

// sigmoid's last steps over e = exp(-x) (NumPy's exp, so that the values are its formula's):
// e = 1 / (1 + e) in place, each step rounded in T; returns how many results are 0 (where the
// caller puts exp(x) instead). sigmoid_backward: dx = (g * out) * (1 - out), rounded so.
template <class T>
int64_t sigmoid_from_exp(T* e, int64_t n);
template <class T>
void sigmoid_backward(const T* out, const T* g, T* dx, int64_t n);

// target[index[i], :] += values[i, :], i in order (np.add.at's order, so the same sums bit for bit)
// over target viewed as [rows, width]; a negative index counts from the end. Returns -1, or the
// position in `index` of the first index outside [-rows, rows) (nothing is added then).
template <class T>
int64_t scatter_add_rows(T* target, int64_t rows, int64_t width, const int64_t* index, int64_t n,
                         const T* values);
// The same with np.maximum (maximum) or np.minimum in place of the addition (np.maximum.at's
// values: a NaN on either side wins).
template <class T>
int64_t scatter_extreme_rows(T* target, int64_t rows, int64_t width, const int64_t* index, int64_t n,
                             const T* values, bool maximum);

// The geometry of a max pool over volumes [d, h, w] (already padded: padding never wins) by
// windows kd x kh x kw at strides sd, sh, sw, giving [od, oh, ow]; a 2-D pool is d = kd = sd = 1.
struct PoolGeometry {
    int64_t d, h, w, kd, kh, kw, sd, sh, sw, od, oh, ow;
};

// Max pooling of `volumes` volumes of x [volumes, d, h, w] into out [volumes, od, oh, ow] and
// pick, each window's (d, h, w)-major position of its maximum: the first cell equal to it, or the
// first NaN (a NaN wins), as paddle's kernel picks the cell that takes the gradient.
template <class T>
void max_pool(const T* x, int64_t volumes, const PoolGeometry& at, T* out, int32_t* pick);
// Its gradient: gx [volumes, d, h, w] (zeroed by the caller) += g [volumes, od, oh, ow] at each
// window's pick, in the windows' order (paddle's order of adding).
template <class T>
void max_pool_backward(const T* g, const int32_t* pick, int64_t volumes, const PoolGeometry& at, T* gx);

// The window sums of x [volumes, d, h, w] into out [volumes, od, oh, ow], each window's cells
// added in (d, h, w)-major order (as a running sum: paddle's order), and their gradient: gx
// (zeroed by the caller) += g [volumes, od, oh, ow] at every cell of each window, a row of
// windows and a window position at a time.
template <class T>
void sum_pool(const T* x, int64_t volumes, const PoolGeometry& at, T* out);
template <class T>
void sum_pool_backward(const T* g, int64_t volumes, const PoolGeometry& at, T* gx);

// RoI max pooling's picks: for each RoI r (of image[r]), channel and bin [hs, he) x [ws, we)
// (rows ph, columns pw per RoI; clipped to the plane), the flat index into x [N, c, h, w] of the
// bin's first cell (row-major) greater than every other and than the type's lowest value, as
// paddle's kernel compares (a NaN never wins), into index [rois, c, ph, pw]; -1 where none is
// (an empty bin, or one of NaN and -inf cells only).
template <class T>
void roi_max_index(const T* x, int64_t c, int64_t h, int64_t w, int64_t rois, const int64_t* image,
                   const int64_t* hs, const int64_t* he, int64_t ph, const int64_t* ws, const int64_t* we,
                   int64_t pw, int64_t* index);

// RoI align's separable sampling: for each RoI r (of image[r]), channel and bin (i, j),
// out[r, ch, i, j] = sum over a < k, b < kk of wy[r, i, a] * wx[r, j, b] * x[image[r], ch, iy[r, i, a], ix[r, j, b]]
// (bins ph by pw; k row and kk column samples per bin, a weight 0 where a sample is unused;
// every index within the plane), into out [rois, c, ph, pw].
template <class T>
void roi_sample(const T* x, int64_t c, int64_t h, int64_t w, int64_t rois, const int64_t* image,
                const int64_t* iy, const T* wy, int64_t ph, int64_t k, const int64_t* ix, const T* wx, int64_t pw,
                int64_t kk, T* out);

// roi_sample's gradient: g [rois, c, ph, pw] spread back over the samples, added into grad_x
// [n, c, h, w] (zeroed by the caller).
template <class T>
void roi_sample_backward(const T* g, int64_t c, int64_t h, int64_t w, int64_t rois, const int64_t* image,
                         const int64_t* iy, const T* wy, int64_t ph, int64_t k, const int64_t* ix, const T* wx,
                         int64_t pw, int64_t kk, T* grad_x);

// Position-sensitive RoI pooling's bin sums: for RoI r (of image[r]), output channel o and bin
// (i, j), the sum in double of input channel (o * ph + i) * pw + j over rows [hs[r, i], he[r, i])
// and columns [ws[r, j], we[r, j]) (within the plane), into out [rois, c / (ph * pw), ph, pw].
template <class T>
void psroi_sums(const T* x, int64_t c, int64_t h, int64_t w, int64_t rois, const int64_t* image,
                const int64_t* hs, const int64_t* he, int64_t ph, const int64_t* ws, const int64_t* we, int64_t pw,
                double* out);

// psroi_sums' gradient: each bin's weight in g [rois, c / (ph * pw), ph, pw] added to every cell
// of the bin in grad_x [n, c, h, w] (zeroed by the caller).
template <class T>
void psroi_sums_backward(const T* g, int64_t c, int64_t h, int64_t w, int64_t rois, const int64_t* image,
                         const int64_t* hs, const int64_t* he, int64_t ph, const int64_t* ws, const int64_t* we,
                         int64_t pw, T* grad_x);

}  // namespace pycoll
