"""LayerNorm, GroupNorm, the instance norms (InstanceNorm1D/2D/3D) and the batch norms
(BatchNorm1D/2D/3D and paddle's legacy BatchNorm).

As in paddle 3.3.1 the running statistics `_mean` and `_variance` are non-trainable parameters
(stop_gradient True: optimizers and data-parallel reducers leave them alone), so they come in
`parameters()` and `state_dict()` after weight and bias."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from pycoll._param_aliases import param_aliases
from pycoll.nn import functional as F
from pycoll.nn._norm_functional import GROUP_FORMATS, batch_norm, group_norm, instance_norm, normalize_batch
from pycoll.nn.initializer import Constant
from pycoll.nn.layer import Layer
from pycoll.nn.parameter import ParamAttr
from pycoll.dtypes import DTypeLike
from pycoll.tensor import Tensor


class LayerNorm(Layer):
    """Normalises over the trailing `normalized_shape` dims, then scales by weight (ones) and
    shifts by bias (zeros); both hold prod(normalized_shape) values, as in paddle. Pass
    weight_attr=False / bias_attr=False to drop them, or paddle 3.3's ``elementwise_affine=False``
    (both) / ``bias=False``; ``dtype`` and ``device`` say where and in what they are made."""

    @param_aliases({"eps": "epsilon"})
    def __init__(self, normalized_shape: Union[int, Sequence[int]], epsilon: float = 1e-5,
                 weight_attr: Any = None, bias_attr: Any = None, name: Optional[str] = None, *,
                 elementwise_affine: bool = True, bias: bool = True, device: Any = None,
                 dtype: DTypeLike = None):
        super().__init__(None, dtype)  # (paddle's `name` neither scopes the parameters nor prints)
        if not elementwise_affine:
            weight_attr = bias_attr = False
        elif not bias:
            bias_attr = False
        shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
        if not shape or not all(isinstance(n, int) and n > 0 for n in shape):
            raise ValueError(f"normalized_shape must be a positive int or a list of them, "
                             f"got {normalized_shape!r}")
        self.normalized_shape = shape
        self.epsilon = epsilon
        size = [int(np.prod(shape))]
        self.weight = self.create_parameter(size, attr=weight_attr, dtype=self._dtype, default_initializer=Constant(1.0))
        self.bias = self.create_parameter(size, attr=bias_attr, dtype=self._dtype, is_bias=True)
        if device is not None:
            self.to(device)

    def forward(self, x: Tensor) -> Tensor:
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.epsilon)

    def extra_repr(self) -> str:
        return f"normalized_shape={self.normalized_shape}, epsilon={self.epsilon}"


class GroupNorm(Layer):
    """Normalises each sample over groups of num_channels / num_groups channels, then scales by
    weight (ones) and shifts by bias (zeros), [num_channels] each; affine=False, or weight_attr /
    bias_attr False, drops them. data_format 'NC...' keeps the channels on axis 1, 'N...C' last."""

    @param_aliases({"eps": "epsilon"})
    def __init__(self, num_groups: int, num_channels: int, epsilon: float = 1e-5, *, affine: bool = True,
                 device: Any = None, dtype: DTypeLike = None, weight_attr: Any = None, bias_attr: Any = None,
                 data_format: str = "NCHW", name: Optional[str] = None):
        super().__init__("group_norm", dtype)
        for what, v in (("num_groups", num_groups), ("num_channels", num_channels)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"GroupNorm: {what} must be an int >= 1, got {v!r}")
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        if data_format not in GROUP_FORMATS:
            raise ValueError(f"GroupNorm: data_format must be one of {list(GROUP_FORMATS)}, got {data_format!r}")
        if not affine:
            weight_attr = bias_attr = False
        self._num_groups, self._num_channels, self._epsilon = num_groups, num_channels, epsilon
        self._data_format = data_format
        self.weight = self.create_parameter([num_channels], attr=weight_attr, dtype=self._dtype,
                                            default_initializer=Constant(1.0))
        self.bias = self.create_parameter([num_channels], attr=bias_attr, dtype=self._dtype, is_bias=True)
        if device is not None:
            self.to(device)

    def forward(self, x: Tensor) -> Tensor:
        return group_norm(x, self._num_groups, self._epsilon, self.weight, self.bias, self._data_format)

    def extra_repr(self) -> str:
        return f"num_groups={self._num_groups}, num_channels={self._num_channels}, epsilon={self._epsilon}"


class _InstanceNormBase(Layer):
    """Normalises every channel of every sample on its own, then scales by `scale` (ones; paddle's
    name) and shifts by `bias` (zeros). weight_attr and bias_attr False, together, drop both.
    momentum is kept for paddle compatibility: instance norm keeps no running statistics."""

    _scope = "instance_norm"
    _ndims: Tuple[int, ...] = ()
    _formats: Tuple[str, ...] = ()

    def __init__(self, num_features: int, epsilon: float = 1e-5, momentum: float = 0.9, weight_attr: Any = None,
                 bias_attr: Any = None, data_format: str = "NCHW", name: Optional[str] = None):
        super().__init__(self._scope)
        fn = type(self).__name__
        if isinstance(num_features, bool) or not isinstance(num_features, int) or num_features < 1:
            raise ValueError(f"{fn}: num_features must be an int >= 1, got {num_features!r}")
        if (weight_attr is False) != (bias_attr is False):
            raise ValueError(f"{fn}: weight_attr and bias_attr must be False together (paddle's rule), got "
                             f"{weight_attr!r} and {bias_attr!r}")
        if data_format not in self._formats:
            raise ValueError(f"{fn}: data_format must be one of {list(self._formats)}, got {data_format!r}")
        self._num_features, self._epsilon, self._momentum = num_features, epsilon, momentum
        self._data_format = data_format
        self.scale = self.create_parameter([num_features], attr=weight_attr, default_initializer=Constant(1.0))
        self.bias = self.create_parameter([num_features], attr=bias_attr, is_bias=True)

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim not in self._ndims:
            raise ValueError(f"{type(self).__name__}: x must have {' or '.join(map(str, self._ndims))} dimensions, "
                             f"got shape {x.shape}")
        return instance_norm(x, weight=self.scale, bias=self.bias, momentum=self._momentum, eps=self._epsilon,
                             data_format=self._data_format)

    def extra_repr(self) -> str:
        return f"num_features={self._num_features}, epsilon={self._epsilon}"


class InstanceNorm1D(_InstanceNormBase):
    """Instance norm of x [N, C] or [N, C, L]."""

    _scope, _ndims, _formats = "instance_norm1d", (2, 3), ("NC", "NCL")

    def __init__(self, num_features: int, epsilon: float = 1e-5, momentum: float = 0.9, weight_attr: Any = None,
                 bias_attr: Any = None, data_format: str = "NCL", name: Optional[str] = None):
        super().__init__(num_features, epsilon, momentum, weight_attr, bias_attr, data_format, name)


class InstanceNorm2D(_InstanceNormBase):
    """Instance norm of x [N, C, H, W]."""

    _scope, _ndims, _formats = "instance_norm2d", (4,), ("NCHW",)


class InstanceNorm3D(_InstanceNormBase):
    """Instance norm of x [N, C, D, H, W]."""

    _scope, _ndims, _formats = "instance_norm3d", (5,), ("NCDHW",)

    def __init__(self, num_features: int, epsilon: float = 1e-5, momentum: float = 0.9, weight_attr: Any = None,
                 bias_attr: Any = None, data_format: str = "NCDHW", name: Optional[str] = None):
        super().__init__(num_features, epsilon, momentum, weight_attr, bias_attr, data_format, name)


def _running_stats(layer: Layer, num_features: int, dtype: DTypeLike, mean_name: Optional[str],
                   variance_name: Optional[str], average: bool = True) -> None:
    for attr, name, value in (("_mean", mean_name, 0.0), ("_variance", variance_name, 1.0)):
        param = layer.create_parameter([num_features], dtype=dtype, attr=ParamAttr(
            name=name, initializer=Constant(value), trainable=False, do_model_average=average))
        setattr(layer, attr, param)


class _BatchNormBase(Layer):
    """Per-channel normalisation with the batch's statistics in training (updating the running
    ones: running = momentum * running + (1 - momentum) * batch) and the running ones in eval;
    use_global_stats True/False forces the running/batch statistics (see F.batch_norm).
    weight_attr / bias_attr False: no weight (scale 1) / no bias (shift 0)."""

    _scope = "batch_norm"
    _ndims: Tuple[int, ...] = ()
    _formats: Tuple[str, ...] = ()

    def __init__(self, num_features: int, momentum: float = 0.9, epsilon: float = 1e-5, weight_attr: Any = None,
                 bias_attr: Any = None, data_format: str = "NCHW", use_global_stats: Optional[bool] = None,
                 name: Optional[str] = None):
        super().__init__(self._scope)
        if isinstance(num_features, bool) or not isinstance(num_features, int) or num_features < 1:
            raise ValueError(f"{type(self).__name__}: num_features must be an int >= 1, got {num_features!r}")
        if data_format not in self._formats:
            raise ValueError(f"{type(self).__name__}: data_format must be one of {list(self._formats)}, "
                             f"got {data_format!r}")
        self._num_features, self._momentum, self._epsilon = num_features, momentum, epsilon
        self._weight_attr, self._bias_attr = weight_attr, bias_attr
        self._data_format, self._use_global_stats, self._name = data_format, use_global_stats, name
        self.weight = self.create_parameter([num_features], attr=weight_attr, default_initializer=Constant(1.0))
        self.bias = self.create_parameter([num_features], attr=bias_attr, is_bias=True)
        _running_stats(self, num_features, None, name and name + "_mean", name and name + "_variance")

    def _checked(self, x: Tensor) -> Tensor:
        if self._ndims and x.ndim not in self._ndims:
            raise ValueError(f"{type(self).__name__}: x must have {' or '.join(map(str, self._ndims))} "
                             f"dimensions, got shape {x.shape}")
        return x

    def forward(self, x: Tensor) -> Tensor:
        return batch_norm(self._checked(x), self._mean, self._variance, self.weight, self.bias, self.training,
                          self._momentum, self._epsilon, self._data_format, self._use_global_stats)

    def extra_repr(self) -> str:
        text = f"num_features={self._num_features}, momentum={self._momentum}, epsilon={self._epsilon}"
        if self._data_format != "NCHW":
            text += f", data_format={self._data_format}"
        return text + (f", name={self._name}" if self._name is not None else "")


class BatchNorm1D(_BatchNormBase):
    """Batch norm of x [N, C] or [N, C, L] ('NC'/'NCL'), or [N, L, C] ('NLC')."""

    _scope, _ndims, _formats = "batch_norm1d", (2, 3), ("NC", "NCL", "NLC")

    def __init__(self, num_features: int, momentum: float = 0.9, epsilon: float = 1e-5, weight_attr: Any = None,
                 bias_attr: Any = None, data_format: str = "NCL", use_global_stats: Optional[bool] = None,
                 name: Optional[str] = None):
        super().__init__(num_features, momentum, epsilon, weight_attr, bias_attr, data_format, use_global_stats,
                         name)


class BatchNorm2D(_BatchNormBase):
    """Batch norm of x [N, C, H, W] ('NCHW') or [N, H, W, C] ('NHWC')."""

    _scope, _ndims, _formats = "batch_norm2d", (4,), ("NCHW", "NHWC")


class BatchNorm3D(_BatchNormBase):
    """Batch norm of x [N, C, D, H, W] ('NCDHW') or [N, D, H, W, C] ('NDHWC')."""

    _scope, _ndims, _formats = "batch_norm3d", (5,), ("NCDHW", "NDHWC")

    def __init__(self, num_features: int, momentum: float = 0.9, epsilon: float = 1e-5, weight_attr: Any = None,
                 bias_attr: Any = None, data_format: str = "NCDHW", use_global_stats: Optional[bool] = None,
                 name: Optional[str] = None):
        super().__init__(num_features, momentum, epsilon, weight_attr, bias_attr, data_format, use_global_stats,
                         name)


class BatchNorm(Layer):
    """paddle's legacy batch norm (any x of 2+ dimensions, channels on axis 1 or, with
    data_layout 'NHWC', last), followed by the activation named by `act` (an F function).

    Batch statistics are used in training and, with trainable_statistics, in eval too;
    use_global_stats=True always uses the running ones. is_test=True starts it in eval mode.
    """

    keeps_float_in_bfloat16 = True  # Layer.bfloat16() leaves it, as paddle's does

    def __init__(self, num_channels: int, act: Optional[str] = None, is_test: bool = False, momentum: float = 0.9,
                 epsilon: float = 1e-5, param_attr: Any = None, bias_attr: Any = None, dtype: DTypeLike = "float32",
                 data_layout: str = "NCHW", in_place: bool = False, moving_mean_name: Optional[str] = None,
                 moving_variance_name: Optional[str] = None, do_model_average_for_mean_and_var: bool = True,
                 use_global_stats: bool = False, trainable_statistics: bool = False):
        super().__init__("batch_norm", dtype)
        if data_layout not in ("NCHW", "NHWC"):
            raise ValueError(f"BatchNorm: data_layout must be 'NCHW' or 'NHWC', got {data_layout!r}")
        if act is not None and not callable(getattr(F, act, None)):
            raise ValueError(f"BatchNorm: act must name an activation of nn.functional, got {act!r}")
        self._act, self._data_layout, self._momentum, self._epsilon = act, data_layout, momentum, epsilon
        self._use_global_stats, self._trainable_statistics = use_global_stats, trainable_statistics
        self.weight = self.create_parameter([num_channels], attr=param_attr, dtype=self._dtype,
                                            default_initializer=Constant(1.0))
        self.bias = self.create_parameter([num_channels], attr=bias_attr, dtype=self._dtype, is_bias=True)
        _running_stats(self, num_channels, dtype, moving_mean_name, moving_variance_name,
                       do_model_average_for_mean_and_var)
        if is_test:
            self.eval()

    def forward(self, x: Tensor) -> Tensor:
        batch_stats = not self._use_global_stats and (self.training or self._trainable_statistics)
        out = normalize_batch(x, self._mean, self._variance, self.weight, self.bias, batch_stats, self._momentum,
                              self._epsilon, 1 if self._data_layout == "NCHW" else x.ndim - 1,
                              is_test=not self.training)
        return out if self._act is None else getattr(F, self._act)(out)
