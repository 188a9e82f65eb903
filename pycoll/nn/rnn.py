"""Recurrent networks with paddle 3.3.1's names and semantics: `RNN` and `BiRNN` (a cell run over
the time steps) and the multi-layer `SimpleRNN`, `LSTM` and `GRU` (cells in `rnn_cells`).

The loop calls the cell once per step, so gradients come from the cells' own ops. With
`sequence_length`, a step past a sequence's length keeps that sequence's states (so the final
states are those of its last valid step); a reverse pass runs the padded steps first, on the
initial states, which is the same as starting at each sequence's last valid step.
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple, Union

from pycoll.amp.auto_cast import is_autocast_enabled
from pycoll.device import array_module, is_array, to_module
from pycoll.nn._dropout_functional import dropout as dropout_op
from pycoll.nn.attention import positive_int, probability
from pycoll.nn import rnn_fused
from pycoll.nn.container import LayerList
from pycoll.nn.layer import Layer
from pycoll._nest import flatten, map_structure
from pycoll.nn.rnn_cells import GRUCell, LSTMCell, RNNCellBase, SimpleRNNCell
from pycoll.reshape_ops import unbind
from pycoll.search_ops import where
from pycoll.shape_ops import concat, split, squeeze, stack
from pycoll.tensor import Tensor, wrap

__all__ = ["RNN", "BiRNN", "RNNBase", "SimpleRNN", "LSTM", "GRU", "rnn", "birnn", "split_states", "concat_states",
           "ArrayWrapper"]

States = Union[Tensor, Sequence[Any]]
_BIDIRECTIONAL = ("bidirect", "bidirectional")
# RNNBase's mode: the cell class and what it gets besides the sizes and attributes
_CELLS = {"LSTM": (LSTMCell, {}), "GRU": (GRUCell, {}), "RNN_TANH": (SimpleRNNCell, {"activation": "tanh"}),
          "RNN_RELU": (SimpleRNNCell, {"activation": "relu"})}


def _check_sequence(inputs: Any, time_major: bool, fn: str) -> None:
    if not isinstance(inputs, Tensor):
        raise TypeError(f"{fn}: inputs must be a Tensor, got {type(inputs).__name__}")
    if inputs.ndim < 3:
        layout = "[time_steps, batch_size, input_size]" if time_major else "[batch_size, time_steps, input_size]"
        raise ValueError(f"{fn}: inputs must be {layout}, got shape {inputs.shape}")
    if inputs.shape[0 if time_major else 1] == 0:
        raise ValueError(f"{fn}: inputs must have at least one time step, got shape {inputs.shape}")


def _valid_steps(sequence_length: Any, inputs: Tensor, time_major: bool, fn: str) -> Any:
    """A bool array [time_steps, batch_size]: step t of sequence b is within its length."""
    steps, batch = (inputs.shape[0], inputs.shape[1]) if time_major else (inputs.shape[1], inputs.shape[0])
    lengths = sequence_length.array if isinstance(sequence_length, Tensor) else sequence_length
    if isinstance(lengths, (list, tuple)):
        lengths = array_module(inputs.array).asarray(lengths)
    if not is_array(lengths) or lengths.dtype.kind not in "iu" or lengths.shape != (batch,):
        got = f"shape {list(lengths.shape)}, dtype {lengths.dtype}" if is_array(lengths) else type(lengths).__name__
        raise ValueError(f"{fn}: sequence_length must be an integer Tensor of shape [batch_size] = [{batch}], "
                         f"got {got}")
    if lengths.size and not 0 <= int(lengths.min()) <= int(lengths.max()) <= steps:  # one host read on a GPU
        raise ValueError(f"{fn}: sequence_length must be in [0, {steps}] (the inputs' time steps), got "
                         f"values from {int(lengths.min())} to {int(lengths.max())}")
    xp = array_module(inputs.array)
    return xp.arange(steps)[:, None] < to_module(lengths, xp)[None, :]


def _keep_valid(valid: Any, new: Tensor, old: Tensor) -> Tensor:
    """new where the step is valid (valid: bool [batch]), else old."""
    return where(wrap(valid.reshape((-1,) + (1,) * (new.ndim - 1))), new, old)


def _run(cell: Layer, inputs: Tensor, initial_states: Any, valid: Any, time_major: bool, is_reverse: bool,
         **kwargs: Any) -> Tuple[Any, Any]:
    """(outputs stacked along the time axis, final states) of `cell` over the steps of `inputs`."""
    time_axis = 0 if time_major else 1
    if initial_states is None:
        initial_states = cell.get_initial_states(inputs, batch_dim_idx=1 - time_axis)
    steps = [squeeze(s, time_axis) for s in split(inputs, inputs.shape[time_axis], axis=time_axis)]
    order = range(len(steps) - 1, -1, -1) if is_reverse else range(len(steps))
    states, outputs = initial_states, [None] * len(steps)
    for t in order:
        outputs[t], new_states = cell(steps[t], states, **kwargs)
        if valid is not None:
            new_states = map_structure(lambda new, old, v=valid[t]: _keep_valid(v, new, old), new_states, states)
        states = new_states
    return map_structure(lambda *per_step: stack(per_step, axis=time_axis), *outputs), states


def rnn(cell: RNNCellBase, inputs: Tensor, initial_states: Optional[States] = None, sequence_length: Any = None,
        time_major: bool = False, is_reverse: bool = False, **kwargs: Any) -> Tuple[Any, Any]:
    """The functional form of `RNN`: `cell` run over the time steps of `inputs` (backwards with
    is_reverse); returns (outputs stacked along the time axis, final states)."""
    return _rnn("rnn", cell, inputs, initial_states, sequence_length, time_major, is_reverse, **kwargs)


def _rnn(fn: str, cell: RNNCellBase, inputs: Tensor, initial_states: Any, sequence_length: Any, time_major: bool,
         is_reverse: bool, **kwargs: Any) -> Tuple[Any, Any]:
    """`rnn`, its errors naming `fn` (the caller paddle's user called)."""
    _check_sequence(inputs, time_major, fn)
    valid = None if sequence_length is None else _valid_steps(sequence_length, inputs, time_major, fn)
    return _run(cell, inputs, initial_states, valid, time_major, is_reverse, **kwargs)


def birnn(cell_fw: RNNCellBase, cell_bw: RNNCellBase, inputs: Tensor, initial_states: Optional[Sequence[Any]] = None,
          sequence_length: Any = None, time_major: bool = False, **kwargs: Any) -> Tuple[Any, Tuple[Any, Any]]:
    """The functional form of `BiRNN`: (outputs of cell_fw and cell_bw concatenated along the last
    axis, (cell_fw's final states, cell_bw's)); initial_states, if given, is such a pair."""
    return _birnn("birnn", cell_fw, cell_bw, inputs, initial_states, sequence_length, time_major, **kwargs)


def _birnn(fn: str, cell_fw: RNNCellBase, cell_bw: RNNCellBase, inputs: Tensor, initial_states: Any,
           sequence_length: Any, time_major: bool, **kwargs: Any) -> Tuple[Any, Tuple[Any, Any]]:
    """`birnn`, its errors naming `fn`."""
    if initial_states is None:
        initial_states = (None, None)
    elif not isinstance(initial_states, (list, tuple)) or len(initial_states) != 2:
        raise ValueError(f"{fn}: initial_states must be a list/tuple of 2 (the states of cell_fw and "
                         f"cell_bw), got {type(initial_states).__name__} of length "
                         f"{len(initial_states) if isinstance(initial_states, (list, tuple)) else 1}")
    out_fw, states_fw = _rnn(fn, cell_fw, inputs, initial_states[0], sequence_length, time_major, False, **kwargs)
    out_bw, states_bw = _rnn(fn, cell_bw, inputs, initial_states[1], sequence_length, time_major, True, **kwargs)
    outputs = map_structure(lambda f, b: concat([f, b], axis=-1), out_fw, out_bw)
    return outputs, (states_fw, states_bw)


def _hooked(layer: Layer) -> bool:
    """Whether ``layer`` has forward hooks, which a fused run would not call."""
    return bool(layer.__dict__.get("_forward_pre_hooks") or layer.__dict__.get("_forward_post_hooks"))


def _state_components(state_components: Any, fn: str) -> int:
    if isinstance(state_components, bool) or not isinstance(state_components, int) or state_components < 1:
        raise ValueError(f"{fn}: state_components must be a positive int, got {state_components!r}")
    return state_components


def split_states(states: States, bidirectional: bool = False, state_components: int = 1) -> List[Any]:
    """Packed states [num_layers * num_directions, batch, size] (a tuple of `state_components` such
    tensors, e.g. LSTM's (h, c)) cut into one entry per layer: a cell's states, or with
    bidirectional a (forward, backward) pair of them."""
    if _state_components(state_components, "split_states") == 1:
        if not isinstance(states, Tensor):
            raise TypeError(f"split_states: states must be a Tensor when state_components is 1, got "
                            f"{type(states).__name__}")
        per_cell: List[Any] = list(unbind(states))
    else:
        if not isinstance(states, (list, tuple)) or len(states) != state_components:
            raise ValueError(f"split_states: states must be a list/tuple of state_components ({state_components}) "
                             f"Tensors, got {type(states).__name__}"
                             f"{f' of length {len(states)}' if isinstance(states, (list, tuple)) else ''}")
        per_cell = list(zip(*(unbind(part) for part in states)))
    return list(zip(per_cell[::2], per_cell[1::2])) if bidirectional else per_cell


def concat_states(states: Sequence[Any], bidirectional: bool = False, state_components: int = 1) -> States:
    """The inverse of `split_states`: per-layer states stacked into the packed form (a tuple of
    `state_components` tensors when it is more than 1). `bidirectional` is taken for paddle's
    signature: the nesting already says it."""
    leaves = flatten(states)
    if len(leaves) % _state_components(state_components, "concat_states"):
        raise ValueError(f"concat_states: the {len(leaves)} states are not a multiple of state_components "
                         f"({state_components})")
    if state_components == 1:
        return stack(leaves)
    return tuple(stack(leaves[j::state_components]) for j in range(state_components))


class ArrayWrapper:
    """A growing list of tensors (paddle's per-step output accumulator): `append` returns the
    wrapper itself, indexing reads the list."""

    def __init__(self, x: Tensor) -> None:
        self.array = [x]

    def append(self, x: Tensor) -> "ArrayWrapper":
        self.array.append(x)
        return self

    def __getitem__(self, item: int) -> Tensor:
        return self.array[item]


class RNN(Layer):
    """Runs `cell` over the time steps of the inputs (backwards with is_reverse).

    forward(inputs, initial_states=None, sequence_length=None, **kwargs) -> (outputs, final_states):
    inputs [batch_size, time_steps, input_size] ([time_steps, batch_size, ...] if time_major),
    outputs the cell's outputs stacked along the time axis, final_states shaped as the cell's
    states. kwargs go to every cell call. Outputs past a sequence's length are what the cell
    computed there (paddle does not zero them here).
    """

    def __init__(self, cell: RNNCellBase, is_reverse: bool = False, time_major: bool = False):
        super().__init__("rnn")
        if not isinstance(cell, Layer):
            raise TypeError(f"RNN: cell must be an RNNCellBase (a Layer), got {type(cell).__name__}")
        self.cell = cell
        self.is_reverse = is_reverse
        self.time_major = time_major

    def forward(self, inputs: Tensor, initial_states: Optional[States] = None, sequence_length: Any = None,
                **kwargs: Any) -> Tuple[Any, Any]:
        return _rnn("RNN", self.cell, inputs, initial_states, sequence_length, self.time_major, self.is_reverse, **kwargs)


class BiRNN(Layer):
    """cell_fw run forwards and cell_bw backwards over the same inputs, their outputs concatenated
    along the last axis; final_states is (cell_fw's, cell_bw's). initial_states, if given, is such
    a pair."""

    def __init__(self, cell_fw: RNNCellBase, cell_bw: RNNCellBase, time_major: bool = False):
        super().__init__("bi_rnn")
        for name, cell in (("cell_fw", cell_fw), ("cell_bw", cell_bw)):
            if not isinstance(cell, Layer):
                raise TypeError(f"BiRNN: {name} must be an RNNCellBase (a Layer), got {type(cell).__name__}")
        if cell_fw.input_size != cell_bw.input_size:
            raise ValueError(f"BiRNN: the input_size of cell_fw ({cell_fw.input_size}) and of cell_bw "
                             f"({cell_bw.input_size}) must be equal")
        self.cell_fw = cell_fw
        self.cell_bw = cell_bw
        self.time_major = time_major

    def forward(self, inputs: Tensor, initial_states: Optional[Sequence[Any]] = None, sequence_length: Any = None,
                **kwargs: Any) -> Tuple[Tensor, Tuple[Any, Any]]:
        return _birnn("BiRNN", self.cell_fw, self.cell_bw, inputs, initial_states, sequence_length, self.time_major,
                      **kwargs)


class RNNBase(LayerList):
    """What SimpleRNN, LSTM and GRU share: a list of `num_layers` RNN (or, bidirectional, BiRNN)
    layers, `dropout` on the inputs of every layer but the first while training, and paddle's
    packed states: [num_layers * num_directions, batch_size, size] (forward and backward
    directions interleaved per layer; LSTM: a tuple (h, c)).

    Parameters are also reachable as weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}
    (suffix _reverse for the backward direction), so state_dict() holds both these names and the
    structured ones ('0.cell.weight_ih', '0.cell_fw.weight_ih'...), as paddle's does. paddle gives
    those names to the parameters in order, four per cell, so with proj_size they shift onto the
    next tensors exactly as in paddle 3.3.1 (its checkpoints load); with a False bias attr (no
    bias names) each names its own cell's weight, as in torch. The structured names always name
    the right tensor.

    Past a sequence's length the outputs are zero, as paddle's fused rnn kernel makes them; an LSTM
    with proj_size runs the cells as `RNN` does in paddle too, and there they are left as computed.
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 direction: str = "forward", time_major: bool = False, dropout: float = 0.0,
                 weight_ih_attr: Any = None, weight_hh_attr: Any = None, bias_ih_attr: Any = None,
                 bias_hh_attr: Any = None, proj_size: int = 0):
        super().__init__()
        fn = type(self).__name__
        if direction not in ("forward",) + _BIDIRECTIONAL:
            raise ValueError(f"{fn}: direction must be 'forward', 'bidirect' or 'bidirectional', got {direction!r}")
        self.mode = mode
        self.input_size = positive_int(input_size, "input_size", fn)
        self.hidden_size = positive_int(hidden_size, "hidden_size", fn)
        self.num_layers = positive_int(num_layers, "num_layers", fn)
        self.dropout = probability(dropout, "dropout", fn)
        self.num_directions = 2 if direction in _BIDIRECTIONAL else 1
        self.time_major = time_major
        self.state_components = 2 if mode == "LSTM" else 1
        self.proj_size = proj_size
        if mode not in _CELLS:
            raise ValueError(f"{fn}: mode must be one of {sorted(_CELLS)}, got {mode!r}")
        cell_cls, extra = _CELLS[mode]
        kwargs = dict(extra, weight_ih_attr=weight_ih_attr, weight_hh_attr=weight_hh_attr,
                      bias_ih_attr=bias_ih_attr, bias_hh_attr=bias_hh_attr)
        if proj_size:
            if mode != "LSTM":
                raise ValueError(f"{fn}: proj_size is for LSTM only, got proj_size={proj_size!r}")
            kwargs["proj_size"] = proj_size
        size = input_size
        for _ in range(num_layers):
            if self.num_directions == 2:
                self.append(BiRNN(cell_cls(size, hidden_size, **kwargs), cell_cls(size, hidden_size, **kwargs),
                                  time_major))
            else:
                self.append(RNN(cell_cls(size, hidden_size, **kwargs), False, time_major))
            size = self.num_directions * (proj_size or hidden_size)
        self._name_parameters(bias_ih_attr is not False, bias_hh_attr is not False)

    def _name_parameters(self, bias_ih: bool, bias_hh: bool) -> None:
        if self.proj_size and bias_ih and bias_hh:
            # paddle 3.3.1 gives its four names per cell to the parameters in order, and weight_ho
            # shifts them onto the next cell's tensors: done alike, so that its checkpoints load
            names = [f"{kind}_l{layer}{suffix}" for layer in range(self.num_layers)
                     for suffix in ("", "_reverse")[:self.num_directions]
                     for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
            for name, param in zip(names, self.parameters()):
                setattr(self, name, param)
            return
        # each name on its own cell's tensor (paddle 3.3.1 shifts them here too, but cannot run a
        # layer without biases: its checkpoints need no copy of that)
        kinds = ("weight_ih", "weight_hh") + ("bias_ih",) * bias_ih + ("bias_hh",) * bias_hh
        for layer, block in enumerate(self):
            cells = (block.cell_fw, block.cell_bw) if self.num_directions == 2 else (block.cell,)
            for suffix, cell in zip(("", "_reverse"), cells):
                for kind in kinds:
                    setattr(self, f"{kind}_l{layer}{suffix}", getattr(cell, kind))

    def flatten_parameters(self) -> None:
        """paddle packs the weights for cuDNN here; pycoll keeps each parameter apart: nothing to do."""

    def _initial_states(self, initial_states: Any, batch: int, like: Tensor) -> Tuple[Tensor, ...]:
        fn = type(self).__name__
        count = self.num_layers * self.num_directions
        sizes = ((self.proj_size or self.hidden_size), self.hidden_size)[:self.state_components]
        if initial_states is None:
            xp = array_module(like.array)
            return tuple(wrap(xp.zeros((count, batch, size), dtype=like.dtype)) for size in sizes)
        if self.state_components == 1:  # h, or [h] as paddle also takes it
            one = isinstance(initial_states, (list, tuple)) and len(initial_states) == 1
            parts = tuple(initial_states) if one else (initial_states,)
        elif isinstance(initial_states, (list, tuple)) and len(initial_states) == 2:
            parts = tuple(initial_states)
        else:
            raise ValueError(f"{fn}: initial_states must be a list/tuple (h, c), got {type(initial_states).__name__}")
        for part, size, name in zip(parts, sizes, ("h", "c")):
            want = [count, batch, size]
            if not isinstance(part, Tensor) or part.shape != want:
                got = f"shape {part.shape}" if isinstance(part, Tensor) else type(part).__name__
                label = f"initial_states ({name})" if self.state_components == 2 else "initial_states"
                raise ValueError(f"{fn}: {label} must be a Tensor of shape [num_layers * num_directions, "
                                 f"batch_size, {'hidden_size' if size == self.hidden_size else 'proj_size'}] "
                                 f"= {want}, got {got}")
            if part.dtype != like.dtype:  # paddle's ValueError too (the matmul inside would say less)
                label = f"initial_states ({name})" if self.state_components == 2 else "initial_states"
                raise ValueError(f"{fn}: {label} has dtype {part.dtype}, inputs {like.dtype}: give the states "
                                 f"the inputs' dtype")
        return parts

    def forward(self, inputs: Tensor, initial_states: Optional[States] = None, sequence_length: Any = None
                ) -> Tuple[Tensor, Any]:
        fn = type(self).__name__
        _check_sequence(inputs, self.time_major, fn)
        if inputs.ndim != 3 or inputs.shape[-1] != self.input_size:
            raise ValueError(f"{fn}: inputs must be a 3-D Tensor whose last dimension is input_size "
                             f"({self.input_size}), got shape {inputs.shape}")
        weights = self.parameters()[0].dtype
        if inputs.dtype != weights and not is_autocast_enabled():  # (the matmul inside would name its x and y)
            raise ValueError(f"{fn}: inputs has dtype {inputs.dtype}, the layer's weights {weights}: cast the "
                             f"inputs (astype) or the layer (to(dtype=...))")
        batch = inputs.shape[1 if self.time_major else 0]
        parts = self._initial_states(initial_states, batch, inputs)
        states = split_states(parts[0] if self.state_components == 1 else parts, self.num_directions == 2,
                              self.state_components)
        valid = zero_padding = None
        if sequence_length is not None and not self.proj_size:
            valid = _valid_steps(sequence_length, inputs, self.time_major, fn)
            zero_padding = wrap((valid if self.time_major else valid.T)[..., None].astype(inputs.dtype))
        finals = []
        for i, layer in enumerate(self):
            if i > 0:
                inputs = dropout_op(inputs, self.dropout, training=self.training, mode="upscale_in_train")
            fused = self._fused(layer, inputs, states[i], valid)
            if fused is not None:
                inputs, final = fused
            else:
                inputs, final = layer(inputs, states[i], sequence_length)
                if zero_padding is not None:
                    inputs = inputs * zero_padding
            finals.append(final)
        return inputs, concat_states(finals, self.num_directions == 2, self.state_components)

    def _fused(self, layer: Layer, inputs: Tensor, states: Any, valid: Any) -> Optional[Tuple[Tensor, Any]]:
        """``layer`` run by `rnn_fused` (one op per direction; outputs past a sequence's length,
        where ``valid`` [time, batch] is False, zero), or None where the cells must run one step at
        a time (`rnn_fused.can_fuse`)."""
        cells = (layer.cell_fw, layer.cell_bw) if self.num_directions == 2 else (layer.cell,)
        # only the cells this layer built, unhooked: a cell put in their place, or a forward hook
        # on one, runs as it is, step by step
        if any(type(c) is not _CELLS[self.mode][0] or _hooked(c) for c in cells) or _hooked(layer):
            return None
        per_cell = states if self.num_directions == 2 else (states,)
        per_cell = [s if isinstance(s, (list, tuple)) else (s,) for s in per_cell]
        weights = [(c.weight_ih, c.weight_hh, c.bias_ih, c.bias_hh) for c in cells]
        if not rnn_fused.can_fuse(self.mode, self.proj_size,
                                  [inputs] + [t for s in per_cell for t in s] + [w for ws in weights for w in ws]):
            return None
        results = [rnn_fused.run_layer(self.mode, inputs, s, ws, valid, self.time_major, reverse)
                   for s, ws, reverse in zip(per_cell, weights, (False, True))]
        finals = [f if self.state_components == 2 else f[0] for _, f in results]
        if self.num_directions == 1:
            return results[0][0], finals[0]
        return concat([results[0][0], results[1][0]], axis=-1), tuple(finals)

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if self.time_major:
            text += f", time_major={self.time_major}"
        if self.dropout != 0:
            text += f", dropout={self.dropout}"
        return text


class SimpleRNN(RNNBase):
    """Multi-layer Elman network (SimpleRNNCell per layer and direction).

    forward(inputs, initial_states=None [L*D, batch, hidden_size], sequence_length=None)
    -> (outputs [batch, time, D*hidden_size] (time first if time_major), final_states [L*D, batch,
    hidden_size]).
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, direction: str = "forward",
                 time_major: bool = False, dropout: float = 0.0, activation: str = "tanh",
                 weight_ih_attr: Any = None, weight_hh_attr: Any = None, bias_ih_attr: Any = None,
                 bias_hh_attr: Any = None, name: Optional[str] = None):
        if activation not in ("tanh", "relu"):
            raise ValueError(f"SimpleRNN: activation must be 'tanh' or 'relu', got {activation!r}")
        super().__init__("RNN_TANH" if activation == "tanh" else "RNN_RELU", input_size, hidden_size, num_layers,
                         direction, time_major, dropout, weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr)
        self.activation = activation


