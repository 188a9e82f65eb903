"""pycoll.vision.ops against paddle 3.3.1's CPU build: values measured on paddle (PADDLE below) for
small seeded inputs, gradients against paddle's (two projections each) and against finite
differences of pycoll's own forward."""
from __future__ import annotations

import numpy as np
import pytest

import pycoll
from pycoll.vision import ops as V


def _boxes(rng, n, scale=1.0):
    xy = rng.random((n, 2)) * scale
    wh = rng.random((n, 2)) * scale * 0.6 + 0.1 * scale
    return np.concatenate([xy, xy + wh], 1).astype(np.float32)


def _inputs() -> dict:
    rng = np.random.default_rng(7)
    d = {}
    d["nms_b"], d["nms_s"], d["nms_c"] = _boxes(rng, 10), rng.random(10).astype(np.float32), rng.integers(0, 2, 10)
    d["roi_x"] = rng.standard_normal((2, 8, 5, 6)).astype(np.float32)
    d["roi_b"] = _boxes(rng, 3, 8.0)
    d["bc_p"], d["bc_t"] = _boxes(rng, 2), _boxes(rng, 3)
    d["bc_v"] = (rng.random((2, 4)) * 0.3 + 0.1).astype(np.float32)
    d["bc_d"] = (rng.standard_normal((3, 2, 4)) * 0.5).astype(np.float32)
    d["yb_x"] = rng.standard_normal((1, 2 * 7, 2, 3)).astype(np.float32)
    d["dc_x"] = rng.standard_normal((1, 4, 4, 5)).astype(np.float32)
    d["dc_w"] = (rng.standard_normal((2, 2, 2, 2)) * 0.5).astype(np.float32)
    d["dc_b"] = rng.standard_normal(2).astype(np.float32)
    d["dc_o"] = (rng.standard_normal((1, 2 * 2 * 4, 3, 3)) * 1.5).astype(np.float32)  # stride 2, padding 1: Ho = Wo = 3
    d["dc_m"] = rng.random((1, 2 * 4, 3, 3)).astype(np.float32)
    d["mn_b"] = _boxes(rng, 6)[None]
    d["mn_s"] = rng.random((1, 3, 6)).astype(np.float32)
    d["fp_r"] = np.array([[0, 0, 10, 10], [0, 0, 60, 50], [5, 5, 300, 260], [0, 0, 120, 110],
                          [3, 3, 30, 40], [0, 0, 900, 700]], np.float32)
    d["gp_s"] = rng.random((1, 2, 2, 3)).astype(np.float32)
    d["gp_d"] = (rng.standard_normal((1, 8, 2, 3)) * 0.3).astype(np.float32)
    ctr = np.stack(np.meshgrid(np.arange(3) * 16 + 8, np.arange(2) * 16 + 8), -1)[:, :, None, :]  # [2, 3, 1, 2]
    half = np.array([[8, 6], [16, 12]])[None, None]  # [1, 1, 2, 2]
    d["gp_a"] = np.concatenate([ctr - half, ctr + half], -1).astype(np.float32)  # [2, 3, 2, 4]
    d["gp_v"] = (rng.random((2, 3, 2, 4)) * 0.5 + 0.5).astype(np.float32)
    d["yl_x"] = rng.standard_normal((1, 2 * 7, 3, 3)).astype(np.float32)
    d["yl_b"] = np.array([[[0.3, 0.4, 0.2, 0.3], [0.7, 0.6, 0.5, 0.4], [0.0, 0.0, 0.0, 0.0]]], np.float32)
    d["yl_l"] = np.array([[1, 0, 0]], np.int32)
    return d


D = _inputs()

