// pycoll._C: the pybind11 face of the host kernels and, in a build with PYCOLL_WITH_CUDA, of the
// CUDA kernels. pycoll/kernels/ is its only caller and validates arguments with full messages
// first; the checks here are a terse safety net that keeps this module memory-safe on its own (as
// far as it can be given raw device pointers). Pointers and sizes are collected under the GIL, the
// copy runs (or, on the device, is enqueued) with the GIL released.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "host_kernels.h"
#include "host_adam.h"
#include "host_image.h"
#include "host_math.h"
#include "host_rnn.h"
#ifdef PYCOLL_WITH_CUDA
#include "cuda_adam.h"
#include "cuda_kernels.h"
#ifndef PYCOLL_CUDA_ARCH
#error "a CUDA build needs PYCOLL_CUDA_ARCH, the architecture list it was compiled for"
#endif
#endif

namespace py = pybind11;
using pycoll::Float;
using pycoll::Piece;
using pycoll::PoolGeometry;

#define PYCOLL_STR_(x) #x
#define PYCOLL_STR(x) PYCOLL_STR_(x)

namespace {

// The arrays of one call, kept referenced while the GIL is released, and their pieces.
struct Batch {
    std::vector<py::array> refs;
    std::vector<Piece> pieces;
    int64_t total = 0;
};

// Messages name the public function and argument: pycoll.kernels is the only caller.
std::string where(const char* fn, const std::string& what) {
    return std::string("pycoll.kernels.") + fn + ": " + what;
}

Batch collect(const char* fn, const py::sequence& arrays, bool writeable) {
    Batch b;
    const std::size_t n = arrays.size();
    if (n == 0) throw py::value_error(where(fn, "arrays is empty"));
    b.refs.reserve(n);
    b.pieces.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        py::object obj = arrays[i];
        auto name = [i] { return "arrays[" + std::to_string(i) + "]"; };
        if (!py::isinstance<py::array>(obj)) {
            throw py::type_error(where(fn, name() + " is not a numpy.ndarray"));
        }
        auto a = py::reinterpret_borrow<py::array>(obj);
        if (!(a.flags() & py::array::c_style)) {
            throw py::value_error(where(fn, name() + " is not C-contiguous"));
        }
        if (writeable && !a.writeable()) {
            throw py::value_error(where(fn, name() + " is read-only"));
        }
        if (i > 0 && !a.dtype().equal(b.refs[0].dtype())) {
            throw py::type_error(where(fn, name() + " has another dtype than arrays[0]"));
        }
        b.pieces.push_back(Piece{const_cast<void*>(a.data()), static_cast<int64_t>(a.size())});
        b.total += static_cast<int64_t>(a.size());
        b.refs.push_back(std::move(a));
    }
    return b;
}

// Checks the flat buffer, named `name` in fn's signature, against the arrays.
void check_flat(const char* fn, const char* name, const py::array& flat, const Batch& b,
                bool writeable) {
    if (!(flat.flags() & py::array::c_style)) {
        throw py::value_error(where(fn, std::string(name) + " is not C-contiguous"));
    }
    if (writeable && !flat.writeable()) {
        throw py::value_error(where(fn, std::string(name) + " is read-only"));
    }
    if (static_cast<int64_t>(flat.size()) != b.total) {
        throw py::value_error(
            where(fn, std::string(name) + "'s size differs from the arrays' total"));
    }
    // Copies between overlapping memory are undefined: refuse them.
    const auto lo = reinterpret_cast<std::uintptr_t>(flat.data());
    const auto hi = lo + static_cast<std::uintptr_t>(flat.nbytes());
    for (std::size_t i = 0; i < b.refs.size(); ++i) {
        const auto plo = reinterpret_cast<std::uintptr_t>(b.refs[i].data());
        const auto phi = plo + static_cast<std::uintptr_t>(b.refs[i].nbytes());
        if (plo < hi && lo < phi) {
            throw py::value_error(where(fn, std::string(name) + " overlaps arrays[" +
                                                std::to_string(i) +
                                                "] in memory; pass distinct buffers"));
        }
    }
}

// The kernels' floating type for a numpy dtype, if it is one (native byte order only).
std::optional<Float> float_type(const py::dtype& dt) {
    if (dt.attr("name").cast<std::string>() == "bfloat16" && dt.itemsize() == 2) return Float::bf16;  // ml_dtypes'
    if (dt.kind() != 'f' || dt.byteorder() != '=') return std::nullopt;
    switch (dt.itemsize()) {
        case 2: return Float::f16;
        case 4: return Float::f32;
        case 8: return Float::f64;
        default: return std::nullopt;
    }
}

// The cast pair for a converting (or scaling) copy, or a TypeError.
std::pair<Float, Float> cast_pair(const char* fn, const py::dtype& from, const py::dtype& to,
                                  bool scaled) {
    const auto f = float_type(from);
    const auto t = float_type(to);
    if (!f || !t || !pycoll::cast_supported(*f, *t)) {
        const std::string what = std::string("no kernel converts ") + (scaled ? "and scales " : "") +
                                 py::str(from).cast<std::string>() + " to " +
                                 py::str(to).cast<std::string>();
        throw py::type_error(where(fn, what));
    }
    return {*f, *t};
}

// The element size for a byte copy, or a TypeError for dtypes that hold Python objects.
std::size_t byte_itemsize(const char* fn, const py::dtype& dt) {
    if (dt.attr("hasobject").cast<bool>()) {
        throw py::type_error(where(fn, "dtypes holding Python objects are not served"));
    }
    return static_cast<std::size_t>(dt.itemsize());
}

void flatten(const py::sequence& arrays, const py::array& flat, std::optional<double> scale) {
    const Batch b = collect("flatten", arrays, /*writeable=*/false);
    check_flat("flatten", "out", flat, b, /*writeable=*/true);
    void* out = const_cast<void*>(flat.data());
    const py::dtype from = b.refs[0].dtype();
    const py::dtype to = flat.dtype();
    if (!scale && from.equal(to)) {
        const std::size_t itemsize = byte_itemsize("flatten", from);
        py::gil_scoped_release nogil;
        pycoll::flatten_bytes(b.pieces, itemsize, out);
    } else {
        const auto [f, t] = cast_pair("flatten", from, to, scale.has_value());
        py::gil_scoped_release nogil;
        pycoll::flatten_cast(b.pieces, f, out, t, scale);
    }
}

void unflatten(const py::array& flat, const py::sequence& arrays, std::optional<double> scale) {
    const Batch b = collect("unflatten", arrays, /*writeable=*/true);
    check_flat("unflatten", "flat", flat, b, /*writeable=*/false);
    const void* in = flat.data();
    const py::dtype from = flat.dtype();
    const py::dtype to = b.refs[0].dtype();
    if (!scale && from.equal(to)) {
        const std::size_t itemsize = byte_itemsize("unflatten", from);
        py::gil_scoped_release nogil;
        pycoll::unflatten_bytes(in, itemsize, b.pieces);
    } else {
        const auto [f, t] = cast_pair("unflatten", from, to, scale.has_value());
        py::gil_scoped_release nogil;
        pycoll::unflatten_cast(in, f, b.pieces, t, scale);
    }
}

// --- float ops for the tensor layer: pycoll/kernels/host_math.py picks the arrays they serve ---

template <class T>
using Host = py::array_t<T, py::array::c_style>;

// A new C-contiguous array of x's shape.
template <class T>
Host<T> like(const py::array& x) {
    return Host<T>(std::vector<py::ssize_t>(x.shape(), x.shape() + x.ndim()));
}

void check_size(const char* fn, const char* name, const py::array& a, py::ssize_t size) {
    if (a.size() != size) {
        throw py::value_error(where(fn, std::string(name) + " has " + std::to_string(a.size()) +
                                            " elements, need " + std::to_string(size)));
    }
}

void check_layout(const char* fn, const py::array& x, int64_t outer, int64_t mid, int64_t inner) {
    if (outer < 0 || mid < 0 || inner < 0 || outer * mid * inner != static_cast<int64_t>(x.size())) {
        throw py::value_error(where(fn, "outer * len * inner differs from x's size"));
    }
}

template <class T>
Host<T> erf_host(const Host<T>& x) {
    Host<T> out = like<T>(x);
    const T* in = x.data();
    T* o = out.mutable_data();
    py::gil_scoped_release nogil;
    pycoll::erf(in, o, static_cast<int64_t>(x.size()));
    return out;
}

template <class T>
std::pair<Host<T>, Host<T>> gelu_host(const Host<T>& x) {
    Host<T> out = like<T>(x), cdf = like<T>(x);
    const T* in = x.data();
    T* o = out.mutable_data();
    T* c = cdf.mutable_data();
    {
        py::gil_scoped_release nogil;
        pycoll::gelu(in, o, c, static_cast<int64_t>(x.size()));
    }
    return {out, cdf};
}

template <class T>
Host<T> gelu_backward_host(const Host<T>& x, const Host<T>& cdf, const Host<T>& g) {
    check_size("gelu_backward", "cdf", cdf, x.size());
    check_size("gelu_backward", "g", g, x.size());
    Host<T> dx = like<T>(x);
    const T *xs = x.data(), *cs = cdf.data(), *gs = g.data();
    T* d = dx.mutable_data();
    py::gil_scoped_release nogil;
    pycoll::gelu_backward(xs, cs, gs, d, static_cast<int64_t>(x.size()));
    return dx;
}

