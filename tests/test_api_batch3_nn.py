"""paddle 3.3.1's nn APIs of the third batch: dice_loss, npair_loss, multi_label_margin_loss
(nn.MultiLabelMarginLoss), hsigmoid_loss (nn.HSigmoidLoss), adaptive_log_softmax_with_loss
(nn.AdaptiveLogSoftmaxWithLoss), lp_pool1d/2d (nn.LPPool1D/2D), fractional_max_pool2d/3d
(nn.FractionalMaxPool2D/3D), temporal_shift, gather_tree; cross_entropy with float ids;
nn.utils.parameters_to_vector / vector_to_parameters; rnnt_loss (nn.RNNTLoss); nn.init;
embedding_renorm_, class_center_sample, sdp_kernel; BeamSearchDecoder and dynamic_decode.

Each case's outputs and input gradients (of sum(out * linspace(0.5, 1.5))) equal the numbers measured
on paddle 3.3.1 (CPU) and written into EXPECTED; second derivatives through create_graph are checked
against central differences of the first.
"""
import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
import pycoll.nn.functional as F


def _r(seed):
    return np.random.RandomState(seed)


def case_dice_loss():
    r = _r(1)
    p = r.uniform(0.01, 1, (3, 4, 5))
    p /= p.sum(-1, keepdims=True)
    return (lambda x, y: F.dice_loss(x, y, epsilon=0.01)), [p.astype("float32"), r.randint(0, 5, (3, 4, 1))], [0]


def case_npair_loss():
    r = _r(2)
    return (lambda a, p, l: F.npair_loss(a, p, l)), [r.randn(6, 4).astype("float32"), r.randn(6, 4).astype(
        "float32"), np.array([1, 2, 1, 3, 2, 1])], [0, 1]


def case_multi_label_margin_loss():
    r = _r(3)
    label = np.array([[3, 0, -1, 1], [1, 2, 4, 0], [-1, 1, 2, 3], [2, 2, -1, -1]])
    return (lambda x, y: F.multi_label_margin_loss(x, y, reduction="none")), [r.randn(4, 5).astype("float32"),
                                                                              label], [0]


def case_multi_label_margin_layer():
    r = _r(4)
    label = np.array([[0, -1, 1], [2, 1, 0], [4, 4, -1]])
    return (lambda x, y: nn.MultiLabelMarginLoss(reduction="sum")(x, y)), [r.randn(3, 5).astype("float32"),
                                                                          label], [0]


def case_hsigmoid_loss():
    r = _r(5)  # 6 classes: paths of 2 and 3 steps (a shorter path adds log 2, as paddle's kernel)
    return (lambda x, w, b, l: F.hsigmoid_loss(x, l, 6, w, b)), [
        r.randn(5, 4).astype("float32"), r.randn(5, 4).astype("float32"), r.randn(5, 1).astype("float32"),
        np.array([[0], [1], [3], [5], [2]])], [0, 1, 2]


def case_hsigmoid_loss_clipped():
    r = _r(6)  # logits past +-40: clipped values, gradients through the clip (paddle's kernel)
    return (lambda x, w, l: F.hsigmoid_loss(x, l, 5, w)), [
        (r.randn(4, 3) * 3).astype("float32"), (r.randn(4, 3) * 30).astype("float32"),
        np.array([[0], [4], [2], [3]])], [0, 1]


def case_hsigmoid_loss_custom_tree():
    r = _r(7)
    table = np.array([[0, 1, 3], [0, 2, -1], [0, 1, 4], [1, -1, 2]])
    code = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0], [1, 0, 0]])
    return (lambda x, w, b, l, t, c: F.hsigmoid_loss(x, l, 6, w, b, path_table=t, path_code=c)), [
        r.randn(4, 3).astype("float32"), r.randn(6, 3).astype("float32"), r.randn(6, 1).astype("float32"),
        np.zeros((4, 1), "int64"), table, code], [0, 1, 2]


def case_adaptive_log_softmax():
    r = _r(8)
    arrays = [r.randn(5, 6).astype("float32"), np.array([0, 4, 9, 2, 6]), r.randn(6, 5).astype("float32"),
              r.randn(5).astype("float32"), r.randn(6, 2).astype("float32"), r.randn(2, 3).astype("float32"),
              r.randn(6, 1).astype("float32"), r.randn(1, 4).astype("float32")]
    return (lambda x, l, h, hb, a0, a1, c0, c1: F.adaptive_log_softmax_with_loss(
        x, l, h, [[a0, a1], [c0, c1]], [3, 6, 10], hb)), arrays, [0, 2, 3, 4, 5, 6, 7]


def case_lp_pool2d():
    r = _r(9)
    return (lambda x: F.lp_pool2d(x, 3, [2, 3], stride=2, padding=1, ceil_mode=True)), [
        (np.abs(r.randn(1, 2, 5, 6)) + 0.1).astype("float32")], [0]


def case_lp_pool2d_p2_nhwc():
    r = _r(10)
    return (lambda x: F.lp_pool2d(x, 2, 3, 2, "SAME", data_format="NHWC")), [r.randn(1, 5, 4, 2).astype("float32")], [0]


def case_lp_pool2d_inf():
    r = _r(11)
    return (lambda x: F.lp_pool2d(x, float("inf"), 2, 2, padding=1)), [r.randn(1, 2, 3, 4).astype("float32")], [0]


def case_lp_pool1d():
    r = _r(12)
    return (lambda x: F.lp_pool1d(x, 2, 3, 2, padding=1)), [r.randn(2, 2, 7).astype("float32")], [0]


def case_lp_pool1d_layer_torch_order():
    r = _r(13)
    return (lambda x: nn.LPPool1d(2.5, 2, 2, True)(x)), [(np.abs(r.randn(1, 2, 7)) + 0.1).astype("float32")], [0]


def case_fractional_max_pool2d():
    r = _r(14)
    return (lambda x: F.fractional_max_pool2d(x, [4, 5], random_u=0.3, return_mask=True)), [
        r.randn(1, 2, 7, 9).astype("float32")], [0]


def case_fractional_max_pool2d_kernel():
    r = _r(15)
    return (lambda x: F.fractional_max_pool2d(x, [3, 4], kernel_size=[3, 2], random_u=0.7, return_mask=True)), [
        r.randn(1, 2, 8, 5).astype("float32")], [0]


def case_fractional_max_pool3d():
    r = _r(16)
    return (lambda x: nn.FractionalMaxPool3D([2, 3, 3], random_u=0.45, return_mask=True)(x)), [
        r.randn(1, 1, 5, 6, 7).astype("float32")], [0]


def case_temporal_shift():
    r = _r(17)
    return (lambda x: F.temporal_shift(x, 3, 0.3)), [r.randn(6, 7, 1, 2).astype("float32")], [0]


def case_temporal_shift_nhwc():
    r = _r(18)
    return (lambda x: F.temporal_shift(x, 2, 0.25, data_format="NHWC")), [r.randn(4, 1, 2, 5).astype("float32")], [0]


