"""paddle.vision.ops.deform_conv2d and DeformConv2D: deformable convolution (v1; v2 with a mask).

Each kernel tap reads x at its regular position moved by a learned offset, bilinearly (0 outside
the image), per deformable group of channels; the samples, times the mask in v2, are then a
grouped matrix product with the weight. The sampling is grid_sample's at positions in pixels (its
zero padding reads exactly what paddle's deformable im2col reads, and a whole-pixel position's
gradient is the difference towards the next pixel, as paddle's), so the whole op is
differentiable in x, offset, weight, mask and bias through pycoll's autograd."""
from __future__ import annotations

import math
from typing import Any, Optional

from pycoll.device import array_module
from pycoll.math_ops import matmul
from pycoll.nn._grid_sample_functional import sample_pixels
from pycoll.nn._sliding import int_list
from pycoll.nn.initializer import Normal
from pycoll.nn.layer import Layer
from pycoll.shape_ops import stack
from pycoll.tensor import Tensor, wrap
from pycoll.vision.ops._common import floating

__all__ = ["DeformConv2D", "deform_conv2d"]


def deform_conv2d(x: Tensor, offset: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: Any = 1,
                  padding: Any = 0, dilation: Any = 1, deformable_groups: int = 1, groups: int = 1,
                  mask: Optional[Tensor] = None, name: Optional[str] = None) -> Tensor:
    """Deformable convolution of x [N, C, H, W] with weight [O, C / groups, kh, kw]: offset
    [N, 2 * deformable_groups * kh * kw, Ho, Wo] holds (dy, dx) per group and tap, mask (v2,
    optional) [N, deformable_groups * kh * kw, Ho, Wo] scales each sample. Returns [N, O, Ho, Wo]."""
    fn = "deform_conv2d"
    x = floating(x, fn, "x", 4)
    weight = floating(weight, fn, "weight", 4)
    offset = floating(offset, fn, "offset", 4)
    s, p, d = (int_list(v, 2, what, fn, lo) for v, what, lo in
               ((stride, "stride", 1), (padding, "padding", 0), (dilation, "dilation", 1)))
    n, c, h, w = x.shape
    o, cg, kh, kw = weight.shape
    for what, v, whole in (("groups", groups, c), ("deformable_groups", deformable_groups, c)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1 or whole % v:
            raise ValueError(f"{fn}: {what} must be an int >= 1 dividing x's {whole} channels, got {v!r}")
    if cg * groups != c or o % groups:
        raise ValueError(f"{fn}: weight must be [O, C / groups, kh, kw] with O divisible by groups = {groups} "
                         f"for x with C = {c}, got {weight.shape}")
    ho = (h + 2 * p[0] - (d[0] * (kh - 1) + 1)) // s[0] + 1
    wo = (w + 2 * p[1] - (d[1] * (kw - 1) + 1)) // s[1] + 1
    taps, dg = kh * kw, deformable_groups
    if offset.shape != [n, 2 * dg * taps, ho, wo]:
        raise ValueError(f"{fn}: offset must be [N, 2 * deformable_groups * kh * kw, Ho, Wo] = "
                         f"{[n, 2 * dg * taps, ho, wo]}, got {offset.shape}")
    if mask is not None:
        mask = floating(mask, fn, "mask", 4)
        if mask.shape != [n, dg * taps, ho, wo]:
            raise ValueError(f"{fn}: mask must be [N, deformable_groups * kh * kw, Ho, Wo] = "
                             f"{[n, dg * taps, ho, wo]}, got {mask.shape}")
    xp = array_module(x._array)
    dt = x.dtype
    # each tap's regular position in pixels: [kh * kw, Ho, 1] rows and [kh * kw, 1, Wo] columns
    rows = (xp.arange(ho) * s[0] - p[0])[None, :] + (xp.arange(kh) * d[0])[:, None]
    cols = (xp.arange(wo) * s[1] - p[1])[None, :] + (xp.arange(kw) * d[1])[:, None]
    rows = xp.repeat(rows, kw, axis=0)[:, :, None].astype(dt)
    cols = xp.tile(cols, (kh, 1))[:, None, :].astype(dt)
    moved = offset.reshape([n, dg, taps, 2, ho, wo])
    positions = stack([moved[:, :, :, 1] + wrap(cols), moved[:, :, :, 0] + wrap(rows)], axis=-1)  # (x, y)
    sampled = sample_pixels(x.reshape([n * dg, c // dg, h, w]), positions.reshape([n * dg, taps * ho, wo, 2]))
    sampled = sampled.reshape([n, dg, c // dg, taps, ho, wo])
    if mask is not None:
        sampled = sampled * mask.reshape([n, dg, 1, taps, ho, wo])
    columns = sampled.reshape([n, groups, cg * taps, ho * wo])
    out = matmul(weight.reshape([groups, o // groups, cg * taps]), columns).reshape([n, o, ho, wo])
    if bias is not None:
        bias = floating(bias, fn, "bias", 1)
        if bias.shape != [o]:
            raise ValueError(f"{fn}: bias must be [{o}] (one per output channel), got {bias.shape}")
        out = out + bias.reshape([1, o, 1, 1])
    return out


class DeformConv2D(Layer):
    """deform_conv2d as a layer: weight [out_channels, in_channels / groups, kh, kw] drawn from
    paddle's default N(0, sqrt(2 / (in_channels * kh * kw))), bias zeros (none with bias_attr=False);
    ``forward(x, offset, mask=None)``."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, deformable_groups: int = 1, groups: int = 1, weight_attr: Any = None,
                 bias_attr: Any = None) -> None:
        super().__init__()
        fn = "DeformConv2D"
        if weight_attr is False:
            raise ValueError(f"{fn}: weight_attr must not be False (a convolution needs its weight)")
        if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1 or in_channels % groups:
            raise ValueError(f"{fn}: in_channels ({in_channels}) must be divisible by groups ({groups!r})")
        self._in_channels, self._out_channels = in_channels, out_channels
        self._deformable_groups, self._groups = deformable_groups, groups
        self._kernel_size = int_list(kernel_size, 2, "kernel_size", fn)
        self._stride = int_list(stride, 2, "stride", fn)
        self._padding = int_list(padding, 2, "padding", fn, 0)
        self._dilation = int_list(dilation, 2, "dilation", fn)
        std = math.sqrt(2.0 / (in_channels * math.prod(self._kernel_size)))
        self.weight = self.create_parameter([out_channels, in_channels // groups, *self._kernel_size],
                                            attr=weight_attr, default_initializer=Normal(0.0, std))
        self.bias = self.create_parameter([out_channels], attr=bias_attr, is_bias=True)

    def forward(self, x: Tensor, offset: Tensor, mask: Optional[Tensor] = None) -> Tensor:
        return deform_conv2d(x, offset, self.weight, self.bias, self._stride, self._padding, self._dilation,
                             self._deformable_groups, self._groups, mask)
