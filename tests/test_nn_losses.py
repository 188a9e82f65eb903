"""Losses and activations against values computed by Paddle 3.3.1 (CPU, float64).

The reference tables at the bottom were produced by running paddle.nn.functional on exactly the
inputs built here (same cases, same formulas): for each case the output, and the gradient of
sum(out * out_weights(out.shape)) with respect to the input (and label / weight where paddle gives
one). Regenerating them needs a paddle install; the inputs are closed-form so nothing drifts.
"""
import re

import numpy as np
import pytest

import pycoll
import pycoll.nn.functional as F


X = np.round(np.sin(np.arange(12) * 1.7) * 2, 3).reshape(4, 3)
X3 = np.round(np.cos(np.arange(12) * 0.8) * 1.5, 3).reshape(2, 3, 2)
_s = np.abs(np.cos(np.arange(12) * 0.9)).reshape(4, 3) + 0.1
SOFT = _s / _s.sum(1, keepdims=True)
SOFT_RAW = np.round(_s, 3)
_e = np.exp(X - X.max(1, keepdims=True))
PROB = _e / _e.sum(1, keepdims=True)
W = np.array([0.5, 2.0, 1.5])
HARD = np.array([0, 2, -100, 1])
HARD2 = np.array([0, 2, 1, 1])

# name: (input, label, kwargs with "weight" as an array)
CE_CASES = {
    "mean_negative_ignore": (X, HARD, {}),
    "none": (X, HARD, {"reduction": "none"}),
    "sum": (X, HARD, {"reduction": "sum"}),
    "ignore_positive": (X, HARD2, {"ignore_index": 1}),
    "ignore_positive_none": (X, HARD2, {"ignore_index": 1, "reduction": "none"}),
    "weight_mean": (X, HARD, {"weight": W}),
    "weight_none": (X, HARD, {"weight": W, "reduction": "none"}),
    "weight_ignore_positive": (X, HARD2, {"weight": W, "ignore_index": 1}),
    "label_column": (X, HARD[:, None], {}),
    "label_column_none": (X, HARD[:, None], {"reduction": "none"}),
    "soft": (X, SOFT, {"soft_label": True}),
    "soft_none": (X, SOFT, {"soft_label": True, "reduction": "none"}),
    "soft_weight": (X, SOFT, {"soft_label": True, "weight": W}),
    "soft_unnormalized": (X, SOFT_RAW, {"soft_label": True}),
    "soft_ignore_zero": (X, SOFT, {"soft_label": True, "ignore_index": 0}),
    "soft_ignore_zero_weight": (X, SOFT, {"soft_label": True, "ignore_index": 0, "weight": W}),
    "smoothing": (X, HARD2, {"label_smoothing": 0.2}),
    "smoothing_weight_none": (X, HARD2, {"label_smoothing": 0.2, "weight": W, "reduction": "none"}),
    "no_softmax": (PROB, HARD, {"use_softmax": False}),
    "no_softmax_soft": (PROB, SOFT, {"use_softmax": False, "soft_label": True}),
    "axis1_none": (X3, np.array([[0, 2], [1, 1]]), {"axis": 1, "reduction": "none"}),
    "axis1_mean_weight": (X3, np.array([[0, 2], [1, 1]]), {"axis": 1, "weight": W}),
    "axis1_keepdim_none": (X3, np.array([[[0, 2]], [[1, -100]]]), {"axis": 1, "reduction": "none"}),
}

LOGP = np.log(PROB)
NLL_CASES = {
    "mean": (LOGP, HARD2, {}),
    "ignore": (LOGP, HARD, {}),
    "weight_ignore_none": (LOGP, HARD2, {"weight": W, "ignore_index": 1, "reduction": "none"}),
    "weight_sum": (LOGP, HARD2, {"weight": W, "reduction": "sum"}),
    "spatial": (np.log(np.abs(X3) + 0.1), np.array([[0, 2], [1, 1]]), {"reduction": "none"}),
    "spatial_mean_weight": (np.log(np.abs(X3) + 0.1), np.array([[0, 2], [1, 1]]), {"weight": W}),
}

