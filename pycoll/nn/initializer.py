"""Parameter initializers (paddle.nn.initializer names).

Values are drawn on the host from pycoll's generator (`pycoll.seed`) and copied into the parameter,
so initial weights depend only on the seed, never on the device.
"""
from __future__ import annotations

import math
import weakref
from statistics import NormalDist
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np

from pycoll.dtypes import is_floating
from pycoll.random import get_rng
from pycoll.tensor import Tensor

__all__ = ["Initializer", "Constant", "Normal", "Uniform", "TruncatedNormal", "XavierNormal",
           "XavierUniform", "KaimingNormal", "KaimingUniform", "Assign", "calculate_gain", "Orthogonal", "Dirac",
           "Bilinear", "set_global_initializer", "ConstantInitializer", "MSRAInitializer", "NormalInitializer",
           "NumpyArrayInitializer", "TruncatedNormalInitializer", "UniformInitializer", "XavierInitializer"]

# Under ``pycoll.LazyGuard`` (pycoll.nn.lazy_init switches this) a Parameter is not filled when its
# layer is built: the initializer is kept on it and runs at ``param.initialize()``, as paddle's.
lazy_init_enabled = False
# The Parameters made under it whose initializer has not run and into which nothing was loaded
# since (their in-place version is still the one noted here): a Layer refuses to run on them, as
# paddle's, which hold no memory yet, refuse to compute.
# Keyed by id (a Tensor's == is elementwise): id -> (weak reference, in-place version).
lazy_pending: "Dict[int, Tuple[weakref.ref, int]]" = {}


def _note_lazy(param: Tensor) -> None:
    key = id(param)
    lazy_pending[key] = (weakref.ref(param, lambda _ref: lazy_pending.pop(key, None)), param.inplace_version)

# paddle's set_global_initializer: (weight, bias) initializers that replace a layer's defaults for
# every parameter created after it, below the initializer a ParamAttr names
_global_initializers: "list[Optional[Initializer]]" = [None, None]


def set_global_initializer(weight_init: Optional["Initializer"], bias_init: Optional["Initializer"] = None) -> None:
    """Initialise every weight (and bias) created from now on with these, in place of the layers'
    default initializers (an initializer given through ``weight_attr``/``bias_attr`` still wins);
    ``None`` cancels, as in paddle."""
    for name, init in (("weight_init", weight_init), ("bias_init", bias_init)):
        if init is not None and not isinstance(init, Initializer):
            raise TypeError(f"set_global_initializer: {name} must be an Initializer or None, got {type(init).__name__}")
    _global_initializers[:] = [weight_init, bias_init]


def global_initializer(is_bias: bool) -> Optional["Initializer"]:
    """The initializer set_global_initializer gave biases (``is_bias``) or weights, if any."""
    return _global_initializers[1 if is_bias else 0]


def _fans(shape: Sequence[int]) -> Tuple[int, int]:
    """(fan_in, fan_out) the paddle way: [in, out] for matrices, [out, in, *kernel] beyond."""
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = int(np.prod(shape[2:]))
    return shape[1] * receptive, shape[0] * receptive


class Initializer:
    """Fills a parameter in place: `init(param)` calls ``forward(param, block)``, which a user's
    initializer overrides as paddle's documents (pycoll's own supply ``_host_values``). Only
    Constant and Assign fill integer tensors (paddle has no kernel for the others there)."""
    _floating_only = True
    _seed = 0  # the legacy classes' seed: not 0 draws from a generator of its own (paddle's op seed)

    def __call__(self, param: Tensor, block: None = None) -> Tensor:
        if lazy_init_enabled and hasattr(param, "set_init_func"):  # a Parameter, under LazyGuard
            param.set_init_func(self.forward)
            _note_lazy(param)
            return param
        return self.forward(param, block)

    def forward(self, param: Tensor, block: None = None) -> Tensor:
        return self._fill(param)

    def _fill(self, param: Tensor) -> Tensor:
        if self._floating_only and not (is_floating(param.dtype) or param.dtype.kind == "c"):
            raise TypeError(f"{type(self).__name__}: the tensor must be floating point, got dtype {param.dtype}")
        if 0 in param.shape:  # nothing to fill (and a fan of 0 to divide by): paddle's empty weight
            return param
        values = self._host_values(tuple(param.shape))
        param.set_value(np.asarray(values, dtype=param.dtype))
        return param

    def _rng(self) -> np.random.Generator:
        """pycoll's generator (`pycoll.seed`), or one seeded with this initializer's own seed: the
        same seed fills parameters with the same values, as paddle's."""
        return get_rng() if not self._seed else np.random.default_rng(self._seed)

    def _host_values(self, shape: Tuple[int, ...]) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__}: an Initializer subclass defines forward(param, block), "
                                  f"which fills param in place (param.set_value(...)) and returns it")


