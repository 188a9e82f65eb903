"""Activation layers (paddle.nn names); the functions are in `pycoll.nn.functional`."""
from __future__ import annotations

from typing import Any, Optional, Union

from pycoll._param_aliases import param_aliases
from pycoll.nn import functional as F
from pycoll.nn.initializer import Constant
from pycoll.nn.layer import Layer
from pycoll.tensor import Tensor


class _Plain(Layer):
    """An activation whose only argument is paddle's `name` (another keyword, torch's ``inplace``
    say, is refused naming the activation's class, as paddle's own ``__init__`` does)."""

    def __init__(self, name: Optional[str] = None, **unexpected: Any):
        if unexpected:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"{next(iter(unexpected))!r}")
        super().__init__()
        self._named(name)


class ReLU(_Plain):
    def forward(self, x: Tensor) -> Tensor:
        return F.relu(x)


class Tanh(_Plain):
    def forward(self, x: Tensor) -> Tensor:
        return F.tanh(x)


class Sigmoid(_Plain):
    def forward(self, x: Tensor) -> Tensor:
        return F.sigmoid(x)


class GELU(Layer):
    def __init__(self, approximate: Union[bool, str] = False, name: Optional[str] = None):
        super().__init__()
        self._named(name)
        F._gelu_uses_tanh(approximate)  # refuses a bad form here, at construction
        self.approximate = approximate

    def forward(self, x: Tensor) -> Tensor:
        return F.gelu(x, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate}"


class Softmax(Layer):
    def __init__(self, axis: int = -1, name: Optional[str] = None):
        super().__init__()
        self._named(name)
        self.axis = axis

    def forward(self, x: Tensor) -> Tensor:
        return F.softmax(x, self.axis)

    def extra_repr(self) -> str:
        return f"axis={self.axis}"


class LeakyReLU(Layer):
    def __init__(self, negative_slope: float = 0.01, name: Optional[str] = None):
        super().__init__()
        self._named(name)
        self.negative_slope = negative_slope

    def forward(self, x: Tensor) -> Tensor:
        return F.leaky_relu(x, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}"


class RReLU(Layer):
    """Randomized leaky relu (`functional.rrelu`): random slopes in [lower, upper] while training,
    their mean (lower + upper) / 2 in eval mode."""

    def __init__(self, lower: float = 0.125, upper: float = 1.0 / 3.0, name: Optional[str] = None):
        super().__init__()
        self._named(name)
        self.lower, self.upper = lower, upper

    def forward(self, x: Tensor) -> Tensor:
        return F.rrelu(x, self.lower, self.upper, self.training)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}, training={self.training}, dtype={self._dtype}"


class Silu(Layer):
    def __init__(self, inplace: bool = False, name: Optional[str] = None):
        super().__init__()
        self._named(name)
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.silu(x, self.inplace)

    def extra_repr(self) -> str:
        return f"inplace={self.inplace}"


class ELU(Layer):
    def __init__(self, alpha: float = 1.0, name: Optional[str] = None):
        super().__init__()
        self._named(name)
        self.alpha = alpha

    def forward(self, x: Tensor) -> Tensor:
        return F.elu(x, self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}"


