// See host_image.h. Each kernel mirrors a NumPy formula in pycoll/vision/transforms/ (named at the
// kernel) step for step, in the same types, so that the two give the same bytes.
#include "host_image.h"
#include "simd_clones.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

namespace pycoll {

namespace {

constexpr int32_t kCoefScale = 2048;  // OpenCV's INTER_RESIZE_COEF_SCALE (11 fractional bits)

// _resize._taps: for each output position the two source indices and the first one's weight.
struct Taps {
    std::vector<int64_t> first, second;
    std::vector<int32_t> weight;  // of `first`, in units of 1/2048; `second` has 2048 - weight
};

Taps taps(int64_t out_size, int64_t in_size) {
    Taps t;
    t.first.resize(out_size);
    t.second.resize(out_size);
    t.weight.resize(out_size);
    const double scale = 1.0 / (static_cast<double>(out_size) / static_cast<double>(in_size));
    for (int64_t i = 0; i < out_size; ++i) {
        const float pos = static_cast<float>((static_cast<double>(i) + 0.5) * scale - 0.5);
        int64_t first = static_cast<int64_t>(std::floor(pos));
        float frac = pos - static_cast<float>(first);
        if (first < 0) {
            first = 0;
            frac = 0.0f;
        } else if (first >= in_size - 1) {
            first = in_size - 1;
            frac = 0.0f;
        }
        t.first[i] = first;
        t.second[i] = std::min(first + 1, in_size - 1);
        t.weight[i] = static_cast<int32_t>(std::nearbyint((1.0f - frac) * static_cast<float>(kCoefScale)));
    }
    return t;
}

// One source row of the resize's horizontal pass: out[x, k] = in[first[x], k] * weight[x] +
// in[second[x], k] * (2048 - weight[x]). C: the channels, or 0 for c of them.
template <int64_t C>
void blend_taps(const uint8_t* in, const Taps& xs, int64_t ow, int64_t c, int32_t* out) {
    const int64_t channels = C == 0 ? c : C;
    for (int64_t x = 0; x < ow; ++x) {
        const uint8_t* a = in + xs.first[x] * channels;
        const uint8_t* b = in + xs.second[x] * channels;
        const int32_t wa = xs.weight[x], wb = kCoefScale - wa;
        for (int64_t k = 0; k < channels; ++k) out[x * channels + k] = a[k] * wa + b[k] * wb;
    }
}

template <int64_t PB>
void flip_fixed(const uint8_t* src, int64_t rows, int64_t width, uint8_t* dst) {
    for (int64_t r = 0; r < rows; ++r) {
        const uint8_t* in = src + r * width * PB;
        uint8_t* out = dst + r * width * PB;
        if (PB == 1) {
            std::reverse_copy(in, in + width, out);  // a byte per pixel: one vectorised reversal
            continue;
        }
        for (int64_t x = 0; x < width; ++x) std::memcpy(out + x * PB, in + (width - 1 - x) * PB, PB);
    }
}

uint8_t clip_u8(int32_t v) { return static_cast<uint8_t>(std::min(std::max(v, 0), 255)); }

// np.clip(np.rint(v), 0, 255).astype(np.uint8). Adding and taking away 2^23 rounds a float in
// [0, 2^23) to an integer, ties to even, as rint does: std::nearbyint is a library call on the
// baseline x86-64 this builds for (no SSE4.1 round), 10x the cost of the rest of a pixel.
uint8_t round_clip_u8(float v) {
    constexpr float two_23 = 8388608.0f;
    const float rounded = (std::min(std::max(v, 0.0f), 255.0f) + two_23) - two_23;
    return static_cast<uint8_t>(rounded);
}

// np.trunc for v in [0, 2^31): a conversion, not std::trunc's library call.
float trunc_nonnegative(float v) { return static_cast<float>(static_cast<int32_t>(v)); }

// _cv_colour._reciprocal_table: round((numerator << 12) / (scale * i)), 0 at i = 0.
constexpr int kHsvShift = 12;

struct HsvTables {
    int32_t sat[256], hue[256];
    HsvTables() {
        sat[0] = hue[0] = 0;
        for (int i = 1; i < 256; ++i) {
            sat[i] = static_cast<int32_t>(std::nearbyint(static_cast<double>(255 << kHsvShift) / (1.0 * i)));
            hue[i] = static_cast<int32_t>(std::nearbyint(static_cast<double>(256 << kHsvShift) / (6.0 * i)));
        }
    }
};

}  // namespace

// _resize._bilinear_uint8
PYCOLL_SIMD_CLONES
void resize_bilinear_u8(const uint8_t* src, int64_t h, int64_t w, int64_t c, uint8_t* dst,
                        int64_t oh, int64_t ow) {
    const Taps ys = taps(oh, h), xs = taps(ow, w);
    const int64_t row = ow * c;
    std::vector<int32_t> buffers(2 * row);
    int64_t held[2] = {-1, -1};  // the source row each buffer holds
    auto horizontal = [&](int64_t y, int64_t keep) -> const int32_t* {
        for (int s = 0; s < 2; ++s) {
            if (held[s] == y) return buffers.data() + s * row;
        }
        const int s = held[0] == keep ? 1 : 0;
        int32_t* out = buffers.data() + s * row;
        const uint8_t* in = src + y * w * c;
        switch (c) {  // the channel loop unrolled for the usual counts
            case 1: blend_taps<1>(in, xs, ow, 1, out); break;
            case 3: blend_taps<3>(in, xs, ow, 3, out); break;
            case 4: blend_taps<4>(in, xs, ow, 4, out); break;
            default: blend_taps<0>(in, xs, ow, c, out); break;
        }
        held[s] = y;
        return out;
    };
    for (int64_t i = 0; i < oh; ++i) {
        const int32_t* top = horizontal(ys.first[i], -1);
        const int32_t* bottom = horizontal(ys.second[i], ys.first[i]);
        const int32_t wt = ys.weight[i], wb = kCoefScale - wt;
        uint8_t* out = dst + i * row;
        for (int64_t j = 0; j < row; ++j) {
            out[j] = clip_u8((((wt * (top[j] >> 4)) >> 16) + ((wb * (bottom[j] >> 4)) >> 16) + 2) >> 2);
        }
    }
}

namespace {

// One row of taps along the columns: out[k, ch] = sum_t in[xi[k, t], ch] * xw[k, t] (in order of t).
template <typename In>
void columns(const In* in, int64_t c, int64_t ow, const int64_t* xi, const float* xw, int64_t tx, float* out) {
    for (int64_t k = 0; k < ow; ++k) {
        const int64_t* index = xi + k * tx;
        const float* weight = xw + k * tx;
        for (int64_t ch = 0; ch < c; ++ch) {
            float acc = static_cast<float>(in[index[0] * c + ch]) * weight[0];
            for (int64_t t = 1; t < tx; ++t) acc += static_cast<float>(in[index[t] * c + ch]) * weight[t];
            out[k * c + ch] = acc;
        }
    }
}

// One output row of taps along the rows: out[j] = sum_t rows[yi[t]][j] * yw[t] over a row of n values.
template <typename In>
void rows_of(const In* in, int64_t n, const int64_t* yi, const float* yw, int64_t ty, float* out) {
    const In* first = in + yi[0] * n;
    for (int64_t j = 0; j < n; ++j) out[j] = static_cast<float>(first[j]) * yw[0];
    for (int64_t t = 1; t < ty; ++t) {
        const In* row = in + yi[t] * n;
        const float wt = yw[t];
        for (int64_t j = 0; j < n; ++j) out[j] += static_cast<float>(row[j]) * wt;
    }
}

inline void store(float v, uint8_t* out) { *out = round_clip_u8(v); }
inline void store(float v, float* out) { *out = v; }

template <typename T>
void resize_taps(const T* src, int64_t h, int64_t w, int64_t c, T* dst, int64_t oh, int64_t ow,
                 const int64_t* yi, const float* yw, int64_t ty, const int64_t* xi, const float* xw, int64_t tx) {
    const int64_t out_row = ow * c;
    std::vector<float> inter(h * out_row);  // the columns of every row: [h, ow, c]
    for (int64_t r = 0; r < h; ++r) columns(src + r * w * c, c, ow, xi, xw, tx, inter.data() + r * out_row);
    std::vector<float> result(out_row);
    for (int64_t i = 0; i < oh; ++i) {
        rows_of(inter.data(), out_row, yi + i * ty, yw + i * ty, ty, result.data());
        for (int64_t j = 0; j < out_row; ++j) store(result[j], dst + i * out_row + j);
    }
}

}  // namespace

PYCOLL_SIMD_CLONES
void resize_taps_u8(const uint8_t* src, int64_t h, int64_t w, int64_t c, uint8_t* dst, int64_t oh, int64_t ow,
                    const int64_t* yi, const float* yw, int64_t ty, const int64_t* xi, const float* xw, int64_t tx) {
    resize_taps(src, h, w, c, dst, oh, ow, yi, yw, ty, xi, xw, tx);
}

PYCOLL_SIMD_CLONES
void resize_taps_f32(const float* src, int64_t h, int64_t w, int64_t c, float* dst, int64_t oh, int64_t ow,
                     const int64_t* yi, const float* yw, int64_t ty, const int64_t* xi, const float* xw, int64_t tx) {
    resize_taps(src, h, w, c, dst, oh, ow, yi, yw, ty, xi, xw, tx);
}

namespace {

// One output row of nearest pixels of N bytes each (N = 0: n bytes, a copy each).
template <int64_t N>
void nearest_row(const uint8_t* in, int64_t n, const int64_t* cols, int64_t ow, uint8_t* out) {
    const int64_t bytes = N == 0 ? n : N;
    for (int64_t j = 0; j < ow; ++j) std::memcpy(out + j * bytes, in + cols[j] * bytes, bytes);
}

}  // namespace

// _resize.resize_array's img[rows][:, cols]
void resize_nearest(const uint8_t* src, int64_t w, int64_t pixel_bytes, uint8_t* dst, int64_t oh, int64_t ow,
                    const int64_t* rows, const int64_t* cols) {
    const int64_t in_row = w * pixel_bytes, out_row = ow * pixel_bytes;
    for (int64_t i = 0; i < oh; ++i) {
        uint8_t* out = dst + i * out_row;
        if (i > 0 && rows[i] == rows[i - 1]) {  // an enlarged image repeats rows: copy the one before
            std::memcpy(out, out - out_row, out_row);
            continue;
        }
        const uint8_t* in = src + rows[i] * in_row;
        switch (pixel_bytes) {  // fixed sizes: the copies inlined
            case 1: nearest_row<1>(in, 1, cols, ow, out); break;
            case 3: nearest_row<3>(in, 3, cols, ow, out); break;
            case 4: nearest_row<4>(in, 4, cols, ow, out); break;
            case 12: nearest_row<12>(in, 12, cols, ow, out); break;
            default: nearest_row<0>(in, pixel_bytes, cols, ow, out); break;
        }
    }
}

// functional.hflip's np.ascontiguousarray(img[:, ::-1])
void flip_width(const uint8_t* src, int64_t rows, int64_t width, int64_t pixel_bytes, uint8_t* dst) {
    switch (pixel_bytes) {
        case 1: return flip_fixed<1>(src, rows, width, dst);
        case 3: return flip_fixed<3>(src, rows, width, dst);
        case 4: return flip_fixed<4>(src, rows, width, dst);
        case 12: return flip_fixed<12>(src, rows, width, dst);
        default: break;
    }
    for (int64_t r = 0; r < rows; ++r) {
        for (int64_t x = 0; x < width; ++x) {
            std::memcpy(dst + (r * width + x) * pixel_bytes, src + (r * width + width - 1 - x) * pixel_bytes,
                        pixel_bytes);
        }
    }
}

// colour.adjust_brightness / adjust_contrast's table[img]
void lookup_u8(const uint8_t* src, int64_t n, const uint8_t* table, uint8_t* dst) {
    for (int64_t i = 0; i < n; ++i) dst[i] = table[src[i]];
}

// _cv_colour.gray on integers; R at offset R, B at 2 - R; each grey written OUT times
template <int R, int OUT>
inline void gray_ordered(const uint8_t* src, int64_t n, uint8_t* dst) {
    for (int64_t i = 0; i < n; ++i) {
        const uint8_t* p = src + 3 * i;
        const int32_t acc = p[R] * 9798 + p[1] * 19235 + p[2 - R] * 3735;
        const auto grey = static_cast<uint8_t>((acc + (1 << 14)) >> 15);
        for (int k = 0; k < OUT; ++k) dst[OUT * i + k] = grey;
    }
}

PYCOLL_SIMD_CLONES
void gray_u8(const uint8_t* src, int64_t n, bool blue_first, int channels, uint8_t* dst) {
    if (channels == 3) {
        blue_first ? gray_ordered<2, 3>(src, n, dst) : gray_ordered<0, 3>(src, n, dst);
    } else {
        blue_first ? gray_ordered<2, 1>(src, n, dst) : gray_ordered<0, 1>(src, n, dst);
    }
}

// colour.adjust_saturation on arrays (with _cv_colour.gray's float path, blue_first)
PYCOLL_SIMD_CLONES
void blend_gray_u8(const uint8_t* src, int64_t n, float alpha, float beta, uint8_t* dst) {
    const float wb = 0.114f, wg = 0.587f, wr = 0.299f;
    for (int64_t i = 0; i < n; ++i) {
        const uint8_t* p = src + 3 * i;
        const float b = p[0], g = p[1], r = p[2];
        const float grey_part = ((b * wb + g * wg) + r * wr) * beta;
        for (int k = 0; k < 3; ++k) {
            const float mixed = static_cast<float>(p[k]) * alpha + grey_part;
            dst[3 * i + k] = static_cast<uint8_t>(std::min(std::max(mixed, 0.0f), 255.0f));
        }
    }
}

// _cv_colour.bgr_to_hsv_full
PYCOLL_SIMD_CLONES
void bgr_to_hsv_full_u8(const uint8_t* src, int64_t n, uint8_t* dst) {
    static const HsvTables tables;
    constexpr int32_t half = 1 << (kHsvShift - 1);
    for (int64_t i = 0; i < n; ++i) {
        const int32_t b = src[3 * i], g = src[3 * i + 1], r = src[3 * i + 2];
        const int32_t v = std::max(std::max(b, g), r);
        const int32_t diff = v - std::min(std::min(b, g), r);
        const int32_t s = (diff * tables.sat[v] + half) >> kHsvShift;
        const int32_t from_g = v == g ? b - r + 2 * diff : r - g + 4 * diff;  // selects, not branches
        int32_t h = v == r ? g - b : from_g;
        h = (h * tables.hue[diff] + half) >> kHsvShift;
        if (h < 0) h += 256;
        dst[3 * i] = clip_u8(h);
        dst[3 * i + 1] = static_cast<uint8_t>(s);
        dst[3 * i + 2] = static_cast<uint8_t>(v);
    }
}

// For each hue sector, the value each channel takes: 0 top, 1 low, 2 falling, 3 rising.
constexpr int kBlue[6] = {1, 1, 3, 0, 0, 2};
constexpr int kGreen[6] = {3, 0, 0, 2, 1, 1};
constexpr int kRed[6] = {0, 2, 1, 1, 3, 0};

// _cv_colour.hsv_to_bgr_full, after colour.adjust_hue's turn of the hue
PYCOLL_SIMD_CLONES
void hsv_to_bgr_full_u8(const uint8_t* src, int64_t n, int hue_shift, uint8_t* dst) {
    const int shift = ((hue_shift % 256) + 256) % 256;
    const float one = 1.0f, hue_scale = 6.0f / 255.0f, unit = one / 255.0f, sixth = one / 6.0f;
    for (int64_t i = 0; i < n; ++i) {
        const float hue = static_cast<float>((src[3 * i] + shift) & 255) * hue_scale;
        const float s = static_cast<float>(src[3 * i + 1]) * unit;
        const float v = static_cast<float>(src[3 * i + 2]) * unit;
        const float whole = trunc_nonnegative(hue);
        const float f = hue - whole;
        const float sector = whole - trunc_nonnegative(whole * sixth) * 6.0f;
        // top, low, falling, rising, picked by the sector (an integer in 0..5) from tables, not
        // branches: on photographs the sector changes unpredictably from pixel to pixel.
        const float values[4] = {v, v * (one - s), v * (one - s * f), v * (one - s * (one - f))};
        const int k = static_cast<int>(sector);
        dst[3 * i] = round_clip_u8(values[kBlue[k]] * 255.0f);
        dst[3 * i + 1] = round_clip_u8(values[kGreen[k]] * 255.0f);
        dst[3 * i + 2] = round_clip_u8(values[kRed[k]] * 255.0f);
    }
}

namespace {

constexpr int kTabBits = 5;   // INTER_BITS: bilinear and bicubic positions in 1/32 pixel
constexpr int kAbBits = 10;   // the affine warp's fixed point: 1/1024 pixel
constexpr int kCoefBits = 15; // INTER_REMAP_COEF_BITS

// rint for |v| < 2^51: adding and taking away 1.5 * 2^52 rounds to an integer, ties to even
// (std::nearbyint is a library call on the baseline x86-64 this builds for)
double round_even(double v) {
    constexpr double magic = 6755399441055744.0;
    return (v + magic) - magic;
}

// _cv_warp._pick, _bilinear and _bicubic for one output pixel, C channels (0: warp.c of them),
// by mode M (known at compile time: the per-pixel branches on it go).
template <Sample M, int64_t C>
struct Sampler {
    const Warp& warp;
    int64_t channels;

