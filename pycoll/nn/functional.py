"""paddle.nn.functional: gelu, linear, embedding, layer_norm, label_smooth, one_hot, normalize,
and, re-exported here, the other activations (`_activation_functional` with softmax and
log_softmax, `_channel_activation_functional`), dropout, dropout1d and dropout2d (`_dropout_functional`), the
losses (`_loss_functional`, `_class_losses`, `_pair_losses` with the distances), attention
(`_attention_functional`), convolution (`_conv_functional`, `_conv_transpose_functional`),
pooling (`_pool_functional`, `_adaptive_pool_functional`, `_unpool_functional`), pad
(`_pad_functional`), resampling (`_resample_functional`) and batch_norm,
group_norm, instance_norm and rms_norm (`_norm_functional`), pdist (`pycoll.product_ops`); the
in-place activations (`_inplace_activations`),
the margin, likelihood and CTC losses (`_margin_losses`, `_likelihood_losses`, `_ctc_loss`),
bilinear, unfold/fold and the other rearrangements (`_layout_functional`), local_response_norm,
the alpha dropouts, dropout3d and gumbel_softmax (`_noise_functional`), affine_grid and grid_sample.

linear, embedding, layer_norm, softmax, normalize and cross_entropy are single fused ops (one graph
node, hand-written backward) to keep per-op overhead and temporaries low.
"""
from __future__ import annotations

import math
import sys
from typing import Any, Optional, Sequence, Union

import numpy as np

from pycoll import _graph
from pycoll._fp_quiet import SILENT as _SILENT, quiet as _quiet, restore as _restore, silence as _silence
from pycoll._param_aliases import param_aliases
from pycoll._sparse_rows import record_rows
from pycoll._special import erf
from pycoll._promotion import accumulates_in_float32, normalized_in_float32
from pycoll._tensor_ops import (as_tensor, check_broadcast, needs_grad, op_output, paired, placed, require_floating,
                                value_output)
from pycoll._tensor_ops import with_out as _with_out
from pycoll.device import array_module
from pycoll.kernels import host_math
from pycoll.math_ops import integers_as_float, relu, rows_gram, rows_matmul, same_dtype, sigmoid, tanh
from pycoll.nn._activation_functional import rrelu
from pycoll.nn._activation_functional import (celu, elu, hardshrink, hardsigmoid, hardswish, hardtanh, leaky_relu,
                                             log_sigmoid, log_softmax, logsigmoid, mish, relu6, selu, silu, softmax,
                                             softplus, softshrink, softsign, swish, tanhshrink, thresholded_relu)
from pycoll.nn._adaptive_pool_functional import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d,
                                                 adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d)
from pycoll.nn._attention_functional import scaled_dot_product_attention
from pycoll.nn._channel_activation_functional import glu, maxout, prelu, swiglu
from pycoll.nn._class_losses import cross_entropy, nll_loss
from pycoll.nn._conv_functional import conv1d, conv2d, conv3d
from pycoll.nn._conv_transpose_functional import conv1d_transpose, conv2d_transpose, conv3d_transpose
from pycoll.nn._dropout_functional import dropout, dropout1d, dropout2d
from pycoll.nn._loss_functional import (binary_cross_entropy, binary_cross_entropy_with_logits, kl_div,
                                        l1_loss, log_loss, mse_loss, smooth_l1_loss)
from pycoll.nn._norm_functional import batch_norm, group_norm, instance_norm, rms_norm, row_moments
from pycoll.nn._pair_losses import (cosine_embedding_loss, cosine_similarity, hinge_embedding_loss,
                                   margin_ranking_loss, pairwise_distance, sigmoid_focal_loss,
                                   softmax_with_cross_entropy, square_error_cost)