P01 = np.array([[0.2, 0.9, 0.5], [0.01, 0.6, 0.999], [0.3, 0.7, 0.45], [0.05, 0.5, 0.8]])
Y01 = np.array([[0., 1., 1.], [1., 0., 1.], [0.5, 0.2, 0.], [1., 1., 0.]])
YL = np.array([[0., 1., 1.], [1., -100., 1.], [0.5, 0.2, 0.], [1., 1., 0.]])
KL_T = np.array([[0.3, 0.0, 0.2], [-0.1, 0.5, 0.4], [0.25, 0.25, 0.5], [0.7, 0.1, 0.2]])
ELEMENTWISE_CASES = {  # name: (function name, input, label, kwargs with arrays for weight/pos_weight)
    "l1_mean": ("l1_loss", X, np.round(X * 0.5 + 0.3, 3), {}),
    "l1_none": ("l1_loss", X, np.where(np.arange(12).reshape(4, 3) % 4 == 0, X, 0.2), {"reduction": "none"}),
    "smooth_l1_mean": ("smooth_l1_loss", X, X * 0.2, {}),
    "smooth_l1_delta": ("smooth_l1_loss", X, X * 0.2, {"delta": 0.5, "reduction": "none"}),
    "smooth_l1_not_huber": ("smooth_l1_loss", X, X * 0.2, {"delta": 0.5, "is_huber": False, "reduction": "sum"}),
    "bce_mean": ("binary_cross_entropy", P01, Y01, {}),
    "bce_weight_none": ("binary_cross_entropy", P01, Y01, {"weight": W, "reduction": "none"}),
    # X + 0.05: paddle's gradient at a logit of exactly 0 is off by -1 without pos_weight (see
    # test_bce_with_logits_gradient_at_zero)
    "bce_logits_mean": ("binary_cross_entropy_with_logits", X + 0.05, Y01, {}),
    "bce_logits_pos_weight": ("binary_cross_entropy_with_logits", X, YL,
                              {"pos_weight": np.array([2.0, 0.5, 3.0]), "weight": W, "reduction": "none"}),
    "bce_logits_sum": ("binary_cross_entropy_with_logits", X * 10 + 0.05, Y01, {"reduction": "sum"}),
    "kl_mean": ("kl_div", LOGP, KL_T, {}),
    "kl_none": ("kl_div", LOGP, KL_T, {"reduction": "none"}),
    "kl_batchmean": ("kl_div", LOGP, KL_T, {"reduction": "batchmean"}),
    "kl_log_target_sum": ("kl_div", LOGP, np.log(np.abs(KL_T) + 0.05), {"reduction": "sum", "log_target": True}),
}

V = np.array([-30., -3.0, -2.0, -0.5, 0.0, 0.5, 2.5, 3.0, 25.0])
ACTIVATION_CASES = {  # name: (function name, input, kwargs)
    "leaky_relu": ("leaky_relu", V, {"negative_slope": 0.1}),
    "silu": ("silu", V, {}),
    "elu": ("elu", V, {"alpha": 0.5}),
    "softplus": ("softplus", V, {}),
    "softplus_beta": ("softplus", V, {"beta": 2.0, "threshold": 5.0}),
    "hardswish": ("hardswish", V, {}),
    "normalize": ("normalize", np.array([[3.0, -4.0, 0.0], [0.0, 0.0, 0.0], [1.0, 2.0, -2.0]]), {}),
    "normalize_p1_axis0": ("normalize", np.array([[3.0, -4.0, 0.0], [0.0, 1.0, 0.0], [1.0, 2.0, -2.0]]), {"p": 1, "axis": 0}),
    "normalize_p3": ("normalize", X, {"p": 3, "axis": -1}),
    "normalize_inf": ("normalize", X, {"p": float("inf")}),
}


def out_weights(shape):
    """What the test multiplies each output by before summing and differentiating."""
    n = int(np.prod(shape))
    return (1.0 + 0.1 * np.arange(n)).reshape(shape)


def _run(fn, x, label, kw, label_grad=False, weight_grad=False):
    kw = dict(kw)
    xt = pycoll.to_tensor(x, stop_gradient=False)
    lt = None if label is None else pycoll.to_tensor(np.asarray(label), stop_gradient=not label_grad)
    for k in ("weight", "pos_weight"):
        if k in kw:
            kw[k] = pycoll.to_tensor(kw[k], stop_gradient=not (weight_grad and k == "weight"))
    out = fn(xt, **kw) if lt is None else fn(xt, lt, **kw)
    (out * pycoll.to_tensor(out_weights(out.shape))).sum().backward()
    return out, xt, lt, kw.get("weight")


# paddle's p-norm raises to 1/p as a float32 (1/3 -> 0.333333343): normalize with p=3 agrees to
# ~4e-8 absolute; everything else to 1e-9 relative
_FLOAT32_ATTRIBUTE = {"normalize_p3"}