# Measured on paddle 3.3.1 (CPU) with paddle.vision.ops on _inputs(): {name: (shape, values)}. For a
# gradient, x.grad after backward of sum(out * cos(arange(out.size))), as the two projections
# (sum(g * sin(0.7 k + 0.3)), sum(|g|)).
PADDLE = {
    'nms_plain': ([6], [0, 1, 2, 4, 5, 6]),
    'nms_scored': ([6], [1, 9, 3, 5, 4, 6]),
    'nms_cat': ([4], [1, 9, 3, 5]),
    'ra': ([3, 8, 2, 2], [-0.394295, -1.451943, 0.135398, -0.786555, -1.229189, -0.697304, -0.72313, 0.002337, -0.243972, 0.479094, 0.522549, 0.027169, -0.473199, 0.073795, -0.803464, 0.246751, -0.67678, 0.518705, 0.236728, 0.785163, -0.975101, -0.764455, -0.432927, -0.757552, -2.073197, -0.825248, -0.956815, -0.142811, 0.094732, -0.767713, 0.222584, 0.507807, 0.668874, 0.846509, 0.924376, 1.34448, -0.323981, 0.232701, -0.212183, 0.243551, -0.296739, 0.014849, -0.686696, -0.00772, 0.519524, 0.830675, 0.871272, 1.174252, -0.399845, 0.599089, -0.306023, 0.719147, -0.442242, 0.184734, -0.243146, 0.452225, -1.36213, -0.547804, -1.312331, -0.745893, -0.210747, 0.210043, -0.261824, 0.210567, 0.173855, -0.222919, 0.0, 0.0, -0.441994, -0.513681, 0.0, 0.0, -0.131665, -0.031545, 0.0, 0.0, -0.391441, 0.528867, 0.0, 0.0, -0.190933, -0.548962, 0.0, 0.0, 0.04138, -0.312629, 0.0, 0.0, -0.398257, -0.254768, 0.0, 0.0, -0.493917, -0.090124, 0.0, 0.0]),
    'ra_gx': ([2], [0.950584, 32.45559]),
    'ra_na': ([3, 8, 2, 1], [-0.339881, -0.103704, -0.705938, -0.96249, -0.72292, -0.268211, -0.36088, -0.532968, -0.545937, -0.4607, -0.782968, -0.661554, -1.654715, -1.859728, 0.229631, 0.124377, -0.118139, 0.238273, -0.895638, -0.718429, 1.503899, 0.203291, -0.815866, 0.079899, -1.042055, -0.884564, -1.056158, -0.792523, -1.65447, -1.497537, -0.015188, -0.233855, -0.133363, -0.012589, -0.612444, -0.447214, -0.035844, -0.061218, 0.239846, -0.057245, -0.54831, -0.177832, 0.172077, -0.136444, -0.001155, -0.321163, -0.334022, -0.278668]),
    'ra_na_gx': ([2], [-5.095388, 23.602963]),
    'rp': ([3, 8, 2, 2], [0.127268, 0.127268, 1.145222, -0.794642, 0.668381, 1.052126, 0.34668, -1.688204, -0.11861, -0.11861, 0.846609, 0.756738, -0.326685, 0.007959, 1.654058, 1.654058, 0.630083, 0.630083, 0.680511, 0.3826, 0.839727, -1.643797, 0.038535, -0.860516, 0.743197, 0.081054, -0.692073, -0.692073, 1.721972, 1.721972, 0.250398, 0.250398, -0.346182, -0.346182, -0.221034, -0.221034, 1.081358, 1.081358, -0.593006, -0.593006, 0.854639, 0.854639, 0.636841, 0.636841, -1.733132, -1.733132, 0.210395, 0.210395, -0.501597, -0.501597, -1.02689, -1.02689, -0.03933, -0.03933, 1.105685, 1.105685, -1.334709, -1.334709, 1.391124, 1.391124, -0.766306, -0.766306, 0.606107, 0.606107, 0.067551, -0.221034, 0.884585, -0.221034, -0.196728, 1.081358, -0.196728, -0.593006, -0.678738, 0.854639, -0.056094, 0.636841, 1.029179, 0.210395, 1.029179, 1.347712, -0.304588, -0.501597, 0.003508, -0.649956, -0.059217, 1.105685, 0.379428, 1.105685, -0.354797, 1.391124, -0.354797, 1.391124, -0.136989, 0.606107, -0.94796, 0.606107]),
    'rp_gx': ([2], [1.734043, 52.745381]),
    'ps': ([3, 2, 2, 2], [-0.16802, 0.356128, -0.402282, 0.107638, 0.061061, -1.876889, -0.557942, 0.842858, -0.346182, 1.081358, 0.74574, -0.761369, -0.501597, -0.03933, 0.028207, -0.0801, -0.011386, -0.551091, -0.569183, -0.434941, -0.459647, -0.482743, -0.445697, -0.995632]),
    'ps_gx': ([2], [0.175917, 15.516123]),
    'bc_enc': ([3, 2, 4], [26.532627, 1.126088, 3.589188, 1.442656, 8.663321, -2.674381, -0.031401, 8.347739, 27.988283, 2.297047, 10.743858, 0.751082, 9.277848, 1.46671, 6.004947, 5.915, 13.165333, 5.586615, 1.055332, 0.73548, 3.020117, 13.100248, -2.169199, 5.86012]),
    'bc_enc_px': ([3, 2, 4], [2.798826, -2.618225, 0.379717, 0.924929, 1.05857, -4.707856, -0.005031, 1.354215, 3.19972, -1.559252, 1.944069, 0.438716, 1.429773, -3.553946, 1.559321, 0.868002, -0.882593, 1.415713, 0.09213, 0.428686, -2.350189, -0.312273, -0.292617, 0.857972]),
    'bc_dec': ([3, 2, 4], [-0.0066, 0.248686, 0.089874, 0.540598, 0.145582, 0.494759, 0.336328, 0.760465, 0.052946, 0.291378, 0.161069, 0.649207, 0.115259, 0.459267, 0.321367, 0.726797, 0.030824, 0.247604, 0.13317, 0.618473, 0.180644, 0.481735, 0.400111, 0.749284]),
    'bc_dec_ax1': ([3, 2, 4], [0.760908, 0.435387, 0.717494, 0.711835, 0.786824, 0.348523, 0.91863, 1.094943, 0.772705, 0.680966, 1.383631, 1.111178, 0.460088, 0.240262, 1.203974, 0.864881, 0.485613, 0.974218, 0.4917, 1.455497, 0.360468, 0.842452, 0.686998, 1.464233]),
    'pb': ([2, 3, 4, 4], [0.041667, 0.083333, 0.291667, 0.416667, 0.0, 0.132149, 0.343443, 0.367851, 0.078278, 0.014298, 0.255055, 0.485702, 0.0, 0.014298, 0.343443, 0.485702, 0.375, 0.083333, 0.625, 0.416667, 0.323223, 0.132149, 0.676777, 0.367851, 0.411612, 0.014298, 0.588388, 0.485702, 0.323223, 0.014298, 0.676777, 0.485702, 0.708333, 0.083333, 0.958333, 0.416667, 0.656557, 0.132149, 1.0, 0.367851, 0.744945, 0.014298, 0.921722, 0.485702, 0.656557, 0.014298, 1.0, 0.485702, 0.041667, 0.583333, 0.291667, 0.916667, 0.0, 0.632149, 0.343443, 0.867851, 0.078278, 0.514298, 0.255055, 0.985702, 0.0, 0.514298, 0.343443, 0.985702, 0.375, 0.583333, 0.625, 0.916667, 0.323223, 0.632149, 0.676777, 0.867851, 0.411612, 0.514298, 0.588388, 0.985702, 0.323223, 0.514298, 0.676777, 0.985702, 0.708333, 0.583333, 0.958333, 0.916667, 0.656557, 0.632149, 1.0, 0.867851, 0.744945, 0.514298, 0.921722, 0.985702, 0.656557, 0.514298, 1.0, 0.985702]),
    'pb2': ([2, 3, 6, 4], [-0.046875, -0.041667, 0.203125, 0.291667, -0.087234, -0.095479, 0.243484, 0.345479, -0.138381, 0.028775, 0.294631, 0.221225, -0.109375, -0.125, 0.265625, 0.375, -0.151515, -0.181186, 0.307765, 0.431186, -0.246635, -0.019338, 0.402885, 0.269338, 0.265625, -0.041667, 0.515625, 0.291667, 0.225266, -0.095479, 0.555984, 0.345479, 0.174119, 0.028775, 0.607131, 0.221225, 0.203125, -0.125, 0.578125, 0.375, 0.160985, -0.181186, 0.620265, 0.431186, 0.065865, -0.019338, 0.715384, 0.269338, 0.578125, -0.041667, 0.828125, 0.291667, 0.537766, -0.095479, 0.868484, 0.345479, 0.486619, 0.028775, 0.919631, 0.221225, 0.515625, -0.125, 0.890625, 0.375, 0.473485, -0.181186, 0.932765, 0.431186, 0.378365, -0.019338, 1.027884, 0.269338, -0.046875, 0.458333, 0.203125, 0.791667, -0.087234, 0.404521, 0.243484, 0.845479, -0.138381, 0.528775, 0.294631, 0.721225, -0.109375, 0.375, 0.265625, 0.875, -0.151515, 0.318814, 0.307765, 0.931186, -0.246635, 0.480662, 0.402885, 0.769338, 0.265625, 0.458333, 0.515625, 0.791667, 0.225266, 0.404521, 0.555984, 0.845479, 0.174119, 0.528775, 0.607131, 0.721225, 0.203125, 0.375, 0.578125, 0.875, 0.160985, 0.318814, 0.620265, 0.931186, 0.065865, 0.480662, 0.715384, 0.769338, 0.578125, 0.458333, 0.828125, 0.791667, 0.537766, 0.404521, 0.868484, 0.845479, 0.486619, 0.528775, 0.919631, 0.721225, 0.515625, 0.375, 0.890625, 0.875, 0.473485, 0.318814, 0.932765, 0.931186, 0.378365, 0.480662, 1.027884, 0.769338]),
    'yb': ([1, 12, 4], [2.455015, 11.050282, 11.397872, 12.315588, 11.311001, 0.0, 41.97327, 11.233955, 28.272842, 0.0, 46.569649, 25.228958, 0.0, 0.0, 0.0, 0.0, 21.431358, 0.0, 33.746784, 39.0, 28.092472, 0.0, 49.0, 39.0, 0.0, 7.696198, 7.508569, 17.629616, 15.755184, 0.0, 26.396458, 26.103628, 27.857246, 0.0, 49.0, 16.230572, 0.0, 3.971924, 11.611797, 39.0, 0.0, 22.046097, 43.678398, 35.326942, 29.827158, 27.433897, 49.0, 39.0]),
    'yb_s': ([1, 12, 2], [0.506047, 0.469493, 0.264619, 0.158419, 0.335274, 0.31172, 0.0, 0.0, 0.388542, 0.336638, 0.350718, 0.526953, 0.36132, 0.14798, 0.247257, 0.59685, 0.46605, 0.28094, 0.315154, 0.239704, 0.16847, 0.306603, 0.132933, 0.534652]),
    'dc': ([1, 2, 3, 3], [0.314898, 0.791923, 1.076829, 0.856611, 0.83609, 0.762574, 1.109719, 0.795177, 1.151379, 0.734937, 1.584859, 0.491398, 0.87426, 0.890292, 1.575931, 1.680112, 1.503965, 1.619146]),
    'dc_gx': ([2], [-1.03319, 5.388816]),
    'dc_go': ([2], [-0.120269, 15.088007]),
    'dc_gw': ([2], [0.107116, 5.643719]),
    'dc_gb': ([2], [-1.163075, 3.183003]),
    'dc_gm': ([2], [-2.774156, 9.092519]),
    'mn': ([5, 6], [1.0, 0.810956, 0.399147, 0.463414, 0.581248, 1.157853, 2.0, 0.804471, 0.013261, 0.263633, 0.655916, 0.511446, 2.0, 0.629524, 0.664589, 0.28951, 1.168245, 0.446126, 1.0, 0.592438, 0.583327, 0.422294, 1.219983, 0.758742, 1.0, 0.466381, 0.134439, 0.188627, 0.665639, 0.474248]),
    'mn_n': ([1], [5]),
    'mn_i': ([5, 1], [5, 0, 4, 2, 1]),
    'mn_g': ([12, 6], [0.0, 0.958894, 0.583327, 0.422294, 1.219983, 0.758742, 1.0, 0.810956, 0.399147, 0.463414, 0.581248, 1.157853, 2.0, 0.804471, 0.013261, 0.263633, 0.655916, 0.511446, 2.0, 0.629524, 0.664589, 0.28951, 1.168245, 0.446126, 1.0, 0.592438, 0.583327, 0.422294, 1.219983, 0.758742, 1.0, 0.325872, 0.134439, 0.188627, 0.665639, 0.474248, 2.0, 0.298214, 0.429229, 0.205613, 0.832326, 0.831942, 2.0, 0.290648, 0.399147, 0.463414, 0.581248, 1.157853, 0.0, 0.226313, 0.134439, 0.188627, 0.665639, 0.474248, 0.0, 0.195855, 0.399147, 0.463414, 0.581248, 1.157853, 1.0, 0.156376, 0.429229, 0.205613, 0.832326, 0.831942, 2.0, 0.13417, 0.134439, 0.188627, 0.665639, 0.474248]),
    'fp_levels': ([4], [3, 1, 1, 1]),
    'fp_restore': ([6, 1], [0, 1, 4, 3, 2, 5]),
    'fp_nums': ([4, 2], [2, 1, 0, 1, 0, 1, 0, 1]),
    'gp': ([3, 4], [31.262045, 1.032678, 40.0, 25.691292, 0.0, 6.74963, 13.701613, 16.904472, 4.10473, 0.0, 34.232853, 19.423214]),
    'gp_p': ([3, 1], [0.991866, 0.863863, 0.731258]),
    'gp_n': ([1], [3]),
    'yl': ([1], [21.400612]),
    'yl_gx': ([2], [2.012842, 14.663114]),
    'yl_ns': ([1], [21.34403]),
    'yl_ns_gx': ([2], [2.012535, 14.713114]),
}