class Softplus(Layer):
    def __init__(self, beta: float = 1, threshold: float = 20, name: Optional[str] = None):
        super().__init__()
        self._named(name)
        self.beta, self.threshold = beta, threshold

    def forward(self, x: Tensor) -> Tensor:
        return F.softplus(x, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Hardswish(_Plain):
    def forward(self, x: Tensor) -> Tensor:
        return F.hardswish(x)


SiLU = Silu  # paddle's two names of one layer


class ReLU6(_Plain):
    def forward(self, x: Tensor) -> Tensor:
        return F.relu6(x)


class Swish(_Plain):
    def forward(self, x: Tensor) -> Tensor:
        return F.swish(x)


class Mish(_Plain):
    def forward(self, x: Tensor) -> Tensor:
        return F.mish(x)


class Softsign(_Plain):
    def forward(self, x: Tensor) -> Tensor:
        return F.softsign(x)


class Tanhshrink(_Plain):
    def forward(self, x: Tensor) -> Tensor:
        return F.tanhshrink(x)


class LogSigmoid(_Plain):
    def forward(self, x: Tensor) -> Tensor:
        return F.log_sigmoid(x)


class Hardsigmoid(_Plain):
    """F.hardsigmoid with its defaults (slope 1/6, offset 0.5)."""

    def forward(self, x: Tensor) -> Tensor:
        return F.hardsigmoid(x)


class LogSoftmax(Softmax):
    def forward(self, x: Tensor) -> Tensor:
        return F.log_softmax(x, self.axis)


class _Threshold(Layer):
    @param_aliases({"lambd": "threshold"})
    def __init__(self, threshold: float = 0.5, name: Optional[str] = None):
        super().__init__()
        self._named(name)
        self._threshold = threshold

    def extra_repr(self) -> str:
        return f"threshold={self._threshold}"


class Hardshrink(_Threshold):
    @param_aliases({"input": "x"})
    def forward(self, x: Tensor) -> Tensor:
        return F.hardshrink(x, self._threshold)


class Softshrink(_Threshold):
    @param_aliases({"input": "x"})
    def forward(self, x: Tensor) -> Tensor:
        return F.softshrink(x, self._threshold)


class ThresholdedReLU(Layer):
    def __init__(self, threshold: float = 1.0, value: float = 0.0, name: Optional[str] = None):
        super().__init__()
        self._named(name)
        self._threshold, self._value = threshold, value

    def forward(self, x: Tensor) -> Tensor:
        return F.thresholded_relu(x, self._threshold, self._value)

    def extra_repr(self) -> str:
        return f"threshold={self._threshold}, value={self._value}"


class Hardtanh(Layer):
    def __init__(self, min: float = -1.0, max: float = 1.0, name: Optional[str] = None):  # noqa: A002
        super().__init__()
        self._named(name)
        self._min, self._max = min, max

    def forward(self, x: Tensor) -> Tensor:
        return F.hardtanh(x, self._min, self._max)

    def extra_repr(self) -> str:
        return f"min={self._min}, max={self._max}"


class CELU(Layer):
    def __init__(self, alpha: float = 1.0, name: Optional[str] = None):
        super().__init__()
        self._named(name)
        self._alpha = alpha

    def forward(self, x: Tensor) -> Tensor:
        return F.celu(x, self._alpha)

    def extra_repr(self) -> str:
        return f"alpha={self._alpha}"


class SELU(Layer):
    def __init__(self, scale: float = 1.0507009873554805, alpha: float = 1.6732632423543772,
                 name: Optional[str] = None):
        super().__init__()
        self._named(name)
        self._scale, self._alpha = scale, alpha

    def forward(self, x: Tensor) -> Tensor:
        return F.selu(x, self._scale, self._alpha)

    def extra_repr(self) -> str:
        return f"scale={self._scale:.16f}, alpha={self._alpha:.16f}"


class GLU(Layer):
    @param_aliases({"dim": "axis"})
    def __init__(self, axis: int = -1, name: Optional[str] = None):
        super().__init__()
        self._named(name)
        self._axis = axis

    @param_aliases({"input": "x"})
    def forward(self, x: Tensor) -> Tensor:
        return F.glu(x, self._axis)

    def extra_repr(self) -> str:
        return f"axis={self._axis}"


class Maxout(Layer):
    def __init__(self, groups: int, axis: int = 1, name: Optional[str] = None):
        super().__init__()
        self._named(name)
        self._groups, self._axis = groups, axis

    def forward(self, x: Tensor) -> Tensor:
        return F.maxout(x, self._groups, self._axis)

    def extra_repr(self) -> str:
        return f"groups={self._groups}, axis={self._axis}"


class PReLU(Layer):
    """F.prelu with a learnt weight `_weight` of num_parameters slopes (1: one for all channels;
    else one per channel), all `init` to begin with (paddle's parameter name and default)."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, weight_attr: Any = None,
                 data_format: str = "NCHW", name: Optional[str] = None):
        super().__init__()
        self._named(name)
        if isinstance(num_parameters, bool) or not isinstance(num_parameters, int) or num_parameters < 1:
            raise ValueError(f"PReLU: num_parameters must be an int >= 1, got {num_parameters!r}")
        self._num_parameters, self._init, self._data_format = num_parameters, init, data_format
        self._weight = self.create_parameter([num_parameters], attr=weight_attr, default_initializer=Constant(init))

    def forward(self, x: Tensor) -> Tensor:
        return F.prelu(x, self._weight, data_format=self._data_format)

    def extra_repr(self) -> str:
        return (f"num_parameters={self._num_parameters}, data_format={self._data_format}, init={self._init}, "
                f"dtype={self._dtype}")