from pycoll.nn._pad_functional import pad
from pycoll.nn._pool_functional import avg_pool1d, avg_pool2d, avg_pool3d, max_pool1d, max_pool2d, max_pool3d
from pycoll.nn._resample_functional import interpolate, pixel_shuffle, pixel_unshuffle, upsample
from pycoll.nn._unpool_functional import max_unpool1d, max_unpool2d, max_unpool3d
from pycoll.nn._bilinear_functional import bilinear
from pycoll.nn._class_center_sampling import class_center_sample
from pycoll.nn._ctc_loss import ctc_loss
from pycoll.nn._edit_distance import edit_distance
from pycoll.nn._grid_sample_functional import affine_grid, grid_sample
from pycoll.nn._inplace_activations import (elu_, hardtanh_, leaky_relu_, relu_, softmax_, tanh_,
                                            thresholded_relu_)
from pycoll.nn._layout_functional import channel_shuffle, fold, sequence_mask, unfold, zeropad2d
from pycoll.nn._lp_pool_functional import lp_pool1d, lp_pool2d
from pycoll.nn._likelihood_losses import gaussian_nll_loss, poisson_nll_loss
from pycoll.nn import _flash_attention as flash_attention  # paddle's F.flash_attention is a module
from pycoll.nn._flash_attention import (flash_attention_v3_varlen, flash_attn_qkvpacked, flash_attn_varlen_qkvpacked,
                                        flashmask_attention, sdp_kernel)
from pycoll.nn._margin_cross_entropy import margin_cross_entropy
from pycoll.nn._sparse_attention import sparse_attention
from pycoll.nn._margin_losses import (multi_label_soft_margin_loss, multi_margin_loss, soft_margin_loss,
                                      triplet_margin_loss, triplet_margin_with_distance_loss)
from pycoll.nn._noise_functional import alpha_dropout, dropout3d, feature_alpha_dropout, gumbel_softmax
from pycoll.nn._response_norm_functional import local_response_norm
from pycoll.nn._fractional_pool_functional import fractional_max_pool2d, fractional_max_pool3d
from pycoll.nn._hierarchical_softmax import adaptive_log_softmax_with_loss, hsigmoid_loss
from pycoll.nn._temporal_functional import gather_tree, temporal_shift
from pycoll.nn._rnnt_loss import rnnt_loss
from pycoll.nn._set_losses import dice_loss, multi_label_margin_loss, npair_loss
from pycoll.diag_ops import diag_embed
from pycoll.product_ops import pdist
from pycoll.shape_ops import scatter_add, unbroadcast
from pycoll.tensor import Tensor
from pycoll._module_paths import install_paths as _install_paths
from pycoll.tensor_namespace import first_function as _first_function

__all__ = ["relu", "tanh", "sigmoid", "gelu", "softmax", "log_softmax", "leaky_relu", "silu", "elu",
           "softplus", "hardswish", "linear", "embedding", "layer_norm", "dropout", "one_hot",
           "normalize", "mse_loss", "l1_loss", "smooth_l1_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "nll_loss", "kl_div", "log_loss", "cross_entropy", "conv1d", "conv2d",
           "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d", "pad", "batch_norm",
           "max_pool1d", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d", "group_norm", "instance_norm",
           "dropout2d", "label_smooth", "scaled_dot_product_attention", "relu6", "swish", "mish", "softsign",
           "tanhshrink", "log_sigmoid", "logsigmoid", "hardsigmoid", "hardshrink", "softshrink", "hardtanh",
           "thresholded_relu", "celu", "selu", "glu", "maxout", "prelu", "interpolate", "upsample", "pixel_shuffle",
           "pixel_unshuffle", "conv1d_transpose", "conv2d_transpose", "cosine_similarity", "pairwise_distance",
           "margin_ranking_loss", "cosine_embedding_loss", "hinge_embedding_loss", "square_error_cost",
           "sigmoid_focal_loss", "softmax_with_cross_entropy", "diag_embed", "conv3d", "conv3d_transpose",
           "max_pool3d", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d", "max_unpool1d", "max_unpool2d",
           "max_unpool3d",
           "relu_", "elu_", "leaky_relu_", "hardtanh_", "softmax_", "tanh_", "thresholded_relu_",
           "triplet_margin_loss", "triplet_margin_with_distance_loss", "soft_margin_loss",
           "multi_label_soft_margin_loss", "multi_margin_loss", "poisson_nll_loss", "gaussian_nll_loss",
           "ctc_loss", "bilinear", "unfold", "fold", "local_response_norm", "channel_shuffle",
           "alpha_dropout", "feature_alpha_dropout", "dropout3d", "zeropad2d", "gumbel_softmax",
           "sequence_mask", "affine_grid", "grid_sample", "pdist", "rrelu", "dropout1d", "rms_norm", "swiglu",
           "dice_loss", "npair_loss", "multi_label_margin_loss", "hsigmoid_loss", "adaptive_log_softmax_with_loss",
           "lp_pool1d", "lp_pool2d", "fractional_max_pool2d", "fractional_max_pool3d",
           "temporal_shift", "gather_tree", "embedding_renorm_", "class_center_sample", "sdp_kernel",
           "rnnt_loss", "margin_cross_entropy", "flash_attn_qkvpacked",
           "flash_attn_varlen_qkvpacked", "flashmask_attention", "sparse_attention", "flash_attention_v3_varlen",
           "edit_distance"]