def ref(key: str) -> np.ndarray:
    shape, values = PADDLE[key]
    return np.array(values).reshape(shape)


def T(a, grad: bool = False) -> pycoll.Tensor:
    t = pycoll.to_tensor(a)
    t.stop_gradient = not grad
    return t


def close(got, key: str, tol: float = 2e-5) -> None:
    want = ref(key)
    got = np.asarray(got.numpy() if hasattr(got, "numpy") else got)
    assert list(got.shape) == list(want.shape), key
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, np.abs(want).max()), err_msg=key)


def backward_cos(out: pycoll.Tensor) -> None:
    """backward of sum(out * cos(arange(out.size))), the upstream gradient the PADDLE grads used."""
    weights = np.cos(np.arange(out.size)).reshape(out.shape).astype(out.numpy().dtype)
    (out * T(weights)).sum().backward()


def proj(g: pycoll.Tensor) -> np.ndarray:
    g = g.numpy().astype(np.float64).ravel()
    return np.array([(g * np.sin(np.arange(g.size) * 0.7 + 0.3)).sum(), np.abs(g).sum()])


def finite_difference(f, a: np.ndarray, grad: np.ndarray, picks: int = 12, eps: float = 1e-6):
    """(entry, central difference of the scalar f(array)) at entries of a (float64): mostly where
    ``grad`` is non-zero, a few anywhere."""
    rng = np.random.default_rng(0)
    live = np.flatnonzero(grad)
    flats = np.concatenate([rng.choice(live, min(picks, live.size), replace=False), rng.choice(a.size, 4)])
    out = []
    for flat in flats:
        up, down = a.copy(), a.copy()
        up.flat[flat] += eps
        down.flat[flat] -= eps
        out.append((flat, (f(up) - f(down)) / (2 * eps)))
    return out


