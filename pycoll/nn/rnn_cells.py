"""Recurrent cells with paddle 3.3.1's names, parameters and gate order: `RNNCellBase`,
`SimpleRNNCell`, `LSTMCell` and `GRUCell`.

A cell maps one step, `forward(inputs, states=None) -> (outputs, new_states)`, from differentiable
ops (matmul, split, sigmoid, tanh), so autograd reaches the inputs, the states and every
parameter. Weights are [gates * hidden_size, in] (paddle's layout, used as x @ W^T); every
parameter starts Uniform(-1/sqrt(hidden_size), 1/sqrt(hidden_size)). A `*_attr=False` does not
drop the parameter: as paddle, it becomes a frozen constant (weights 1, biases 0).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Optional, Sequence, Tuple

from pycoll._nest import flatten, map_structure
from pycoll.device import array_module
from pycoll.dtypes import DTypeLike, convert_dtype, default_float
from pycoll.math_ops import matmul, relu, sigmoid, tanh
from pycoll.nn.attention import positive_int
from pycoll.nn.initializer import Constant, Uniform
from pycoll.nn.layer import Layer
from pycoll.nn.parameter import Parameter
from pycoll.shape_ops import split
from pycoll.tensor import Tensor, wrap

__all__ = ["RNNCellBase", "SimpleRNNCell", "LSTMCell", "GRUCell"]


def _is_shape(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(n, int) and not isinstance(n, bool) for n in value)


def _map_shapes(fn: Callable, shapes: Any) -> Any:
    """fn over each shape (a list/tuple of ints) of a nested structure of shapes."""
    if _is_shape(shapes):
        return fn(shapes)
    if isinstance(shapes, (list, tuple)):
        return type(shapes)(_map_shapes(fn, s) for s in shapes)
    raise TypeError(f"shape must be a list/tuple of ints or a nested structure of them, got {shapes!r}")


def _cell_parameter(cell: Layer, shape: Tuple[int, ...], attr: Any, std: float, is_bias: bool) -> Parameter:
    """paddle's cell parameter: Uniform(-std, std) unless attr says otherwise; attr=False gives a
    frozen constant (1 for weights, 0 for biases) instead of no parameter."""
    if attr is False:
        param = cell.create_parameter(shape, None, is_bias=is_bias,
                                      default_initializer=Constant(0.0 if is_bias else 1.0))
        param.stop_gradient = True
        return param
    return cell.create_parameter(shape, attr, is_bias=is_bias, default_initializer=Uniform(-std, std))


def _affine(x: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
    return matmul(x, weight, transpose_y=True) + bias


def simple_rnn_step(x: Tensor, h: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor, b_hh: Tensor,
                    activation: str) -> Tensor:
    """One Elman step: act(x W_ih^T + b_ih + h W_hh^T + b_hh), act 'tanh' or 'relu'."""
    return (tanh if activation == "tanh" else relu)(_affine(x, w_ih, b_ih) + _affine(h, w_hh, b_hh))


def lstm_step(x: Tensor, h: Tensor, c: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor, b_hh: Tensor
              ) -> Tuple[Tensor, Tensor]:
    """One LSTM step (no projection), gates i, f, g, o: the new (h, c)."""
    i, f, g, o = split(_affine(x, w_ih, b_ih) + _affine(h, w_hh, b_hh), 4, axis=-1)
    c = sigmoid(f) * c + sigmoid(i) * tanh(g)
    return sigmoid(o) * tanh(c), c


def gru_step(x: Tensor, h: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor, b_hh: Tensor) -> Tensor:
    """One GRU step, gates r, z, c, the reset gate applied after the hidden product: the new h."""
    x_r, x_z, x_c = split(_affine(x, w_ih, b_ih), 3, axis=-1)
    h_r, h_z, h_c = split(_affine(h, w_hh, b_hh), 3, axis=-1)
    r = sigmoid(x_r + h_r)
    z = sigmoid(x_z + h_z)
    c = tanh(x_c + r * h_c)
    return (h - c) * z + c


class RNNCellBase(Layer):
    """Base of the recurrent cells: `get_initial_states` builds zero (or `init_value`) states from
    the cell's `state_shape` and `state_dtype`."""

    def get_initial_states(self, batch_ref: Any, shape: Any = None, dtype: Any = None, init_value: float = 0.0,
                           batch_dim_idx: int = 0) -> Any:
        """States filled with `init_value`, shaped as `shape` (else `state_shape`; a nested
        structure of shapes, each with -1 for the batch put in front unless it starts with -1)
        with batch_ref.shape[batch_dim_idx] as the batch, dtype `dtype` (else `state_dtype`,
        else the default floating dtype), on batch_ref's device. batch_ref may be nested: its
        first tensor counts."""
        ref = flatten(batch_ref)[0]
        if not isinstance(ref, Tensor):
            raise TypeError(f"get_initial_states: batch_ref must be a Tensor (or a nested structure of "
                            f"them), got {type(ref).__name__}")
        batch = ref.shape[batch_dim_idx]
        shapes = self.state_shape if shape is None else shape
        if dtype is None:
            try:
                dtype = self.state_dtype
            except NotImplementedError:
                dtype = default_float()
        dtypes = flatten(dtype)
        xp = array_module(ref._array)
        full_shapes = _map_shapes(lambda s: [batch] + list(s[1:] if s and s[0] == -1 else s), shapes)
        if len(dtypes) == 1:
            one = convert_dtype(dtypes[0])
            return _map_shapes(lambda s: wrap(xp.full(tuple(s), init_value, dtype=one)), full_shapes)
        return map_structure(lambda s, d: wrap(xp.full(tuple(s), init_value, dtype=convert_dtype(d))),
                             full_shapes, dtype)

    @property
    def state_shape(self) -> Any:
        """The (nested) shape(s) of the states, without the batch dimension."""
        raise NotImplementedError(f"{type(self).__name__} must define state_shape")

    @property
    def state_dtype(self) -> DTypeLike:
        """The (nested) dtype(s) of the states; unset, the default floating dtype is used."""
        raise NotImplementedError(f"{type(self).__name__} must define state_dtype")

    def _setup(self, input_size: int, hidden_size: int, gates: int, attrs: Sequence[Any],
               hh_columns: Optional[int] = None) -> None:
        """Check the sizes and create weight_ih, weight_hh, bias_ih, bias_hh (paddle's order)."""
        fn = type(self).__name__
        self.input_size = positive_int(input_size, "input_size", fn)
        self.hidden_size = positive_int(hidden_size, "hidden_size", fn)
        std = 1.0 / math.sqrt(hidden_size)
        weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr = attrs
        rows = gates * hidden_size
        self.weight_ih = _cell_parameter(self, (rows, input_size), weight_ih_attr, std, False)
        self.weight_hh = _cell_parameter(self, (rows, hh_columns or hidden_size), weight_hh_attr, std, False)
        self.bias_ih = _cell_parameter(self, (rows,), bias_ih_attr, std, True)
        self.bias_hh = _cell_parameter(self, (rows,), bias_hh_attr, std, True)

    def _check_step(self, inputs: Any, states: Any, fn_states: Sequence[Tuple[str, int]]) -> None:
        """inputs [batch, input_size]; each state [batch, size] as fn_states lists (name, size)."""
        fn = type(self).__name__
        if not isinstance(inputs, Tensor) or inputs.ndim != 2 or inputs.shape[1] != self.input_size:
            got = inputs.shape if isinstance(inputs, Tensor) else type(inputs).__name__
            raise ValueError(f"{fn}: inputs must be a Tensor of shape [batch_size, {self.input_size}], got {got}")
        parts = [states] if len(fn_states) == 1 else states
        if len(fn_states) > 1 and (not isinstance(states, (list, tuple)) or len(states) != len(fn_states)):
            raise ValueError(f"{fn}: states must be a list/tuple of {len(fn_states)} Tensors "
                             f"({', '.join(n for n, _ in fn_states)}), got {type(states).__name__}")
        for part, (name, size) in zip(parts, fn_states):
            want = [inputs.shape[0], size]
            if not isinstance(part, Tensor) or part.shape != want:
                got = part.shape if isinstance(part, Tensor) else type(part).__name__
                raise ValueError(f"{fn}: states ({name}) must be a Tensor of shape {want}, got {got}")