def _check(ref, out, xt, lt=None, wt=None, atol=1e-12):
    assert out.shape == ref["shape"]
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.numpy().ravel(), ref["out"], rtol=1e-9, atol=atol)
    np.testing.assert_allclose(xt.grad.numpy().ravel(), ref["grad"], rtol=1e-9, atol=atol)
    if "label_grad" in ref:
        np.testing.assert_allclose(lt.grad.numpy().ravel(), ref["label_grad"], rtol=1e-9, atol=atol)
    if "weight_grad" in ref:
        np.testing.assert_allclose(wt.grad.numpy().ravel(), ref["weight_grad"], rtol=1e-9, atol=atol)


def _atol(case):
    return 1e-7 if case in _FLOAT32_ATTRIBUTE else 1e-12


@pytest.mark.parametrize("case", sorted(CE_CASES))
def test_cross_entropy_matches_paddle(case):
    x, label, kw = CE_CASES[case]
    _check(CE_PADDLE[case], *_run(F.cross_entropy, x, label, kw)[:3], atol=_atol(case))


@pytest.mark.parametrize("case", sorted(NLL_CASES))
def test_nll_loss_matches_paddle(case):
    x, label, kw = NLL_CASES[case]
    _check(NLL_PADDLE[case], *_run(F.nll_loss, x, label, kw)[:3])


@pytest.mark.parametrize("case", sorted(ELEMENTWISE_CASES))
def test_elementwise_losses_match_paddle(case):
    fn, x, label, kw = ELEMENTWISE_CASES[case]
    _check(ELEMENTWISE_PADDLE[case], *_run(getattr(F, fn), x, label, kw,
                                           label_grad=fn in ("l1_loss", "smooth_l1_loss"),
                                           weight_grad="weight" in kw))


@pytest.mark.parametrize("case", sorted(ACTIVATION_CASES))
def test_activations_match_paddle(case):
    fn, x, kw = ACTIVATION_CASES[case]
    _check(ACTIVATION_PADDLE[case], *_run(getattr(F, fn), x, None, kw)[:2], atol=_atol(case))


