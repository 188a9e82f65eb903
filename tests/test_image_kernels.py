"""The host kernels behind paddle.vision.transforms' uint8 array path (pycoll.kernels.host_image):
each gives the bytes of the NumPy formula that a build without them runs (itself checked against
OpenCV in test_vision_augment.py and test_vision.py), on images of many shapes and layouts."""
import numpy as np
import pytest

from pycoll.kernels import host_image
from pycoll.vision.transforms import _cv_colour, _resize
from pycoll.vision.transforms import functional as F

pytestmark = pytest.mark.skipif(host_image._kernels() is None, reason="pycoll._C lacks the image kernels")

RS = np.random.RandomState(7)
PHOTO = RS.randint(0, 256, (61, 83, 3)).astype(np.uint8)
IMAGES = {
    "rgb": PHOTO,
    "grey": PHOTO[:, :, 0].copy(),
    "rgba": RS.randint(0, 256, (17, 29, 4)).astype(np.uint8),
    "two_channels": RS.randint(0, 256, (9, 40, 2)).astype(np.uint8),
    "one_pixel": RS.randint(0, 256, (1, 1, 3)).astype(np.uint8),
    "strided": PHOTO[::2, 1::3],
}


def without_kernels(fn, *args, **kwargs):
    """fn's result as a build without pycoll._C's image kernels gives it."""
    saved = host_image._kernels
    host_image._kernels = lambda: None
    try:
        return fn(*args, **kwargs)
    finally:
        host_image._kernels = saved


def assert_same(fn, *args, seed=None, **kwargs):
    if seed is not None:
        np.random.seed(seed)
    fast = fn(*args, **kwargs)
    if seed is not None:
        np.random.seed(seed)
    slow = without_kernels(fn, *args, **kwargs)
    assert fast.dtype == slow.dtype and fast.shape == slow.shape
    np.testing.assert_array_equal(fast, slow)
    return fast


@pytest.mark.parametrize("name", sorted(IMAGES))
@pytest.mark.parametrize("size", [(30, 40), (1, 1), (3, 200), (123, 250), (61, 83), (7, 5)])
def test_bilinear_resize_equals_the_fixed_point_formula(name, size):
    img = IMAGES[name]
    out = assert_same(_resize.resize_array, img, size[0], size[1], "bilinear")
    assert out.shape[:2] == size and out.flags.c_contiguous