    const uint8_t* tap(int64_t x, int64_t y) const {
        return x >= 0 && x < warp.w && y >= 0 && y < warp.h ? warp.src + (y * warp.w + x) * channels : warp.border;
    }

    // fx, fy: whole pixels (nearest) or 1/32 pixels
    void at(int64_t fx, int64_t fy, uint8_t* out) const {
        constexpr Sample mode = M;
        const int64_t reach = mode == Sample::nearest ? 1 : mode == Sample::bilinear ? 2 : 4;  // taps per axis
        const int64_t back = mode == Sample::bicubic ? 1 : 0;  // taps before the position's pixel
        const int64_t x = mode == Sample::nearest ? fx : (fx >> kTabBits) - back;
        const int64_t y = mode == Sample::nearest ? fy : (fy >> kTabBits) - back;
        if (x + reach <= 0 || x >= warp.w || y + reach <= 0 || y >= warp.h) {
            std::memcpy(out, warp.border, channels);
            return;
        }
        if (mode == Sample::nearest) {
            std::memcpy(out, tap(x, y), channels);
            return;
        }
        constexpr int fraction = (1 << kTabBits) - 1;
        const int32_t ax = static_cast<int32_t>(fx & fraction), ay = static_cast<int32_t>(fy & fraction);
        if (mode == Sample::bilinear) {  // weights in 1/1024, times 32 to the 2^15 scale
            const bool inside = x >= 0 && x + 1 < warp.w && y >= 0 && y + 1 < warp.h;
            const uint8_t* t00 = inside ? warp.src + (y * warp.w + x) * channels : tap(x, y);
            const uint8_t* t01 = inside ? t00 + channels : tap(x + 1, y);
            const uint8_t* t10 = inside ? t00 + warp.w * channels : tap(x, y + 1);
            const uint8_t* t11 = inside ? t10 + channels : tap(x + 1, y + 1);
            const int32_t bx = 32 - ax, by = 32 - ay;
            const int32_t w00 = by * bx, w01 = by * ax, w10 = ay * bx, w11 = ay * ax;
            for (int64_t k = 0; k < channels; ++k) {
                const int32_t acc = t00[k] * w00 + t01[k] * w01 + t10[k] * w10 + t11[k] * w11;
                out[k] = clip_u8((acc * 32 + (1 << (kCoefBits - 1))) >> kCoefBits);
            }
            return;
        }
        const int32_t* weights = warp.cubic_weights + ((ay << kTabBits) + ax) * 16;
        for (int64_t k = 0; k < channels; ++k) {
            int64_t acc = 0;
            for (int dy = 0; dy < 4; ++dy) {
                for (int dx = 0; dx < 4; ++dx) acc += int64_t{tap(x + dx, y + dy)[k]} * weights[dy * 4 + dx];
            }
            out[k] = clip_u8(static_cast<int32_t>(std::min<int64_t>(std::max<int64_t>(
                (acc + (1 << (kCoefBits - 1))) >> kCoefBits, 0), 255)));
        }
    }
};

// _cv_warp.warp_affine: per-column and per-row offsets in 1/1024 pixel, rounded, added.
template <Sample M, int64_t C>
void affine(const Warp& warp) {
    const Sampler<M, C> sampler{warp, C == 0 ? warp.c : C};
    const double* m = warp.m;
    const double scale = 1 << kAbBits;
    const bool nearest = warp.mode == Sample::nearest;
    const int64_t half = nearest ? (1 << kAbBits) / 2 : (1 << kAbBits) / (1 << kTabBits) / 2;
    const int shift = nearest ? kAbBits : kAbBits - kTabBits;
    std::vector<int64_t> col_x(warp.ow), col_y(warp.ow);
    for (int64_t j = 0; j < warp.ow; ++j) {
        const double x = static_cast<double>(j);
        col_x[j] = static_cast<int64_t>(std::nearbyint(m[0] * x * scale));
        col_y[j] = static_cast<int64_t>(std::nearbyint(m[3] * x * scale));
    }
    for (int64_t i = 0; i < warp.oh; ++i) {
        const double y = static_cast<double>(i);
        const int64_t row_x = static_cast<int64_t>(std::nearbyint((m[1] * y + m[2]) * scale)) + half;
        const int64_t row_y = static_cast<int64_t>(std::nearbyint((m[4] * y + m[5]) * scale)) + half;
        uint8_t* out = warp.dst + i * warp.ow * sampler.channels;
        for (int64_t j = 0; j < warp.ow; ++j) {
            sampler.at((row_x + col_x[j]) >> shift, (row_y + col_y[j]) >> shift, out + j * sampler.channels);
        }
    }
}

// _cv_warp.warp_perspective: columns taken in blocks whose start is added first, a division in
// double per pixel, rounded to whole (nearest) or 1/32 pixels.
template <Sample M, int64_t C>
void perspective(const Warp& warp) {
    const Sampler<M, C> sampler{warp, C == 0 ? warp.c : C};
    const double* m = warp.m;
    constexpr int64_t block = 32;  // BLOCK_SZ
    const int64_t block_h = std::min<int64_t>(block / 2, warp.oh);
    const int64_t block_w = std::min<int64_t>(block * block / block_h, warp.ow);
    const double numerator = warp.mode == Sample::nearest ? 1.0 : static_cast<double>(1 << kTabBits);
    const double low = -2147483648.0, high = 2147483647.0;
    // each column's products with its block's start and its offset in the block, made once (the
    // same operations as per pixel, in the same order: the same values)
    std::vector<double> at_start(3 * warp.ow), at_offset(3 * warp.ow);
    for (int64_t j = 0; j < warp.ow; ++j) {
        const double start = static_cast<double>((j / block_w) * block_w);
        const double offset = static_cast<double>(j % block_w);
        for (int k = 0; k < 3; ++k) {
            at_start[3 * j + k] = m[3 * k] * start;
            at_offset[3 * j + k] = m[3 * k] * offset;
        }
    }
    for (int64_t i = 0; i < warp.oh; ++i) {
        const double y = static_cast<double>(i);
        const double along_y[3] = {m[1] * y, m[4] * y, m[7] * y};
        uint8_t* out = warp.dst + i * warp.ow * sampler.channels;
        for (int64_t j = 0; j < warp.ow; ++j) {
            const double* s = &at_start[3 * j];
            const double* o = &at_offset[3 * j];
            const double x0 = (s[0] + along_y[0] + m[2]) + o[0];
            const double y0 = (s[1] + along_y[1] + m[5]) + o[1];
            double w0 = (s[2] + along_y[2] + m[8]) + o[2];
            w0 = w0 != 0.0 ? numerator / w0 : 0.0;
            // NaN (a degenerate map): outside the image, as NumPy's conversion of NaN makes it
            const double qx = std::isnan(x0 * w0) ? low : x0 * w0, qy = std::isnan(y0 * w0) ? low : y0 * w0;
            const double px = std::min(std::max(qx, low), high), py = std::min(std::max(qy, low), high);
            sampler.at(static_cast<int64_t>(round_even(px)), static_cast<int64_t>(round_even(py)),
                       out + j * sampler.channels);
        }
    }
}

// Each warp for the mode and the usual channel counts, compiled apart.
template <template <Sample, int64_t> class Run>
void dispatch(const Warp& warp) {
    auto channels = [&](auto mode) {
        constexpr Sample m = decltype(mode)::value;
        switch (warp.c) {
            case 1: return Run<m, 1>::run(warp);
            case 3: return Run<m, 3>::run(warp);
            default: return Run<m, 0>::run(warp);
        }
    };
    switch (warp.mode) {
        case Sample::nearest: return channels(std::integral_constant<Sample, Sample::nearest>{});
        case Sample::bilinear: return channels(std::integral_constant<Sample, Sample::bilinear>{});
        default: return channels(std::integral_constant<Sample, Sample::bicubic>{});
    }
}

template <Sample M, int64_t C>
struct Affine {
    static void run(const Warp& warp) { affine<M, C>(warp); }
};

template <Sample M, int64_t C>
struct Perspective {
    static void run(const Warp& warp) { perspective<M, C>(warp); }
};

}  // namespace

void warp_affine_u8(const Warp& warp) { dispatch<Affine>(warp); }

void warp_perspective_u8(const Warp& warp) { dispatch<Perspective>(warp); }

namespace {

// _common.box_area of one box
double box_area(const double* b, double offset) {
    const double w = b[2] - b[0], h = b[3] - b[1];
    return (w < 0 || h < 0) ? 0.0 : (w + offset) * (h + offset);
}

}  // namespace

// The kept boxes are held column by column (x1, y1, x2, y2, area), and a candidate is compared
// with a block of them at a time without branching (_common.iou_matrix's arithmetic, in its
// order: the same bits), so the compiler runs each block in vector registers; the scan stops at
// the first block with an overlap above the threshold.
int64_t greedy_nms(const double* boxes, int64_t k, double threshold, double offset, double eta, int64_t* kept) {
    constexpr int64_t kBlock = 64;
    std::vector<double> x1(k), y1(k), x2(k), y2(k), area(k);
    int64_t n = 0;
    for (int64_t i = 0; i < k; ++i) {
        const double* a = boxes + 4 * i;
        const double ax1 = a[0], ay1 = a[1], ax2 = a[2], ay2 = a[3], a_area = box_area(a, offset);
        bool keep = true;
        for (int64_t start = 0; start < n && keep; start += kBlock) {
            const int64_t stop = std::min(n, start + kBlock);
            bool hit = false;
            for (int64_t j = start; j < stop; ++j) {
                const bool meet = (x1[j] <= ax2) & (y1[j] <= ay2) & (x2[j] >= ax1) & (y2[j] >= ay1);
                const double inter = (std::min(ax2, x2[j]) - std::max(ax1, x1[j]) + offset) *
                                     (std::min(ay2, y2[j]) - std::max(ay1, y1[j]) + offset);
                const double uni = a_area + area[j] - inter;
                hit |= (meet ? inter / uni : 0.0) > threshold;
            }
            keep = !hit;
        }
        if (!keep) continue;
        x1[n] = ax1, y1[n] = ay1, x2[n] = ax2, y2[n] = ay2, area[n] = a_area;
        kept[n++] = i;
        if (eta < 1 && threshold > 0.5) threshold *= eta;
    }
    return n;
}

}  // namespace pycoll