CE_PADDLE = {
    "mean_negative_ignore": {"shape": [], "out": [1.4226596119], "grad": [-0.221797299092, 0.204878629018, 0.0169186700736, 0.00504188056255, 0.0862956455749, -0.0913375261374, 0, 0, 0, 0.178314245119, -0.238206513167, 0.0598922680478]},
    "none": {"shape": [4], "out": [2.18204316763, 0.454681777884, 0, 3.05391350208], "grad": [-0.887189196368, 0.819514516074, 0.0676746802943, 0.0221842744752, 0.379700840529, -0.401885115005, 0, 0, 0, 0.92723407462, -1.23867386847, 0.311439793848]},
    "sum": {"shape": [], "out": [5.69063844759], "grad": [-0.887189196368, 0.819514516074, 0.0676746802943, 0.0201675222502, 0.345182582299, -0.36535010455, 0, 0, 0, 0.713256980477, -0.952826052668, 0.239569072191]},
    "ignore_positive": {"shape": [], "out": [1.31836247275], "grad": [-0.443594598184, 0.409757258037, 0.0338373401472, 0.0100837611251, 0.17259129115, -0.182675052275, 0, 0, 0, 0, 0, 0]},
    "ignore_positive_none": {"shape": [4], "out": [2.18204316763, 0.454681777884, 0, 0], "grad": [-0.887189196368, 0.819514516074, 0.0676746802943, 0.0221842744752, 0.379700840529, -0.401885115005, 0, 0, 0, 0, 0, 0]},
    "weight_mean": {"shape": [], "out": [1.9702178137], "grad": [-0.110898649546, 0.102439314509, 0.00845933503679, 0.00756282084382, 0.129443468362, -0.137006289206, 0, 0, 0, 0.356628490238, -0.476413026334, 0.119784536096]},
    "weight_none": {"shape": [4], "out": [1.09102158381, 0.682022666826, 0, 6.10782700416], "grad": [-0.443594598184, 0.409757258037, 0.0338373401472, 0.0332764117128, 0.569551260794, -0.602827672507, 0, 0, 0, 1.85446814924, -2.47734773694, 0.622879587697]},
    "weight_ignore_positive": {"shape": [], "out": [0.886522125319], "grad": [-0.221797299092, 0.204878629018, 0.0169186700736, 0.0151256416876, 0.258886936725, -0.274012578412, 0, 0, 0, 0, 0, 0]},
    "label_column": {"shape": [], "out": [1.4226596119], "grad": [-0.221797299092, 0.204878629018, 0.0169186700736, 0.00504188056255, 0.0862956455749, -0.0913375261374, 0, 0, 0, 0.178314245119, -0.238206513167, 0.0598922680478]},
    "label_column_none": {"shape": [4, 1], "out": [2.18204316763, 0.454681777884, 0, 3.05391350208], "grad": [-0.887189196368, 0.819514516074, 0.0676746802943, 0.0221842744752, 0.379700840529, -0.401885115005, 0, 0, 0, 0.92723407462, -1.23867386847, 0.311439793848]},
    "soft": {"shape": [], "out": [2.01246255445], "grad": [-0.0997749872016, 0.120924105877, -0.021149118675, -0.103547483224, -0.0215027463429, 0.125050229567, -0.0621406961621, -0.0962431666558, 0.158383862818, 0.141671342217, -0.0960550898498, -0.0456162523668]},
    "soft_none": {"shape": [4, 1], "out": [1.59392645027, 2.2153775234, 2.2705266219, 1.97001962225], "grad": [-0.399099948806, 0.483696423506, -0.0845964746999, -0.455608926187, -0.0946120839086, 0.550221010095, -0.298275341578, -0.461967199948, 0.760242541526, 0.736690979526, -0.499486467219, -0.237204512308]},
    "soft_weight": {"shape": [], "out": [2.02679952713], "grad": [-0.0849068711234, 0.102904422855, -0.0179975517319, -0.0976638346, -0.0202809435525, 0.117944778153, -0.065293201601, -0.10112574965, 0.166418951251, 0.163645347835, -0.110953763435, -0.0526915844002]},
    "soft_unnormalized": {"shape": [], "out": [4.73445799843], "grad": [-0.246797299092, 0.0243786290184, -0.0648313299264, -0.245958119437, -0.162954354425, 0.0809124738626, -0.17366095264, -0.263112939975, 0.0510238926148, 0.0923142451192, -0.240956513167, -0.187357731952]},
    "soft_ignore_zero": {"shape": [], "out": [0.670820851484], "grad": [-0.0332583290672, 0.0403080352922, -0.00704970622499, -0.0345158277414, -0.00716758211429, 0.0416834098557, -0.0207135653874, -0.0320810555519, 0.0527946209393, 0.0472237807389, -0.0320183632833, -0.0152054174556]},
    "soft_ignore_zero_weight": {"shape": [], "out": [0.675599842378], "grad": [-0.0283022903745, 0.0343014742851, -0.00599918391064, -0.0325546115333, -0.0067603145175, 0.0393149260508, -0.0217644005337, -0.0337085832167, 0.0554729837504, 0.0545484492783, -0.0369845878115, -0.0175638614667]},
    "smoothing": {"shape": [], "out": [2.10841226605], "grad": [-0.188463967745, 0.188211961483, 0.000252002537683, -0.0116247869734, 0.069628978039, -0.0580041947909, -0.00657762017592, -0.204779608628, 0.211357225079, 0.161647577583, -0.20487318182, 0.0432256005119]},
    "smoothing_weight_none": {"shape": [4, 1], "out": [1.38927327477, 1.06364887537, 5.33868640279, 5.16042532382], "grad": [-0.502570592824, 0.501898576107, 0.000672006783426, -0.0750186263224, 0.44933901126, -0.374320408978, -0.0589354774977, -1.83482531577, 1.89376075989, 1.56905917228, -1.98863570921, 0.419576500771]},
    "no_softmax": {"shape": [], "out": [1.4226596119], "grad": [-2.21609980561, 0, 0, 0, 0, -0.393917972401, 0, 0, 0, 0, -5.29953531849, 0]},
    "no_softmax_soft": {"shape": [], "out": [2.01246255445], "grad": [-1.13444531897, -0.102444217272, -0.562511541732, -5.3843681162, -0.312293833598, -0.0529618684829, -1.78980583956, -2.27411627543, -0.0763516807365, -0.0513740543809, -2.28618936472, -0.440409604836]},
    "axis1_none": {"shape": [2, 2], "out": [0.233855527586, 2.24683195156, 0.363354403195, 0.876660822596], "grad": [-0.208523845893, 0.88115496504, 0.169000175164, 0.10253800468, 0.0395236707294, -0.98369296972, 0.214374059895, 0.694685149664, -0.365592049053, -0.758978661453, 0.151217989158, 0.0642935117893]},
    "axis1_mean_weight": {"shape": [], "out": [0.99453435712], "grad": [-0.0173769871578, 0.200262492055, 0.0140833479303, 0.0233040919727, 0.00329363922745, -0.223566584027, 0.0595483499708, 0.17812439735, -0.101553346959, -0.194609913193, 0.0420049969883, 0.0164855158434]},
    "axis1_keepdim_none": {"shape": [2, 1, 2], "out": [0.233855527586, 2.24683195156, 0.363354403195, 0], "grad": [-0.208523845893, 0.88115496504, 0.169000175164, 0.10253800468, 0.0395236707294, -0.98369296972, 0.214374059895, 0, -0.365592049053, 0, 0.151217989158, 0]},
}