class Constant(Initializer):
    _floating_only = False

    def __init__(self, value: float = 0.0):
        self.value = value

    def _host_values(self, shape: Tuple[int, ...]) -> np.ndarray:
        return np.full(shape, self.value)


class Normal(Initializer):
    def __init__(self, mean: float = 0.0, std: float = 1.0, name: Optional[str] = None):
        if std < 0:
            raise ValueError(f"std must be >= 0, got {std}")
        self.mean, self.std = mean, std

    def _host_values(self, shape: Tuple[int, ...]) -> np.ndarray:
        return self._rng().normal(self.mean, self.std, shape)


class Uniform(Initializer):
    def __init__(self, low: float = -1.0, high: float = 1.0, name: Optional[str] = None):
        if high < low:
            raise ValueError(f"high must be >= low, got low={low}, high={high}")
        self.low, self.high = low, high

    def _host_values(self, shape: Tuple[int, ...]) -> np.ndarray:
        return self._rng().uniform(self.low, self.high, shape)


class _Xavier(Initializer):
    """Glorot initialisation: the spread depends on fan_in + fan_out (taken from the shape
    unless given)."""

    def __init__(self, fan_in: Optional[float] = None, fan_out: Optional[float] = None, gain: float = 1.0,
                 name: Optional[str] = None):
        self.fan_in, self.fan_out, self.gain = fan_in, fan_out, gain

    def _fan_sum(self, shape: Tuple[int, ...]) -> int:
        fan_in, fan_out = _fans(shape)
        return (self.fan_in or fan_in) + (self.fan_out or fan_out)


class XavierUniform(_Xavier):
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""

    def _host_values(self, shape: Tuple[int, ...]) -> np.ndarray:
        limit = abs(self.gain) * math.sqrt(6.0 / self._fan_sum(shape))  # a negative gain: the same spread
        return self._rng().uniform(-limit, limit, shape)


class XavierNormal(_Xavier):
    """N(0, std) with std = gain * sqrt(2 / (fan_in + fan_out))."""

    def _host_values(self, shape: Tuple[int, ...]) -> np.ndarray:
        return self._rng().normal(0.0, abs(self.gain) * math.sqrt(2.0 / self._fan_sum(shape)), shape)


class TruncatedNormal(Initializer):
    """N(mean, std) restricted to [a, b] (absolute bounds, as paddle's)."""

    def __init__(self, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                 name: Optional[str] = None):
        if std <= 0:
            raise ValueError(f"std must be > 0, got {std}")
        if not a < b:
            raise ValueError(f"a must be < b, got a={a}, b={b}")
        self.mean, self.std, self.a, self.b = mean, std, a, b

    def _host_values(self, shape: Tuple[int, ...]) -> np.ndarray:
        rng, count = self._rng(), int(np.prod(shape))
        dist = NormalDist(self.mean, self.std)
        lo, hi = dist.cdf(self.a), dist.cdf(self.b)
        if hi - lo < 0.05:  # rejection would mostly reject: invert the CDF instead (slow, rare)
            u = np.clip(rng.uniform(lo, hi, count), 1e-300, 1 - 1e-16)  # inv_cdf needs (0, 1)
            return np.clip(np.vectorize(dist.inv_cdf, otypes=[float])(u), self.a, self.b).reshape(shape)
        out = np.empty(0)
        while out.size < count:  # keep the draws inside [a, b] until there are enough
            draw = rng.normal(self.mean, self.std, int((count - out.size) / (hi - lo) * 1.1) + 16)
            out = np.concatenate([out, draw[(draw >= self.a) & (draw <= self.b)]])
        return out[:count].reshape(shape)


_GAINS = {"sigmoid": 1.0, "linear": 1.0, "conv1d": 1.0, "conv2d": 1.0, "conv3d": 1.0,
          "conv1d_transpose": 1.0, "conv_transpose1d": 1.0, "conv2d_transpose": 1.0,
          "conv_transpose2d": 1.0, "conv3d_transpose": 1.0, "conv_transpose3d": 1.0,
          "tanh": 5.0 / 3, "relu": math.sqrt(2.0), "selu": 3.0 / 4}


def calculate_gain(nonlinearity: str, param: Optional[float] = None) -> float:
    """paddle's recommended gain of a nonlinearity; param is leaky_relu's slope (default 0.01)."""
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity not in _GAINS:
        raise ValueError(f"nonlinearity {nonlinearity!r} is not supported: use one of "
                         f"{sorted(_GAINS) + ['leaky_relu']}")
    return _GAINS[nonlinearity]