class LSTM(RNNBase):
    """Multi-layer LSTM (LSTMCell per layer and direction; proj_size projects each h).

    forward(inputs, initial_states=None (h, c), sequence_length=None) -> (outputs, (h, c)): h
    [L*D, batch, proj_size or hidden_size], c [L*D, batch, hidden_size]; outputs
    [batch, time, D*(proj_size or hidden_size)] (time first if time_major).
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, direction: str = "forward",
                 time_major: bool = False, dropout: float = 0.0, weight_ih_attr: Any = None,
                 weight_hh_attr: Any = None, bias_ih_attr: Any = None, bias_hh_attr: Any = None,
                 proj_size: int = 0, name: Optional[str] = None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, direction, time_major, dropout,
                         weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr, proj_size)


class GRU(RNNBase):
    """Multi-layer GRU (GRUCell per layer and direction).

    forward(inputs, initial_states=None [L*D, batch, hidden_size], sequence_length=None)
    -> (outputs [batch, time, D*hidden_size] (time first if time_major), final_states [L*D, batch,
    hidden_size]).
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, direction: str = "forward",
                 time_major: bool = False, dropout: float = 0.0, weight_ih_attr: Any = None,
                 weight_hh_attr: Any = None, bias_ih_attr: Any = None, bias_hh_attr: Any = None,
                 name: Optional[str] = None):
        super().__init__("GRU", input_size, hidden_size, num_layers, direction, time_major, dropout,
                         weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr)