NLL_PADDLE = {
    "mean": {"shape": [], "out": [2.18416223745], "grad": [-0.25, 0, 0, 0, 0, -0.25, 0, -0.25, 0, 0, -0.25, 0]},
    "ignore": {"shape": [], "out": [1.89687948253], "grad": [-0.333333333333, 0, 0, 0, 0, -0.333333333333, 0, 0, 0, 0, -0.333333333333, 0]},
    "weight_ignore_none": {"shape": [4], "out": [1.09102158381, 0.682022666826, 0, 0], "grad": [-0.5, 0, 0, 0, 0, -1.65, 0, 0, 0, 0, 0, 0]},
    "weight_sum": {"shape": [], "out": [13.9728922593], "grad": [-0.5, 0, 0, 0, 0, -1.5, 0, -2, 0, 0, -2, 0]},
    "spatial": {"shape": [2, 2], "out": [-0.470003629246, -0.0769610411361, -0.463734016232, -0.0129162252665], "grad": [-1, 0, 0, 0, 0, -1.1, 0, 0, -1.2, -1.3, 0, 0]},
    "spatial_mean_weight": {"shape": [], "out": [-0.217290643221], "grad": [-0.0833333333333, 0, 0, 0, 0, -0.25, 0, 0, -0.333333333333, -0.333333333333, 0, 0]},
}