def test_names_are_paddles():
    assert set(V.__all__) == {"yolo_loss", "yolo_box", "prior_box", "box_coder", "deform_conv2d", "DeformConv2D",
                              "distribute_fpn_proposals", "generate_proposals", "read_file", "decode_jpeg",
                              "roi_pool", "RoIPool", "psroi_pool", "PSRoIPool", "roi_align", "RoIAlign", "nms",
                              "matrix_nms"}
    assert pycoll.vision.ops is V


def test_nms():
    b, s, c = T(D["nms_b"]), T(D["nms_s"]), T(D["nms_c"])
    assert V.nms(b, 0.1).numpy().tolist() == ref("nms_plain").tolist()
    assert V.nms(b, 0.1, s).numpy().tolist() == ref("nms_scored").tolist()
    assert V.nms(b, 0.1, s, c, [0, 1], top_k=4).numpy().tolist() == ref("nms_cat").tolist()
    assert V.nms(b, 0.1).dtype == np.int64
    with pytest.raises(ValueError, match="categories"):
        V.nms(b, 0.1, s, c)


# boxes at least a pixel wide: for narrower aligned boxes paddle's roi_align backward is not its
# forward's (test_roi_gradients_are_the_forwards covers those against finite differences)
_ROI = {"ra": (V.roi_align, dict(output_size=2, spatial_scale=1.0)),
        "ra_na": (V.roi_align, dict(output_size=(2, 1), spatial_scale=0.7, sampling_ratio=2, aligned=False)),
        "rp": (V.roi_pool, dict(output_size=2, spatial_scale=0.5)),
        "ps": (V.psroi_pool, dict(output_size=2, spatial_scale=0.5))}


