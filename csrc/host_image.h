// Kernels for uint8 images on the host, the arrays paddle.vision.transforms hands to OpenCV:
// [H, W, C] (C = 1 for [H, W]) in C order. paddle's array path calls cv2 (resize, flip, cvtColor,
// LUT); pycoll/vision/transforms/ reproduces OpenCV's arithmetic in NumPy, which took 5-60x
// paddle's time per image (every step a pass over int64 or float32 copies). These are the same
// formulas, one pass each, with the values of those NumPy formulas bit for bit
// (pycoll/vision/transforms/_resize.py and _cv_colour.py hold them, and serve where pycoll._C
// lacks these kernels). Plain C++17, no Python here: bindings.cpp calls these with the GIL released.
#pragma once

#include <cstdint>

namespace pycoll {

// OpenCV's INTER_LINEAR on uint8: taps at half-pixel centres, 11-bit fixed-point weights, its
// rounding. src [h, w, c] -> dst [oh, ow, c].
void resize_bilinear_u8(const uint8_t* src, int64_t h, int64_t w, int64_t c, uint8_t* dst,
                        int64_t oh, int64_t ow);

// A separable resize by taps (vision's resize of arrays but uint8 'bilinear'): along each axis
// output cell k is the sum over t of in[index[k, t]] * weight[k, t] in float32, in order of t
// (index [n_out, T] int64, weight [n_out, T] float32; yi/yw the rows' taps, xi/xw the columns'),
// the columns first (OpenCV's order); on uint8 the result rounded half to even and clipped. The
// values of _resize.resample's NumPy loop, bit for bit. src [h, w, c] -> dst [oh, ow, c].
void resize_taps_u8(const uint8_t* src, int64_t h, int64_t w, int64_t c, uint8_t* dst, int64_t oh, int64_t ow,
                    const int64_t* yi, const float* yw, int64_t ty, const int64_t* xi, const float* xw, int64_t tx);
void resize_taps_f32(const float* src, int64_t h, int64_t w, int64_t c, float* dst, int64_t oh, int64_t ow,
                     const int64_t* yi, const float* yw, int64_t ty, const int64_t* xi, const float* xw, int64_t tx);

// OpenCV's INTER_NEAREST by its source indices: dst row i, column j is src's pixel
// (rows[i], cols[j]); a pixel is pixel_bytes bytes (any dtype: the bytes move). src [h, w],
// dst [oh, ow] pixels.
void resize_nearest(const uint8_t* src, int64_t w, int64_t pixel_bytes, uint8_t* dst, int64_t oh, int64_t ow,
                    const int64_t* rows, const int64_t* cols);

// Each row's pixels in reverse order (cv2.flip(img, 1)); a pixel is pixel_bytes bytes.
void flip_width(const uint8_t* src, int64_t rows, int64_t width, int64_t pixel_bytes, uint8_t* dst);

// dst[i] = table[src[i]] (cv2.LUT with a 256-entry table).
void lookup_u8(const uint8_t* src, int64_t n, const uint8_t* table, uint8_t* dst);

// cvtColor RGB2GRAY of n pixels of 3 channels (BGR2GRAY with blue_first): 15-bit fixed-point
// weights, rounded; each grey written once (channels 1) or three times (channels 3: GRAY2RGB after).
void gray_u8(const uint8_t* src, int64_t n, bool blue_first, int channels, uint8_t* dst);

// paddle's array adjust_saturation: each channel x of n RGB pixels becomes
// uint8(clip(x * alpha + grey * beta, 0, 255)), grey the float32 BGR2GRAY luma of the pixel read
// as B, G, R (paddle's quirk), every step in float32.
void blend_gray_u8(const uint8_t* src, int64_t n, float alpha, float beta, uint8_t* dst);

// cvtColor BGR2HSV_FULL (hue over 0..255) of n pixels, and HSV2BGR_FULL with hue_shift added to
// the hue first, modulo 256 (adjust_hue's turn; 0 for the plain conversion).
void bgr_to_hsv_full_u8(const uint8_t* src, int64_t n, uint8_t* dst);
void hsv_to_bgr_full_u8(const uint8_t* src, int64_t n, int hue_shift, uint8_t* dst);

// cv2.warpAffine / warpPerspective with a constant border on uint8 (_cv_warp's warp_affine and
// warp_perspective after the map's inversion): each output pixel of [oh, ow] finds its source
// position from the inverse map ``m`` (2x3 or 3x3, row-major, double) in OpenCV's fixed point,
// whole pixels for Sample::nearest, 1/32 pixels for the others, and reads src [h, w, c] there; a
// tap outside the image reads border [c], and a position with no tap inside gives border.
// Sample::bicubic weighs its 4 x 4 taps by cubic_weights [32 * 32, 4, 4] (rows y, columns x;
// summing to 2^15), indexed by the y and x fractions.
enum class Sample : int { nearest = 0, bilinear = 1, bicubic = 2 };

struct Warp {
    const uint8_t* src;
    int64_t h, w, c;
    const double* m;
    int64_t oh, ow;
    const uint8_t* border;
    Sample mode;
    const int32_t* cubic_weights;  // bicubic: [1024, 4, 4]; else unused
    uint8_t* dst;
};

void warp_affine_u8(const Warp& warp);
void warp_perspective_u8(const Warp& warp);

// paddle.vision.ops.nms's greedy suppression (pycoll/vision/ops/nms.py's greedy_nms, its IoU
// _common.iou_matrix's, in the same double operations): boxes [k, 4] (x1, y1, x2, y2), best
// first; a box is kept unless its IoU with a kept box is above threshold (a NaN IoU, 0 / 0 of
// two boxes of no area, is not: paddle keeps such a box);
// after each kept box a threshold above 0.5 is multiplied by eta (1: a fixed threshold). Writes
// the kept positions into kept (room for k) and returns how many.
int64_t greedy_nms(const double* boxes, int64_t k, double threshold, double offset, double eta, int64_t* kept);

}  // namespace pycoll
