"""SimpleRNN, LSTM and GRU layers run as one op per layer and direction (paddle's fused ``rnn``
kernel, in array code): the input projection of every time step in one matmul, then a loop over
the steps on raw arrays, and a backward written out (backpropagation through time, the weights'
gradients in one matmul each at the end). The cell-by-cell loop of `rnn` records some 15 ops a step
and ran 5-7x slower than paddle; the numbers are the same (`tests/test_rnn_fused.py` compares
them with that loop's). On NumPy arrays of float32/float64 a step is NumPy's matmul of the state
and one call of csrc/host_rnn.h's step kernel (`_host_steps`): the array code's 10-20 calls a step
left 500 steps of a small hidden state 3-4x slower than paddle.

Semantics are `RNNBase`'s: past a sequence's length (``valid`` False) the states are held and
the output is zero; a reverse pass runs the padded steps first. `can_fuse` says when the loop
must run instead: a record hook is watching ops (auto-parallel), autocast is on, the dtypes are
not one float32/float64, or the LSTM projects its h (``proj_size``). A second derivative
(``create_graph``) recomputes the layer with the cells' step functions (the rule below).
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from pycoll import _graph
from pycoll._higher_order.recompute import recomputed
from pycoll._higher_order.saved import Saved, rule
from pycoll.amp.auto_cast import is_autocast_enabled
from pycoll.device import array_module
from pycoll.kernels import host_math
from pycoll.math_ops import sigmoid_array
from pycoll.nn.rnn_cells import gru_step, lstm_step, simple_rnn_step
from pycoll.search_ops import where
from pycoll.shape_ops import concat, reshape, stack
from pycoll.tensor import Tensor, wrap

def can_fuse(mode: str, proj_size: int, tensors: Sequence[Tensor]) -> bool:
    """Whether `run_layer` may run these tensors (inputs, states and parameters)."""
    if proj_size or _graph.has_record_hooks() or is_autocast_enabled():
        return False
    dtype = tensors[0]._array.dtype
    return dtype in (np.float32, np.float64) and all(t._array.dtype == dtype for t in tensors)


def run_layer(mode: str, inputs: Tensor, states: Sequence[Tensor], weights: Sequence[Tensor], valid: Any,
              time_major: bool, reverse: bool) -> Tuple[Tensor, Tuple[Tensor, ...]]:
    """(outputs, final states) of one layer and direction: ``inputs`` [batch, time, in] ([time,
    batch, in] if time_major), ``states`` (h,) or (h, c) [batch, hidden], ``weights`` (w_ih, w_hh,
    b_ih, b_hh), ``valid`` None or a bool array [time, batch]."""
    x = inputs._array if time_major else inputs._array.swapaxes(0, 1)
    w_ih, w_hh, b_ih, b_hh = (w._array for w in weights)
    xp = array_module(x)
    steps, batch = x.shape[:2]
    hidden = w_hh.shape[1]
    order = range(steps - 1, -1, -1) if reverse else range(steps)
    # the input projection of every step at once (for GRU, the hidden bias stays inside the step:
    # the reset gate multiplies the hidden part of the candidate)
    width, dtype = x.shape[2], x.dtype  # (width named, not -1: a batch of 0 must reshape too)
    x_rows = x.reshape(steps * batch, width)
    if x_rows.base is not None:  # a view of the input, which the backward would read: paddle's fused
        x_rows = x_rows.copy()  # kernel keeps a copy too, so a batch buffer refilled before backward is fine
    xw = (x_rows @ w_ih.T).reshape(steps, batch, w_ih.shape[0])
    xw += b_ih
    if mode != "GRU":
        xw += b_hh
    out = xp.empty((steps, batch, hidden), dtype=x.dtype)
    prev_h = xp.empty((steps, batch, hidden), dtype=x.dtype)  # the h each step started from
    cache = xp.empty_like(xw)  # per step: the gates' activations (GRU: r, z, n)
    extra = xp.empty((steps, batch, hidden), dtype=x.dtype)  # LSTM: c before; GRU: hidden part of n
    kernels = host_math.rnn_steps(x, w_hh, *(s._array for s in states))
    h, c = (_host_steps(kernels, mode, order, xw, w_hh, b_hh, valid, cache, extra, prev_h, out, states)
            if kernels is not None else
            _array_steps(xp, mode, order, xw, w_hh, b_hh, valid, cache, extra, prev_h, out, states))
    finals = (h, c) if mode == "LSTM" else (h,)
    needs = [not t.stop_gradient for t in (inputs, *states, *weights)]

    def backward(grads: List[Any]) -> tuple:
        d_out = grads[0]
        d_h = grads[1] if grads[1] is not None else xp.zeros((batch, hidden), dtype=dtype)
        d_c = None
        if mode == "LSTM":
            d_c = grads[2] if grads[2] is not None else xp.zeros((batch, hidden), dtype=dtype)
        if d_out is not None and not time_major:
            d_out = d_out.swapaxes(0, 1)
        d_gates = xp.empty_like(xw)  # the gradient of each step's pre-activations, input part
        d_hidden = xp.empty_like(xw) if mode == "GRU" else d_gates  # ... hidden part (GRU differs)
        steps_back = (mode, reversed(order), cache, extra, prev_h, valid, d_out, d_h, d_c, d_gates, d_hidden, w_hh)
        d_h, d_c = (_host_steps_back(kernels, *steps_back) if kernels is not None else
                    _array_steps_back(xp, *steps_back))
        flat = d_gates.reshape(steps * batch, w_ih.shape[0])
        flat_hidden = d_hidden.reshape(steps * batch, w_ih.shape[0])
        d_x = None
        if needs[0]:
            d_x = (flat @ w_ih).reshape(steps, batch, width)
            d_x = d_x if time_major else d_x.swapaxes(0, 1)
        d_w_ih = flat.T @ x_rows if needs[len(states) + 1] else None
        d_w_hh = flat_hidden.T @ prev_h.reshape(steps * batch, hidden) if needs[len(states) + 2] else None
        d_b_ih = flat.sum(axis=0)
        d_b_hh = flat_hidden.sum(axis=0)
        return (d_x, d_h, d_c)[:1 + len(states)] + (d_w_ih, d_w_hh, d_b_ih, d_b_hh)

    # what a second derivative recomputes the layer from (the rule below)
    backward.__pycoll_rnn__ = (mode, valid, time_major, reverse,  # type: ignore[attr-defined]
                               [t._array for t in (inputs, *states, *weights)])
    outputs = [wrap(out if time_major else out.swapaxes(0, 1))] + [wrap(s) for s in finals]
    _graph.record(outputs, backward, [inputs, *states, *weights])
    return outputs[0], tuple(outputs[1:])


def _array_steps(xp: Any, mode: str, order: range, xw: Any, w_hh: Any, b_hh: Any, valid: Any, cache: Any,
                 extra: Any, prev_h: Any, out: Any, states: Sequence[Tensor]) -> Tuple[Any, Any]:
    """`run_layer`'s loop in array code (NumPy or CuPy): the outputs and per-step values written
    into ``out``, ``prev_h``, ``cache`` and ``extra``; the final (h, c) (c None but for LSTM)."""
    hidden = w_hh.shape[1]
    keep = None if valid is None else valid[:, :, None].astype(xw.dtype)
    h = states[0]._array
    c = states[1]._array if mode == "LSTM" else None
    for t in order:
        prev_h[t] = h
        gates = cache[t]
        if mode == "LSTM":
            extra[t] = c
            pre = xw[t] + h @ w_hh.T
            gates[...] = sigmoid_array(xp, pre)
            xp.tanh(pre[:, 2 * hidden:3 * hidden], out=gates[:, 2 * hidden:3 * hidden])
            i, f, g, o = (gates[:, k * hidden:(k + 1) * hidden] for k in range(4))
            new_c = f * c + i * g
            new_h = o * xp.tanh(new_c)
        elif mode == "GRU":
            hh = h @ w_hh.T + b_hh
            extra[t] = hh[:, 2 * hidden:]
            gates[:, :2 * hidden] = sigmoid_array(xp, xw[t, :, :2 * hidden] + hh[:, :2 * hidden])
            r, z = gates[:, :hidden], gates[:, hidden:2 * hidden]
            n = xp.tanh(xw[t, :, 2 * hidden:] + r * extra[t], out=gates[:, 2 * hidden:])
            new_h = (h - n) * z + n
        else:
            pre = xp.add(xw[t], h @ w_hh.T, out=gates)
            new_h = xp.tanh(pre, out=gates) if mode == "RNN_TANH" else xp.maximum(pre, 0, out=gates)
        if keep is None:
            out[t] = new_h
            h = new_h
            if mode == "LSTM":
                c = new_c
        else:
            out[t] = new_h * keep[t]
            h = xp.where(valid[t][:, None], new_h, h)
            if mode == "LSTM":
                c = xp.where(valid[t][:, None], new_c, c)
    return h, c


def _array_steps_back(xp: Any, mode: str, order: Any, cache: Any, extra: Any, prev_h: Any, valid: Any, d_out: Any,
                      d_h: Any, d_c: Any, d_gates: Any, d_hidden: Any, w_hh: Any) -> Tuple[Any, Any]:
    """The backward's loop in array code (steps last to first): the pre-activations' gradients
    written into ``d_gates`` (and GRU's hidden side into ``d_hidden``); the gradients of the first
    state (d_h, d_c)."""
    hidden = w_hh.shape[1]
    keep = None if valid is None else valid[:, :, None].astype(cache.dtype)
    for t in order:
        d_new_h = d_h if d_out is None else d_h + d_out[t]
        if keep is not None:  # a held state passes its gradient straight on
            k = keep[t]
            d_new_h = d_new_h * k
            d_h = d_h * (1 - k)
        else:
            d_h = None
        gates = cache[t]
        if mode == "LSTM":
            i, f, g, o = (gates[:, j * hidden:(j + 1) * hidden] for j in range(4))
            new_c = f * extra[t] + i * g
            tanh_c = xp.tanh(new_c)
            d_new_c = d_new_h * o * (1 - tanh_c * tanh_c)
            if keep is not None:
                d_new_c += d_c * k
                d_c = d_c * (1 - k)
            else:
                d_new_c += d_c
                d_c = None
            dg = d_gates[t]
            dg[:, :hidden] = d_new_c * g * i * (1 - i)
            dg[:, hidden:2 * hidden] = d_new_c * extra[t] * f * (1 - f)
            dg[:, 2 * hidden:3 * hidden] = d_new_c * i * (1 - g * g)
            dg[:, 3 * hidden:] = d_new_h * tanh_c * o * (1 - o)
            d_prev_c = d_new_c * f
            d_c = d_prev_c if d_c is None else d_c + d_prev_c
            d_prev_h = dg @ w_hh
        elif mode == "GRU":
            r, z, n = gates[:, :hidden], gates[:, hidden:2 * hidden], gates[:, 2 * hidden:]
            d_n = d_new_h * (1 - z) * (1 - n * n)
            d_r = d_n * extra[t] * r * (1 - r)
            d_z = d_new_h * (prev_h[t] - n) * z * (1 - z)
            dg, dh_part = d_gates[t], d_hidden[t]
            dg[:, :hidden] = dh_part[:, :hidden] = d_r
            dg[:, hidden:2 * hidden] = dh_part[:, hidden:2 * hidden] = d_z
            dg[:, 2 * hidden:] = d_n
            dh_part[:, 2 * hidden:] = d_n * r
            d_prev_h = dh_part @ w_hh + d_new_h * z
        else:
            new_h = gates
            dg = d_gates[t]
            if mode == "RNN_TANH":
                xp.multiply(d_new_h, 1 - new_h * new_h, out=dg)
            else:
                xp.multiply(d_new_h, new_h > 0, out=dg)
            d_prev_h = dg @ w_hh
        d_h = d_prev_h if d_h is None else d_h + d_prev_h
    return d_h, d_c


_CELLS = {"LSTM": 0, "GRU": 1, "RNN_TANH": 2, "RNN_RELU": 3}  # csrc/host_rnn.h's Cell


def _host_steps(kernels: Any, mode: str, order: range, xw: Any, w_hh: Any, b_hh: Any, valid: Any, cache: Any,
                extra: Any, prev_h: Any, out: Any, states: Sequence[Tensor]) -> Tuple[Any, Any]:
    """`_array_steps` on host arrays: each step NumPy's matmul of the state, then one call of the
    step kernel (csrc/host_rnn.h) for the rest, where the array code made 10-20 calls."""
    w_hh_t = np.ascontiguousarray(w_hh.T)
    h = np.array(states[0]._array, order="C")  # the kernel updates the state in place
    c = np.array(states[1]._array, order="C") if mode == "LSTM" else None
    hw = np.empty((h.shape[0], w_hh.shape[0]), dtype=h.dtype)
    take = kernels[0](_CELLS[mode], xw, hw, np.ascontiguousarray(b_hh) if mode == "GRU" else None, _as_bytes(valid),
                      cache, extra if mode in ("LSTM", "GRU") else None, prev_h, out, h, c).step
    for t in order:
        np.matmul(h, w_hh_t, out=hw)
        take(t)
    return h, c


def _host_steps_back(kernels: Any, mode: str, order: Any, cache: Any, extra: Any, prev_h: Any, valid: Any,
                     d_out: Any, d_h: Any, d_c: Any, d_gates: Any, d_hidden: Any, w_hh: Any) -> Tuple[Any, Any]:
    """`_array_steps_back` on host arrays: each step one call of the kernel, then NumPy's matmul
    taking the gradient through the state, which the next call adds in."""
    d_h = np.array(d_h, order="C")  # the kernel updates them in place
    d_c = None if d_c is None else np.array(d_c, order="C")
    through = np.zeros_like(d_h)  # the later step's d_hidden @ w_hh
    gru = mode == "GRU"
    take = kernels[1](_CELLS[mode], cache, extra if mode in ("LSTM", "GRU") else None, prev_h, _as_bytes(valid),
                      None if d_out is None else np.ascontiguousarray(d_out), through, d_h, d_c, d_gates,
                      d_hidden if gru else None).step
    later = False
    for t in order:
        take(t, later)
        np.matmul(d_hidden[t], w_hh, out=through)
        later = True
    if later:
        d_h += through
    return d_h, d_c


def _as_bytes(valid: Any) -> Any:
    """``valid`` (bool [time, batch] or None) as the kernels read it: uint8, C-contiguous."""
    return None if valid is None else np.ascontiguousarray(valid).view(np.uint8)


def loop_layer(mode: str, inputs: Tensor, states: Sequence[Tensor], weights: Sequence[Tensor], valid: Any,
               time_major: bool, reverse: bool) -> Tuple[Tensor, Tuple[Tensor, ...]]:
    """`run_layer` with the cells' step functions (Tensor ops, differentiable to any order)."""
    steps = inputs.shape[0 if time_major else 1]
    order = range(steps - 1, -1, -1) if reverse else range(steps)
    states, outputs = tuple(states), [None] * steps
    for t in order:
        x = inputs[t] if time_major else inputs[:, t]
        if mode == "LSTM":
            new = lstm_step(x, *states, *weights)
        elif mode == "GRU":
            new = (gru_step(x, states[0], *weights),)
        else:
            new = (simple_rnn_step(x, states[0], *weights, "tanh" if mode == "RNN_TANH" else "relu"),)
        if valid is None:
            outputs[t] = new[0]
            states = new
        else:
            mask = wrap(valid[t][:, None])
            outputs[t] = where(mask, new[0], new[0] * 0)
            states = tuple(where(mask, n, s) for n, s in zip(new, states))
    return stack(outputs, axis=0 if time_major else 1), states


@rule("run_layer.<locals>.backward")
def _run_layer(s: Saved, grads: Sequence[Optional[Tensor]]) -> tuple:
    mode, valid, time_major, reverse, values = s.attached("__pycoll_rnn__")
    n_states = len(values) - 5

    def forward(*ins: Tensor) -> Tensor:  # the outputs, flat, one after the other
        out, finals = loop_layer(mode, ins[0], ins[1:1 + n_states], ins[1 + n_states:], valid, time_major,
                                 reverse)
        return concat([reshape(out, [-1])] + [reshape(f, [-1]) for f in finals])
    x, hidden = values[0], values[1].shape
    steps, batch = (x.shape[0], x.shape[1]) if time_major else (x.shape[1], x.shape[0])
    out_shape = (steps, batch, hidden[1]) if time_major else (batch, steps, hidden[1])
    xp = array_module(x)
    seed = concat([reshape(g if g is not None else wrap(xp.zeros(shape, dtype=x.dtype)), [-1])
                   for g, shape in zip(grads, [out_shape] + [hidden] * n_states)])
    return recomputed(s, seed, forward, values)