class SimpleRNNCell(RNNCellBase):
    """Elman cell: h = act(x W_ih^T + b_ih + h_prev W_hh^T + b_hh), act 'tanh' or 'relu'.
    forward(inputs [batch, input_size], states=None [batch, hidden_size]) -> (h, h)."""

    def __init__(self, input_size: int, hidden_size: int, activation: str = "tanh", weight_ih_attr: Any = None,
                 weight_hh_attr: Any = None, bias_ih_attr: Any = None, bias_hh_attr: Any = None,
                 name: Optional[str] = None):
        super().__init__("simple_rnn_cell")
        if activation not in ("tanh", "relu"):
            raise ValueError(f"SimpleRNNCell: activation must be 'tanh' or 'relu', got {activation!r}")
        self._setup(input_size, hidden_size, 1, (weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr))
        self.activation = activation

    def forward(self, inputs: Tensor, states: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
        if states is None:
            states = self.get_initial_states(inputs, self.state_shape)
        self._check_step(inputs, states, [("h", self.hidden_size)])
        h = simple_rnn_step(inputs, states, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh,
                            self.activation)
        return h, h

    @property
    def state_shape(self) -> Tuple[int]:
        return (self.hidden_size,)

    def extra_repr(self) -> str:
        act = "" if self.activation == "tanh" else f", activation={self.activation}"
        return f"{self.input_size}, {self.hidden_size}{act}"


class LSTMCell(RNNCellBase):
    """LSTM cell, gates in paddle's order i, f, g (the candidate), o along weight_ih's rows:
    c = f * c_prev + i * tanh(g), h = o * tanh(c), then h = h @ weight_ho [hidden_size, proj_size]
    when proj_size > 0 (weight_hh is then [4 * hidden_size, proj_size]; weight_ho takes
    weight_hh_attr). forward(inputs, states=None (h, c)) -> (h, (h, c)).

    `state_shape` is ((proj_size or hidden_size,), (hidden_size,)), the shapes of h and c; paddle
    3.3.1 gives them swapped, so there a projecting cell called without states fails.
    """

    def __init__(self, input_size: int, hidden_size: int, weight_ih_attr: Any = None, weight_hh_attr: Any = None,
                 bias_ih_attr: Any = None, bias_hh_attr: Any = None, proj_size: int = 0,
                 name: Optional[str] = None):
        super().__init__("lstm_cell")
        if isinstance(proj_size, bool) or not isinstance(proj_size, int) or proj_size < 0 \
                or (isinstance(hidden_size, int) and proj_size >= hidden_size > 0):
            raise ValueError(f"LSTMCell: proj_size must be an int in [0, hidden_size) = [0, {hidden_size}), "
                             f"got {proj_size!r}")
        self._setup(input_size, hidden_size, 4, (weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr),
                    hh_columns=proj_size)
        self.proj_size = proj_size
        if proj_size:
            self.weight_ho = _cell_parameter(self, (hidden_size, proj_size), weight_hh_attr,
                                             1.0 / math.sqrt(hidden_size), False)

    def forward(self, inputs: Tensor, states: Optional[Sequence[Tensor]] = None
                ) -> Tuple[Tensor, Tuple[Tensor, Tensor]]:
        if states is None:
            states = self.get_initial_states(inputs, self.state_shape)
        self._check_step(inputs, states, [("h", self.proj_size or self.hidden_size), ("c", self.hidden_size)])
        h, c = lstm_step(inputs, states[0], states[1], self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        if self.proj_size:
            h = matmul(h, self.weight_ho)
        return h, (h, c)

    @property
    def state_shape(self) -> Tuple[Tuple[int], Tuple[int]]:
        return ((self.proj_size or self.hidden_size,), (self.hidden_size,))

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}"


class GRUCell(RNNCellBase):
    """GRU cell, gates in paddle's order r, z, c along weight_ih's rows, the reset gate applied
    after the hidden product: c = tanh(x_c + r * (h_prev W_hc^T + b_hc)), h = z * h_prev + (1 - z) * c.
    forward(inputs, states=None) -> (h, h)."""

    def __init__(self, input_size: int, hidden_size: int, weight_ih_attr: Any = None, weight_hh_attr: Any = None,
                 bias_ih_attr: Any = None, bias_hh_attr: Any = None, name: Optional[str] = None):
        super().__init__("gru_cell")
        self._setup(input_size, hidden_size, 3, (weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr))

    def forward(self, inputs: Tensor, states: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
        if states is None:
            states = self.get_initial_states(inputs, self.state_shape)
        self._check_step(inputs, states, [("h", self.hidden_size)])
        h = gru_step(inputs, states, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return h, h

    @property
    def state_shape(self) -> Tuple[int]:
        return (self.hidden_size,)

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}"

