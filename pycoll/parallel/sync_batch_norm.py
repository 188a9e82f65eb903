"""SyncBatchNorm: batch norm whose batch statistics are those of the whole batch spread over the
ranks of a group (paddle.nn.SyncBatchNorm; pycoll.nn reaches it lazily).

In training the forward all-reduces each channel's sum with the element count, then its sum of
squared deviations; the backward all-reduces the per-channel sums of the gradient and of the
gradient times the normalised input, which is all the input gradient of the whole-batch
normalisation needs. Weight and bias gradients stay this rank's own sums, for DataParallel to
reduce as it does every other gradient. In eval, and when the environment is not initialised or
the group has one rank, it is plain BatchNorm and communicates nothing.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import pycoll.distributed as dist
from pycoll.nn.initializer import Constant
from pycoll.nn.layer import Layer
from pycoll.nn.norm import _BatchNormBase
from pycoll.nn._norm_functional import normalize_batch
from pycoll.parallel.mp_ops import group_position
from pycoll.tensor import Tensor


class SyncBatchNorm(_BatchNormBase):
    """paddle's SyncBatchNorm (any x of 2+ dimensions; 'NCHW'-like formats keep the channels on
    axis 1, 'NHWC'-like ones last), synchronised over `group` (None: the world). As in paddle,
    weight_attr / bias_attr False give a constant weight of ones / bias of zeros that takes no
    gradient."""

    _scope = "sync_batch_norm"
    _formats = ("NC", "NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC")

    def __init__(self, num_features: int, momentum: float = 0.9, epsilon: float = 1e-5, weight_attr: Any = None,
                 bias_attr: Any = None, data_format: str = "NCHW", name: Optional[str] = None,
                 group: Optional[dist.Group] = None):
        super().__init__(num_features, momentum, epsilon, weight_attr, bias_attr, data_format, None, name)
        if group is not None and not isinstance(group, dist.Group):  # said here, before the first forward
            group_position(group, "SyncBatchNorm")
        self._group = group
        for attr, value, is_bias in (("weight", 1.0, False), ("bias", 0.0, True)):
            if getattr(self, attr) is None:
                fixed = self.create_parameter([num_features], default_initializer=Constant(value), is_bias=is_bias)
                fixed.stop_gradient = True
                setattr(self, attr, fixed)

    def _all_reduce(self) -> Optional[Callable[[Any], None]]:
        """The in-place sum over the group, or None where there is nobody to talk to."""
        if not dist.is_initialized() or group_position(self._group, "SyncBatchNorm")[1] == 1:
            return None
        return lambda array: dist.all_reduce(array, group=self._group)

    def forward(self, x: Tensor) -> Tensor:
        channel_axis = 1 if self._data_format[1] == "C" else x.ndim - 1
        if x.ndim < 2:
            raise ValueError(f"SyncBatchNorm: x must have at least 2 dimensions, got shape {x.shape}")
        return normalize_batch(x, self._mean, self._variance, self.weight, self.bias, self.training,
                               self._momentum, self._epsilon, channel_axis,
                               self._all_reduce() if self.training else None)

    @classmethod
    def convert_sync_batchnorm(cls, layer: Layer, group: Optional[dist.Group] = None) -> Layer:
        """`layer` with every BatchNorm1D/2D/3D in it (itself included) replaced by a
        SyncBatchNorm that keeps its parameters and running statistics (the same tensors);
        other layers stay and get their converted sublayers. ``group`` (pycoll's; paddle's
        takes none): the group the new layers synchronise over, the world by default."""
        out = layer
        if isinstance(layer, _BatchNormBase) and not isinstance(layer, SyncBatchNorm):
            # attrs other than False are dropped: the new layer's own parameters are replaced below
            out = cls(layer._num_features, layer._momentum, layer._epsilon,
                      False if layer._weight_attr is False else None, False if layer._bias_attr is False else None,
                      layer._data_format, layer._name, group)
            if layer.weight is not None:
                out.weight = layer.weight
            if layer.bias is not None:
                out.bias = layer.bias
            out._mean, out._variance = layer._mean, layer._variance
            out.training = layer.training
        for name, sub in list(layer.named_children()):
            out.add_sublayer(name, cls.convert_sync_batchnorm(sub, group))
        return out