ELEMENTWISE_PADDLE = {
    "l1_mean": {"shape": [], "out": [0.64575], "grad": [-0.0833333333333, 0.0833333333333, -0.0833333333333, -0.0833333333333, 0.0833333333333, 0.0833333333333, -0.0833333333333, -0.0833333333333, 0.0833333333333, 0.0833333333333, -0.0833333333333, -0.0833333333333], "label_grad": [0.0833333333333, -0.0833333333333, 0.0833333333333, 0.0833333333333, -0.0833333333333, -0.0833333333333, 0.0833333333333, 0.0833333333333, -0.0833333333333, -0.0833333333333, 0.0833333333333, 0.0833333333333]},
    "l1_none": {"shape": [4, 3], "out": [0, 1.783, 0.711, 2.052, 0, 1.397, 1.6, 1.436, 0, 0.593, 2.123, 0.498], "grad": [0, 1.1, -1.2, -1.3, 0, 1.5, -1.6, -1.7, 0, 1.9, -2, -2.1], "label_grad": [-0, -1.1, 1.2, 1.3, -0, -1.5, 1.6, 1.7, -0, -1.9, 2, 2.1]},
    "smooth_l1_mean": {"shape": [], "out": [0.541069706667], "grad": [-0, 0.0833333333333, -0.0340666666667, -0.0833333333333, 0.0658666666667, 0.0833333333333, -0.0833333333333, -0.0824, 0.0833333333333, 0.0528666666667, -0.0833333333333, -0.0198666666667], "label_grad": [0, -0.0833333333333, 0.0340666666667, 0.0833333333333, -0.0658666666667, -0.0833333333333, 0.0833333333333, 0.0824, -0.0833333333333, -0.0528666666667, 0.0833333333333, 0.0198666666667]},
    "smooth_l1_delta": {"shape": [4, 3], "out": [0, 0.6682, 0.08355872, 0.6158, 0.2702, 0.5138, 0.435, 0.3694, 0.5622, 0.1922, 0.6442, 0.02841728], "grad": [-0, 0.55, -0.49056, -0.65, 0.7, 0.75, -0.8, -0.85, 0.9, 0.95, -1, -0.50064], "label_grad": [0, -0.55, 0.49056, 0.65, -0.7, -0.75, 0.8, 0.85, -0.9, -0.95, 1, 0.50064]},
    "smooth_l1_not_huber": {"shape": [], "out": [8.765952], "grad": [-0, 1, -0.8176, -1, 1, 1, -1, -1, 1, 1, -1, -0.4768], "label_grad": [0, -1, 0.8176, 1, -1, -1, 1, 1, -1, -1, 1, 0.4768]},
    "bce_mean": {"shape": [], "out": [1.18792534495], "grad": [0.104166666667, -0.0925925925926, -0.166666666667, -8.33333333333, 0.208333333333, -0.0834167500834, -0.0793650793651, 0.198412698413, 0.151515151515, -1.66666666667, -0.166666666667, 0.416666666667]},
    "bce_weight_none": {"shape": [4, 3], "out": [0.111571775657, 0.210721031316, 1.03972077084, 2.30258509299, 1.83258146375, 0.00150075050038, 0.390161937066, 2.0690264645, 0.896755501133, 1.49786613678, 1.38629436112, 2.41415686865], "grad": [0.625, -2.44444444444, -3.6, -65, 7, -2.25225225225, -0.761904761905, 8.09523809524, 4.90909090909, -19, -8, 15.75], "weight_grad": [13.1502743115, 4.54367044779, 5.28920358464]},
    "bce_logits_mean": {"shape": [], "out": [0.962423199853], "grad": [0.0427081163737, -0.00964845329872, -0.0511042814257, -0.0715326849529, 0.0615386600359, -0.0134595683732, -0.0245108023499, 0.00283125797936, 0.0711840645984, -0.025075277147, -0.0722337517499, 0.0365263190282]},
    "bce_logits_pos_weight": {"shape": [4, 3], "out": [0.34657359028, 0.128969697901, 4.41422208775, 1.99776389997, 0, 0.829823917895, 0.865313057439, 0.706315004615, 2.82454008771, 0.373276090008, 2.05942403019, 0.8328102726], "grad": [0.25, -0.133099339225, -3.37522069011, -1.12367028141, 0, -1.13670893687, -0.56262066627, 0.348907013654, 2.28925181965, -0.591897261552, -1.74494519864, 1.34204638822], "weight_grad": [10.0747842463, 2.73072511796, 8.91658407498]},
    "bce_logits_sum": {"shape": [], "out": [80.0842017874], "grad": [0.512497396484, -2.32394421452e-09, -0.993694452713, -0.999999990481, 0.999951310575, -1.10306816793e-07, -0.499999125839, -0.199995493566, 0.999999967107, -0.000342122334765, -0.99999999532, 0.0506903249313]},
    "kl_mean": {"shape": [], "out": [0.0922458798347], "grad": [-0.025, 0, -0.0166666666667, 0, -0.0416666666667, -0.0333333333333, -0.0208333333333, -0.0208333333333, -0.0416666666667, -0.0583333333333, -0.00833333333333, -0.0166666666667]},
    "kl_none": {"shape": [4, 3], "out": [0.29342110899, 0, 0.216721051038, 0, 0.185267298662, -0.184643581596, 0.455929035277, 0.414929035277, -0.300568339166, -0.0131330093024, 0.0751328409084, -0.0361048820712], "grad": [-0.3, 0, -0.24, 0, -0.7, -0.6, -0.4, -0.425, -0.9, -1.33, -0.2, -0.42]},
    "kl_batchmean": {"shape": [], "out": [0.276737639504], "grad": [-0.075, 0, -0.05, 0, -0.125, -0.1, -0.0625, -0.0625, -0.125, -0.175, -0.025, -0.05]},
    "kl_log_target_sum": {"shape": [], "out": [2.08367277413], "grad": [-0.35, -0.05, -0.25, -0.15, -0.55, -0.45, -0.3, -0.3, -0.55, -0.75, -0.15, -0.25]},
}