class _Kaiming(Initializer):
    """He initialisation: the spread is gain / sqrt(fan), fan = fan_in (the `fan_in` argument
    when given) or, with mode='fan_out', the shape's fan_out."""

    def __init__(self, fan_in: Optional[float] = None, negative_slope: float = 0.0,
                 nonlinearity: str = "relu", mode: str = "fan_in"):
        if mode not in ("fan_in", "fan_out"):
            raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {mode!r}")
        calculate_gain(nonlinearity, negative_slope)  # an unknown nonlinearity fails here
        self.fan_in, self.negative_slope = fan_in, negative_slope
        self.nonlinearity, self.mode = nonlinearity, mode

    def _spread(self, shape: Tuple[int, ...]) -> float:
        fan_in, fan_out = _fans(shape)
        fan = (self.fan_in or fan_in) if self.mode == "fan_in" else fan_out
        return calculate_gain(self.nonlinearity, self.negative_slope) / math.sqrt(float(fan))


class KaimingNormal(_Kaiming):
    """N(0, std) with std = gain / sqrt(fan)."""

    def _host_values(self, shape: Tuple[int, ...]) -> np.ndarray:
        return self._rng().normal(0.0, self._spread(shape), shape)


class KaimingUniform(_Kaiming):
    """U(-a, a) with a = gain * sqrt(3 / fan)."""

    def _host_values(self, shape: Tuple[int, ...]) -> np.ndarray:
        limit = self._spread(shape) * math.sqrt(3.0)
        return self._rng().uniform(-limit, limit, shape)


class Assign(Initializer):
    """Sets the parameter to a given value (array, nested list or Tensor) of its shape."""
    _floating_only = False

    def __init__(self, value: Any, name: Optional[str] = None):
        if isinstance(value, Tensor):
            value = value.numpy()
        value = np.asarray(value)
        if value.dtype.kind not in "biuf":
            raise TypeError(f"value must be numeric (an array, a list or a Tensor), got dtype {value.dtype}")
        self.value = value

    def _host_values(self, shape: Tuple[int, ...]) -> np.ndarray:
        if self.value.shape != shape:
            raise ValueError(f"Assign: value has shape {list(self.value.shape)}, the parameter "
                             f"{list(shape)}")
        return self.value