def case_gather_tree():
    r = _r(19)
    return (lambda i, p: F.gather_tree(i, p)), [r.randint(0, 10, (4, 2, 3)), r.randint(0, 3, (4, 2, 3))], []


def case_cross_entropy_float_label():
    r = _r(20)  # float ids are truncated; 'mean' with ignore_index counts the labels != 3 by float value
    return (lambda x, y: F.cross_entropy(x, y, ignore_index=3)), [
        r.randn(5, 4).astype("float32"), np.array([1.0, 3.0, 3.7, 0.2, 2.0], "float32")], []


def case_rnnt_loss():
    r = _r(22)  # scores taken as log-probabilities as they are (paddle's CPU kernel); FastEmit scales emit gradients
    return (lambda x, l, t, u: F.rnnt_loss(x, l, t, u, fastemit_lambda=0.5, reduction="none")), [
        r.randn(2, 4, 4, 5), np.array([[1, 2, 3], [4, 1, 0]], "int32"), np.array([4, 3], "int32"),
        np.array([3, 2], "int32")], [0]


def case_rnnt_loss_label_equal_to_blank():
    r = _r(23)  # a label equal to blank: the kernel keeps the emit's gradient for that class alone
    x = r.randn(2, 3, 4, 4)
    x -= np.log(np.exp(x).sum(-1, keepdims=True))
    return (lambda x, l, t, u: nn.RNNTLoss(blank=2)(x, l, t, u)), [
        x.astype("float32"), np.array([[1, 2, 3], [2, 2, 0]], "int32"), np.array([3, 2], "int32"),
        np.array([3, 1], "int32")], [0]