ACTIVATION_PADDLE = {
    "leaky_relu": {"shape": [9], "out": [-3, -0.3, -0.2, -0.05, 0, 0.5, 2.5, 3, 25], "grad": [0.1, 0.11, 0.12, 0.13, 1.4, 1.5, 1.6, 1.7, 1.8]},
    "silu": {"shape": [9], "out": [-2.80728689065e-12, -0.142277619533, -0.238405844044, -0.188770334399, 0, 0.311229665601, 2.31035454995, 2.85772238047, 24.9999999997], "grad": [-2.71371066096e-12, -0.0969145166167, -0.108941098542, 0.338050456507, 0.7, 1.10994178095, 1.75904177815, 1.84977698023, 1.8000000006]},
    "elu": {"shape": [9], "out": [-0.5, -0.475106465816, -0.432332358382, -0.196734670144, 0, 0.5, 2.5, 3, 25], "grad": [4.6795900488e-14, 0.0273828876023, 0.081201169942, 0.394244928813, 0.7, 1.5, 1.6, 1.7, 1.8]},
    "softplus": {"shape": [9], "out": [9.34807786734e-14, 0.0485873515737, 0.126928011043, 0.47407698418, 0.69314718056, 0.97407698418, 2.57888973429, 3.04858735157, 25], "grad": [9.35762296884e-14, 0.0521684604953, 0.143043506427, 0.490802869438, 0.7, 0.933688996803, 1.47862691197, 1.6193760156, 1.8]},
    "softplus_beta": {"shape": [9], "out": [0, 0.00123784256887, 0.0090749639589, 0.156630843759, 0.34657359028, 0.656630843759, 2.50335767424, 3, 25], "grad": [8.7565107627e-27, 0.0027198854723, 0.0215834519545, 0.349623847781, 0.7, 1.09658786795, 1.58929143852, 1.7, 1.8]},
    "hardswish": {"shape": [9], "out": [-0, -0, -0.333333333333, -0.208333333333, 0, 0.291666666667, 2.29166666667, 3, 25], "grad": [0, 0, -0.2, 0.433333333333, 0.7, 1, 2.13333333333, 1.7, 1.8]},
    "normalize": {"shape": [3, 3], "out": [0.6, -0.8, 0, 0, 0, 0, 0.333333333333, 0.666666666667, -0.666666666667], "grad": [0.2336, 0.1752, 0.24, 1.3e+12, 1.4e+12, 1.5e+12, 0.481481481481, 0.462962962963, 0.703703703704]},
    "normalize_p1_axis0": {"shape": [3, 3], "out": [0.75, -0.571428571429, 0, 0, 0.142857142857, 0, 0.25, 0.285714285714, -1], "grad": [-0.0374999999997, 0.165306122449, 0.6, 0.325, 0.191836734694, 0.75, 0.1125, 0.234693877551, 9.00057806064e-13]},
    "normalize_p3": {"shape": [4, 3], "out": [0, 0.994360276677, -0.25623706575, -0.823135405185, 0.439124071448, 0.709798726825, -0.656387175855, -0.579496106683, 0.80548083437, 0.402698156544, -0.976530334218, -0.151329193758], "grad": [0.501442398727, 0.161731383732, 0.627618953842, 0.761310138045, 0.57001248797, 0.530227978539, 0.631886072066, 0.704857042198, 1.02202780291, 1.08884766654, 0.286470672177, 1.04890331609]},
    "normalize_inf": {"shape": [4, 3], "out": [0, 1, -0.257690368129, -1, 0.533477321814, 0.862311015119, -0.81490104773, -0.71944121071, 1, 0.41237649506, -1, -0.154966198648], "grad": [0.504286434695, 0.155939708399, 0.605143721634, 1.10169264213, 0.755939524838, 0.809935205184, 0.93131548312, 0.989522700815, 1.47083337286, 0.988039521581, 0.238214416772, 1.09204368175]},
}



def test_label_smoothing_takes_a_label_shaped_like_input_as_a_distribution():
    # paddle 3.3.1: with label_smoothing > 0 a float label of input's shape is smoothed (in its own
    # float32) and used as a soft label although soft_label is False
    logits = pycoll.to_tensor([[0.2, 0.5, 0.3], [0.9, 0.1, 0.4]], dtype="float64", stop_gradient=False)
    one_hot = F.one_hot(pycoll.to_tensor([2, 0]), 3).astype("float32")
    assert abs(float(pycoll.nn.CrossEntropyLoss(label_smoothing=0.1)(logits, one_hot)) - 0.9502625728536256) < 1e-15
    soft = pycoll.to_tensor([[0.0, 0, 1], [0.7, 0.3, 0]], dtype="float32")
    loss = F.cross_entropy(logits, soft, label_smoothing=0.2, reduction="none")
    np.testing.assert_allclose(loss.numpy(), [[1.1331644108149062], [0.999360747139841]], rtol=1e-14)
    loss.sum().backward()
    np.testing.assert_allclose(logits.grad.numpy(), [[0.22276644025066034, 0.32402716312621144, -0.546793618278033],
                                                     [-0.14025213151236288, -0.08810653373151284, 0.228358657793295]],
                               rtol=1e-12)
    with pytest.raises(ValueError, match="label shape"):  # without smoothing it stays a hard label
        F.cross_entropy(logits, one_hot)