template <class T>
Host<T> cumsum_host(const Host<T>& x, int64_t outer, int64_t len, int64_t inner, bool reverse) {
    check_layout("cumsum", x, outer, len, inner);
    Host<T> out = like<T>(x);
    const T* in = x.data();
    T* o = out.mutable_data();
    py::gil_scoped_release nogil;
    pycoll::cumsum(in, o, outer, len, inner, reverse);
    return out;
}

template <class T>
Host<T> cumprod_host(const Host<T>& x, int64_t outer, int64_t len, int64_t inner) {
    check_layout("cumprod", x, outer, len, inner);
    Host<T> out = like<T>(x);
    const T* in = x.data();
    T* o = out.mutable_data();
    py::gil_scoped_release nogil;
    pycoll::cumprod(in, o, outer, len, inner);
    return out;
}

template <class T>
py::array_t<double> channel_sums_host(const Host<T>& x, const std::optional<Host<T>>& mean,
                                      int64_t outer, int64_t channels, int64_t inner) {
    check_layout("channel_sums", x, outer, channels, inner);
    if (mean) check_size("channel_sums", "mean", *mean, channels);
    py::array_t<double> sums(channels);
    const T* xs = x.data();
    const T* ms = mean ? mean->data() : nullptr;
    double* s = sums.mutable_data();
    py::gil_scoped_release nogil;
    pycoll::channel_sums<T>(xs, nullptr, ms, outer, channels, inner, s, nullptr);
    return sums;
}

template <class T>
std::pair<py::array_t<double>, py::array_t<double>> channel_sums_and_dots_host(
    const Host<T>& x, const Host<T>& y, int64_t outer, int64_t channels, int64_t inner) {
    check_layout("channel_sums_and_dots", x, outer, channels, inner);
    check_size("channel_sums_and_dots", "y", y, x.size());
    py::array_t<double> sums(channels), products(channels);
    const T *xs = x.data(), *ys = y.data();
    double* s = sums.mutable_data();
    double* p = products.mutable_data();
    {
        py::gil_scoped_release nogil;
        pycoll::channel_sums(xs, ys, static_cast<const T*>(nullptr), outer, channels, inner, s, p);
    }
    return {sums, products};
}

template <class T>
std::pair<Host<T>, Host<T>> normalize_host(const Host<T>& x, const Host<T>& mean,
                                           const Host<T>& rstd, const std::optional<Host<T>>& weight,
                                           const std::optional<Host<T>>& bias, int64_t outer,
                                           int64_t channels, int64_t inner) {
    check_layout("normalize", x, outer, channels, inner);
    check_size("normalize", "mean", mean, channels);
    check_size("normalize", "rstd", rstd, channels);
    if (weight) check_size("normalize", "weight", *weight, channels);
    if (bias) check_size("normalize", "bias", *bias, channels);
    Host<T> xhat = like<T>(x), out = like<T>(x);
    const T *xs = x.data(), *ms = mean.data(), *rs = rstd.data();
    const T* ws = weight ? weight->data() : nullptr;
    const T* bs = bias ? bias->data() : nullptr;
    T* hs = xhat.mutable_data();
    T* os = out.mutable_data();
    {
        py::gil_scoped_release nogil;
        pycoll::normalize(xs, ms, rs, ws, bs, hs, os, outer, channels, inner);
    }
    return {xhat, out};
}

template <class T>
Host<T> normalize_backward_host(Host<T> g, const Host<T>& xhat, const Host<T>& g_mean,
                                const Host<T>& gxhat_mean, const Host<T>& scale, int64_t outer,
                                int64_t channels, int64_t inner, bool overwrite_g) {
    check_layout("normalize_backward", g, outer, channels, inner);
    check_size("normalize_backward", "xhat", xhat, g.size());
    for (const auto& [name, a] : {std::pair<const char*, const Host<T>*>{"g_mean", &g_mean},
                                  {"gxhat_mean", &gxhat_mean}, {"scale", &scale}}) {
        check_size("normalize_backward", name, *a, channels);
    }
    if (overwrite_g && !g.writeable()) throw py::value_error(where("normalize_backward", "g is read-only"));
    Host<T> gx = overwrite_g ? g : like<T>(g);
    const T *gs = g.data(), *hs = xhat.data(), *gm = g_mean.data(), *hm = gxhat_mean.data();
    const T* sc = scale.data();
    T* out = gx.mutable_data();
    py::gil_scoped_release nogil;
    pycoll::normalize_backward(gs, hs, gm, hm, sc, out, outer, channels, inner);
    return gx;
}

// The data of an array a kernel writes in place: the caller passes C-contiguous arrays of the
// kernel's dtype (so pybind11 makes no copy); a read-only one is refused.
template <class T>
T* in_place(const char* fn, const char* name, Host<T>& a) {
    if (!a.writeable()) throw py::value_error(where(fn, std::string(name) + " is read-only"));
    return a.mutable_data();
}

template <class T>
int64_t sigmoid_from_exp_host(Host<T> e) {
    T* data = in_place("sigmoid_from_exp", "e", e);
    const auto n = static_cast<int64_t>(e.size());
    py::gil_scoped_release nogil;
    return pycoll::sigmoid_from_exp(data, n);
}

template <class T>
Host<T> sigmoid_backward_host(const Host<T>& out, const Host<T>& g) {
    check_size("sigmoid_backward", "g", g, out.size());
    Host<T> dx = like<T>(out);
    const T *os = out.data(), *gs = g.data();
    T* d = dx.mutable_data();
    py::gil_scoped_release nogil;
    pycoll::sigmoid_backward(os, gs, d, static_cast<int64_t>(out.size()));
    return dx;
}

template <class T>
void adam_step_host(Host<T> param, const Host<T>& grad, Host<T> m, Host<T> v,
                    std::optional<Host<T>> v_max, double decay, double beta1,
                    double one_minus_beta1, double beta2, double one_minus_beta2, double epsilon,
                    double step) {
    const py::ssize_t n = param.size();
    check_size("adam_step", "grad", grad, n);
    check_size("adam_step", "moment1", m, n);
    check_size("adam_step", "moment2", v, n);
    if (v_max) check_size("adam_step", "moment2_max", *v_max, n);
    T* p = in_place("adam_step", "param", param);
    T* ms = in_place("adam_step", "moment1", m);
    T* vs = in_place("adam_step", "moment2", v);
    T* vm = v_max ? in_place("adam_step", "moment2_max", *v_max) : nullptr;
    const T* gs = grad.data();
    const pycoll::AdamScalars s{decay, beta1, one_minus_beta1, beta2, one_minus_beta2, epsilon, step};
    py::gil_scoped_release nogil;
    pycoll::adam_step(p, gs, ms, vs, vm, static_cast<int64_t>(n), s);
}

// ufunc.at over rows: op 0 add, 1 maximum, 2 minimum
template <class T>
int64_t scatter_rows_host(Host<T> target, const py::array_t<int64_t, py::array::c_style>& index,
                          const Host<T>& values, int op) {
    const char* fn = op == 0 ? "scatter_add_rows" : "scatter_extreme_rows";
    if (target.ndim() < 1 || index.ndim() != 1) throw py::value_error(where(fn, "target needs an axis 0 and index one axis"));
    const int64_t rows = target.shape(0), n = index.size();
    const int64_t width = rows == 0 ? 0 : static_cast<int64_t>(target.size()) / rows;
    check_size(fn, "values", values, n * width);
    T* t = in_place(fn, "target", target);
    const int64_t* idx = index.data();
    const T* v = values.data();
    py::gil_scoped_release nogil;
    return op == 0 ? pycoll::scatter_add_rows(t, rows, width, idx, n, v)
                   : pycoll::scatter_extreme_rows(t, rows, width, idx, n, v, op == 1);
}

template <class T>
int64_t scatter_add_rows_host(Host<T> target, const py::array_t<int64_t, py::array::c_style>& index,
                              const Host<T>& values) {
    return scatter_rows_host<T>(target, index, values, 0);
}

template <class T>
int64_t scatter_extreme_rows_host(Host<T> target, const py::array_t<int64_t, py::array::c_style>& index,
                                  const Host<T>& values, bool maximum) {
    return scatter_rows_host<T>(target, index, values, maximum ? 1 : 2);
}

// --- the steps of a fused recurrent layer (pycoll/nn/rnn_fused.py); see host_rnn.h -----------
// A layer's arrays are checked and held once, by an object whose step(t) then takes a step: a call
// with a dozen array arguments cost 6 us in pybind11's conversions, more than the step itself.

using Valid = py::array_t<uint8_t, py::array::c_style>;

struct StepShape {
    int64_t steps, batch, hidden, width;  // width: the gates', G
};

StepShape step_shape(const char* fn, int cell, const py::array& per_step, const py::array& state) {
    if (cell < 0 || cell > 3) throw py::value_error(where(fn, "cell must be 0-3"));
    if (per_step.ndim() != 3 || state.ndim() != 2) {
        throw py::value_error(where(fn, "the per-step arrays are [time, batch, G], the state [batch, H]"));
    }
    const StepShape shape{per_step.shape(0), state.shape(0), state.shape(1), per_step.shape(2)};
    const int64_t gates = cell == 0 ? 4 : cell == 1 ? 3 : 1;
    if (per_step.shape(1) != shape.batch || shape.width != gates * shape.hidden) {
        throw py::value_error(where(fn, "the gates' width is not the cell's number of gates x H"));
    }
    return shape;
}