class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix times `gain`: shape[0] rows against the product of the other
    dims as columns; the rows are orthonormal when there are fewer rows, else the columns
    (paddle's recipe: the Q of a Gaussian's QR, its columns' signs fixed by R's diagonal)."""

    def __init__(self, gain: float = 1.0, name: Optional[str] = None):
        if gain is None:
            raise ValueError("Orthogonal: gain must be a number, got None")
        self.gain = gain

    def _host_values(self, shape: Tuple[int, ...]) -> np.ndarray:
        if len(shape) < 2:
            raise ValueError(f"Orthogonal: the parameter needs 2 or more dims, got shape {list(shape)}")
        rows, cols = shape[0], int(np.prod(shape[1:]))
        q, r = np.linalg.qr(self._rng().normal(0.0, 1.0, (max(rows, cols), min(rows, cols))))
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return self.gain * q.reshape(shape)


class Dirac(Initializer):
    """An identity convolution kernel [out, in, *k]: in each of `groups` blocks of out / groups
    output channels, channel j gets a 1 at input channel j, at the kernel's centre
    (k // 2 per axis), for j < min(out / groups, in); zeros elsewhere."""

    def __init__(self, groups: int = 1, name: Optional[str] = None):
        if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0:
            raise ValueError(f"Dirac: groups must be a positive int, got {groups!r}")
        self.groups = groups

    def _host_values(self, shape: Tuple[int, ...]) -> np.ndarray:
        if len(shape) not in (3, 4, 5):
            raise ValueError(f"Dirac: the parameter needs 3, 4 or 5 dims, got shape {list(shape)}")
        if shape[0] % self.groups:
            raise ValueError(f"Dirac: shape[0]={shape[0]} must be divisible by groups={self.groups}")
        out = np.zeros(shape)
        per_group = shape[0] // self.groups
        centre = tuple(k // 2 for k in shape[2:])
        for g in range(self.groups):
            for j in range(min(per_group, shape[1])):
                out[(g * per_group + j, j) + centre] = 1.0
        return out


class Bilinear(Initializer):
    """The bilinear-upsampling kernel for a transposed convolution of weight [C_out, C_in, K, K].
    As paddle's, element i (flat) takes x = i % K and y = (i / K) % K with a true division, so
    y is fractional; the values follow that formula exactly."""

    def __init__(self) -> None:
        pass

    def _host_values(self, shape: Tuple[int, ...]) -> np.ndarray:
        if len(shape) != 4:
            raise ValueError(f"Bilinear: the parameter needs 4 dims, got shape {list(shape)}")
        if shape[2] != shape[3]:
            raise ValueError(f"Bilinear: shape[2] must equal shape[3], got shape {list(shape)}")
        size = shape[3]
        f = math.ceil(size / 2.0)
        c = (2 * f - 1 - f % 2) / (2.0 * f)
        i = np.arange(int(np.prod(shape)), dtype=np.float64)
        x, y = i % size, (i / size) % size
        weight = (1 - np.abs(x / f - c)) * (1 - np.abs(y / f - c))
        return weight.astype(np.float32).reshape(shape)


# ---- paddle's older class names -------------------------------------------------------------
# Still exported by paddle 3.3.1 and used by older model code: ``XavierInitializer(uniform=True,
# ...)`` and ``MSRAInitializer(uniform=True, ...)`` choose the uniform or the normal form by a flag,
# ``NormalInitializer(loc, scale)`` names the mean and the spread otherwise. Each is the modern
# initializer under paddle's old signature; a ``seed`` other than 0 draws from a generator of its own
# (the same values for every parameter it fills, as paddle's). In paddle the modern classes derive
# from these; here these derive from the modern ones (``isinstance(init, XavierInitializer)`` holds
# for the old names only).


def _seeded(init: Initializer, seed: Any, cls: str) -> None:
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"{cls}: seed must be an int (0: pycoll's generator), got {seed!r}")
    init._seed = seed


class ConstantInitializer(Constant):
    """Constant(value); ``force_cpu`` is accepted (pycoll fills on the host anyway)."""

    def __init__(self, value: float = 0.0, force_cpu: bool = False):
        super().__init__(value)


class NormalInitializer(Normal):
    """Normal(mean=loc, std=scale)."""

    def __init__(self, loc: float = 0.0, scale: float = 1.0, seed: int = 0):
        super().__init__(loc, scale)
        _seeded(self, seed, "NormalInitializer")


class TruncatedNormalInitializer(TruncatedNormal):
    """TruncatedNormal(mean=loc, std=scale, a, b)."""

    def __init__(self, loc: float = 0.0, scale: float = 1.0, seed: int = 0, a: float = -2.0, b: float = 2.0):
        super().__init__(loc, scale, a, b)
        _seeded(self, seed, "TruncatedNormalInitializer")


class UniformInitializer(Uniform):
    """Uniform(low, high). ``diag_num``, ``diag_step`` and ``diag_val`` are accepted and, as in
    paddle 3.3.1's dygraph, change nothing."""

    def __init__(self, low: float = -1.0, high: float = 1.0, seed: int = 0, diag_num: int = 0, diag_step: int = 0,
                 diag_val: float = 1.0):
        super().__init__(low, high)
        _seeded(self, seed, "UniformInitializer")


class XavierInitializer(XavierUniform):
    """XavierUniform (``uniform=True``) or XavierNormal, with their fan_in, fan_out and gain."""

    def __init__(self, uniform: bool = True, fan_in: Optional[float] = None, fan_out: Optional[float] = None,
                 seed: int = 0, gain: float = 1.0):
        super().__init__(fan_in, fan_out, gain)
        self.uniform = uniform
        _seeded(self, seed, "XavierInitializer")

    def _host_values(self, shape: Tuple[int, ...]) -> np.ndarray:
        return (XavierUniform if self.uniform else XavierNormal)._host_values(self, shape)


class MSRAInitializer(KaimingUniform):
    """KaimingUniform (``uniform=True``) or KaimingNormal, with their fan_in, negative_slope,
    nonlinearity and mode."""

    def __init__(self, uniform: bool = True, fan_in: Optional[float] = None, seed: int = 0,
                 negative_slope: float = 0.0, nonlinearity: str = "relu", mode: str = "fan_in"):
        super().__init__(fan_in, negative_slope, nonlinearity, mode)
        self.uniform = uniform
        _seeded(self, seed, "MSRAInitializer")

    def _host_values(self, shape: Tuple[int, ...]) -> np.ndarray:
        return (KaimingUniform if self.uniform else KaimingNormal)._host_values(self, shape)


class NumpyArrayInitializer(Assign):
    """Assign(value): the parameter set to a NumPy array of its shape."""

    def __init__(self, value: Any):
        super().__init__(value)