@pytest.mark.parametrize("name", sorted(IMAGES))
@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic", "area", "lanczos"])
@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_resize_by_taps_equals_the_numpy_loop(name, mode, dtype):
    img = IMAGES[name] if dtype == "uint8" else (IMAGES[name] / 255).astype(np.float32)
    h, w = img.shape[:2]
    for size in ((max(h // 3, 1), max(w // 2, 1)), (2 * h + 1, w + 3), (1, 1), (h, max(w - 1, 1))):
        out = assert_same(F.resize, img, size, mode)  # rows first, columns first, and area's pool enlarging
        assert out.shape[:2] == size and out.flags.c_contiguous


@pytest.mark.parametrize("name", sorted(IMAGES))
def test_nearest_resize_equals_fancy_indexing_for_any_dtype(name):
    for img in (IMAGES[name], IMAGES[name].astype(np.float32), IMAGES[name].astype(np.int64),
                IMAGES[name].astype(np.float16)):
        for size in ((30, 40), (1, 1), (3, 200), (2 * img.shape[0] + 1, img.shape[1])):
            out = assert_same(_resize.resize_array, img, size[0], size[1], "nearest")
            assert out.shape[:2] == size and out.flags.c_contiguous


@pytest.mark.parametrize("name", sorted(IMAGES))
def test_flip_equals_the_reversed_view(name):
    img = IMAGES[name]
    flipped = assert_same(F.hflip, img)
    np.testing.assert_array_equal(flipped, img[:, ::-1])
    for other in (img.astype(np.float32), img.astype(np.int64), img.astype(np.float16)):
        np.testing.assert_array_equal(F.hflip(other), other[:, ::-1])  # any dtype: the bytes move


@pytest.mark.parametrize("name", ["rgb", "strided", "one_pixel"])
def test_colour_adjustments_equal_the_opencv_formulas(name):
    img = IMAGES[name]
    for factor in (0.0, 0.35, 1.0, 1.8):
        assert_same(F.adjust_brightness, img, factor)
        assert_same(F.adjust_contrast, img, factor)
        assert_same(F.adjust_saturation, img, factor, seed=3)  # its blend weight is drawn, as paddle's
    for hue in (-0.5, -0.21, 0.0, 0.04, 0.5):
        assert_same(F.adjust_hue, img, hue)
    for channels in (1, 3):
        assert_same(F.to_grayscale, img, channels)


def test_colour_conversions_on_every_colour_of_two_channels_and_random_third():
    ramp = np.arange(256)
    pairs = np.stack(np.meshgrid(ramp, ramp, indexing="ij"), -1).reshape(-1, 2)
    cube = np.concatenate([pairs, RS.randint(0, 256, (len(pairs), 1))], 1).astype(np.uint8).reshape(256, 256, 3)
    for layout in (cube, cube[:, :, ::-1].copy(), cube[:, :, [1, 2, 0]].copy()):
        assert_same(_cv_colour.bgr_to_hsv_full, layout)
        for shift in (0, 1, 100, -77, 255, -255):
            assert_same(_cv_colour.hsv_to_bgr_full, layout, shift)
        for blue_first in (False, True):
            assert_same(_cv_colour.gray, layout, blue_first)
            assert_same(_cv_colour.gray, layout, blue_first, 3)  # the grey repeated: GRAY2RGB after


@pytest.mark.parametrize("name", ["rgb", "grey", "two_channels", "strided", "one_pixel"])
@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
def test_warps_equal_the_opencv_formulas(name, mode):
    img = IMAGES[name]
    h, w = img.shape[:2]
    start = [[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]]
    end = [[3, 1], [w - 2, 2], [w - 1, h - 3], [1, h - 2]]
    for fill in (0, 7, (3, 200, 17)):
        assert_same(F.rotate, img, 33, mode, False, None, fill)
        assert_same(F.rotate, img, -120, mode, True, (2, 3), fill)
        assert_same(F.affine, img, -12.5, [1, 2], 1.1, 7.0, mode, fill)
        assert_same(F.perspective, img, start, end, mode, fill)  # one row or column: degenerate, all fill


def test_images_the_kernels_do_not_take_go_to_numpy():
    assert host_image.resize_bilinear(PHOTO.astype(np.float32), 5, 5) is None
    assert host_image.gray(PHOTO[:, :, :2]) is None  # two channels
    assert host_image.bgr_to_hsv_full(np.zeros((0, 3), np.uint8)) is None
    assert host_image.lookup(PHOTO, np.arange(256, dtype=np.int64)) is None
    assert host_image.flip_width(np.array([1, 2, 3], np.uint8)) is None  # one axis
    resized = F.resize(PHOTO.astype(np.float32), (20, 30))
    assert resized.dtype == np.float32 and resized.shape == (20, 30, 3)


@pytest.mark.parametrize("eta", [1.0, 0.9])
@pytest.mark.parametrize("offset", [0.0, 1.0])
def test_greedy_nms_kernel_keeps_what_the_numpy_loop_keeps(eta, offset):
    from pycoll.vision.ops.nms import greedy_nms
    rs = np.random.RandomState(int(eta * 10 + offset))
    for k in (0, 1, 7, 300):
        boxes = rs.rand(k, 4) * 50
        boxes[:, 2:] += boxes[:, :2] + rs.rand(k, 2) * 30
        if k > 5:
            boxes[3] = boxes[2]  # identical boxes: IoU 1
            boxes[4, 2] = boxes[4, 0] - 1  # x2 < x1: area 0
            boxes[5] = np.nan  # NaN IoUs: not above the threshold, so kept (paddle's)
            boxes[6, 2:] = boxes[6, :2]  # no area: 0 / 0 against itself
        for threshold in (-0.1, 0.0, 0.3, 0.7):  # (below 0: boxes that do not meet, IoU 0, are above it)
            fast = greedy_nms(boxes, threshold, offset, eta)
            slow = without_kernels(greedy_nms, boxes, threshold, offset, eta)
            assert fast.dtype == np.int64 and fast.tolist() == slow.tolist(), (k, threshold)