EXPECTED = {  # measured on paddle 3.3.1 (CPU): outputs, then gradients of sum(out * linspace(0.5, 1.5))
    "adaptive_log_softmax":
        ([[-1.8700639, -11.652622, -2.5400112, -3.7691283, -5.5654192], 5.0794487],
         [[[0.42675871, -0.014312685, -0.34170726, 1.2443203, -0.17530474, 0.12458671],
           [-0.30207723, -1.2099438, 0.30571413, -3.7151687, -0.20423073, -0.2917586],
           [-0.16480231, 0.09789709, -0.26957929, 2.4426892, 2.3422024, 1.101699],
           [-0.15017983, -0.83241588, 0.095782675, 4.0981264, 1.6610936, -2.1371579],
           [0.11378124, -0.83014989, -0.66443485, -1.0824652, 4.8102307, 3.1308377]],
          [[-0.49758095, 1.0539364, 0.78677267, 1.8330752, -3.1762033],
           [-0.30715713, -0.23472309, 0.077008992, 1.6708838, -1.2060124],
           [-0.92580402, -0.89316869, 1.3638089, 0.049650539, 0.40551332],
           [-0.75990731, -1.3822434, -1.0128081, 2.1866584, 0.96830046],
           [-0.41095644, 0.23284714, -0.4118506, -0.33479995, 0.92475981],
           [0.21665125, -0.023161709, 0.78800356, 0.1430815, -1.1245743]],
          [0.0081918221, -1.422945, 0.5447951, -1.2947882, 2.1647468],
          [[-1.0947115, -1.4601289], [-1.3967489, -1.862987], [-0.50358188, -0.67167872],
           [-0.61863476, -0.82513654], [0.74978828, 1.0000694], [-1.2141576, -1.6194463]],
          [[3.0534728, -3.0951254, 0.041652877], [-4.8981385, 4.9649544, -0.066816233]],
          [[1.5887504], [0.53238839], [-0.37063676], [-0.81353474], [-0.30333433], [0.60453951]],
          [[0.86247444, -0.50692135, 0.10739888, -0.46295202]]]),
    "cross_entropy_float_label":
        ([1.0981343], []),
    "dice_loss":
        ([0.80418968],
         [[[[-0.037646506, 0.003968141, 0.003968141, 0.003968141, 0.003968141],
            [0.003968141, -0.037646506, 0.003968141, 0.003968141, 0.003968141],
            [0.003968141, -0.037646506, 0.003968141, 0.003968141, 0.003968141],
            [0.003968141, 0.003968141, 0.003968141, -0.037646506, 0.003968141]],
           [[-0.035279151, 0.0063354964, 0.0063354964, 0.0063354964, 0.0063354964],
            [-0.035279151, 0.0063354964, 0.0063354964, 0.0063354964, 0.0063354964],
            [0.0063354964, 0.0063354964, 0.0063354964, 0.0063354964, -0.035279151],
            [0.0063354964, 0.0063354964, -0.035279151, 0.0063354964, 0.0063354964]],
           [[0.0019192323, 0.0019192323, 0.0019192323, 0.0019192323, -0.039695416],
            [0.0019192323, 0.0019192323, 0.0019192323, -0.039695416, 0.0019192323],
            [0.0019192323, 0.0019192323, 0.0019192323, -0.039695416, 0.0019192323],
            [-0.039695416, 0.0019192323, 0.0019192323, 0.0019192323, 0.0019192323]]]]),
    "fractional_max_pool2d":
        ([[[[[1.5513391, 0.17397653, 0.64225209, 0.62030023, 0.81097436],
             [-0.23748967, -1.1721218, 1.0092734, 1.2930994, 0.91467273],
             [0.87307036, -0.0041435836, -0.20821784, 1.3265402, 1.6910976],
             [1.4651344, 2.696569, 0.27520385, 0.58724272, 0.16048828]],
            [[1.4772274, 1.7598603, 0.25093105, 1.5884497, 1.3544693],
             [-0.50980788, -0.77346087, -0.24851631, 1.2759739, -0.70099425],
             [0.45850855, -0.20951675, 0.93200403, 1.4847689, 1.0404891],
             [0.54311615, 1.0280092, -0.6236915, 0.3550379, 0.18231666]]]],
          [[[[0, 2, 13, 15, 16], [18, 20, 22, 23, 26], [27, 29, 31, 32, 44], [46, 56, 57, 59, 53]],
            [[9, 2, 12, 5, 8], [19, 20, 21, 24, 25], [28, 29, 30, 33, 43], [45, 56, 58, 60, 52]]]]],
         [[[[[0.5, 0.0, 0.52564102, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
             [0.0, 0.0, 0.0, 0.0, 0.55128205, 0.0, 0.57692307, 0.6025641, 0.0],
             [0.62820512, 0.0, 0.65384614, 0.0, 0.67948717, 0.70512819, 0.0, 0.0, 0.73076922],
             [0.75641024, 0.0, 0.78205127, 0.0, 0.80769229, 0.83333331, 0.0, 0.0, 0.0],
             [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.85897434],
             [0.0, 0.88461536, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.98717946],
             [0.0, 0.0, 0.91025639, 0.93589741, 0.0, 0.96153843, 0.0, 0.0, 0.0]],
            [[0.0, 0.0, 1.0384616, 0.0, 0.0, 1.0897436, 0.0, 0.0, 1.1153846],
             [1.0128205, 0.0, 0.0, 1.0641025, 0.0, 0.0, 0.0, 0.0, 0.0],
             [0.0, 1.1410257, 1.1666666, 1.1923077, 0.0, 0.0, 1.2179487, 1.2435898, 0.0],
             [0.0, 1.2692307, 1.2948718, 1.3205128, 0.0, 0.0, 1.3461539, 0.0, 0.0],
             [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.3717948, 0.0],
             [1.3974359, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.5, 0.0],
             [0.0, 0.0, 1.4230769, 0.0, 1.448718, 0.0, 1.4743589, 0.0, 0.0]]]]]),
    "fractional_max_pool2d_kernel":
        ([[[[[0.35519677, 0.68951774, 0.68951774, 0.41058967], [0.59939069, 1.6002145, 1.6002145, 1.4965653],
             [-0.00052850653, 1.4248968, 1.4965653, 2.0488987]],
            [[1.9782723, 1.8948199, 1.8948199, 1.729688], [1.2872576, 1.1838342, 1.1838342, 2.4428499],
             [-0.036925469, 1.1838342, 1.1838342, 2.4428499]]]],
          [[[[11, 12, 12, 13], [15, 17, 17, 28], [36, 27, 28, 39]],
            [[10, 12, 12, 9], [15, 27, 27, 29], [30, 27, 27, 29]]]]],
         [[[[[0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.5, 1.1304348, 0.63043481, 0.0],
             [0.67391306, 0.0, 1.4782609, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0],
             [0.0, 0.0, 0.89130437, 1.7391305, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0],
             [0.0, 0.84782606, 0.0, 0.0, 0.97826087]],
            [[0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 1.1521739], [1.0217391, 0.0, 2.173913, 0.0, 0.0],
             [1.1956521, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 5.391304, 0.0, 2.826087],
             [1.3695652, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0]]]]]),
    "fractional_max_pool3d":
        ([[[[[[0.57970655, 2.0104349, 1.5937133], [2.2843747, 1.6122612, 2.5650766],
              [0.62034994, 1.3086181, 1.0797479]],
             [[1.8605591, 2.2551887, 1.4788797], [1.8111155, 1.0520921, 2.6808035],
              [1.3596085, 1.3719352, 0.75417995]]]]],
          [[[[[43, 51, 96], [98, 23, 19], [112, 114, 33]], [[127, 130, 131], [140, 185, 187], [161, 163, 201]]]]]],
         [[[[[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
              [0.0, 0.0, 0.0, 0.0, 0.0, 0.79411763, 0.0], [0.0, 0.0, 0.7352941, 0.0, 0.0, 0.0, 0.0],
              [0.0, 0.0, 0.0, 0.0, 0.0, 0.97058821, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]],
             [[0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.55882353, 0.0, 0.0, 0.0, 0.0],
              [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
              [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]],
             [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.61764705, 0.0],
              [0.67647058, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
              [0.85294116, 0.0, 0.91176468, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]],
             [[0.0, 1.0294118, 0.0, 0.0, 1.0882353, 1.1470588, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
              [1.2058823, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
              [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.3823529, 0.0, 1.4411764, 0.0, 0.0, 0.0, 0.0]],
             [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
              [0.0, 0.0, 0.0, 1.2647059, 0.0, 1.3235294, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
              [0.0, 0.0, 0.0, 0.0, 0.0, 1.5, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]]]]]),
    "gather_tree":
        ([[[[2, 2, 5], [3, 3, 3]], [[2, 2, 8], [1, 1, 1]], [[7, 7, 2], [7, 7, 7]], [[9, 9, 4], [5, 5, 7]]]], []),
    "hsigmoid_loss":
        ([[[5.5692387], [2.7355576], [2.2342398], [3.0137994], [2.8841271]]],
         [[[0.45347387, 0.34715205, 0.75969958, -0.090219334], [0.49425212, 0.48100427, 0.08268714, 0.49876517],
           [-0.32747748, -0.30667654, -0.58028239, -0.53743005], [-1.7784697, -2.1490145, -0.84081781, -1.1065376],
           [1.0738758, 0.6526773, -0.13081683, -0.31153107]],
          [[-0.26604283, 0.044042677, -3.4151099, -0.29821748], [1.7752267, 1.7974823, -1.1819862, 1.2295285],
           [0.14959036, -0.86381805, 1.5073053, 0.15339456], [0.9587934, 1.8006365, -0.87830162, 0.66144466],
           [0.21804552, -0.3667047, 1.011623, 0.42546985]],
          [[0.90747988], [0.93204206], [-0.00032457709], [0.49659044], [-0.60765862]]]),
    "hsigmoid_loss_clipped":
        ([[[42.535969], [0.0], [40.695148], [44.638618]]],
         [[[-6.6686878, 17.604998, 3.62533], [0.0, 0.0, 0.0], [11.711504, -43.37751, -3.9142983],
           [-9.3590727, 59.090813, -1.9124885]],
          [[-6.3469195, 18.233595, -2.7025874], [-1.5222027, 10.805923, 2.4070222],
           [-0.0078818211, 0.010588408, -0.011463947], [0.0, 0.0, 0.0]]]),
    "hsigmoid_loss_custom_tree":
        ([[[1.0660651], [2.1070259], [2.3080962], [2.1671288]]],
         [[[-0.25043467, 0.15353361, -0.20034845], [0.042874932, 0.64948374, -0.88532281],
           [0.35337281, -0.97027254, -0.13024841], [1.1814337, -0.45085409, -0.10071077]],
          [[-0.23257627, 1.1179396, -0.75432539], [-0.35023701, 1.378619, -0.3845011],
           [-0.19768831, 0.38271075, -0.0010020203], [-0.22020015, 0.060690872, -0.0042750048],
           [-0.00053724746, -1.0587782, 0.61404186], [0.0, 0.0, 0.0]],
          [[-0.60837853], [-1.2491319], [-0.48510531], [-0.13025543], [0.60338724], [0.0]]]),
    "lp_pool1d":
        ([[[[0.82949191, 1.8481395, 2.4114511, 1.53473], [0.81588876, 3.0423608, 1.3348137, 1.6363847]],
           [[1.3479025, 1.3694031, 1.8326746, 1.3097645], [0.65563184, 1.4216899, 3.009933, 2.4547069]]]],
         [[[[0.28510576, -0.6196841, 0.074335501, -0.96814454, 0.19780225, -1.1030688, 0.0023384925],
            [-0.11297441, -0.97933757, 0.78662032, -0.56683266, 0.31855476, 1.3863674, -0.71784043]],
           [[1.0290815, -0.19176207, 0.81332296, -1.3158455, -0.65539104, 1.9093461, 0.47258562],
            [0.27530697, 1.886476, 0.5069235, -1.6593912, -1.0539917, -1.8285267, -1.0926523]]]]),
    "lp_pool1d_layer_torch_order":
        ([[[[1.099762, 0.5594781, 1.5157062, 1.4501879], [1.7475663, 1.3580239, 1.4475515, 0.34332624]]]],
         [[[[0.31744564, 0.34200349, 0.0843831, 0.62969023, 0.7314586, 0.21172193, 0.9285714],
            [0.43706, 0.91993302, 0.94055146, 0.64313829, 1.2380885, 0.42052737, 1.5]]]]),
    "lp_pool2d":
        ([[[[[0.39180151, 1.2295642, 0.67471814, 0.58113539], [1.7129126, 2.0367694, 2.3289549, 1.933912],
             [1.4536382, 1.5037644, 2.28882, 2.1994481], [0.0, 0.0, 0.0, 0.0]],
            [[2.5554934, 3.3919532, 1.040291, 0.36931536], [1.5500339, 2.0719013, 2.3534973, 0.26914722],
             [2.8073413, 1.6058686, 2.273813, 2.1488023], [0.0, 0.0, 0.0, 0.0]]]]],
         [[[[[0.033297654, 0.54767853, 0.52063626, 0.020287246, 0.28375524, 1.0155544],
             [0.56079024, 0.13050343, 0.018501339, 0.16070795, 0.069243923, 1.0900683],
             [0.033735562, 0.24373847, 0.58936429, 0.080929406, 0.34505379, 0.32239544],
             [0.020171965, 1.3833718, 0.21006419, 0.0088199722, 0.16277033, 0.077054307],
             [0.1362928, 0.1467797, 0.033322278, 0.092964336, 0.056193221, 1.6031926]],
            [[0.0051873145, 1.6108119, 0.70023346, 1.1188127, 0.10698023, 1.2491007],
             [0.72163922, 0.97999477, 0.54051775, 1.092906, 0.12496995, 0.42393306],
             [0.17153224, 0.21607187, 0.062096298, 0.51565981, 0.88871348, 1.0877979],
             [0.088229984, 0.57151771, 0.87050611, 0.27873024, 0.16650771, 2.391571],
             [1.2277755, 0.016616039, 0.28968853, 0.44416192, 0.19568825, 0.55473757]]]]]),
    "lp_pool2d_inf":
        ([[[[[1.7494547, -0.286073, -2.6533186], [0.42105073, -0.31963137, 0.31540266]],
            [[0.6896823, 0.56119215, -1.1194752], [1.0956297, 1.5746341, 1.5490717]]]]],
         [[[[[0.5, 0.59090906, 0.0, 0.68181819], [0.0, 0.86363637, 0.0, 0.95454544], [0.77272725, 0.0, 0.0, 0.0]],
            [[1.0454545, 1.1363636, 0.0, 1.2272727], [0.0, 1.4090909, 0.0, 0.0], [1.3181819, 0.0, 0.0, 1.5]]]]]),
    "lp_pool2d_p2_nhwc":
        ([[[[[2.3804042, 1.8882133], [1.2000743, 1.3363386]], [[3.1419888, 3.4477236], [2.260721, 3.2650683]],
            [[1.79888, 2.3466604], [1.3725613, 1.1521869]]]]],
         [[[[[0.27969757, 0.2238438], [-0.32460877, -0.0026236933], [0.48352057, -0.64173174],
             [0.15084951, 0.062767319]],
            [[0.0020809909, -0.10298072], [0.20998207, 0.70956188], [-1.4625641, 1.5589534],
             [0.23562384, 0.41232154]],
            [[-0.31241709, 0.037414335], [0.40805373, -0.29895753], [-1.4582033, -1.089432],
             [0.12304227, 0.83005619]],
            [[1.0754983, 1.402643], [0.094896905, 1.1723448], [-0.66351843, 1.5259575], [-0.39805055, -0.90630978]],
            [[0.090539269, -0.26746172], [0.89269626, 0.10954417], [0.68390155, -0.62921119],
             [1.2899121, -0.95293069]]]]]),
    "multi_label_margin_layer":
        ([6.20438],
         [[[-0.30000001, 0.1, 0.0, 0.1, 0.1], [-0.2, -0.2, -0.1, 0.30000001, 0.2],
           [0.2, 0.2, 0.2, 0.2, -0.80000001]]]),
    "multi_label_margin_loss":
        ([[1.7692194, 1.0732893, 0.0, 3.6468685]],
         [[[0.0, 0.1, 0.1, -0.30000001, 0.1], [-0.16666666, -0.16666666, -0.16666666, 0.66666663, -0.16666666],
           [0.0, 0.0, 0.0, 0.0, 0.0], [0.60000002, 0.60000002, -2.4000001, 0.60000002, 0.60000002]]]),
    "npair_loss":
        ([3.7372315],
         [[[-0.0016261403, 0.067710683, -0.14857982, 0.14220841],
           [-0.070781671, -0.027101088, 0.092909999, -0.11331856],
           [-0.10587115, 0.0072649186, -0.01733543, 0.15694585],
           [-0.016991656, 0.036191292, 0.0011739844, -0.042860277],
           [0.033702064, 0.015903823, -0.025754206, -0.047173496],
           [-0.041671809, 0.00088038202, -0.028558062, -0.0063910573]],
          [[-0.015139597, -0.013872463, 0.067263812, -0.16831604],
           [0.0030813306, -0.065215766, 0.021483142, 0.18761829],
           [-0.08235836, -0.041371074, 0.082045302, -0.11976115],
           [-0.0096649108, 0.066473618, -0.031759441, 0.029898841],
           [0.041299619, 0.050477255, -0.18970545, 0.17246962],
           [0.062570378, 0.0034512782, 0.050523225, -0.10151584]]]),
    "rnnt_loss":
        ([[-4.3429662, -0.30174625]],
         [[[[[-0.38867912, -0.16698132, 0.0, 0.0, 0.0], [-0.073355626, 0.0, -0.056947883, 0.0, 0.0],
             [-0.034006404, 0.0, 0.0, -0.005938278, 0.0], [-0.003958852, 0.0, 0.0, 0.0, 0.0]],
            [[-0.22944446, -0.23885198, 0.0, 0.0, 0.0], [-0.030490252, 0.0, -0.30315004, 0.0, 0.0],
             [-0.23189968, 0.0, 0.0, -0.00631012, 0.0], [-0.0081655987, 0.0, 0.0, 0.0, 0.0]],
            [[-0.042827352, -0.27992567, 0.0, 0.0, 0.0], [-0.030766893, 0.0, -0.27951071, 0.0, 0.0],
             [-0.21475166, 0.0, 0.0, -0.30523275, 0.0], [-0.2116541, 0.0, 0.0, 0.0, 0.0]],
            [[0.0, -0.064241028, 0.0, 0.0, 0.0], [0.0, 0.0, -0.11039137, 0.0, 0.0],
             [0.0, 0.0, 0.0, -0.43251886, 0.0], [-0.5, 0.0, 0.0, 0.0, 0.0]]],
           [[[-1.3312395, 0.0, 0.0, 0.0, -0.25314082], [-0.045962248, -0.18419745, 0.0, 0.0, 0.0],
             [-0.1227983, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0]],
            [[-1.1212311, 0.0, 0.0, 0.0, -0.31501257], [-0.067669596, -0.28245154, 0.0, 0.0, 0.0],
             [-0.31109933, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0]],
            [[0.0, 0.0, 0.0, 0.0, -1.6818466], [0.0, -1.783351, 0.0, 0.0, 0.0], [-1.5, 0.0, 0.0, 0.0, 0.0],
             [0.0, 0.0, 0.0, 0.0, 0.0]],
            [[0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0],
             [0.0, 0.0, 0.0, 0.0, 0.0]]]]]),
    "rnnt_loss_label_equal_to_blank":
        ([4.705792],
         [[[[[0.0, -0.12815811, -0.12196989, 0.0], [0.0, 0.0, -0.037430294, 0.0],
             [0.0, 0.0, -0.025245626, -0.01215943], [0.0, 0.0, -0.012147294, 0.0]],
            [[0.0, -0.11796839, -0.0041193999, 0.0], [0.0, 0.0, -0.16281998, 0.0],
             [0.0, 0.0, -0.016783357, -0.17129077], [0.0, 0.0, -0.18326682, 0.0]],
            [[0.0, -0.0041235229, 0.0, 0.0], [0.0, 0.0, -0.049999736, 0.0], [0.0, 0.0, 0.0, -0.066799872],
             [0.0, 0.0, -0.25000012, 0.0]]],
           [[[0.0, 0.0, -0.18717477, 0.0], [0.0, 0.0, -0.18698777, 0.0], [0.0, 0.0, 0.0, 0.0],
             [0.0, 0.0, 0.0, 0.0]],
            [[0.0, 0.0, -0.063075252, 0.0], [0.0, 0.0, -0.25, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]],
            [[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]]]]),
    "temporal_shift":
        ([[[[[0.0, 0.0]], [[0.0, 0.0]], [[-1.0922298, -0.25002745]], [[-0.98229432, 1.0312691]],
            [[0.14867504, -0.43778315]], [[2.171257, 1.1523103]], [[-1.8188124, -0.13804933]]],
           [[[0.27626589, -1.8546281]], [[0.62390113, 1.1453112]], [[0.1038563, 0.30059102]],
            [[0.96820527, 0.86962384]], [[0.49133378, -0.4466466]], [[-0.80636007, 0.13126776]],
            [[-1.2125603, 0.15999085]]],
           [[[0.53983963, -1.7752823]], [[1.3148766, -0.47344804]], [[0.0, 0.0]], [[0.0, 0.0]],
            [[0.56778312, 0.46528235]], [[-1.1653731, -2.0359948]], [[-1.1554133, 3.3451574]]],
           [[[0.0, 0.0]], [[0.0, 0.0]], [[-0.23037298, 0.12019508]], [[-0.78846985, -2.9601226]],
            [[1.1191818, -0.98339611]], [[0.24452002, -0.58140975]], [[0.42956391, 0.79840201]]],
           [[[0.12672721, -0.69417888]], [[0.55767441, 0.099146597]], [[0.77520168, 0.55600291]],
            [[-0.54097992, 1.5244173]], [[-0.7955811, 0.28458226]], [[0.52253729, 0.083554447]],
            [[2.7207956, 0.61100787]]],
           [[[-0.61007005, 1.1854042]], [[-0.71083403, -0.78112894]], [[0.0, 0.0]], [[0.0, 0.0]],
            [[1.2083851, 0.051277284]], [[-0.42663121, 0.80794024]], [[0.057279762, -1.0401716]]]]],
         [[[[[0.66867471, 0.68072289]], [[0.69277108, 0.70481926]], [[0.0, 0.0]], [[0.0, 0.0]],
            [[0.59638554, 0.60843372]], [[0.62048191, 0.63253009]], [[0.64457834, 0.65662652]]],
           [[[0.83734941, 0.8493976]], [[0.86144578, 0.87349397]], [[0.5481928, 0.56024098]],
            [[0.57228917, 0.58433735]], [[0.76506025, 0.77710843]], [[0.78915662, 0.8012048]],
            [[0.81325299, 0.82530123]]],
           [[[0.0, 0.0]], [[0.0, 0.0]], [[0.71686745, 0.72891569]], [[0.74096388, 0.75301206]],
            [[0.93373495, 0.94578314]], [[0.95783132, 0.96987951]], [[0.98192769, 0.99397588]]],
           [[[1.1746988, 1.186747]], [[1.1987952, 1.2108433]], [[0.0, 0.0]], [[0.0, 0.0]], [[1.1024096, 1.1144578]],
            [[1.126506, 1.1385542]], [[1.1506025, 1.1626506]]],
           [[[1.3433735, 1.3554217]], [[1.3674699, 1.379518]], [[1.0542169, 1.0662651]], [[1.0783132, 1.0903615]],
            [[1.2710843, 1.2831326]], [[1.2951807, 1.3072289]], [[1.3192772, 1.3313253]]],
           [[[0.0, 0.0]], [[0.0, 0.0]], [[1.2228916, 1.2349398]], [[1.2469879, 1.2590362]], [[1.439759, 1.4518073]],
            [[1.4638554, 1.4759036]], [[1.4879518, 1.5]]]]]),
    "temporal_shift_nhwc":
        ([[[[[0.0, 0.41644284, -0.13489215, 0.16051798, 0.44269785],
             [0.0, 0.58186781, 0.39424878, -0.33638671, -0.64590645]]],
           [[[0.079428442, 0.0, 0.57461977, -1.1016713, -0.99475688],
             [0.62339145, 0.0, 0.53723872, 2.0670469, -0.29032412]]],
           [[[0.0, 1.1279013, -1.1679517, -1.0220022, 0.88351953],
             [0.0, 0.67761731, 0.23009402, 0.89485484, 1.37076]]],
           [[[0.60136509, 0.0, -0.81921417, 0.067464143, 1.0772163],
             [-0.53374451, 0.0, 1.0414937, -1.7514218, 0.11866949]]]]],
         [[[[[0.75641024, 0.0, 0.55128205, 0.57692307, 0.6025641],
             [0.88461536, 0.0, 0.67948717, 0.70512819, 0.73076922]]],
           [[[0.0, 0.52564102, 0.80769229, 0.83333331, 0.85897434],
             [0.0, 0.65384614, 0.93589741, 0.96153843, 0.98717946]]],
           [[[1.2692307, 0.0, 1.0641025, 1.0897436, 1.1153846], [1.3974359, 0.0, 1.1923077, 1.2179487, 1.2435898]]],
           [[[0.0, 1.0384616, 1.3205128, 1.3461539, 1.3717948], [0.0, 1.1666666, 1.448718, 1.4743589, 1.5]]]]]),
}


CASES = sorted(name[5:] for name in list(globals()) if name.startswith("case_"))


def _run(fn, arrays, diff, create_graph=False):
    tensors = []
    for i, a in enumerate(arrays):
        t = pycoll.to_tensor(a)
        t.stop_gradient = i not in diff
        tensors.append(t)
    res = fn(*tensors)
    outs = list(res) if isinstance(res, (tuple, list)) else [res]
    grads = []
    if diff:
        total = 0
        for o in outs:
            if o.dtype.kind == "f":
                w = np.linspace(0.5, 1.5, max(o.size, 1)).reshape(o.shape).astype(o.dtype)
                total = total + (o * pycoll.to_tensor(w)).sum()
        grads = pycoll.grad(total, [tensors[i] for i in diff], allow_unused=True, create_graph=create_graph)
    return tensors, outs, grads


def test_every_case_has_paddle_numbers():
    assert sorted(EXPECTED) == CASES


@pytest.mark.parametrize("name", CASES)
def test_values_and_gradients_match_paddle(name):
    _, outs, grads = _run(*globals()["case_" + name]())
    want_outs, want_grads = EXPECTED[name]
    assert len(outs) == len(want_outs) and len(grads) == len(want_grads)
    for got, want in zip(outs + list(grads), want_outs + want_grads):
        if want is None:
            assert got is None
            continue
        got = got.numpy()
        want = np.asarray(want)
        assert got.shape == want.shape
        if got.dtype.kind in "iu":
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)


def _second_derivative_check(fn, x0, eps=1e-5, probes=(0, 3, 7)):
    """d/dx of h(x) = sum(grad_x(fn)(x)^2), by create_graph and by central differences of h."""
    def h(a, create_graph=False):
        x = pycoll.to_tensor(a)
        x.stop_gradient = False
        (g,) = pycoll.grad(fn(x).sum(), [x], create_graph=create_graph)
        return x, (g * g).sum()
    x, hx = h(x0, create_graph=True)
    (hh,) = pycoll.grad(hx, [x])
    flat = x0.reshape(-1)
    for i in probes:
        up, down = flat.copy(), flat.copy()
        up[i] += eps
        down[i] -= eps
        numeric = (float(h(up.reshape(x0.shape))[1]) - float(h(down.reshape(x0.shape))[1])) / (2 * eps)
        assert abs(hh.numpy().reshape(-1)[i] - numeric) < 1e-5 * max(1.0, abs(numeric))


def test_create_graph_through_lp_pool_hsigmoid_npair_rnnt_and_adaptive_softmax():
    r = np.random.RandomState(30)
    _second_derivative_check(lambda x: F.lp_pool2d(x, 3, 2, 1, ceil_mode=True), np.abs(r.randn(1, 1, 3, 4)) + 0.5)
    w = pycoll.to_tensor(r.randn(5, 3))
    _second_derivative_check(lambda x: F.hsigmoid_loss(x, pycoll.to_tensor(np.array([[0], [5], [2]])), 6, w),
                             r.randn(3, 3))
    positive = pycoll.to_tensor(r.randn(4, 3))
    _second_derivative_check(lambda x: F.npair_loss(x, positive, pycoll.to_tensor(np.array([1, 2, 1, 0]))),
                             r.randn(4, 3))
    labels, lengths = pycoll.to_tensor(np.array([[1, 3]], "int32")), pycoll.to_tensor(np.array([3], "int32"))
    _second_derivative_check(lambda x: F.rnnt_loss(x, labels, lengths, pycoll.to_tensor(np.array([2], "int32")),
                                                   fastemit_lambda=0.0), r.randn(1, 3, 3, 4) - 1.5)
    head, tails = pycoll.to_tensor(r.randn(3, 3)), [[pycoll.to_tensor(r.randn(3, 2)), pycoll.to_tensor(r.randn(2, 3))]]
    _second_derivative_check(lambda x: F.adaptive_log_softmax_with_loss(
        x, pycoll.to_tensor(np.array([0, 3, 4, 1])), head, tails, [2, 5])[0], r.randn(4, 3))


def test_cross_entropy_float_ids_backward_as_their_truncation():
    r = np.random.RandomState(31)
    logits = r.randn(4, 5).astype("float32")
    grads = []
    for label in (np.array([1.9, 0.0, 4.5, 2.0], "float32"), np.array([1, 0, 4, 2])):
        x = pycoll.to_tensor(logits)
        x.stop_gradient = False
        F.cross_entropy(x, pycoll.to_tensor(label), reduction="sum").backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
    with pytest.raises(ValueError, match="integer class ids"):
        F.cross_entropy(pycoll.to_tensor(logits), pycoll.to_tensor(np.ones(4, "float32")),
                        weight=pycoll.ones([5]))


def test_bad_arguments_raise_naming_them():
    x = pycoll.rand([2, 3, 6, 6])
    with pytest.raises(ValueError, match="random_u"):
        F.fractional_max_pool2d(x, 3, random_u=1.0)
    with pytest.raises(ValueError, match="too small"):
        F.fractional_max_pool2d(x, 7)
    with pytest.raises(ValueError, match="norm_type"):
        F.lp_pool2d(x, 0, 2)
    with pytest.raises(ValueError, match="shift_ratio"):
        F.temporal_shift(x, 2, 0.5)
    with pytest.raises(ValueError, match="divisible by seg_num"):
        F.temporal_shift(x, 4)
    with pytest.raises(ValueError, match="num_classes"):
        F.hsigmoid_loss(pycoll.rand([2, 3]), pycoll.to_tensor(np.array([[0], [1]])), 1, pycoll.rand([1, 3]))
    with pytest.raises(ValueError, match="last dimension of 1"):
        F.dice_loss(pycoll.rand([2, 3]), pycoll.to_tensor(np.array([0, 1])))
    with pytest.raises(TypeError, match="integer class ids"):
        F.dice_loss(pycoll.rand([2, 3]), pycoll.ones([2, 1]))
    with pytest.raises(ValueError, match=r"\[-1, 3\)"):
        F.multi_label_margin_loss(pycoll.rand([2, 3]), pycoll.to_tensor(np.array([[0, -2], [1, 0]])))
    with pytest.raises(ValueError, match="label values should be in"):
        F.adaptive_log_softmax_with_loss(pycoll.rand([2, 3]), pycoll.to_tensor(np.array([0, 5])), pycoll.rand([3, 3]),
                                         [[pycoll.rand([3, 1]), pycoll.rand([1, 3])]], [2, 5])
    with pytest.raises(ValueError, match="parents"):
        F.gather_tree(pycoll.to_tensor(np.zeros((2, 1, 2), "int64")), pycoll.to_tensor(np.full((2, 1, 2), 2)))
    with pytest.raises(ValueError, match="cutoffs"):
        nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5, 3])


def test_loss_layers_hold_paddles_parameters():
    hs = nn.HSigmoidLoss(4, 7)
    assert [(n, p.shape) for n, p in hs.named_parameters()] == [("weight", [6, 4]), ("bias", [6, 1])]
    custom = nn.HSigmoidLoss(4, 6, is_custom=True, bias_attr=False)
    assert [p.shape for p in custom.parameters()] == [[6, 4]]
    adaptive = nn.AdaptiveLogSoftmaxWithLoss(16, 10, [3, 6], div_value=2.0, head_bias=True)
    # paddle 3.3.1 keeps the tail projections in a plain list: not parameters of the layer
    assert sorted(n for n, _ in adaptive.named_parameters()) == ["head_bias", "head_weight"]
    assert [[p.shape for p in pair] for pair in adaptive.tail_weights] == [[[16, 8], [8, 3]], [[16, 4], [4, 4]]]
    x = pycoll.randn([5, 16])
    log_prob = adaptive.log_prob(x)
    np.testing.assert_allclose(np.exp(log_prob.numpy()).sum(axis=1), 1.0, rtol=1e-5)
    output, loss = adaptive(x, pycoll.to_tensor(np.array([0, 3, 9, 5, 2])))
    np.testing.assert_allclose(output.numpy(), log_prob.numpy()[np.arange(5), [0, 3, 9, 5, 2]], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(float(loss), -output.numpy().mean(), rtol=1e-6)
    predicted = adaptive.predict(x)
    assert predicted.dtype in (np.float32, np.int64)  # paddle's rule: float32 unless no row is in the shortlist
    np.testing.assert_array_equal(predicted.numpy().astype(np.int64), log_prob.numpy().argmax(axis=1))


def test_pool_layers_print_and_draw_like_paddle():
    # reprs measured on paddle 3.3.1
    assert repr(nn.LPPool2D(2, 3, 2, 1)) == "LPPool2D(norm_type=2.0, kernel_size=3, stride=2, padding=1)"
    assert repr(nn.LPPool2d(3, 2)) == "LPPool2D(norm_type=3.0, kernel_size=2, stride=2, padding=0)"
    assert repr(nn.LPPool1D(2, 3)) == "LPPool1D(norm_type=2.0, kernel_size=3, stride=None, padding=0)"
    assert repr(nn.FractionalMaxPool2D([5, 3], return_mask=True)) == \
        "FractionalMaxPool2D(output_size=[5, 3], return_mask=True)"
    x = pycoll.to_tensor(np.arange(25 * 25, dtype="float32").reshape(1, 1, 25, 25))  # maxima: windows' ends
    draws = []
    for seed in (3, 3, 4, 5, 6):  # random_u=None: u from pycoll's generator
        pycoll.seed(seed)
        draws.append(nn.FractionalMaxPool2D(7, return_mask=True)(x)[1].numpy())
    np.testing.assert_array_equal(draws[0], draws[1])
    assert len({d.tobytes() for d in draws}) > 2


def test_parameters_to_vector_is_a_leaf_as_paddles():
    lin = nn.Linear(3, 2)
    vec = nn.utils.parameters_to_vector(lin.parameters())
    assert vec.stop_gradient is False and vec.shape == [8]
    (vec * vec).sum().backward()
    # paddle 3.3.1: the gradient lands on the vector, the parameters get none
    np.testing.assert_allclose(vec.grad.numpy(), 2 * vec.numpy())
    assert lin.weight.grad is None
    nn.utils.vector_to_parameters(pycoll.arange(12, dtype="float32"), lin.parameters())  # longer: the rest unused
    np.testing.assert_array_equal(lin.weight.numpy(), np.arange(6).reshape(3, 2))
    np.testing.assert_array_equal(lin.bias.numpy(), [6, 7])
    nn.utils.vector_to_parameters(pycoll.arange(8, dtype="float64"), lin.parameters())
    assert lin.weight.dtype == np.float64  # paddle's parameter takes the vector's dtype
    with pytest.raises(ValueError, match="at least 8 elements"):
        nn.utils.vector_to_parameters(pycoll.arange(5, dtype="float32"), lin.parameters())
    with pytest.raises(ValueError, match="one dtype"):
        nn.utils.parameters_to_vector([pycoll.ones([2]), pycoll.ones([2], dtype="float64")])


def test_init_functions_fill_in_place_and_return_none():
    pycoll.seed(11)
    w = pycoll.empty([300, 400])
    assert nn.init.kaiming_uniform_(w) is None  # leaky_relu with a=0: bound sqrt(6 / fan_in)
    assert abs(np.abs(w.numpy()).max() - np.sqrt(6 / 300)) < 1e-3 * np.sqrt(6 / 300)
    nn.init.kaiming_normal_(w, a=0.1, mode="fan_out", nonlinearity="relu")
    assert abs(w.numpy().std() - np.sqrt(2 / 400)) < 0.02 * np.sqrt(2 / 400)
    nn.init.xavier_uniform_(w, gain=2.0)
    assert abs(np.abs(w.numpy()).max() - 2 * np.sqrt(6 / 700)) < 1e-3 * 2 * np.sqrt(6 / 700)
    nn.init.trunc_normal_(w, 1.0, 0.5, 0.0, 1.5)
    assert w.numpy().min() >= 0.0 and w.numpy().max() <= 1.5
    nn.init.constant_(w, 3.0)
    assert (w.numpy() == 3).all()
    p = pycoll.create_parameter([4, 3], "float32")
    nn.init.eye_(p)
    np.testing.assert_array_equal(p.numpy(), np.eye(4, 3))
    nn.init.dirac_(pycoll.create_parameter([4, 2, 3], "float32"), 2)
    nn.init.zeros_(p)
    assert not p.numpy().any()
    with pytest.raises(TypeError, match="floating point"):
        nn.init.uniform_(pycoll.ones([3], dtype="int64"))
    with pytest.raises(ValueError, match="2-D"):
        nn.init.eye_(pycoll.empty([2, 2, 2]))
    assert nn.spectral_norm is nn.utils.spectral_norm


def test_embedding_renorm_matches_paddle():
    weight = pycoll.to_tensor(np.arange(24, dtype="float32").reshape(6, 4) / 5)
    out = F.embedding_renorm_(pycoll.to_tensor(np.array([[1, 3], [3, 5]])), weight, 2.0, 1.5)
    assert out is weight
    want = np.arange(24, dtype="float32").reshape(6, 4) / 5  # rows 1, 3, 5 rescaled: measured on paddle 3.3.1
    want[1] = [0.571324, 0.714155, 0.856987, 0.999818]
    want[3] = [0.704304, 0.762996, 0.821688, 0.880380]
    want[5] = [0.737827, 0.774718, 0.811610, 0.848501]
    np.testing.assert_allclose(weight.numpy(), want, atol=2e-6)


def test_class_center_sample_keeps_positives_then_draws_negatives():
    # the positive centers and remapped labels measured on paddle 3.3.1; the negatives are random there too
    label, centers = F.class_center_sample(pycoll.to_tensor(np.array([3, 5, 3, 9])), 12, 6)
    assert label.numpy().tolist() == [0, 1, 0, 2]
    c = centers.numpy().tolist()
    assert c[:3] == [3, 5, 9] and len(c) == 6 and len(set(c)) == 6 and not set(c[3:]) & {3, 5, 9}
    label, centers = F.class_center_sample(pycoll.to_tensor(np.array([3, 5, 3, 9, 1, 0])), 12, 3)
    assert label.numpy().tolist() == [2, 3, 2, 4, 1, 0] and centers.numpy().tolist() == [0, 1, 3, 5, 9]
    with pytest.raises(ValueError, match="num_samples"):
        F.class_center_sample(pycoll.to_tensor(np.array([3])), 4, 5)
    with F.sdp_kernel(enable_math=True):
        pass
    with pytest.raises(ValueError, match="at least one backend"):
        with F.sdp_kernel(False, False, False):
            pass


def _decoder_parts(r, kind, vocab=7, emb_dim=5, hidden=6):
    emb = nn.Embedding(vocab, emb_dim)
    emb.weight.set_value((r.randn(vocab, emb_dim) * 0.8).astype("float32"))
    cell = nn.GRUCell(emb_dim, hidden) if kind == "gru" else nn.LSTMCell(emb_dim, hidden)
    for p in cell.parameters():
        p.set_value((r.randn(*p.shape) * 0.7).astype("float32"))
    out = nn.Linear(hidden, vocab)
    out.weight.set_value((r.randn(hidden, vocab) * 1.5).astype("float32"))
    out.bias.set_value((r.randn(vocab) * 0.5).astype("float32"))
    return emb, cell, out


def test_beam_search_decoding_matches_paddle():
    # ids, lengths and final states measured on paddle 3.3.1 with the same weights
    r = np.random.RandomState(21)
    emb, gru, out = _decoder_parts(r, "gru")
    h0 = pycoll.to_tensor(r.randn(3, 6).astype("float32"))
    emb2, lstm, out2 = _decoder_parts(r, "lstm")
    hc0 = [pycoll.to_tensor(r.randn(3, 6).astype("float32")), pycoll.to_tensor(r.randn(3, 6).astype("float32"))]

    decoder = nn.BeamSearchDecoder(gru, start_token=0, end_token=1, beam_size=3, embedding_fn=emb, output_fn=out)
    ids, states, lengths = nn.dynamic_decode(decoder, inits=h0, max_step_num=9, return_length=True)
    assert ids.numpy().tolist() == [[[4, 1, 4], [1, 1, 6], [1, 1, 4], [1, 1, 1]],
                                    [[4, 3, 4], [1, 1, 3], [1, 1, 1], [1, 1, 1]],
                                    [[4, 4, 4], [1, 4, 4], [1, 1, 4], [1, 1, 1]]]
    assert lengths.numpy().tolist() == [[2, 1, 4], [2, 2, 3], [2, 3, 4]]
    np.testing.assert_allclose(states.log_probs.numpy(), [[-0.7967074, -2.031506, -3.214495],
                                                          [-0.8135586, -1.928876, -2.667959],
                                                          [-1.573913, -1.783001, -2.44563]], rtol=2e-6)
    assert states.finished.numpy().all()

    decoder = nn.BeamSearchDecoder(lstm, start_token=0, end_token=1, beam_size=3, embedding_fn=emb2, output_fn=out2)
    ids, states = nn.dynamic_decode(decoder, inits=hc0, max_step_num=3, output_time_major=True)
    assert ids.numpy().tolist() == [[[1, 0, 0], [1, 4, 3], [1, 4, 4]], [[1, 1, 0], [1, 1, 0], [1, 1, 4]],
                                    [[1, 1, 0], [1, 1, 0], [1, 1, 4]], [[1, 1, 0], [1, 1, 0], [1, 1, 4]]]
    assert states.lengths.numpy().tolist() == [[1, 2, 4]] * 3
    np.testing.assert_allclose(states.log_probs.numpy(), [[-1.688069, -2.640307, -4.471531],
                                                          [-1.359255, -2.849913, -4.423304],
                                                          [-1.390573, -3.12426, -6.171493]], rtol=2e-6)
    tiled = nn.BeamSearchDecoder.tile_beam_merge_with_batch(pycoll.to_tensor(np.arange(6.0).reshape(2, 3)), 2)
    np.testing.assert_array_equal(tiled.numpy(), np.repeat(np.arange(6.0).reshape(2, 3), 2, axis=0))


class _CountingDecoder(nn.decode.Decoder):
    """States count the steps; sequence i says it has finished at step targets[i]."""

    def __init__(self, targets):
        self.targets = np.array(targets)

    def initialize(self, inits):
        return pycoll.zeros([3, 1]), inits, pycoll.to_tensor(np.zeros(3, bool))

    def step(self, time, inputs, states, **kwargs):
        done = pycoll.to_tensor(self.targets <= int(time.numpy()[0]))
        return states * 10, states + 1, inputs, done


def test_dynamic_decode_of_a_decoder_not_tracking_its_finishing():
    # paddle's loop marks a sequence finished before counting its step (these numbers as measured on
    # paddle 3.3.1 with the same decoder): its length and (with
    # impute_finished) its states stop at the step before the one that finished it
    outputs, states, lengths = nn.dynamic_decode(_CountingDecoder([2, 0, 4]), inits=pycoll.zeros([3, 1]),
                                                 impute_finished=True, return_length=True)
    assert lengths.numpy().tolist() == [2, 0, 4]
    assert states.numpy().ravel().tolist() == [2, 0, 4]
    assert outputs.shape == [3, 5, 1]
    _, _, lengths = nn.dynamic_decode(_CountingDecoder([2, 0, 9]), inits=pycoll.zeros([3, 1]), max_step_num=3,
                                      return_length=True)
    assert lengths.numpy().tolist() == [2, 0, 4]


def test_relu_and_leaky_relu_at_nan_are_paddles():
    # paddle 3.3.1: relu(NaN) = 0 (its kernel's x > 0 ? x : 0); leaky_relu passes NaN on and its
    # gradient there is 0 (neither side's)
    x = pycoll.to_tensor(np.array([np.nan, -1.0, 1.0, 0.0], "float32"), stop_gradient=False)
    assert pycoll.nn.functional.relu(x).numpy().tolist() == [0.0, 0.0, 1.0, 0.0]
    y = pycoll.nn.functional.leaky_relu(x, 0.01)
    y.sum().backward()
    assert np.isnan(y.numpy()[0]) and x.grad.numpy().tolist() == [0.0, np.float32(0.01), 1.0, 1.0]