# `from pycoll.nn.functional.flash_attention import flash_attention`, as from paddle's package
sys.modules[__name__ + ".flash_attention"] = flash_attention

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _gelu_uses_tanh(approximate: Any) -> bool:
    """paddle's forms of gelu's `approximate`: a bool, None (exact), or 'tanh' / 'none'."""
    if approximate is None or isinstance(approximate, bool):
        return bool(approximate)
    if isinstance(approximate, str) and approximate in ("tanh", "none"):
        return approximate == "tanh"
    raise ValueError(f"gelu: approximate must be a bool, 'tanh' or 'none', got {approximate!r}")


@param_aliases({"input": "x"})
def gelu(x: Tensor, approximate: Union[bool, str] = False, name: Optional[str] = None) -> Tensor:
    """x * Phi(x) (exact, with erf); approximate=True or 'tanh' uses the tanh formula, False or
    'none' the exact one (paddle's forms)."""
    approximate = _gelu_uses_tanh(approximate)
    x = require_floating(as_tensor(x), "gelu")  # paddle refuses integers (they would truncate)
    a = x._array
    xp = array_module(a)
    saved = _silence(_SILENT)  # inf/NaN inputs (a ** 3 past the range, inf * 0) give inf/NaN silently, as paddle's
    try:
        if approximate:
            t = xp.tanh(_SQRT_2_OVER_PI * (a + 0.044715 * a * a * a))  # a ** 3 is NumPy's slow generic pow
            out = 0.5 * a * (1 + t)
        else:
            fused = host_math.gelu(a)  # host float32/64: one pass of the kernel, the same steps
            out, cdf = fused if fused is not None else _gelu_exact(a)
    finally:
        _restore(saved)
    if approximate:
        def backward(g: Any) -> tuple:
            du = _SQRT_2_OVER_PI * (1 + 3 * 0.044715 * a * a)
            return (g * (0.5 * (1 + t) + 0.5 * a * (1 - t * t) * du),)
    else:
        def backward(g: Any) -> tuple:
            fused = host_math.gelu_grad(a, cdf, g)
            if fused is not None:
                return (fused,)
            pdf = xp.exp(-0.5 * a * a) / math.sqrt(2 * math.pi)
            return (g * (cdf + a * pdf),)
    return op_output(out.astype(a.dtype, copy=False), backward, x)


def _gelu_exact(a: Any) -> tuple:
    """(a * cdf, cdf), cdf = 0.5 * (1 + erf(a / sqrt(2))): paddle's steps, in a's dtype."""
    cdf = 0.5 * (1 + erf(a * math.sqrt(0.5)))
    return a * cdf, cdf