@pytest.mark.parametrize("key", list(_ROI))
def test_roi_ops_values_and_gradients(key):
    fn, kw = _ROI[key]
    x = T(D["roi_x"], grad=True)
    out = fn(x, T(D["roi_b"]), T(np.array([1, 2], np.int32)), **kw)
    close(out, key)
    backward_cos(out)
    np.testing.assert_allclose(proj(x.grad), ref(key + "_gx"), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("fn, kw", [(V.roi_align, dict(output_size=2, spatial_scale=0.5)),
                                    (V.roi_align, dict(output_size=(1, 2), sampling_ratio=3, aligned=False)),
                                    (V.roi_pool, dict(output_size=2, spatial_scale=0.5)),
                                    (V.psroi_pool, dict(output_size=2, spatial_scale=0.5))])
def test_roi_gradients_are_the_forwards(fn, kw):
    # at spatial_scale 0.5 some aligned boxes are under a pixel wide, where paddle's roi_align
    # backward is not its forward's gradient; pycoll's is
    boxes = np.concatenate([D["roi_b"], [[3.0, 2.0, 4.2, 7.0]]]).astype(np.float64)
    counts = T(np.array([2, 2], np.int32))
    x = T(D["roi_x"].astype(np.float64), grad=True)
    out = fn(x, T(boxes), counts, **kw)
    weights = np.cos(np.arange(out.size)).reshape(out.shape)
    (out * T(weights)).sum().backward()

    def loss(a):
        return float((fn(T(a), T(boxes), counts, **kw).numpy() * weights).sum())
    for flat, numeric in finite_difference(loss, D["roi_x"].astype(np.float64), x.grad.numpy()):
        assert abs(x.grad.numpy().flat[flat] - numeric) < 1e-6


@pytest.mark.parametrize("kw", [dict(sampling_ratio=-1), dict(sampling_ratio=2, aligned=False)])
def test_roi_align_kernel_and_the_matrix_products_of_cupys_path_agree(kw):
    # the host kernel serves NumPy arrays; CuPy's take A_y @ x @ A_x^T with the same sample tables
    from pycoll.vision.ops import roi as roi_module
    rng = np.random.default_rng(3)
    x = rng.random((2, 3, 9, 11))
    boxes = np.concatenate([rng.random((5, 2)) * 6, rng.random((5, 2)) * 6 + 6], axis=1)
    image = np.array([0, 0, 1, 1, 1])
    got = V.roi_align(T(x), T(boxes), T(np.array([2, 3], np.int32)), (3, 2), 0.8, **kw).numpy()
    scale, shift = float(np.float32(0.8)), 0.0 if kw.get("aligned") is False else 0.5  # (a float32 attribute)
    lo, hi = boxes[:, :2] * scale - shift, boxes[:, 2:] * scale - shift
    size = hi - lo if shift else np.maximum(hi - lo, 1.0)
    bins = size / np.array([2, 3])
    grid = np.full(size.shape, 2) if kw["sampling_ratio"] > 0 else np.ceil(bins).astype(np.int64)
    iy, wy = roi_module._bilinear_samples(np, lo[:, 1], bins[:, 1], grid[:, 1], 3, 9)
    ix, wx = roi_module._bilinear_samples(np, lo[:, 0], bins[:, 0], grid[:, 0], 2, 11)
    want = roi_module._per_image(T(x), image, roi_module._dense(np, iy, wy, 9), roi_module._dense(np, ix, wx, 11))
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-12, atol=1e-12)


def test_roi_pool_rounds_halves_away_from_zero():
    # box (1, 1, 5, 5) at scale 0.5: corners 0.5 and 2.5 round (std::round, as paddle) to 1 and 3,
    # so the bin is rows and columns 1..3 of arange(36) (max 21); rounding halves to even gives 14
    x = T(np.arange(36, dtype=np.float32).reshape(1, 1, 6, 6))
    out = V.roi_pool(x, T(np.array([[1.0, 1.0, 5.0, 5.0]], np.float32)), T(np.array([1], np.int32)), 1, 0.5)
    assert out.numpy().ravel().tolist() == [21.0]


def test_roi_bins_are_computed_in_float32_as_paddle_does():
    # a box 4 pixels wide in 3 bins: the last bin's end, ceil(3 * float32(4 / 3)), is 4 in float32
    # (5 in float64, which took column 4, outside the box). Values printed by paddle 3.3.1 CPU
    x = T(np.arange(8, dtype=np.float32).reshape(1, 1, 1, 8))
    box, count = T(np.array([[0.0, 0.0, 3.0, 0.0]], np.float32)), T(np.array([1], np.int32))
    assert V.roi_pool(x, box, count, (1, 3)).numpy().ravel().tolist() == [1.0, 2.0, 3.0]
    x9 = T(np.arange(144, dtype=np.float32).reshape(1, 18, 1, 8) % 8)
    assert V.psroi_pool(x9, box, count, 3).numpy().ravel().tolist() == [0.5, 1.5, 2.5] * 6


def test_roi_ops_take_no_boxes():
    x, none, counts = T(D["roi_x"]), T(np.zeros((0, 4), np.float32)), T(np.array([0, 0], np.int32))
    for fn in (V.roi_align, V.roi_pool, V.psroi_pool):
        assert fn(x, none, counts, 2).shape == [0, 8 if fn is not V.psroi_pool else 2, 2, 2]


def test_roi_layers_are_the_functions():
    x, b, n = T(D["roi_x"]), T(D["roi_b"]), T(np.array([1, 2], np.int32))
    np.testing.assert_array_equal(V.RoIAlign(2, 0.5)(x, b, n).numpy(), V.roi_align(x, b, n, 2, 0.5).numpy())
    np.testing.assert_array_equal(V.RoIAlign(2, 0.5)(x, b, n, aligned=False).numpy(),
                                  V.roi_align(x, b, n, 2, 0.5, aligned=False).numpy())
    np.testing.assert_array_equal(V.RoIPool(2, 0.5)(x, b, n).numpy(), V.roi_pool(x, b, n, 2, 0.5).numpy())
    np.testing.assert_array_equal(V.PSRoIPool(2, 0.5)(x, b, n).numpy(), V.psroi_pool(x, b, n, 2, 0.5).numpy())
    with pytest.raises(ValueError, match="boxes_num"):
        V.roi_align(x, b, T(np.array([1, 1], np.int32)), 2)
    with pytest.raises(ValueError, match="output_size"):
        V.roi_pool(x, b, n, 0)


def test_box_coder():
    p, v, t, d = T(D["bc_p"]), T(D["bc_v"]), T(D["bc_t"]), T(D["bc_d"])
    close(V.box_coder(p, v, t), "bc_enc")
    close(V.box_coder(p, [0.1, 0.1, 0.2, 0.2], t, box_normalized=False), "bc_enc_px")
    close(V.box_coder(p, v, d, "decode_center_size"), "bc_dec")
    close(V.box_coder(t, [0.1, 0.2, 0.3, 0.4], d, "decode_center_size", box_normalized=False, axis=1), "bc_dec_ax1")
    with pytest.raises(ValueError, match="code_type"):
        V.box_coder(p, v, t, "encode")
    with pytest.raises(ValueError, match="prior_box_var"):
        V.box_coder(p, [0.1, 0.2], t)