// a's data after checking its size, null for None (`written`: it must be writable)
template <class T>
T* held(const char* fn, const char* name, const std::optional<Host<T>>& a, int64_t size, bool written) {
    if (!a) return nullptr;
    check_size(fn, name, *a, size);
    Host<T> array = *a;
    return written ? in_place(fn, name, array) : const_cast<T*>(array.data());
}

void check_cell_arrays(const char* fn, int cell, bool lstm_only, bool gated_only, bool gru_only,
                       const char* names) {
    if ((cell == 0) != lstm_only || (cell < 2) != gated_only || (cell == 1) != gru_only) {
        throw py::value_error(where(fn, names));
    }
}

void check_step(const char* fn, int64_t t, int64_t steps) {
    if (t < 0 || t >= steps) throw py::index_error(where(fn, "t is not a step of the layer"));
}

template <class T>
class RnnSteps {
  public:
    RnnSteps(int cell, Host<T> xw, Host<T> hw, std::optional<Host<T>> b_hh, std::optional<Valid> valid,
             Host<T> gates, std::optional<Host<T>> extra, Host<T> prev_h, Host<T> out, Host<T> h,
             std::optional<Host<T>> c)
        : cell_(cell), shape_(step_shape("RnnSteps", cell, xw, h)),
          keep_{xw, hw, gates, prev_h, out, h} {
        const char* fn = "RnnSteps";
        const int64_t state = shape_.batch * shape_.hidden, gated = shape_.batch * shape_.width;
        check_size(fn, "hw", hw, gated);
        check_size(fn, "gates", gates, shape_.steps * gated);
        check_size(fn, "prev_h", prev_h, shape_.steps * state);
        check_size(fn, "out", out, shape_.steps * state);
        check_cell_arrays(fn, cell, bool(c), bool(extra), bool(b_hh),
                          "c (LSTM), extra (LSTM, GRU) and b_hh (GRU) go with their cells");
        if (valid) check_size(fn, "valid", *valid, shape_.steps * shape_.batch);
        if (b_hh) keep_.push_back(*b_hh);
        if (valid) keep_.push_back(*valid);
        if (extra) keep_.push_back(*extra);
        if (c) keep_.push_back(*c);
        s_ = {shape_.batch, shape_.hidden, xw.data(), hw.data(), held(fn, "b_hh", b_hh, 3 * shape_.hidden, false),
              valid ? valid->data() : nullptr, in_place(fn, "gates", gates),
              held(fn, "extra", extra, shape_.steps * state, true), in_place(fn, "prev_h", prev_h),
              in_place(fn, "out", out), in_place(fn, "h", h), held(fn, "c", c, state, true)};
    }

    void step(int64_t t) {
        check_step("RnnSteps.step", t, shape_.steps);
        const int64_t state = shape_.batch * shape_.hidden, gated = shape_.batch * shape_.width;
        pycoll::RnnStep<T> at = s_;
        at.xw += t * gated;
        at.gates += t * gated;
        at.prev_h += t * state;
        at.out += t * state;
        if (at.extra) at.extra += t * state;
        if (at.valid) at.valid += t * shape_.batch;
        py::gil_scoped_release nogil;
        pycoll::rnn_step(static_cast<pycoll::Cell>(cell_), at);
    }

  private:
    int cell_;
    StepShape shape_;
    std::vector<py::array> keep_;  // the arrays the pointers point into, alive while this is
    pycoll::RnnStep<T> s_{};       // the pointers at step 0
};

template <class T>
class RnnStepsBackward {
  public:
    RnnStepsBackward(int cell, Host<T> gates, std::optional<Host<T>> extra, Host<T> prev_h,
                     std::optional<Valid> valid, std::optional<Host<T>> d_out, Host<T> d_h_in, Host<T> d_h,
                     std::optional<Host<T>> d_c, Host<T> d_gates, std::optional<Host<T>> d_hidden)
        : cell_(cell), shape_(step_shape("RnnStepsBackward", cell, gates, d_h)),
          keep_{gates, prev_h, d_h_in, d_h, d_gates} {
        const char* fn = "RnnStepsBackward";
        const int64_t state = shape_.batch * shape_.hidden, gated = shape_.batch * shape_.width;
        check_size(fn, "prev_h", prev_h, shape_.steps * state);
        check_size(fn, "d_h_in", d_h_in, state);
        check_size(fn, "d_gates", d_gates, shape_.steps * gated);
        check_cell_arrays(fn, cell, bool(d_c), bool(extra), bool(d_hidden),
                          "d_c (LSTM), extra (LSTM, GRU) and d_hidden (GRU) go with their cells");
        if (valid) check_size(fn, "valid", *valid, shape_.steps * shape_.batch);
        for (const auto* a : {&extra, &d_out, &d_c, &d_hidden}) {
            if (*a) keep_.push_back(**a);
        }
        if (valid) keep_.push_back(*valid);
        s_ = {shape_.batch, shape_.hidden, gates.data(), held(fn, "extra", extra, shape_.steps * state, false),
              prev_h.data(), valid ? valid->data() : nullptr, held(fn, "d_out", d_out, shape_.steps * state, false),
              d_h_in.data(), in_place(fn, "d_h", d_h), held(fn, "d_c", d_c, state, true),
              in_place(fn, "d_gates", d_gates), held(fn, "d_hidden", d_hidden, shape_.steps * gated, true)};
    }

    // Step t; `with_in`: add d_h_in (the later step's matmul) to the state's gradient first
    void step(int64_t t, bool with_in) {
        check_step("RnnStepsBackward.step", t, shape_.steps);
        const int64_t state = shape_.batch * shape_.hidden, gated = shape_.batch * shape_.width;
        pycoll::RnnStepBackward<T> at = s_;
        at.gates += t * gated;
        at.prev_h += t * state;
        at.d_gates += t * gated;
        if (at.extra) at.extra += t * state;
        if (at.valid) at.valid += t * shape_.batch;
        if (at.d_out) at.d_out += t * state;
        if (at.d_hidden) at.d_hidden += t * gated;
        if (!with_in) at.d_h_in = nullptr;
        py::gil_scoped_release nogil;
        pycoll::rnn_step_backward(static_cast<pycoll::Cell>(cell_), at);
    }

  private:
    int cell_;
    StepShape shape_;
    std::vector<py::array> keep_;
    pycoll::RnnStepBackward<T> s_{};
};

template <class T>
void def_rnn_steps(py::module_& m, const char* forward, const char* backward) {
    py::class_<RnnSteps<T>>(m, forward, "The steps of one fused recurrent layer (host_rnn.h's rnn_step).")
        .def(py::init<int, Host<T>, Host<T>, std::optional<Host<T>>, std::optional<Valid>, Host<T>,
                      std::optional<Host<T>>, Host<T>, Host<T>, Host<T>, std::optional<Host<T>>>(),
             py::arg("cell"), py::arg("xw").noconvert(), py::arg("hw").noconvert(),
             py::arg("b_hh").noconvert(), py::arg("valid").noconvert(), py::arg("gates").noconvert(),
             py::arg("extra").noconvert(), py::arg("prev_h").noconvert(), py::arg("out").noconvert(),
             py::arg("h").noconvert(), py::arg("c").noconvert())
        .def("step", &RnnSteps<T>::step, py::arg("t"), "Step t, after hw = h @ w_hh^T.");
    py::class_<RnnStepsBackward<T>>(m, backward, "Backpropagation through the steps of one fused recurrent layer.")
        .def(py::init<int, Host<T>, std::optional<Host<T>>, Host<T>, std::optional<Valid>, std::optional<Host<T>>,
                      Host<T>, Host<T>, std::optional<Host<T>>, Host<T>, std::optional<Host<T>>>(),
             py::arg("cell"), py::arg("gates").noconvert(), py::arg("extra").noconvert(),
             py::arg("prev_h").noconvert(), py::arg("valid").noconvert(), py::arg("d_out").noconvert(),
             py::arg("d_h_in").noconvert(), py::arg("d_h").noconvert(), py::arg("d_c").noconvert(),
             py::arg("d_gates").noconvert(), py::arg("d_hidden").noconvert())
        .def("step", &RnnStepsBackward<T>::step, py::arg("t"), py::arg("with_in"),
             "Step t (steps last to first); with_in: d_h_in holds the later step's matmul.");
}

// The geometry of a pool of x [..., d, h, w] (padded) by kd x kh x kw windows at strides sd, sh,
// sw; value_error naming fn where they do not fit.
template <class T>
PoolGeometry pool_of(const Host<T>& x, int64_t kd, int64_t kh, int64_t kw, int64_t sd, int64_t sh, int64_t sw,
                     const char* fn) {
    const py::ssize_t n = x.ndim();
    if (n < 3 || kd < 1 || kh < 1 || kw < 1 || sd < 1 || sh < 1 || sw < 1 || x.shape(n - 3) < kd ||
        x.shape(n - 2) < kh || x.shape(n - 1) < kw) {
        throw py::value_error(where(fn, "x must be [..., d, h, w] with d >= kd, h >= kh, w >= kw, strides >= 1"));
    }
    const int64_t d = x.shape(n - 3), h = x.shape(n - 2), w = x.shape(n - 1);
    return {d, h, w, kd, kh, kw, sd, sh, sw, (d - kd) / sd + 1, (h - kh) / sh + 1, (w - kw) / sw + 1};
}