@accumulates_in_float32
def linear(x: Tensor, weight: Tensor, bias: Optional[Tensor] = None, name: Optional[str] = None) -> Tensor:
    """x @ weight + bias with weight of shape [in_features, out_features] (paddle layout)."""
    x = as_tensor(x)
    if x.ndim == 0:
        raise ValueError("linear: x must have at least 1 dimension (its last holds the features), got a 0-d tensor")
    weight = integers_as_float(x, as_tensor(weight))
    x, weight, bias = placed("linear", x, weight, bias)  # auto-parallel: a batch split beside a split weight
    if bias is not None:  # a bias as placed as the weight's columns (auto-parallel's pair hook)
        weight, bias = paired(weight, bias)
    xa, wa = x._array, weight._array
    same_dtype("linear", xa, wa, ("x", "weight"), complex_mix=True)
    if xa.shape[-1] != wa.shape[0]:
        raise ValueError(f"linear: x has {xa.shape[-1]} features in its last dimension, the weight "
                         f"expects {wa.shape[0]} (weight shape {list(wa.shape)})")
    saved = _silence(_SILENT)  # inf * 0 and sums past the range give NaN/inf silently, as paddle's
    try:
        out = rows_matmul(xa, wa)
        if bias is not None:  # paddle's: any bias that broadcasts with x @ weight
            b = bias._array
            check_broadcast("linear", "x @ weight", out.shape, "bias", b.shape)
            if np.broadcast_shapes(out.shape, b.shape) == out.shape:
                out += b
            else:
                out = out + b
    finally:
        _restore(saved)
    rx, rw, rb = needs_grad(x), needs_grad(weight), needs_grad(bias)

    product = xa.shape[:-1] + wa.shape[1:]  # x @ weight's shape: a bias may have grown the output past it

    def backward(g: Any) -> tuple:
        gb = unbroadcast(g, bias._array.shape) if rb else None
        g = unbroadcast(g, product)
        gx = rows_matmul(g, wa.T) if rx else None
        gw = rows_gram(xa, g) if rw else None
        return gx, gw, gb
    return op_output(out, backward, x, weight, bias)


@param_aliases({"input": "x"})
def embedding(x: Tensor, weight: Tensor, padding_idx: Optional[int] = None, max_norm: Optional[float] = None,
              norm_type: float = 2.0, sparse: bool = False, scale_grad_by_freq: bool = False,
              name: Optional[str] = None) -> Tensor:
    """Rows of `weight` picked by the integer ids in x; rows for padding_idx come out as zeros
    and get no gradient. With `max_norm` the weight rows looked up whose `norm_type`-norm exceeds
    it are first scaled in place to max_norm / (norm + 1e-7) (paddle's embedding_renorm_, no
    gradient); with `scale_grad_by_freq` a row's gradient is divided by how often x names it.
    Gradients are dense; with `sparse` the ids looked up are also recorded on the weight (a leaf),
    for the optimizers' lazy_mode to update those rows alone (paddle's SelectedRows gradient)."""
    x, weight = placed("embedding", as_tensor(x), weight)  # auto-parallel: a vocabulary split made whole
    ids, w = x._array, weight._array
    if ids.dtype.kind not in "iu":
        raise TypeError(f"embedding: x must hold integer ids, got dtype {ids.dtype}")
    if w.ndim != 2:
        raise ValueError(f"embedding: weight must be 2-D [num_embeddings, embedding_dim], got shape {list(w.shape)}")
    if ids.size:  # NumPy would wrap a negative id around and paddle's CPU kernel reads garbage for it
        lo, hi = int(ids.min()), int(ids.max())
        if lo < 0 or hi >= w.shape[0]:
            raise ValueError(f"embedding: x holds the id {lo if lo < 0 else hi}; ids must be >= 0 and < {w.shape[0]} "
                             f"(the weight's rows; a negative padding_idx counts from the end, the ids do not)")
    if padding_idx is not None and padding_idx >= w.shape[0]:
        raise ValueError(f"embedding: padding_idx must be within [-{w.shape[0]}, {w.shape[0]}), got {padding_idx}")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += w.shape[0]
    xp = array_module(w)
    if max_norm and w.size:
        embedding_renorm_(x, weight, max_norm, norm_type)
    out = w[ids]
    if padding_idx is not None:
        out[ids == padding_idx] = 0
    w_shape = w.shape  # the backward keeps no values of the weight (see pycoll._graph's saved memory)
    record = sparse and weight.grad_node is None and not weight.stop_gradient
    # a leaf weight's sparse gradient goes as its rows (paddle's SelectedRows): see Tensor.RowsGrad
    as_rows = record and not _graph.has_record_hooks()

    def backward(g: Any) -> tuple:
        rows, flat_ids = g.reshape(-1, w_shape[1]), ids.reshape(-1)
        if padding_idx is not None:
            keep = flat_ids != padding_idx
            rows, flat_ids = rows[keep], flat_ids[keep]
        if scale_grad_by_freq:  # each row divided by how often the ids name it
            _, where, counts = xp.unique(ids.reshape(-1), return_inverse=True, return_counts=True)
            freq = counts[where.reshape(-1)]
            rows = rows / (freq[keep] if padding_idx is not None else freq)[:, None].astype(rows.dtype)
        if record:  # kept past this backward: copies, not views of the ids or of g (reused buffers)
            flat_ids = flat_ids.copy()
            record_rows(weight, flat_ids)
        if as_rows:
            return None, _graph.RowsValue(flat_ids, rows if rows.base is None else rows.copy(), w_shape, g.dtype)
        gw = array_module(g).zeros(w_shape, dtype=g.dtype)
        scatter_add(gw, flat_ids, rows)
        return None, gw
    return op_output(out, backward, x, weight)