def test_box_coder_outputs_take_no_gradient_as_paddles():
    # paddle 3.3.1: the decoded boxes are stop_gradient, so (dec * dec).sum() + (w * w).sum()
    # gives w the gradient 2 w only
    w = pycoll.to_tensor(np.ones((3, 2, 4), np.float32), stop_gradient=False)
    prior = T(np.array([[1, 1, 5, 6], [2, 3, 9, 9]], np.float32))
    decoded = V.box_coder(prior, [0.1, 0.1, 0.2, 0.2], w * 0.1, "decode_center_size")
    assert decoded.stop_gradient
    ((decoded * decoded).sum() + (w * w).sum()).backward()
    assert (w.grad.numpy() == 2.0).all()


def test_prior_box():
    feat, img = pycoll.zeros([1, 1, 2, 3]), pycoll.zeros([1, 1, 12, 16])
    box, var = V.prior_box(feat, img, [4.0], [8.0], [2.0], flip=True, clip=True)
    close(box, "pb")
    np.testing.assert_allclose(var.numpy(), np.broadcast_to([0.1, 0.1, 0.2, 0.2], box.shape), rtol=1e-6)
    box, var = V.prior_box(feat, img, [])  # paddle 3.3.1: no priors per cell, [2, 3, 0, 4] each
    assert box.shape == var.shape == [2, 3, 0, 4]
    with pytest.raises(ValueError, match=r"max_sizes\[0\] must be greater than min_sizes\[0\], got 2.0 and 4.0"):
        V.prior_box(feat, img, [4.0], [2.0])  # paddle refuses it too
    box, _ = V.prior_box(feat, img, [4.0, 6.0], [7.0, 9.0], [3.0], [0.1, 0.2, 0.3, 0.4], steps=[5.0, 6.0],
                         offset=0.25, min_max_aspect_ratios_order=True)
    close(box, "pb2")
    with pytest.raises(ValueError, match="steps"):
        V.prior_box(feat, img, [4.0], steps=[1.0])


def test_yolo_box():
    boxes, scores = V.yolo_box(T(D["yb_x"]), T(np.array([[40, 50]], np.int32)), [6, 8, 12, 10], 2, 0.4, 8,
                               scale_x_y=1.1)
    close(boxes, "yb")
    close(scores, "yb_s")
    with pytest.raises(ValueError, match="channels"):
        V.yolo_box(T(D["yb_x"]), T(np.array([[40, 50]], np.int32)), [6, 8, 12, 10], 3, 0.4, 8)


def _deform(x, o, w, b, m):
    return V.deform_conv2d(x, o, w, b, stride=2, padding=1, deformable_groups=2, groups=2, mask=m)


def test_deform_conv2d_values_and_gradients():
    ts = [T(D[k], grad=True) for k in ("dc_x", "dc_o", "dc_w", "dc_b", "dc_m")]
    out = _deform(*ts)
    close(out, "dc")
    backward_cos(out)
    for t, key in zip(ts, ("dc_gx", "dc_go", "dc_gw", "dc_gb", "dc_gm")):
        np.testing.assert_allclose(proj(t.grad), ref(key), rtol=1e-4, atol=1e-4, err_msg=key)


def test_deform_conv2d_offset_gradient_is_the_forwards():
    arrays = {k: D[k].astype(np.float64) for k in ("dc_x", "dc_o", "dc_w", "dc_b", "dc_m")}
    off = T(arrays["dc_o"], grad=True)
    weights = np.cos(np.arange(18)).reshape(1, 2, 3, 3)
    (_deform(T(arrays["dc_x"]), off, T(arrays["dc_w"]), T(arrays["dc_b"]), T(arrays["dc_m"])) * T(weights)).sum().backward()

    def loss(o):
        return float((_deform(T(arrays["dc_x"]), T(o), T(arrays["dc_w"]), T(arrays["dc_b"]),
                              T(arrays["dc_m"])).numpy() * weights).sum())
    for flat, numeric in finite_difference(loss, arrays["dc_o"], off.grad.numpy()):
        assert abs(off.grad.numpy().flat[flat] - numeric) < 1e-6


def test_deform_conv2d_offset_gradient_at_whole_pixels_is_paddles():
    # every sample on a whole pixel (zero-initialised offset convs start there): paddle's gradient
    # is the difference towards the next pixel, and nothing at -1 or the size (outside); paddle
    # 3.3.1 on this case (probe p168): dy at tap 0 of output (0, 2) is 5, dx at (1, 1) is 0
    image = np.arange(25, dtype=np.float32).reshape(5, 5)
    offsets = np.zeros((1, 18, 5, 5), np.float32)
    offsets[:, 0::2], offsets[:, 1::2] = 1.0, -1.0  # dy = 1, dx = -1 at every tap
    x, off = T(image.reshape(1, 1, 5, 5)), T(offsets, grad=True)
    V.deform_conv2d(x, off, T(np.ones((1, 1, 3, 3), np.float32)), padding=1).sum().backward()
    padded = np.pad(image, 1)  # 0 outside, as the sampling reads it
    want = np.zeros((9, 2, 5, 5), np.float32)
    for tap in range(9):
        for i in range(5):
            for j in range(5):
                y, x_ = i - 1 + tap // 3 + 1, j - 1 + tap % 3 - 1
                if -1 < y < 5 and -1 < x_ < 5:
                    at = padded[y + 1, x_ + 1]
                    want[tap, :, i, j] = padded[y + 2, x_ + 1] - at, padded[y + 1, x_ + 2] - at
    np.testing.assert_array_equal(off.grad.numpy().reshape(9, 2, 5, 5), want)
    assert want[0, 0, 0, 2] == 5 and want[0, 1, 1, 1] == 0