// The geometry of a pool's gradient g [..., od, oh, ow] over [..., d, h, w]; value_error naming
// fn where its windows would reach past that.
template <class T>
PoolGeometry pool_gradient_of(const Host<T>& g, int64_t d, int64_t h, int64_t w, int64_t kd, int64_t kh, int64_t kw,
                              int64_t sd, int64_t sh, int64_t sw, const char* fn) {
    const py::ssize_t n = g.ndim();
    if (n < 3) {
        throw py::value_error(where(fn, "g must be [..., od, oh, ow]"));
    }
    const PoolGeometry at{d, h, w, kd, kh, kw, sd, sh, sw, g.shape(n - 3), g.shape(n - 2), g.shape(n - 1)};
    if (kd < 1 || kh < 1 || kw < 1 || (at.od - 1) * sd + kd > d || (at.oh - 1) * sh + kh > h ||
        (at.ow - 1) * sw + kw > w) {
        throw py::value_error(where(fn, "the windows of g reach past [d, h, w]"));
    }
    return at;
}

// How many volumes of ``per`` elements an array of ``size`` holds (0 for empty volumes).
int64_t volumes_of(py::ssize_t size, int64_t per) { return per ? static_cast<int64_t>(size) / per : 0; }

// ``shape`` (of n axes) with its last three replaced by a, b, c.
std::vector<py::ssize_t> last_three(const py::ssize_t* shape, py::ssize_t n, int64_t a, int64_t b, int64_t c) {
    std::vector<py::ssize_t> out(shape, shape + n);
    out[n - 3] = a;
    out[n - 2] = b;
    out[n - 1] = c;
    return out;
}

// x [..., d, h, w] (padded) -> (out [..., od, oh, ow], pick [..., od, oh, ow]) of kd x kh x kw
// windows at strides sd, sh, sw (a 2-D pool: x [..., 1, h, w], kd = sd = 1).
template <class T>
std::pair<Host<T>, Host<int32_t>> max_pool_host(const Host<T>& x, int64_t kd, int64_t kh, int64_t kw, int64_t sd,
                                                 int64_t sh, int64_t sw) {
    const PoolGeometry at = pool_of(x, kd, kh, kw, sd, sh, sw, "max_pool");
    const std::vector<py::ssize_t> shape = last_three(x.shape(), x.ndim(), at.od, at.oh, at.ow);
    Host<T> out(shape);
    Host<int32_t> pick(shape);
    const int64_t volumes = volumes_of(x.size(), at.d * at.h * at.w);
    const T* xs = x.data();
    T* o = out.mutable_data();
    int32_t* p = pick.mutable_data();
    {
        py::gil_scoped_release nogil;
        pycoll::max_pool(xs, volumes, at, o, p);
    }
    return {out, pick};
}

// x [..., d, h, w] (padded) -> the sums [..., od, oh, ow] of its kd x kh x kw windows at strides sd, sh, sw.
template <class T>
Host<T> sum_pool_host(const Host<T>& x, int64_t kd, int64_t kh, int64_t kw, int64_t sd, int64_t sh, int64_t sw) {
    const PoolGeometry at = pool_of(x, kd, kh, kw, sd, sh, sw, "sum_pool");
    Host<T> out(last_three(x.shape(), x.ndim(), at.od, at.oh, at.ow));
    const int64_t volumes = volumes_of(x.size(), at.d * at.h * at.w);
    const T* xs = x.data();
    T* o = out.mutable_data();
    {
        py::gil_scoped_release nogil;
        pycoll::sum_pool(xs, volumes, at, o);
    }
    return out;
}

// sum_pool's input gradient [..., d, h, w] from g [..., od, oh, ow].
template <class T>
Host<T> sum_pool_backward_host(const Host<T>& g, int64_t d, int64_t h, int64_t w, int64_t kd, int64_t kh,
                               int64_t kw, int64_t sd, int64_t sh, int64_t sw) {
    const PoolGeometry at = pool_gradient_of(g, d, h, w, kd, kh, kw, sd, sh, sw, "sum_pool_backward");
    Host<T> gx(last_three(g.shape(), g.ndim(), d, h, w));
    const int64_t volumes = volumes_of(g.size(), at.od * at.oh * at.ow);
    T* dx = gx.mutable_data();
    const T* gs = g.data();
    {
        py::gil_scoped_release nogil;
        std::fill(dx, dx + gx.size(), T(0));
        pycoll::sum_pool_backward(gs, volumes, at, dx);
    }
    return gx;
}

// max_pool's input gradient [..., d, h, w] from g and pick [..., od, oh, ow].
template <class T>
Host<T> max_pool_backward_host(const Host<T>& g, const Host<int32_t>& pick, int64_t d, int64_t h, int64_t w,
                               int64_t kd, int64_t kh, int64_t kw, int64_t sd, int64_t sh, int64_t sw) {
    if (pick.ndim() != g.ndim() || !std::equal(g.shape(), g.shape() + g.ndim(), pick.shape())) {
        throw py::value_error(where("max_pool_backward", "g and pick must be of one shape [..., od, oh, ow]"));
    }
    const PoolGeometry at = pool_gradient_of(g, d, h, w, kd, kh, kw, sd, sh, sw, "max_pool_backward");
    Host<T> gx(last_three(g.shape(), g.ndim(), d, h, w));
    const int64_t volumes = volumes_of(g.size(), at.od * at.oh * at.ow);
    T* dx = gx.mutable_data();
    const T* gs = g.data();
    const int32_t* ps = pick.data();
    {
        py::gil_scoped_release nogil;
        std::fill(dx, dx + gx.size(), T(0));
        pycoll::max_pool_backward(gs, ps, volumes, at, dx);
    }
    return gx;
}

// RoI pooling's bin edges (rows [hs, he), columns [ws, we) per RoI and bin) and each RoI's image,
// checked against the plane (h, w) and n images: (rois, ph, pw).
std::array<int64_t, 3> roi_bins(const char* fn, int64_t n, int64_t h, int64_t w, const Host<int64_t>& image,
                                const Host<int64_t>& hs, const Host<int64_t>& he, const Host<int64_t>& ws,
                                const Host<int64_t>& we) {
    const int64_t rois = image.ndim() == 1 ? image.shape(0) : -1;
    if (rois < 0 || hs.ndim() != 2 || hs.shape(0) != rois || he.ndim() != 2 || he.shape(0) != rois ||
        he.shape(1) != hs.shape(1) || ws.ndim() != 2 || ws.shape(0) != rois || we.ndim() != 2 ||
        we.shape(0) != rois || we.shape(1) != ws.shape(1)) {
        throw py::value_error(where(fn, "image must be [R], hs/he [R, ph], ws/we [R, pw]"));
    }
    auto within = [](const Host<int64_t>& a, int64_t size) {
        return std::all_of(a.data(), a.data() + a.size(), [size](int64_t v) { return v >= 0 && v <= size; });
    };
    if (!within(image, n - 1) || !within(hs, h) || !within(he, h) || !within(ws, w) || !within(we, w)) {
        throw py::value_error(where(fn, "an image index or a bin edge is out of range"));
    }
    return {rois, hs.shape(1), ws.shape(1)};
}

// RoI max pooling's picks [R, C, ph, pw] (flat indices into x [N, C, h, w]); see host_math.h.
template <class T>
Host<int64_t> roi_max_index_host(const Host<T>& x, const Host<int64_t>& image, const Host<int64_t>& hs,
                                 const Host<int64_t>& he, const Host<int64_t>& ws, const Host<int64_t>& we) {
    if (x.ndim() != 4) throw py::value_error(where("roi_max_index", "x must be [N, C, h, w]"));
    const int64_t c = x.shape(1), h = x.shape(2), w = x.shape(3);
    const auto [rois, ph, pw] = roi_bins("roi_max_index", x.shape(0), h, w, image, hs, he, ws, we);
    Host<int64_t> index(std::vector<py::ssize_t>{rois, c, ph, pw});
    const T* xs = x.data();
    const int64_t *im = image.data(), *hs_ = hs.data(), *he_ = he.data(), *ws_ = ws.data(), *we_ = we.data();
    int64_t* out = index.mutable_data();
    {
        py::gil_scoped_release nogil;
        pycoll::roi_max_index(xs, c, h, w, rois, im, hs_, he_, ph, ws_, we_, pw, out);
    }
    return index;
}

// RoI align's sample tables, checked against x's plane (h, w) and n images; see host_math.h.
template <class T>
std::array<int64_t, 5> roi_tables(const char* fn, int64_t n, int64_t h, int64_t w, const Host<int64_t>& image,
                                  const Host<int64_t>& iy, const Host<T>& wy, const Host<int64_t>& ix,
                                  const Host<T>& wx) {
    const int64_t rois = image.ndim() == 1 ? image.shape(0) : -1;
    if (rois < 0 || iy.ndim() != 3 || iy.shape(0) != rois || wy.ndim() != 3 || ix.ndim() != 3 ||
        ix.shape(0) != rois || wx.ndim() != 3 || !std::equal(iy.shape(), iy.shape() + 3, wy.shape()) ||
        !std::equal(ix.shape(), ix.shape() + 3, wx.shape())) {
        throw py::value_error(where(fn, "image must be [R], iy and wy [R, ph, k], ix and wx [R, pw, kk]"));
    }
    auto within = [](const Host<int64_t>& a, int64_t size) {
        return std::all_of(a.data(), a.data() + a.size(), [size](int64_t v) { return v >= 0 && v < size; });
    };
    if (!within(image, n) || !within(iy, h) || !within(ix, w)) {
        throw py::value_error(where(fn, "an image, row or column index is out of range"));
    }
    return {rois, iy.shape(1), iy.shape(2), ix.shape(1), ix.shape(2)};
}