def embedding_renorm_(x: Tensor, weight: Tensor, max_norm: float, norm_type: float = 2.0) -> Tensor:
    """Scale, in place and outside the graph, the rows of `weight` that the ids in x name and
    whose norm_type-norm exceeds max_norm, to max_norm / (norm + 1e-7) times themselves; returns
    weight (paddle's)."""
    ids, w = as_tensor(x)._array, weight._array
    if ids.dtype.kind not in "iu":
        raise TypeError(f"embedding_renorm_: x must hold integer ids, got dtype {ids.dtype}")
    xp = array_module(w)
    rows = xp.unique(ids.reshape(-1))
    norm = (xp.abs(w[rows]) ** norm_type).sum(axis=1, keepdims=True) ** (1.0 / norm_type)
    w[rows] *= xp.where(norm > max_norm, max_norm / (norm + 1e-7), 1).astype(w.dtype, copy=False)
    weight._bump_inplace_version()
    return weight


@param_aliases({"input": "x", "eps": "epsilon"})
@accumulates_in_float32
def layer_norm(x: Tensor, normalized_shape: Union[int, Sequence[int]], weight: Optional[Tensor] = None,
               bias: Optional[Tensor] = None, epsilon: float = 1e-5, name: Optional[str] = None) -> Tensor:
    """Normalise over the trailing `normalized_shape` dims; weight/bias hold prod(shape) values.
    As paddle's kernel, epsilon (taken as a float32) must lie in [0, 0.001]."""
    if (isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.number))
            or not np.float32(0.0) <= np.float32(epsilon) <= np.float32(0.001)):
        raise ValueError(f"layer_norm: 'epsilon' should be between 0.0 and 0.001, but received [{epsilon}]")
    x = as_tensor(x)
    widened = normalized_in_float32(lambda v: layer_norm(v, normalized_shape, weight, bias, epsilon), x, weight, bias)
    if widened is not None:
        return widened
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    x, = placed("layer_norm", x, axes=tuple(range(max(x.ndim - len(shape), 0), x.ndim)))  # auto-parallel: whole there
    a = x._array
    if list(a.shape[a.ndim - len(shape):]) != shape:
        raise ValueError(f"layer_norm: normalized_shape {shape} must match the last dims of x, "
                         f"whose shape is {list(a.shape)}")
    xp = array_module(a)
    axes = tuple(range(a.ndim - len(shape), a.ndim))
    lead = tuple(range(a.ndim - len(shape)))
    moments = row_moments(a, axes)
    if moments is None:
        centered = a - a.mean(axis=axes, keepdims=True)
        var = (centered * centered).mean(axis=axes, keepdims=True)
    else:
        mean, var = moments
        centered = a - mean
    rstd = 1.0 / xp.sqrt(var + epsilon)
    xhat = centered
    xhat *= rstd  # (centered is a new array: scaled where it is, no third temporary)
    w = weight._array.reshape(shape) if weight is not None else None
    rx, rw, rb = needs_grad(x), needs_grad(weight), needs_grad(bias)
    if not (_graph.is_grad_enabled() and (rx or rw or rb)) and all(
            t is None or t._array.dtype == xhat.dtype for t in (weight, bias)):
        out = xhat  # nothing keeps xhat for a backward (inference): scaled and shifted where it is
        if w is not None:
            out *= w
        if bias is not None:
            out += bias._array.reshape(shape)
    elif w is not None:
        out = xhat * w
        if bias is not None:
            out += bias._array.reshape(shape)
    else:  # xhat is kept for the backward: the output never shares its memory
        out = xhat + bias._array.reshape(shape) if bias is not None else xhat.copy()

    def backward(g: Any) -> tuple:
        gw = (g * xhat).sum(axis=lead).reshape(weight._array.shape) if rw else None
        gb = g.sum(axis=lead).reshape(bias._array.shape) if rb else None
        gx = None
        if rx:
            gh = g * w if w is not None else g
            gx = rstd * (gh - gh.mean(axis=axes, keepdims=True)
                         - xhat * (gh * xhat).mean(axis=axes, keepdims=True))
        return gx, gw, gb
    backward.normalization = (rstd, epsilon)  # type: ignore[attr-defined]  # for create_graph (pycoll._higher_order)
    return op_output(out, backward, x, weight, bias)