def test_deform_conv2d_layer():
    pycoll.seed(3)
    layer = V.DeformConv2D(4, 2, 2, stride=2, padding=1, deformable_groups=2, groups=2)
    assert layer.weight.shape == [2, 2, 2, 2] and layer.bias.shape == [2]
    x, o, m = T(D["dc_x"]), T(D["dc_o"]), T(D["dc_m"])
    np.testing.assert_allclose(layer(x, o, m).numpy(), _deform(x, o, layer.weight, layer.bias, m).numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="offset"):
        V.deform_conv2d(x, o[:, :8], layer.weight, stride=2, padding=1, deformable_groups=2, groups=2)
    with pytest.raises(ValueError, match="groups"):
        V.DeformConv2D(3, 2, 2, groups=2)


def test_nms_keeps_boxes_whose_iou_is_nan():
    # a probe: two touching boxes of no area have IoU 0 / 0; paddle 3.3.1 keeps both ([0 1]),
    # with and without scores, and two identical zero-width boxes too
    touching = T(np.array([[0, 0, 0, 0], [0, 0, 0, 0]], np.float32))
    assert V.nms(touching, 0.3).numpy().tolist() == [0, 1]
    assert V.nms(touching, 0.3, scores=T(np.array([0.9, 0.8], np.float32))).numpy().tolist() == [0, 1]
    thin = T(np.array([[1, 1, 1, 5], [1, 1, 1, 5]], np.float32))
    assert V.nms(thin, 0.5).numpy().tolist() == [0, 1]


def test_nms_ranks_a_nan_score_first_as_paddles_argsort():
    # paddle 3.3.1 (measured): [1 3] — the NaN-scored box 1 leads and strikes out box 0
    b = T(np.array([[0, 0, 10, 10], [1, 1, 10, 10], [20, 20, 30, 30], [20, 20, 30, 30]], np.float32))
    s = T(np.array([0.9, np.nan, 0.5, 0.8], np.float32))
    assert V.nms(b, 0.5, scores=s).numpy().tolist() == [1, 3]


def test_matrix_nms():
    b, s = T(D["mn_b"]), T(D["mn_s"])
    out, num, index = V.matrix_nms(b, s, 0.1, 0.2, 4, 5, return_index=True)
    close(out, "mn")
    assert num.numpy().tolist() == ref("mn_n").tolist() and index.numpy().tolist() == ref("mn_i").tolist()
    assert num.dtype == np.int32 and index.dtype == np.int32
    out, num, index = V.matrix_nms(b, s, 0.1, 0.1, -1, -1, use_gaussian=True, background_label=-1, normalized=False)
    close(out, "mn_g")
    assert index is None and num.numpy().tolist() == [12]


def test_distribute_fpn_proposals():
    rois = T(D["fp_r"])
    multi, restore, nums = V.distribute_fpn_proposals(rois, 2, 5, 4, 224, rois_num=T(np.array([2, 4], np.int32)))
    assert [m.shape[0] for m in multi] == ref("fp_levels").tolist()
    assert restore.numpy().tolist() == ref("fp_restore").tolist()
    assert np.stack([n.numpy() for n in nums]).tolist() == ref("fp_nums").tolist()
    joined = np.concatenate([m.numpy() for m in multi])
    np.testing.assert_array_equal(joined[restore.numpy()[:, 0]], D["fp_r"])
    with pytest.raises(ValueError, match="max_level"):
        V.distribute_fpn_proposals(rois, 2, 2, 4, 224)


def test_generate_proposals():
    rois, probs, num = V.generate_proposals(T(D["gp_s"]), T(D["gp_d"]), T(np.array([[30, 40]], np.float32)),
                                            T(D["gp_a"]), T(D["gp_v"]), pre_nms_top_n=5, post_nms_top_n=3,
                                            nms_thresh=0.5, min_size=1.0, return_rois_num=True)
    close(rois, "gp")
    close(probs, "gp_p")
    assert num.numpy().tolist() == ref("gp_n").tolist()


@pytest.mark.parametrize("key, kw", [("yl", {}), ("yl_ns", dict(use_label_smooth=False, scale_x_y=1.2))])
def test_yolo_loss(key, kw):
    x = T(D["yl_x"], grad=True)
    loss = V.yolo_loss(x, T(D["yl_b"]), T(D["yl_l"]), [4, 6, 10, 12, 20, 16], [1, 2], 2, 0.3, 8, **kw)
    close(loss, key)
    backward_cos(loss)
    np.testing.assert_allclose(proj(x.grad), ref(key + "_gx"), rtol=1e-4, atol=1e-4)


def test_yolo_loss_gradient_adds_boxes_sharing_a_cell():
    # two boxes in one cell with one anchor: paddle's backward keeps one box's terms, the loss has both
    boxes = np.array([[[0.5, 0.5, 0.4, 0.5], [0.55, 0.45, 0.45, 0.45]]])  # cell (1, 1), both anchor 1
    labels = np.array([[0, 1]], np.int32)
    x = T(D["yl_x"].astype(np.float64), grad=True)

    def loss(a, t=None):
        return V.yolo_loss(t if t is not None else T(a), T(boxes), T(labels), [4, 6, 10, 12, 20, 16], [1, 2], 2,
                           0.3, 8).sum()
    loss(None, x).backward()
    for flat, numeric in finite_difference(lambda a: float(loss(a).numpy()), D["yl_x"].astype(np.float64),
                                           x.grad.numpy(), picks=40):
        assert abs(x.grad.numpy().flat[flat] - numeric) < 1e-5


def test_yolo_loss_refuses_a_label_outside_the_classes_of_a_box():
    boxes = np.array([[[0.5, 0.5, 0.4, 0.5], [0.0, 0.0, 0.0, 0.0]]])  # the second slot empty: its label is free
    for label, bad in ((7, 7), (-1, -1)):
        with pytest.raises(ValueError, match=rf"gt_label must lie in \[0, class_num\) = \[0, 2\).*"
                                             rf"gt_label\[0, 0\] is {bad}"):
            V.yolo_loss(T(D["yl_x"]), T(boxes), T(np.array([[label, 9]], np.int32)), [4, 6, 10, 12, 20, 16],
                        [1, 2], 2, 0.3, 8)
    loss = V.yolo_loss(T(D["yl_x"]), T(boxes), T(np.array([[1, 9]], np.int32)), [4, 6, 10, 12, 20, 16], [1, 2],
                       2, 0.3, 8)
    assert loss.shape == [D["yl_x"].shape[0]]