// RoI align's pooled features [R, C, ph, pw] of x [N, C, h, w]; see host_math.h.
template <class T>
Host<T> roi_sample_host(const Host<T>& x, const Host<int64_t>& image, const Host<int64_t>& iy, const Host<T>& wy,
                        const Host<int64_t>& ix, const Host<T>& wx) {
    if (x.ndim() != 4) throw py::value_error(where("roi_sample", "x must be [N, C, h, w]"));
    const int64_t c = x.shape(1), h = x.shape(2), w = x.shape(3);
    const auto [rois, ph, k, pw, kk] = roi_tables<T>("roi_sample", x.shape(0), h, w, image, iy, wy, ix, wx);
    Host<T> out(std::vector<py::ssize_t>{rois, c, ph, pw});
    const T *xs = x.data(), *wys = wy.data(), *wxs = wx.data();
    const int64_t *im = image.data(), *iys = iy.data(), *ixs = ix.data();
    T* o = out.mutable_data();
    {
        py::gil_scoped_release nogil;
        pycoll::roi_sample(xs, c, h, w, rois, im, iys, wys, ph, k, ixs, wxs, pw, kk, o);
    }
    return out;
}

// roi_sample's input gradient [n, C, h, w] from g [R, C, ph, pw].
template <class T>
Host<T> roi_sample_backward_host(const Host<T>& g, const Host<int64_t>& image, const Host<int64_t>& iy,
                                 const Host<T>& wy, const Host<int64_t>& ix, const Host<T>& wx, int64_t n, int64_t h,
                                 int64_t w) {
    const auto [rois, ph, k, pw, kk] = roi_tables<T>("roi_sample_backward", n, h, w, image, iy, wy, ix, wx);
    if (g.ndim() != 4 || g.shape(0) != rois || g.shape(2) != ph || g.shape(3) != pw) {
        throw py::value_error(where("roi_sample_backward", "g must be [R, C, ph, pw]"));
    }
    const int64_t c = g.shape(1);
    Host<T> grad(std::vector<py::ssize_t>{n, c, h, w});
    T* gx = grad.mutable_data();
    std::fill(gx, gx + grad.size(), T(0));
    const T *gs = g.data(), *wys = wy.data(), *wxs = wx.data();
    const int64_t *im = image.data(), *iys = iy.data(), *ixs = ix.data();
    {
        py::gil_scoped_release nogil;
        pycoll::roi_sample_backward(gs, c, h, w, rois, im, iys, wys, ph, k, ixs, wxs, pw, kk, gx);
    }
    return grad;
}

// Position-sensitive RoI pooling's bin sums [R, C / (ph * pw), ph, pw] in float64; see host_math.h.
template <class T>
py::array_t<double> psroi_sums_host(const Host<T>& x, const Host<int64_t>& image, const Host<int64_t>& hs,
                                    const Host<int64_t>& he, const Host<int64_t>& ws, const Host<int64_t>& we) {
    if (x.ndim() != 4) throw py::value_error(where("psroi_sums", "x must be [N, C, h, w]"));
    const int64_t c = x.shape(1), h = x.shape(2), w = x.shape(3);
    const auto [rois, ph, pw] = roi_bins("psroi_sums", x.shape(0), h, w, image, hs, he, ws, we);
    if (c % (ph * pw)) throw py::value_error(where("psroi_sums", "x's channels must divide by ph * pw"));
    py::array_t<double> out(std::vector<py::ssize_t>{rois, c / (ph * pw), ph, pw});
    const T* xs = x.data();
    const int64_t *im = image.data(), *hs_ = hs.data(), *he_ = he.data(), *ws_ = ws.data(), *we_ = we.data();
    double* o = out.mutable_data();
    {
        py::gil_scoped_release nogil;
        pycoll::psroi_sums(xs, c, h, w, rois, im, hs_, he_, ph, ws_, we_, pw, o);
    }
    return out;
}

// psroi_sums' input gradient [n, c, h, w] from each bin's weight g [R, c / (ph * pw), ph, pw].
template <class T>
Host<T> psroi_sums_backward_host(const Host<T>& g, const Host<int64_t>& image, const Host<int64_t>& hs,
                                 const Host<int64_t>& he, const Host<int64_t>& ws, const Host<int64_t>& we,
                                 int64_t n, int64_t c, int64_t h, int64_t w) {
    const auto [rois, ph, pw] = roi_bins("psroi_sums_backward", n, h, w, image, hs, he, ws, we);
    if (c % (ph * pw) || g.ndim() != 4 || g.shape(0) != rois || g.shape(1) != c / (ph * pw) || g.shape(2) != ph ||
        g.shape(3) != pw) {
        throw py::value_error(where("psroi_sums_backward", "g must be [R, c / (ph * pw), ph, pw]"));
    }
    Host<T> grad(std::vector<py::ssize_t>{n, c, h, w});
    T* gx = grad.mutable_data();
    std::fill(gx, gx + grad.size(), T(0));
    const T* gs = g.data();
    const int64_t *im = image.data(), *hs_ = hs.data(), *he_ = he.data(), *ws_ = ws.data(), *we_ = we.data();
    {
        py::gil_scoped_release nogil;
        pycoll::psroi_sums_backward(gs, c, h, w, rois, im, hs_, he_, ph, ws_, we_, pw, gx);
    }
    return grad;
}

// Each op for each element type it serves (pybind11 picks the overload by dtype).
template <class T>
void def_float_ops(py::module_& m) {
    m.def("erf", &erf_host<T>, py::arg("x"), "erf(x), elementwise, in a new array.");
    m.def("gelu", &gelu_host<T>, py::arg("x"), "Exact gelu: (out, cdf).");
    m.def("gelu_backward", &gelu_backward_host<T>, py::arg("x"), py::arg("cdf"), py::arg("g"),
          "The input gradient of exact gelu.");
    m.def("cumsum", &cumsum_host<T>, py::arg("x"), py::arg("outer"), py::arg("len"),
          py::arg("inner"), py::arg("reverse"),
          "Running sums along the middle axis of x viewed as [outer, len, inner].");
    m.def("cumprod", &cumprod_host<T>, py::arg("x"), py::arg("outer"), py::arg("len"), py::arg("inner"),
          "Running products along the middle axis of x viewed as [outer, len, inner].");
    m.def("channel_sums", &channel_sums_host<T>, py::arg("x"), py::arg("mean"), py::arg("outer"),
          py::arg("channels"), py::arg("inner"),
          "Per-channel float64 sums of x, or of (x - mean)^2, over x viewed as "
          "[outer, channels, inner].");
    m.def("channel_sums_and_dots", &channel_sums_and_dots_host<T>, py::arg("x"), py::arg("y"),
          py::arg("outer"), py::arg("channels"), py::arg("inner"),
          "Per-channel float64 sums of x and of x * y, in one pass.");
    m.def("normalize", &normalize_host<T>, py::arg("x"), py::arg("mean"), py::arg("rstd"),
          py::arg("weight"), py::arg("bias"), py::arg("outer"), py::arg("channels"),
          py::arg("inner"), "Batch norm's (xhat, out).");
    m.def("normalize_backward", &normalize_backward_host<T>, py::arg("g"), py::arg("xhat"),
          py::arg("g_mean"), py::arg("gxhat_mean"), py::arg("scale"), py::arg("outer"),
          py::arg("channels"), py::arg("inner"), py::arg("overwrite_g"),
          "Batch norm's input gradient, into g itself when overwrite_g.");
    m.def("sigmoid_from_exp", &sigmoid_from_exp_host<T>, py::arg("e"),
          "e = 1 / (1 + e) in place; returns how many results are 0.");
    m.def("sigmoid_backward", &sigmoid_backward_host<T>, py::arg("out"), py::arg("g"),
          "sigmoid's input gradient (g * out) * (1 - out).");
    m.def("scatter_add_rows", &scatter_add_rows_host<T>, py::arg("target").noconvert(), py::arg("index"),
          py::arg("values").noconvert(),
          "target[index[i]] += values[i] in order, in place; -1, or the position of a bad index.");
    m.def("max_pool", &max_pool_host<T>, py::arg("x"), py::arg("kd"), py::arg("kh"), py::arg("kw"), py::arg("sd"),
          py::arg("sh"), py::arg("sw"),
          "Max pooling of padded x [..., d, h, w]: (out, pick), pick each window's position of its maximum.");
    m.def("sum_pool", &sum_pool_host<T>, py::arg("x"), py::arg("kd"), py::arg("kh"), py::arg("kw"), py::arg("sd"),
          py::arg("sh"), py::arg("sw"), "The window sums of padded x [..., d, h, w], cells added in window order.");
    m.def("sum_pool_backward", &sum_pool_backward_host<T>, py::arg("g"), py::arg("d"), py::arg("h"), py::arg("w"),
          py::arg("kd"), py::arg("kh"), py::arg("kw"), py::arg("sd"), py::arg("sh"), py::arg("sw"),
          "sum_pool's input gradient [..., d, h, w].");
    m.def("max_pool_backward", &max_pool_backward_host<T>, py::arg("g"), py::arg("pick"), py::arg("d"), py::arg("h"),
          py::arg("w"), py::arg("kd"), py::arg("kh"), py::arg("kw"), py::arg("sd"), py::arg("sh"), py::arg("sw"),
          "max_pool's input gradient [..., d, h, w].");
    m.def("roi_max_index", &roi_max_index_host<T>, py::arg("x"), py::arg("image"), py::arg("hs"), py::arg("he"),
          py::arg("ws"), py::arg("we"), "RoI max pooling's picks [R, C, ph, pw]: flat indices into x.");
    m.def("psroi_sums", &psroi_sums_host<T>, py::arg("x"), py::arg("image"), py::arg("hs"), py::arg("he"),
          py::arg("ws"), py::arg("we"), "Position-sensitive RoI pooling's bin sums [R, C / (ph * pw), ph, pw].");
    m.def("psroi_sums_backward", &psroi_sums_backward_host<T>, py::arg("g"), py::arg("image"), py::arg("hs"),
          py::arg("he"), py::arg("ws"), py::arg("we"), py::arg("n"), py::arg("c"), py::arg("h"), py::arg("w"),
          "psroi_sums' input gradient [n, c, h, w].");
    m.def("roi_sample", &roi_sample_host<T>, py::arg("x"), py::arg("image"), py::arg("iy"), py::arg("wy"),
          py::arg("ix"), py::arg("wx"), "RoI align's pooled features [R, C, ph, pw] from its sample tables.");
    m.def("roi_sample_backward", &roi_sample_backward_host<T>, py::arg("g"), py::arg("image"), py::arg("iy"),
          py::arg("wy"), py::arg("ix"), py::arg("wx"), py::arg("n"), py::arg("h"), py::arg("w"),
          "roi_sample's input gradient [n, C, h, w].");
    m.def("scatter_extreme_rows", &scatter_extreme_rows_host<T>, py::arg("target").noconvert(), py::arg("index"),
          py::arg("values").noconvert(), py::arg("maximum"),
          "np.maximum.at (maximum) or np.minimum.at over target's rows, in place; -1, or a bad index's position.");
    m.def("adam_step", &adam_step_host<T>, py::arg("param"), py::arg("grad"), py::arg("moment1"),
          py::arg("moment2"), py::arg("moment2_max"), py::arg("decay"), py::arg("beta1"),
          py::arg("one_minus_beta1"), py::arg("beta2"), py::arg("one_minus_beta2"),
          py::arg("epsilon"), py::arg("step"), "One Adam step of param and its moments, in place.");
}