def test_log_loss_matches_paddle():
    """paddle 3.3.1: F.log_loss([[0.2], [0.7], [0.99]], [[0], [1], [1]]) (float32; its kernel has
    no float64) gave [0.22301852703094482, 0.35653209686279297, 0.009949304163455963]."""
    x = pycoll.to_tensor(np.array([[0.2], [0.7], [0.99]], "float32"), stop_gradient=False)
    y = pycoll.to_tensor(np.array([[0.0], [1.0], [1.0]], "float32"))
    loss = F.log_loss(x, y)
    assert loss.dtype == np.float32
    np.testing.assert_allclose(loss.numpy().ravel(), [0.22301852703094482, 0.35653209686279297, 0.009949304163455963],
                               rtol=1e-6)
    loss.sum().backward()  # d/dx = -y / (x + eps) + (1 - y) / (1 - x + eps)
    xs, ys = x.numpy(), y.numpy()
    np.testing.assert_allclose(x.grad.numpy(), -ys / (xs + 1e-4) + (1 - ys) / (1 - xs + 1e-4), rtol=1e-5)
    with pytest.raises(ValueError, match="log_loss: label shape"):
        F.log_loss(x, pycoll.ones([3], "float32"))


def test_a_class_of_label_zero_adds_nothing_even_where_its_probability_is_zero():
    """paddle 3.3.1: probabilities with a 0 (a softmax that underflowed) and use_softmax=False give
    a finite gradient, and soft labels of 0 against masked -inf logits a finite loss."""
    prob = pycoll.to_tensor(np.array([[0.7, 0.3, 0.0], [0.2, 0.3, 0.5]], "float32"), stop_gradient=False)
    loss = F.cross_entropy(prob, pycoll.to_tensor([[0], [2]]), use_softmax=False)
    assert abs(float(loss) - 0.5249110460281372) < 1e-6
    loss.backward()
    np.testing.assert_allclose(prob.grad.numpy(), [[-0.7142857313156128, 0, 0], [0, 0, -1]], rtol=1e-6)
    soft = pycoll.to_tensor(np.array([[0.6, 0.4, 0.0], [0.5, 0.5, 0.0]], "float32"))
    prob = pycoll.to_tensor(np.array([[0.7, 0.3, 0.0], [0.2, 0.8, 0.0]], "float32"), stop_gradient=False)
    loss = F.cross_entropy(prob, soft, soft_label=True, use_softmax=False)
    loss.backward()
    assert np.isfinite(float(loss)) and np.isfinite(prob.grad.numpy()).all()
    logits = pycoll.to_tensor(np.array([[2, 1, -np.inf], [0.5, -np.inf, 0.1]], "float32"), stop_gradient=False)
    masked = pycoll.to_tensor(np.array([[0.8, 0.2, 0], [0.5, 0, 0.5]], "float32"))
    loss = F.cross_entropy(logits, masked, soft_label=True)
    assert abs(float(loss) - 0.6131384968757629) < 1e-6
    loss.backward()
    np.testing.assert_allclose(logits.grad.numpy(), [[-0.03447, 0.03447, 0], [0.04934, 0, -0.04934]], atol=1e-5)


@pytest.mark.parametrize("fn", [F.smooth_l1_loss, F.kl_div])
def test_losses_paddle_does_not_broadcast_refuse_labels_of_another_shape(fn):
    """paddle 3.3.1 refuses a [4, 1] output against [4] labels (the classic mistake) and [4, 1]
    against [1, 4]; broadcasting them gave a loss over a [4, 4] grid."""
    for label_shape in ([4], [1, 4]):
        with pytest.raises(ValueError, match=re.escape(f"label shape {label_shape} must equal input shape [4, 1]")):
            fn(pycoll.zeros([4, 1]), pycoll.ones(label_shape))


def test_bce_with_logits_of_a_minus_infinite_logit_and_label_one_is_infinite():
    """paddle 3.3.1 and torch: inf (the (1 - label) * logit term is 0 there, not 0 * -inf)."""
    x = pycoll.to_tensor(np.array([-np.inf, np.inf], "float32"))
    y = pycoll.to_tensor(np.array([1.0, 0.0], "float32"))
    assert F.binary_cross_entropy_with_logits(x, y, reduction="none").numpy().tolist() == [np.inf, np.inf]