def label_smooth(label: Tensor, prior_dist: Optional[Tensor] = None, epsilon: float = 0.1,
                 name: Optional[str] = None) -> Tensor:
    """(1 - epsilon) * label + epsilon * prior_dist, the prior being uniform over the last axis
    (1 / num_classes) unless given ([1, num_classes])."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0.0 <= epsilon <= 1.0:
        raise ValueError(f"label_smooth: epsilon must be a number in [0, 1], got {epsilon!r}")
    label, prior_dist = placed("label_smooth", as_tensor(label), prior_dist)  # auto-parallel: the prior cut alike
    a = label._array
    if a.dtype.kind in "biu":
        raise TypeError(f"label_smooth: label must hold floating-point numbers, got dtype {a.dtype}")
    if a.ndim == 0:
        raise ValueError("label_smooth: label must have a class axis (its last), got a 0-d tensor")
    if prior_dist is None:
        prior: Any = 1.0 / label.shape[-1]  # the whole number of classes
    else:
        prior = as_tensor(prior_dist)._array
        if prior.size != a.shape[-1]:
            raise ValueError(f"label_smooth: prior_dist must hold num_classes={a.shape[-1]} values, got shape "
                             f"{list(prior.shape)}")
        prior = prior.reshape(a.shape[-1]).astype(a.dtype, copy=False)
    with _quiet():  # inf + -inf: NaN, silently as paddle's
        out = ((1.0 - epsilon) * a + epsilon * prior).astype(a.dtype, copy=False)
    return op_output(out, lambda g: (g * (1.0 - epsilon),), label)


@param_aliases({"input": "x"})
def one_hot(x: Tensor, num_classes: int = -1, name: Optional[str] = None) -> Tensor:
    """float32 one-hot vectors of the integer ids in x (a new last axis of num_classes; -1: the
    largest id + 1). Not differentiable."""
    x = as_tensor(x)
    ids = x._array
    xp = array_module(ids)
    if ids.dtype.kind not in "iu":
        raise TypeError(f"one_hot: x must hold integer ids, got dtype {ids.dtype}")
    if isinstance(num_classes, Tensor) and num_classes.size == 1 and num_classes.dtype.kind in "iu":
        num_classes = num_classes.item()  # paddle takes a one-element integer Tensor too
    if isinstance(num_classes, bool) or not isinstance(num_classes, (int, np.integer)):
        raise TypeError(f"one_hot: num_classes must be an int, got {type(num_classes).__name__}")
    if num_classes == -1:
        num_classes = int(ids.max()) + 1 if ids.size else 0
    if num_classes < 0:
        raise ValueError(f"one_hot: num_classes must be > 0 or -1, got {num_classes}")
    if ids.size and bool(xp.any((ids < 0) | (ids >= num_classes))):
        bad = ids[(ids < 0) | (ids >= num_classes)].reshape(-1)[0]
        raise ValueError(f"one_hot: ids must lie in [0, {num_classes}), got {int(bad)}")
    out = xp.zeros(ids.shape + (num_classes,), np.float32)
    xp.put_along_axis(out, ids[..., None].astype(np.int64), 1.0, axis=-1)  # 8x faster than comparing with arange
    return value_output(out, "one_hot", x)


@param_aliases({"input": "x", "dim": "axis", "eps": "epsilon"})
@accumulates_in_float32
def normalize(x: Tensor, p: float = 2, axis: int = 1, epsilon: float = 1e-12,
              name: Optional[str] = None) -> Tensor:
    """x / max(||x||_p, epsilon) along `axis` (p > 0, or inf). Where the norm is below epsilon
    only the division passes a gradient (paddle clips the norm). Real x only (paddle has no
    complex kernel)."""
    x = require_floating(as_tensor(x), "normalize")
    a = x._array
    xp = array_module(a)
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not p > 0:
        raise ValueError(f"normalize: p must be a number > 0 (or inf), got {p!r}")
    if not -max(a.ndim, 1) <= axis < max(a.ndim, 1):
        raise ValueError(f"normalize: axis must be in [-{a.ndim}, {a.ndim}), got {axis}")
    x, = placed("normalize", x, axes=(axis % max(a.ndim, 1),))  # auto-parallel: the norm's axis whole
    a = x._array
    mag = xp.abs(a)
    if math.isinf(p):
        norm = mag.max(axis=axis, keepdims=True)
    elif p == 2:
        norm = xp.sqrt((a * a).sum(axis=axis, keepdims=True))
    else:
        norm = (mag ** p).sum(axis=axis, keepdims=True) ** (1.0 / p)
    denom = xp.maximum(norm, epsilon)
    out = (a / denom).astype(a.dtype, copy=False)

    def backward(g: Any) -> tuple:
        grad = g / denom
        through = norm > epsilon  # the clip passes the norm's gradient only above epsilon
        safe = xp.where(through, norm, 1)
        if math.isinf(p):
            dnorm = xp.sign(a) * (mag == norm)
        else:
            dnorm = xp.sign(a) * (mag / safe) ** (p - 1)
        coef = -(g * a).sum(axis=axis, keepdims=True) / (denom * denom) * through
        return ((grad + coef * dnorm).astype(a.dtype, copy=False),)
    return op_output(out, backward, x)


# paddle 3.3's keyword-only out= on these four
softmax, sigmoid, tanh, normalize = _with_out(softmax), _with_out(sigmoid), _with_out(tanh), _with_out(normalize)

# paddle's submodule paths (`F.loss.mse_loss`, `from paddle.nn.functional.conv import conv2d`): each
# answers with this module's function of the name asked for
_install_paths(sys.modules[__name__], ("activation", "common", "conv", "distance", "extension", "input", "loss",
                                       "moe_permute", "moe_unpermute", "norm", "pooling", "sdpa", "sparse_attention",
                                       "transformer", "vision"),
               lambda module, name: _first_function(module, name, (sys.modules[__name__],)),
               "pycoll.nn.functional's functions of those names.")