// --- uint8 images for paddle.vision.transforms (pycoll/kernels/host_image.py); see host_image.h --

using Image = py::array_t<uint8_t, py::array::c_style>;

// An [H, W, C] image's height, width and channels ([H, W]: C = 1).
std::array<int64_t, 3> image_dims(const char* fn, const Image& img) {
    if (img.ndim() != 2 && img.ndim() != 3) throw py::value_error(where(fn, "img is not [H, W] or [H, W, C]"));
    return {img.shape(0), img.shape(1), img.ndim() == 3 ? img.shape(2) : 1};
}

// A new image of img's shape but height and width.
Image image_like(const Image& img, int64_t h, int64_t w) {
    std::vector<py::ssize_t> shape(img.shape(), img.shape() + img.ndim());
    shape[0] = h;
    shape[1] = w;
    return Image(shape);
}

// Pixels of 3 channels in img: its size / 3, checked.
int64_t rgb_pixels(const char* fn, const Image& img) {
    if (img.ndim() < 1 || img.shape(img.ndim() - 1) != 3) throw py::value_error(where(fn, "img's last axis is not 3"));
    return static_cast<int64_t>(img.size()) / 3;
}

Image image_resize_bilinear(const Image& img, int64_t oh, int64_t ow) {
    const auto [h, w, c] = image_dims("image_resize_bilinear", img);
    if (oh <= 0 || ow <= 0 || h <= 0 || w <= 0) throw py::value_error(where("image_resize_bilinear", "an empty size"));
    Image out = image_like(img, oh, ow);
    const uint8_t* in = img.data();
    uint8_t* o = out.mutable_data();
    py::gil_scoped_release nogil;
    pycoll::resize_bilinear_u8(in, h, w, c, o, oh, ow);
    return out;
}

using Taps64 = py::array_t<int64_t, py::array::c_style>;
using TapWeights = py::array_t<float, py::array::c_style>;

// Taps [n_out, T] of one axis of n_in cells, checked: every index inside the axis.
int64_t tap_width(const char* fn, const char* arg, const Taps64& index, const TapWeights& weight, int64_t n_out,
                  int64_t n_in) {
    if (index.ndim() != 2 || weight.ndim() != 2 || index.shape(0) != n_out || index.shape(1) < 1 ||
        weight.shape(0) != n_out || weight.shape(1) != index.shape(1)) {
        throw py::value_error(where(fn, std::string(arg) + "'s index and weight are not both [n_out, T]"));
    }
    const int64_t* data = index.data();
    for (py::ssize_t i = 0; i < index.size(); ++i) {
        if (data[i] < 0 || data[i] >= n_in) throw py::value_error(where(fn, std::string(arg) + " holds an index outside the image"));
    }
    return index.shape(1);
}

template <typename T>
using ImageOf = py::array_t<T, py::array::c_style>;

// An [H, W(, C)] uint8 or float32 image resized by the taps of its rows and columns.
template <typename T>
ImageOf<T> resize_taps_of(const ImageOf<T>& img, const Taps64& yi, const TapWeights& yw, const Taps64& xi,
                          const TapWeights& xw,
                          void (*kernel)(const T*, int64_t, int64_t, int64_t, T*, int64_t, int64_t, const int64_t*,
                                         const float*, int64_t, const int64_t*, const float*, int64_t)) {
    const char* fn = "image_resize_taps";
    if (img.ndim() != 2 && img.ndim() != 3) throw py::value_error(where(fn, "img is not [H, W] or [H, W, C]"));
    const int64_t h = img.shape(0), w = img.shape(1), c = img.ndim() == 3 ? img.shape(2) : 1;
    const int64_t oh = yi.ndim() == 2 ? yi.shape(0) : 0, ow = xi.ndim() == 2 ? xi.shape(0) : 0;
    if (oh <= 0 || ow <= 0 || h <= 0 || w <= 0 || c <= 0) throw py::value_error(where(fn, "an empty size"));
    const int64_t ty = tap_width(fn, "the rows", yi, yw, oh, h), tx = tap_width(fn, "the columns", xi, xw, ow, w);
    std::vector<py::ssize_t> shape(img.shape(), img.shape() + img.ndim());
    shape[0] = oh;
    shape[1] = ow;
    ImageOf<T> out(shape);
    const T* in = img.data();
    T* o = out.mutable_data();
    const int64_t *yi_ = yi.data(), *xi_ = xi.data();
    const float *yw_ = yw.data(), *xw_ = xw.data();
    py::gil_scoped_release nogil;
    kernel(in, h, w, c, o, oh, ow, yi_, yw_, ty, xi_, xw_, tx);
    return out;
}

py::array image_resize_taps(const py::array& img, const Taps64& yi, const TapWeights& yw, const Taps64& xi,
                            const TapWeights& xw) {
    if (py::isinstance<ImageOf<uint8_t>>(img)) {
        return resize_taps_of<uint8_t>(img.cast<ImageOf<uint8_t>>(), yi, yw, xi, xw, &pycoll::resize_taps_u8);
    }
    if (py::isinstance<ImageOf<float>>(img)) {
        return resize_taps_of<float>(img.cast<ImageOf<float>>(), yi, yw, xi, xw, &pycoll::resize_taps_f32);
    }
    throw py::type_error(where("image_resize_taps", "img is not a C-contiguous uint8 or float32 array"));
}

// Any C-contiguous [H, W, ...] array resized by OpenCV's nearest rule given its source indices.
py::array image_resize_nearest(const py::array& img, const Taps64& rows, const Taps64& cols) {
    const char* fn = "image_resize_nearest";
    if (img.ndim() < 2 || !(img.flags() & py::array::c_style)) {
        throw py::value_error(where(fn, "img is not a C-contiguous array of 2 or more axes"));
    }
    const int64_t h = img.shape(0), w = img.shape(1), oh = rows.size(), ow = cols.size();
    if (rows.ndim() != 1 || cols.ndim() != 1 || oh == 0 || ow == 0 || h == 0 || w == 0) {
        throw py::value_error(where(fn, "an empty size"));
    }
    for (const auto& [index, n] : {std::pair<const Taps64*, int64_t>{&rows, h}, {&cols, w}}) {
        for (py::ssize_t i = 0; i < index->size(); ++i) {
            if (index->data()[i] < 0 || index->data()[i] >= n) throw py::value_error(where(fn, "an index outside the image"));
        }
    }
    std::vector<py::ssize_t> shape(img.shape(), img.shape() + img.ndim());
    shape[0] = oh;
    shape[1] = ow;
    py::array out(img.dtype(), shape);
    const int64_t pixel_bytes = img.itemsize() * (img.size() / (h * w));
    const uint8_t* in = static_cast<const uint8_t*>(img.data());
    uint8_t* o = static_cast<uint8_t*>(out.mutable_data());
    const int64_t *rows_ = rows.data(), *cols_ = cols.data();
    py::gil_scoped_release nogil;
    pycoll::resize_nearest(in, w, pixel_bytes, o, oh, ow, rows_, cols_);
    return out;
}

// Any C-contiguous array of 2 or more axes, axis 1 reversed: its bytes are moved, not read.
py::array image_flip_width(const py::array& img) {
    if (img.ndim() < 2 || !(img.flags() & py::array::c_style)) {
        throw py::value_error(where("image_flip_width", "img is not a C-contiguous array of 2 or more axes"));
    }
    py::array out(img.dtype(), std::vector<py::ssize_t>(img.shape(), img.shape() + img.ndim()));
    const int64_t rows = img.shape(0), width = img.shape(1);
    const int64_t pixel_bytes = width == 0 ? 0 : static_cast<int64_t>(img.nbytes()) / (rows * width);
    const auto* in = static_cast<const uint8_t*>(img.data());
    auto* o = static_cast<uint8_t*>(out.mutable_data());
    if (rows * width == 0) return out;
    py::gil_scoped_release nogil;
    pycoll::flip_width(in, rows, width, pixel_bytes, o);
    return out;
}