def test_read_file_and_decode_jpeg(tmp_path):
    image = pytest.importorskip("PIL.Image")
    pixels = (np.random.default_rng(1).random((6, 8, 3)) * 255).astype(np.uint8)
    path = tmp_path / "x.jpg"
    image.fromarray(pixels).save(path, quality=90)
    raw = V.read_file(str(path))
    assert raw.dtype == np.uint8 and raw.numpy().tobytes() == path.read_bytes()
    decoded = V.decode_jpeg(raw)
    np.testing.assert_array_equal(decoded.numpy(), np.asarray(image.open(path)).transpose(2, 0, 1))
    assert V.decode_jpeg(raw, "gray").shape == [1, 6, 8]
    with pytest.raises(ValueError, match="mode"):
        V.decode_jpeg(raw, "bgr")


def _every_op(place):
    """Each op's outputs and x-gradients on tensors at ``place`` (as NumPy arrays)."""
    def t(a, grad=False):
        out = pycoll.to_tensor(a, place=place)
        out.stop_gradient = not grad
        return out
    got = {}
    counts = t(np.array([1, 2], np.int32))
    for key, (fn, kw) in _ROI.items():
        x = t(D["roi_x"], grad=True)
        out = fn(x, t(D["roi_b"]), counts, **kw)
        out.sum().backward()
        got[key], got[key + "_gx"] = out.numpy(), x.grad.numpy()
    ts = [t(D[k], grad=True) for k in ("dc_x", "dc_o", "dc_w", "dc_b", "dc_m")]
    out = _deform(*ts)
    out.sum().backward()
    got["dc"], got["dc_go"] = out.numpy(), ts[1].grad.numpy()
    x = t(D["yl_x"], grad=True)
    loss = V.yolo_loss(x, t(D["yl_b"]), t(D["yl_l"]), [4, 6, 10, 12, 20, 16], [1, 2], 2, 0.3, 8)
    loss.sum().backward()
    got["yl"], got["yl_gx"] = loss.numpy(), x.grad.numpy()
    got["nms"] = V.nms(t(D["nms_b"]), 0.1, t(D["nms_s"]), t(D["nms_c"]), [0, 1]).numpy()
    got["mn"] = V.matrix_nms(t(D["mn_b"]), t(D["mn_s"]), 0.1, 0.2, 4, 5)[0].numpy()
    got["bc"] = V.box_coder(t(D["bc_p"]), t(D["bc_v"]), t(D["bc_d"]), "decode_center_size").numpy()
    got["pb"] = V.prior_box(t(np.zeros((1, 1, 2, 3), np.float32)), t(np.zeros((1, 1, 12, 16), np.float32)), [4.0],
                            [8.0], [2.0], flip=True)[0].numpy()
    got["yb"] = np.concatenate([a.numpy().ravel() for a in V.yolo_box(
        t(D["yb_x"]), t(np.array([[40, 50]], np.int32)), [6, 8, 12, 10], 2, 0.4, 8)])
    multi, restore, _ = V.distribute_fpn_proposals(t(D["fp_r"]), 2, 5, 4, 224)
    got["fp"] = np.concatenate([m.numpy().ravel() for m in multi] + [restore.numpy().ravel().astype(np.float32)])
    got["gp"] = V.generate_proposals(t(D["gp_s"]), t(D["gp_d"]), t(np.array([[30, 40]], np.float32)), t(D["gp_a"]),
                                     t(D["gp_v"]), pre_nms_top_n=5, post_nms_top_n=3, return_rois_num=True)[0].numpy()
    return got


@pytest.mark.gpu
def test_ops_on_the_gpu_equal_the_cpus():
    cpu, gpu = _every_op("cpu"), _every_op("gpu:0")
    for key in cpu:
        np.testing.assert_allclose(gpu[key], cpu[key], rtol=1e-5, atol=1e-5, err_msg=key)


def test_roi_pool_passes_over_nan_as_paddles_kernel():
    # paddle 3.3.1: a bin's maximum ignores NaN (its gradient goes to the largest number); a bin of
    # NaN only gives float32's lowest value, with no gradient; an empty bin 0
    x = pycoll.to_tensor(np.array([[[[1.0, 2.0], [np.nan, 4.0]]]], np.float32), stop_gradient=False)
    box, count = T(np.array([[0.0, 0.0, 1.0, 1.0]], np.float32)), pycoll.to_tensor(np.array([1], np.int32))
    out = V.roi_pool(x, box, count, 1)
    out.sum().backward()
    assert out.numpy().ravel().tolist() == [4.0] and x.grad.numpy().ravel().tolist() == [0, 0, 0, 1]
    nan = pycoll.to_tensor(np.full((1, 1, 2, 2), np.nan, np.float32), stop_gradient=False)
    out = V.roi_pool(nan, box, count, 1)
    out.sum().backward()
    assert out.numpy().ravel().tolist() == [float(np.finfo(np.float32).min)]
    assert (nan.grad.numpy() == 0).all()


def test_nms_puts_a_nan_score_before_an_infinite_one_as_paddles_argsort():
    boxes = T(np.array([[0, 0, 10, 10], [20, 20, 30, 30], [40, 40, 50, 50]], np.float32))
    scores = T(np.array([0.5, np.inf, np.nan], np.float32))
    assert V.nms(boxes, 0.5, scores=scores).numpy().tolist() == [2, 1, 0]  # paddle 3.3.1's order
