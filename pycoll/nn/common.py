"""Linear, Embedding, Dropout, Dropout2D, Flatten, Unflatten and Identity layers."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

from pycoll._param_aliases import param_aliases
from pycoll.dtypes import DTypeLike
from pycoll.nn import functional as F
from pycoll.nn._dropout_functional import drop_probability
from pycoll.nn.initializer import Assign
from pycoll.nn.layer import Layer
from pycoll.shape_ops import flatten
from pycoll.special_ops import unflatten
from pycoll.tensor import Tensor


def _positive_int(value: Any, name: str, least: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"{name} must be {'a positive' if least else 'a non-negative'} int, got {value!r}")
    return value


class Linear(Layer):
    """y = x @ weight + bias, weight [in_features, out_features] (XavierUniform), bias zeros.

    weight_attr / bias_attr: None, a ParamAttr, an Initializer or a name; bias_attr=False drops
    the bias.
    """

    def __init__(self, in_features: int, out_features: int, weight_attr: Any = None,
                 bias_attr: Any = None, name: Optional[str] = None):
        super().__init__()
        self._named(name)
        self.in_features = _positive_int(in_features, "in_features", least=0)  # paddle's: 0 features, an empty weight
        self.out_features = _positive_int(out_features, "out_features", least=0)
        self.weight = self.create_parameter([in_features, out_features], attr=weight_attr)
        self.bias = self.create_parameter([out_features], attr=bias_attr, is_bias=True)

    def forward(self, x: Tensor) -> Tensor:
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, dtype={self.weight.dtype}"


class Embedding(Layer):
    """A lookup table of num_embeddings rows of size embedding_dim (XavierUniform init, bound
    sqrt(6 / (num_embeddings + embedding_dim)), as paddle's).

    The padding_idx row (negative: counted from the end) is zeroed at creation; looked up, it
    comes out as zeros and receives no gradient. max_norm, norm_type and scale_grad_by_freq
    as F.embedding's. ``sparse=True``: the weight's gradient is the rows looked up (paddle's
    SelectedRows; pycoll.tensor.RowsGrad), which the optimizers and DataParallel keep as rows.
    paddle 3.3's ``_weight`` gives the table's values (``_freeze=True``: not trained).
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: Optional[int] = None,
                 max_norm: Optional[float] = None, norm_type: float = 2.0, *, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight: Any = None, _freeze: bool = False, device: Any = None,
                 dtype: DTypeLike = None, weight_attr: Any = None, name: Optional[str] = None):
        super().__init__(None, dtype)
        self._named(name)
        self.num_embeddings = _positive_int(num_embeddings, "num_embeddings")
        self.embedding_dim = _positive_int(embedding_dim, "embedding_dim")
        if padding_idx is not None and not -num_embeddings <= padding_idx < num_embeddings:
            raise ValueError(f"padding_idx must be in [-{num_embeddings}, {num_embeddings}), "
                             f"got {padding_idx}")
        self.padding_idx = padding_idx  # as given, as paddle keeps it (-1: the last row)
        self.sparse, self.max_norm, self.norm_type = sparse, max_norm, norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if _weight is not None:  # paddle 3.3's given table (weight_attr ignored), trained unless _freeze
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise ValueError(f"Embedding: _weight has shape {list(_weight.shape)}; it must be "
                                 f"[num_embeddings, embedding_dim] = {[num_embeddings, embedding_dim]}")
            self.weight = self.create_parameter([num_embeddings, embedding_dim], dtype=self._dtype,
                                                default_initializer=Assign(_weight))
        else:
            self.weight = self.create_parameter([num_embeddings, embedding_dim], attr=weight_attr, dtype=self._dtype)
        if _weight is not None or weight_attr is None:
            self.weight.stop_gradient = bool(_freeze)
        if self.padding_idx is not None:  # paddle zeroes the padding row, whatever the initializer
            self.weight.array[self.padding_idx] = 0
        if device is not None:
            self.to(device)

    @param_aliases({"input": "x"})
    def forward(self, x: Tensor) -> Tensor:
        return F.embedding(x, self.weight, self.padding_idx, self.max_norm, self.norm_type, self.sparse,
                           self.scale_grad_by_freq)

    def extra_repr(self) -> str:
        padding = "" if self.padding_idx is None else f", padding_idx={self.padding_idx}"
        return (f"{self.num_embeddings}, {self.embedding_dim}{padding}, sparse={self.sparse}, "
                f"scale_grad_by_freq={self.scale_grad_by_freq}")


class Dropout(Layer):
    """``F.dropout`` with this layer's p, axis and mode, training in train() mode (paddle's
    signature: `inplace` second, in place on the input as F.dropout's)."""

    def __init__(self, p: float = 0.5, inplace: bool = False, axis: Union[int, Sequence[int], None] = None,
                 mode: str = "upscale_in_train", name: Optional[str] = None):
        super().__init__()
        self._name_arg = name  # printed before inplace, where paddle prints it
        p = drop_probability("Dropout", p)
        if mode not in ("upscale_in_train", "downscale_in_infer"):
            raise ValueError(f"mode must be 'upscale_in_train' or 'downscale_in_infer', got {mode!r}")
        self.p, self.inplace, self.axis, self.mode = p, inplace, axis, mode

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout(x, self.p, self.axis, self.training, self.inplace, self.mode)

    def extra_repr(self) -> str:
        shown = f"name={self._name_arg}, " if self._name_arg else ""
        return f"p={self.p}, axis={self.axis}, mode={self.mode}, {shown}inplace={self.inplace}"


class Dropout2D(Layer):
    """``F.dropout2d``: whole channels of x [N, C, H, W] (or NHWC) dropped with probability p
    while training, the rest scaled by 1 / (1 - p)."""

    def __init__(self, p: float = 0.5, data_format: str = "NCHW", name: Optional[str] = None):
        super().__init__()
        self._named(name)
        if data_format not in ("NCHW", "NHWC"):
            raise ValueError(f"Dropout2D: data_format must be 'NCHW' or 'NHWC', got {data_format!r}")
        self.p, self.data_format = drop_probability("Dropout2D", p), data_format

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout2d(x, self.p, self.training, self.data_format)

    def extra_repr(self) -> str:
        return f"p={self.p}, data_format={self.data_format}"


class Flatten(Layer):
    """Merge the dimensions start_axis..stop_axis (inclusive) into one."""

    def __init__(self, start_axis: int = 1, stop_axis: int = -1):
        super().__init__()
        self.start_axis, self.stop_axis = start_axis, stop_axis

    def forward(self, x: Tensor) -> Tensor:
        return flatten(x, self.start_axis, self.stop_axis)


class Unflatten(Layer):
    """Split dimension `axis` into `shape` (``pycoll.unflatten``)."""

    def __init__(self, axis: int, shape: Any, name: Optional[str] = None):
        super().__init__()
        self.axis, self.shape, self._name = axis, shape, name

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return unflatten(input, self.axis, self.shape)

    def extra_repr(self) -> str:
        return f"axis={self.axis}, shape={self.shape}" + (f", name={self._name}" if self._name else "")


class Identity(Layer):
    """Returns its input; takes (and ignores) any arguments, like paddle's."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__()

    def forward(self, input: Any) -> Any:  # noqa: A002
        return input