Image image_lookup(const Image& img, const Image& table) {
    if (table.size() != 256) throw py::value_error(where("image_lookup", "table has not 256 entries"));
    Image out(std::vector<py::ssize_t>(img.shape(), img.shape() + img.ndim()));
    const uint8_t *in = img.data(), *t = table.data();
    uint8_t* o = out.mutable_data();
    py::gil_scoped_release nogil;
    pycoll::lookup_u8(in, static_cast<int64_t>(img.size()), t, o);
    return out;
}

// [..., 3] -> [...] (channels 1) or [..., 3] (channels 3)
Image image_gray(const Image& img, bool blue_first, int channels) {
    const int64_t n = rgb_pixels("image_gray", img);
    if (channels != 1 && channels != 3) throw py::value_error(where("image_gray", "channels is not 1 or 3"));
    std::vector<py::ssize_t> shape(img.shape(), img.shape() + img.ndim() - 1);
    if (channels == 3) shape.push_back(3);
    Image out(shape);
    const uint8_t* in = img.data();
    uint8_t* o = out.mutable_data();
    py::gil_scoped_release nogil;
    pycoll::gray_u8(in, n, blue_first, channels, o);
    return out;
}

Image image_blend_gray(const Image& img, float alpha, float beta) {
    const int64_t n = rgb_pixels("image_blend_gray", img);
    Image out(std::vector<py::ssize_t>(img.shape(), img.shape() + img.ndim()));
    const uint8_t* in = img.data();
    uint8_t* o = out.mutable_data();
    py::gil_scoped_release nogil;
    pycoll::blend_gray_u8(in, n, alpha, beta, o);
    return out;
}

Image image_bgr_to_hsv_full(const Image& img) {
    const int64_t n = rgb_pixels("image_bgr_to_hsv_full", img);
    Image out(std::vector<py::ssize_t>(img.shape(), img.shape() + img.ndim()));
    const uint8_t* in = img.data();
    uint8_t* o = out.mutable_data();
    py::gil_scoped_release nogil;
    pycoll::bgr_to_hsv_full_u8(in, n, o);
    return out;
}

Image image_hsv_to_bgr_full(const Image& img, int hue_shift) {
    const int64_t n = rgb_pixels("image_hsv_to_bgr_full", img);
    Image out(std::vector<py::ssize_t>(img.shape(), img.shape() + img.ndim()));
    const uint8_t* in = img.data();
    uint8_t* o = out.mutable_data();
    py::gil_scoped_release nogil;
    pycoll::hsv_to_bgr_full_u8(in, n, hue_shift, o);
    return out;
}

// img [H, W(, C)] warped onto [oh, ow(, C)] by the inverse map m: 6 values (affine) or 9
// (perspective)
Image image_warp(const Image& img, const py::array_t<double, py::array::c_style>& m, int64_t oh, int64_t ow,
                 const Image& border, int mode, const py::array_t<int32_t, py::array::c_style>& cubic_weights) {
    const char* fn = "image_warp";
    const auto [h, w, c] = image_dims(fn, img);
    if (m.size() != 6 && m.size() != 9) throw py::value_error(where(fn, "m has not 6 or 9 values"));
    if (oh < 0 || ow < 0) throw py::value_error(where(fn, "a negative size"));
    check_size(fn, "border", border, c);
    if (mode < 0 || mode > 2) throw py::value_error(where(fn, "mode is not 0, 1 or 2"));
    if (mode == 2) check_size(fn, "cubic_weights", cubic_weights, 32 * 32 * 16);
    Image out = image_like(img, oh, ow);
    const pycoll::Warp warp{img.data(), h, w, c, m.data(), oh, ow, border.data(), static_cast<pycoll::Sample>(mode),
                            cubic_weights.data(), out.mutable_data()};
    const bool affine = m.size() == 6;
    py::gil_scoped_release nogil;
    if (affine) {
        pycoll::warp_affine_u8(warp);
    } else {
        pycoll::warp_perspective_u8(warp);
    }
    return out;
}

// boxes [k, 4] float64, best first -> the positions greedy NMS keeps (int64)
py::array_t<int64_t> boxes_greedy_nms(const py::array_t<double, py::array::c_style>& boxes, double threshold,
                                      double offset, double eta) {
    if (boxes.ndim() != 2 || boxes.shape(1) != 4) throw py::value_error(where("boxes_greedy_nms", "boxes is not [k, 4]"));
    const int64_t k = boxes.shape(0);
    std::vector<int64_t> kept(static_cast<std::size_t>(k));
    int64_t n = 0;
    {
        py::gil_scoped_release nogil;
        n = pycoll::greedy_nms(boxes.data(), k, threshold, offset, eta, kept.data());
    }
    py::array_t<int64_t> out(n);
    std::copy(kept.begin(), kept.begin() + n, out.mutable_data());
    return out;
}

void def_image_ops(py::module_& m) {
    m.def("boxes_greedy_nms", &boxes_greedy_nms, py::arg("boxes").noconvert(), py::arg("threshold"),
          py::arg("offset"), py::arg("eta"), "The positions of boxes [k, 4] (best first) greedy NMS keeps.");
    m.def("image_resize_bilinear", &image_resize_bilinear, py::arg("img").noconvert(), py::arg("oh"),
          py::arg("ow"), "OpenCV's uint8 INTER_LINEAR of an [H, W(, C)] image to [oh, ow(, C)].");
    m.def("image_resize_taps", &image_resize_taps, py::arg("img"), py::arg("yi").noconvert(),
          py::arg("yw").noconvert(), py::arg("xi").noconvert(), py::arg("xw").noconvert(),
          "An [H, W(, C)] uint8 or float32 image resized by the taps of its rows and columns (columns first, "
          "float32 sums; uint8 rounded half to even).");
    m.def("image_resize_nearest", &image_resize_nearest, py::arg("img"), py::arg("rows").noconvert(),
          py::arg("cols").noconvert(), "img[rows][:, cols] as a new C-contiguous array (any dtype).");
    m.def("image_flip_width", &image_flip_width, py::arg("img"), "A copy of img with axis 1 reversed.");
    m.def("image_lookup", &image_lookup, py::arg("img").noconvert(), py::arg("table").noconvert(),
          "table[img] for a uint8 img and a 256-entry uint8 table.");
    m.def("image_gray", &image_gray, py::arg("img").noconvert(), py::arg("blue_first"), py::arg("channels") = 1,
          "OpenCV's uint8 RGB2GRAY (BGR2GRAY with blue_first) of [..., 3], as [...] (channels 1) or its "
          "value repeated as [..., 3] (channels 3).");
    m.def("image_blend_gray", &image_blend_gray, py::arg("img").noconvert(), py::arg("alpha"), py::arg("beta"),
          "uint8(clip(img * alpha + luma * beta)) in float32, luma BGR2GRAY's of each [..., 3] pixel.");
    m.def("image_bgr_to_hsv_full", &image_bgr_to_hsv_full, py::arg("img").noconvert(),
          "OpenCV's uint8 BGR2HSV_FULL of [..., 3].");
    m.def("image_hsv_to_bgr_full", &image_hsv_to_bgr_full, py::arg("img").noconvert(), py::arg("hue_shift"),
          "OpenCV's uint8 HSV2BGR_FULL of [..., 3], hue_shift added to the hue first (modulo 256).");
    m.def("image_warp", &image_warp, py::arg("img").noconvert(), py::arg("m").noconvert(), py::arg("oh"),
          py::arg("ow"), py::arg("border").noconvert(), py::arg("mode"), py::arg("cubic_weights").noconvert(),
          "cv2.warpAffine (m: the inverse 2x3 map) or warpPerspective (m: the inverse 3x3 map) of a uint8 "
          "image onto [oh, ow], constant border; mode 0 nearest, 1 bilinear, 2 bicubic.");
}

#ifdef PYCOLL_WITH_CUDA
// --- device arrays: raw pointers from CuPy, copied on the caller's stream --------------------

namespace cu = pycoll::cuda;

cu::Type device_type(const char* fn, const char* name, int code) {
    if (code < static_cast<int>(cu::Type::bytes) || code > static_cast<int>(cu::Type::f64)) {
        throw py::value_error(where(fn, std::string(name) + " " + std::to_string(code) +
                                            " is not a type code of pycoll._C.cuda_types"));
    }
    return static_cast<cu::Type>(code);
}

// The arrays as pieces, after checking that there is one count per pointer, that no count is
// negative and that every pointer is aligned to its element size.
std::vector<Piece> device_pieces(const char* fn, const std::vector<std::uintptr_t>& ptrs,
                                 const std::vector<int64_t>& counts, std::size_t itemsize) {
    if (ptrs.size() != counts.size()) {
        throw py::value_error(where(fn, "ptrs and counts differ in length"));
    }
    std::vector<Piece> pieces;
    pieces.reserve(ptrs.size());
    for (std::size_t i = 0; i < ptrs.size(); ++i) {
        auto name = [i] { return "arrays[" + std::to_string(i) + "]"; };
        if (counts[i] < 0) throw py::value_error(where(fn, name() + " has a negative count"));
        if (counts[i] > 0 && ptrs[i] % itemsize != 0) {  // an empty array is never read
            throw py::value_error(where(fn, name() + " is not aligned to its element size"));
        }
        pieces.push_back(Piece{reinterpret_cast<void*>(ptrs[i]), counts[i]});
    }
    return pieces;
}

