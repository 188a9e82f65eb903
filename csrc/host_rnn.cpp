// One time step of the fused recurrent layers on host arrays: see host_rnn.h.
#include "host_rnn.h"

#include <algorithm>
#include <cmath>

#include "host_exp.h"
#include "simd_clones.h"

namespace pycoll {
namespace {

// The activations. float: in double through fastmath's exp, branch-free, so that the loops
// vectorize (std::exp and std::tanh do not: a step of a batch of 8 with 16 hidden units took 7 us
// in them, as long as NumPy's 10-20 calls); double: std's, to double's precision.
inline float sigmoid(float x) {
    const double xd = x;
    const double e = fastmath::exp_nonpositive(-std::fabs(xd));  // never overflows
    return static_cast<float>((xd >= 0 ? 1.0 : e) / (1.0 + e));
}

inline float tanh(float x) {
    const double xd = x, a = std::fabs(xd);
    const double e = fastmath::exp_nonpositive(-2.0 * a);
    const double far = (1.0 - e) / (1.0 + e);
    const double near = a * (1.0 - a * a * (1.0 / 3.0 - a * a * (2.0 / 15.0)));  // where 1 - e cancels
    return static_cast<float>(std::copysign(a < 0x1p-8 ? near : far, xd));
}

inline double sigmoid(double x) {
    if (x < 0) {
        const double e = std::exp(x);
        return e / (1 + e);
    }
    return 1 / (1 + std::exp(-x));
}

inline double tanh(double x) { return std::tanh(x); }

// dst = sigmoid(a + b), or tanh; a + (b + c) with Bias (GRU's b_hh)
template <class T, bool Tanh, bool Bias = false>
inline void activate(T* __restrict dst, const T* __restrict a, const T* __restrict b, const T* __restrict c,
                     int64_t n) {
    for (int64_t k = 0; k < n; ++k) {
        const T pre = Bias ? a[k] + (b[k] + c[k]) : a[k] + b[k];
        dst[k] = Tanh ? tanh(pre) : sigmoid(pre);
    }
}

// The step's new h (and c) where the row is valid, else the state held and an output of 0 * h.
// The kernels run row by row (one sequence of the batch) through pointers the compiler may take
// as unaliased, with no branch in the inner loops, so that they vectorize (a select on a bool that
// the loop does not change was enough to stop GCC). Valid: the row's step counts; past its length
// the output is new_h * 0 and the state is held.

template <class T, bool Valid>
void lstm_row(int64_t H, const T* __restrict xw, const T* __restrict hw, T* __restrict gates,
              T* __restrict extra, T* __restrict prev_h, T* __restrict out, T* __restrict h, T* __restrict c) {
    activate<T, false>(gates, xw, hw, nullptr, 2 * H);
    activate<T, true>(gates + 2 * H, xw + 2 * H, hw + 2 * H, nullptr, H);
    activate<T, false>(gates + 3 * H, xw + 3 * H, hw + 3 * H, nullptr, H);
    for (int64_t j = 0; j < H; ++j) {
        const T i = gates[j], f = gates[H + j], g = gates[2 * H + j], o = gates[3 * H + j];
        const T c0 = c[j], h0 = h[j];
        extra[j] = c0;
        prev_h[j] = h0;
        const T new_c = f * c0 + i * g;
        const T new_h = o * tanh(new_c);
        if constexpr (Valid) {
            out[j] = new_h;
            h[j] = new_h;
            c[j] = new_c;
        } else {
            out[j] = new_h * T(0);
        }
    }
}

template <class T, bool Valid>
void gru_row(int64_t H, const T* __restrict xw, const T* __restrict hw, const T* __restrict b_hh,
             T* __restrict gates, T* __restrict extra, T* __restrict prev_h, T* __restrict out, T* __restrict h) {
    activate<T, false, true>(gates, xw, hw, b_hh, 2 * H);
    for (int64_t j = 0; j < H; ++j) {
        const T r = gates[j], z = gates[H + j];
        const T hidden_n = hw[2 * H + j] + b_hh[2 * H + j];
        extra[j] = hidden_n;
        const T n = tanh(xw[2 * H + j] + r * hidden_n);
        gates[2 * H + j] = n;
        const T h0 = h[j];
        prev_h[j] = h0;
        const T new_h = (h0 - n) * z + n;
        if constexpr (Valid) {
            out[j] = new_h;
            h[j] = new_h;
        } else {
            out[j] = new_h * T(0);
        }
    }
}

template <class T, bool Valid, bool Tanh>
void simple_row(int64_t H, const T* __restrict xw, const T* __restrict hw, T* __restrict gates,
                T* __restrict prev_h, T* __restrict out, T* __restrict h) {
    for (int64_t j = 0; j < H; ++j) {
        const T pre = xw[j] + hw[j];
        const T new_h = Tanh ? tanh(pre) : std::max(pre, T(0));
        const T h0 = h[j];
        gates[j] = new_h;
        prev_h[j] = h0;
        if constexpr (Valid) {
            out[j] = new_h;
            h[j] = new_h;
        } else {
            out[j] = new_h * T(0);
        }
    }
}

template <class T, bool Valid>
void forward_row(Cell cell, const RnnStep<T>& s, int64_t b) {
    const int64_t H = s.hidden;
    const int64_t G = cell == Cell::lstm ? 4 * H : cell == Cell::gru ? 3 * H : H;
    const T *xw = s.xw + b * G, *hw = s.hw + b * G;
    T *gates = s.gates + b * G, *prev_h = s.prev_h + b * H, *out = s.out + b * H, *h = s.h + b * H;
    switch (cell) {
        case Cell::lstm: lstm_row<T, Valid>(H, xw, hw, gates, s.extra + b * H, prev_h, out, h, s.c + b * H); break;
        case Cell::gru: gru_row<T, Valid>(H, xw, hw, s.b_hh, gates, s.extra + b * H, prev_h, out, h); break;
        case Cell::rnn_tanh: simple_row<T, Valid, true>(H, xw, hw, gates, prev_h, out, h); break;
        case Cell::rnn_relu: simple_row<T, Valid, false>(H, xw, hw, gates, prev_h, out, h); break;
    }
}

template <class T>
void forward(Cell cell, const RnnStep<T>& s) {
    for (int64_t b = 0; b < s.batch; ++b) {
        if (s.valid == nullptr || s.valid[b] != 0) {
            forward_row<T, true>(cell, s, b);
        } else {
            forward_row<T, false>(cell, s, b);
        }
    }
}

// Backward, row by row: d_h holds the state's whole gradient at the step's end (the caller adds the
// later step's matmul first); d_new_h = (d_h + d_out) * keep reaches the step, d_h * (1 - keep) is
// held past it (0 for a row that counts).

template <class T, bool Out>
void lstm_row_back(int64_t H, T keep, const T* __restrict gates, const T* __restrict c_prev,
                   const T* __restrict d_out, T* __restrict d_h, T* __restrict d_c, T* __restrict dg) {
    for (int64_t j = 0; j < H; ++j) {
        const T total = d_h[j];
        const T d_new_h = (Out ? total + d_out[j] : total) * keep;
        const T i = gates[j], f = gates[H + j], g = gates[2 * H + j], o = gates[3 * H + j];
        const T c = c_prev[j];
        const T tanh_c = tanh(f * c + i * g);
        const T d_c_in = d_c[j];
        const T d_new_c = d_new_h * o * (T(1) - tanh_c * tanh_c) + d_c_in * keep;
        dg[j] = d_new_c * g * i * (T(1) - i);
        dg[H + j] = d_new_c * c * f * (T(1) - f);
        dg[2 * H + j] = d_new_c * i * (T(1) - g * g);
        dg[3 * H + j] = d_new_h * tanh_c * o * (T(1) - o);
        d_c[j] = d_c_in * (T(1) - keep) + d_new_c * f;
        d_h[j] = total * (T(1) - keep);
    }
}

template <class T, bool Out>
void gru_row_back(int64_t H, T keep, const T* __restrict gates, const T* __restrict hidden_n,
                  const T* __restrict prev_h, const T* __restrict d_out, T* __restrict d_h, T* __restrict dg,
                  T* __restrict dh) {
    for (int64_t j = 0; j < H; ++j) {
        const T total = d_h[j];
        const T d_new_h = (Out ? total + d_out[j] : total) * keep;
        const T r = gates[j], z = gates[H + j], n = gates[2 * H + j];
        const T d_n = d_new_h * (T(1) - z) * (T(1) - n * n);
        const T d_r = d_n * hidden_n[j] * r * (T(1) - r);
        const T d_z = d_new_h * (prev_h[j] - n) * z * (T(1) - z);
        dg[j] = d_r;
        dh[j] = d_r;
        dg[H + j] = d_z;
        dh[H + j] = d_z;
        dg[2 * H + j] = d_n;
        dh[2 * H + j] = d_n * r;
        d_h[j] = total * (T(1) - keep) + d_new_h * z;
    }
}

template <class T, bool Out, bool Tanh>
void simple_row_back(int64_t H, T keep, const T* __restrict gates, const T* __restrict d_out, T* __restrict d_h,
                     T* __restrict dg) {
    for (int64_t j = 0; j < H; ++j) {
        const T total = d_h[j];
        const T d_new_h = (Out ? total + d_out[j] : total) * keep;
        const T new_h = gates[j];
        dg[j] = Tanh ? d_new_h * (T(1) - new_h * new_h) : d_new_h * T(new_h > T(0));
        d_h[j] = total * (T(1) - keep);
    }
}

template <class T, bool Out>
void backward_rows(Cell cell, const RnnStepBackward<T>& s) {
    const int64_t H = s.hidden;
    const int64_t G = cell == Cell::lstm ? 4 * H : cell == Cell::gru ? 3 * H : H;
    for (int64_t b = 0; b < s.batch; ++b) {
        const T keep = s.valid == nullptr || s.valid[b] != 0 ? T(1) : T(0);
        T* d_h = s.d_h + b * H;
        if (s.d_h_in != nullptr) {
            const T* __restrict in = s.d_h_in + b * H;
            for (int64_t j = 0; j < H; ++j) d_h[j] += in[j];
        }
        const T *gates = s.gates + b * G, *d_out = Out ? s.d_out + b * H : nullptr;
        T* dg = s.d_gates + b * G;
        switch (cell) {
            case Cell::lstm:
                lstm_row_back<T, Out>(H, keep, gates, s.extra + b * H, d_out, d_h, s.d_c + b * H, dg);
                break;
            case Cell::gru:
                gru_row_back<T, Out>(H, keep, gates, s.extra + b * H, s.prev_h + b * H, d_out, d_h, dg,
                                     s.d_hidden + b * G);
                break;
            case Cell::rnn_tanh: simple_row_back<T, Out, true>(H, keep, gates, d_out, d_h, dg); break;
            case Cell::rnn_relu: simple_row_back<T, Out, false>(H, keep, gates, d_out, d_h, dg); break;
        }
    }
}

template <class T>
void backward(Cell cell, const RnnStepBackward<T>& s) {
    if (s.d_out != nullptr) {
        backward_rows<T, true>(cell, s);
    } else {
        backward_rows<T, false>(cell, s);
    }
}

// float's loops vectorize: a clone for AVX-512 and AVX2 where the CPU has them (simd_clones.h)
PYCOLL_SIMD_CLONES void forward_float(Cell cell, const RnnStep<float>& s) { forward(cell, s); }
PYCOLL_SIMD_CLONES void backward_float(Cell cell, const RnnStepBackward<float>& s) { backward(cell, s); }

}  // namespace

void rnn_step(Cell cell, const RnnStep<float>& s) { forward_float(cell, s); }
void rnn_step(Cell cell, const RnnStep<double>& s) { forward(cell, s); }
void rnn_step_backward(Cell cell, const RnnStepBackward<float>& s) { backward_float(cell, s); }
void rnn_step_backward(Cell cell, const RnnStepBackward<double>& s) { backward(cell, s); }

}  // namespace pycoll