// Checks the flat buffer (its first element at `flat`, named `name`) against the pieces: aligned,
// and overlapping none of them (an empty piece overlaps nothing).
void check_device_flat(const char* fn, const char* name, std::uintptr_t flat,
                       std::size_t flat_itemsize, const std::vector<Piece>& pieces,
                       std::size_t itemsize) {
    if (flat % flat_itemsize != 0) {
        throw py::value_error(where(fn, std::string(name) + " is not aligned to its element size"));
    }
    int64_t total = 0;
    for (const Piece& p : pieces) total += p.count;
    const std::uintptr_t hi = flat + static_cast<std::uintptr_t>(total) * flat_itemsize;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
        const auto plo = reinterpret_cast<std::uintptr_t>(pieces[i].data);
        const std::uintptr_t phi = plo + static_cast<std::uintptr_t>(pieces[i].count) * itemsize;
        if (pieces[i].count > 0 && plo < hi && flat < phi) {
            throw py::value_error(where(fn, std::string(name) + " overlaps arrays[" +
                                                std::to_string(i) +
                                                "] in memory; pass distinct buffers"));
        }
    }
}

void check_device_cast(const char* fn, cu::Type from, cu::Type to, bool scaled) {
    if (!cu::cast_supported(from, to) || (scaled && from == cu::Type::bytes)) {
        throw py::type_error(where(fn, std::string("no CUDA kernel converts ") +
                                           (scaled ? "and scales " : "") + cu::name(from) +
                                           " to " + cu::name(to)));
    }
}

void cuda_flatten(const std::vector<std::uintptr_t>& ptrs, const std::vector<int64_t>& counts,
                  int type, std::uintptr_t flat, int flat_type, std::optional<double> scale,
                  int device, std::uintptr_t stream) {
    const auto from = device_type("flatten", "type", type);
    const auto to = device_type("flatten", "flat_type", flat_type);
    check_device_cast("flatten", from, to, scale.has_value());
    const auto pieces = device_pieces("flatten", ptrs, counts, cu::size_of(from));
    check_device_flat("flatten", "out", flat, cu::size_of(to), pieces, cu::size_of(from));
    py::gil_scoped_release nogil;
    cu::flatten(pieces, from, reinterpret_cast<void*>(flat), to, scale, {device, stream});
}

void cuda_unflatten(std::uintptr_t flat, int flat_type, const std::vector<std::uintptr_t>& ptrs,
                    const std::vector<int64_t>& counts, int type, std::optional<double> scale,
                    int device, std::uintptr_t stream) {
    const auto from = device_type("unflatten", "flat_type", flat_type);
    const auto to = device_type("unflatten", "type", type);
    check_device_cast("unflatten", from, to, scale.has_value());
    const auto pieces = device_pieces("unflatten", ptrs, counts, cu::size_of(to));
    check_device_flat("unflatten", "flat", flat, cu::size_of(from), pieces, cu::size_of(to));
    py::gil_scoped_release nogil;
    cu::unflatten(reinterpret_cast<const void*>(flat), from, pieces, to, scale, {device, stream});
}

// Adam's arrays are device pointers of one element type, n elements each, aligned to it.
void cuda_adam_step(std::uintptr_t param, std::uintptr_t grad, std::uintptr_t m, std::uintptr_t v,
                    std::uintptr_t v_max, int64_t n, int type, double decay, double beta1,
                    double one_minus_beta1, double beta2, double one_minus_beta2, double epsilon,
                    double step, int device, std::uintptr_t stream) {
    const auto t = device_type("adam_step", "type", type);
    if (t != cu::Type::f32 && t != cu::Type::f64) {
        throw py::type_error(where("adam_step", std::string("no CUDA kernel for ") + cu::name(t)));
    }
    if (n < 0) throw py::value_error(where("adam_step", "n is negative"));
    const std::size_t size = cu::size_of(t);
    for (const std::uintptr_t ptr : {param, grad, m, v, v_max}) {
        if (ptr % size != 0) {
            throw py::value_error(where("adam_step", "an array is not aligned to its element size"));
        }
    }
    const pycoll::AdamScalars s{decay, beta1, one_minus_beta1, beta2, one_minus_beta2, epsilon, step};
    py::gil_scoped_release nogil;
    cu::adam_step(t, reinterpret_cast<void*>(param), reinterpret_cast<const void*>(grad),
                  reinterpret_cast<void*>(m), reinterpret_cast<void*>(v),
                  reinterpret_cast<void*>(v_max), n, s, {device, stream});
}

py::dict cuda_types() {
    py::dict codes;
    using T = cu::Type;
    for (const auto t : {T::bytes, T::f16, T::bf16, T::f32, T::f64}) {
        codes[cu::name(t)] = static_cast<int>(t);
    }
    return codes;
}
#endif  // PYCOLL_WITH_CUDA

std::string compiler() {
#if defined(__clang__)
    return "clang " __clang_version__;
#elif defined(__GNUC__)
    return "gcc " __VERSION__;
#elif defined(_MSC_VER)
    return "msvc " PYCOLL_STR(_MSC_FULL_VER);
#else
    return "unknown";
#endif
}

py::dict build_info() {
    py::dict info;
    info["host_kernels"] = true;
#ifdef PYCOLL_WITH_CUDA
    info["cuda_kernels"] = true;
    info["nvcc"] = pycoll::cuda::nvcc_version();
    info["cuda_arch"] = PYCOLL_CUDA_ARCH;
    info["cuda_runtime"] = pycoll::cuda::runtime_version() + " (static)";
#else
    info["cuda_kernels"] = false;  // built without nvcc, or with PYCOLL_CUDA=0
#endif
    info["compiler"] = compiler();
    info["pybind11"] = PYCOLL_STR(PYBIND11_VERSION_MAJOR) "." PYCOLL_STR(
        PYBIND11_VERSION_MINOR) "." PYCOLL_STR(PYBIND11_VERSION_PATCH);
    info["cxx_standard"] = static_cast<long>(__cplusplus);
    return info;
}

}  // namespace

PYBIND11_MODULE(_C, m) {
    m.doc() = "pycoll's compiled kernels. Private: call them through pycoll.kernels.";
    m.def("flatten", &flatten, py::arg("arrays"), py::arg("flat"), py::arg("scale") = py::none(),
          "Copy the C-contiguous arrays, in order, into the C-contiguous buffer flat, "
          "optionally scaled and cast to flat's dtype. The GIL is released while copying.");
    m.def("unflatten", &unflatten, py::arg("flat"), py::arg("arrays"),
          py::arg("scale") = py::none(),
          "Copy consecutive slices of flat into the C-contiguous arrays, in place, optionally "
          "scaled and cast to their dtype. The GIL is released while copying.");
    m.def("build_info", &build_info, "What this build of pycoll._C contains.");
    def_float_ops<float>(m);
    def_float_ops<double>(m);
    def_image_ops(m);
    def_rnn_steps<float>(m, "RnnSteps32", "RnnStepsBackward32");
    def_rnn_steps<double>(m, "RnnSteps64", "RnnStepsBackward64");
    m.def("cumsum", &cumsum_host<int64_t>, py::arg("x"), py::arg("outer"), py::arg("len"),
          py::arg("inner"), py::arg("reverse"));
    m.def("cumprod", &cumprod_host<int64_t>, py::arg("x"), py::arg("outer"), py::arg("len"), py::arg("inner"));
#ifdef PYCOLL_WITH_CUDA
    m.attr("cuda_types") = cuda_types();
    m.def("cuda_flatten", &cuda_flatten, py::arg("ptrs"), py::arg("counts"), py::arg("type"),
          py::arg("flat"), py::arg("flat_type"), py::arg("scale"), py::arg("device"),
          py::arg("stream"),
          "Enqueue on `stream` (a cudaStream_t) one kernel that copies the device arrays at `ptrs` "
          "(counts[i] elements of cuda_types code `type` each; for 'bytes', counts are bytes), in "
          "order, into the device buffer at `flat`, optionally scaled and cast to `flat_type`. "
          "The GIL is released while the copy is enqueued.");
    m.def("cuda_unflatten", &cuda_unflatten, py::arg("flat"), py::arg("flat_type"),
          py::arg("ptrs"), py::arg("counts"), py::arg("type"), py::arg("scale"),
          py::arg("device"), py::arg("stream"),
          "Enqueue on `stream` one kernel that copies consecutive slices of the device buffer at "
          "`flat` into the device arrays at `ptrs`, optionally scaled and cast to `type`.");
    m.def("cuda_adam_step", &cuda_adam_step, py::arg("param"), py::arg("grad"), py::arg("moment1"),
          py::arg("moment2"), py::arg("moment2_max"), py::arg("n"), py::arg("type"),
          py::arg("decay"), py::arg("beta1"), py::arg("one_minus_beta1"), py::arg("beta2"),
          py::arg("one_minus_beta2"), py::arg("epsilon"), py::arg("step"), py::arg("device"),
          py::arg("stream"),
          "Enqueue on `stream` one kernel that makes the Adam step of adam_step (the host one) on "
          "the device arrays at these addresses (moment2_max 0: none), n elements of cuda_types "
          "code `type` (float32 or float64) each.");
#endif
}
