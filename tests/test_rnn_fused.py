"""SimpleRNN, LSTM and GRU run as one op per layer and direction (pycoll/nn/rnn_fused.py): their
outputs, final states and every gradient (first and second order) must be those of the
cell-by-cell loop that RNN/BiRNN run, which the fused op replaced for speed."""
from __future__ import annotations

import numpy as np
import pytest

import pycoll as P
from pycoll import _graph
import pycoll.nn.rnn_fused as rnn_fused
from pycoll.nn.rnn import concat_states, split_states

B, T, I, H = 3, 5, 4, 6
KINDS = {"LSTM": lambda **kw: P.nn.LSTM(I, H, **kw), "GRU": lambda **kw: P.nn.GRU(I, H, **kw),
         "SimpleRNN_tanh": lambda **kw: P.nn.SimpleRNN(I, H, **kw),
         "SimpleRNN_relu": lambda **kw: P.nn.SimpleRNN(I, H, activation="relu", **kw)}


def _loop(net, x, init, lengths, time_major):
    """The layers' own RNN/BiRNN (cells step by step), outputs past a length zeroed as RNNBase does."""
    bidirectional = net.num_directions == 2
    states = split_states(init, bidirectional, net.state_components)
    finals = []
    for i, layer in enumerate(net):
        x, final = layer(x, states[i], lengths)
        if lengths is not None:
            mask = (np.arange(T)[:, None] < lengths.numpy()[None, :]).astype("float64")
            x = x * P.to_tensor((mask if time_major else mask.T)[..., None])
        finals.append(final)
    return x, concat_states(finals, bidirectional, net.state_components)


def _run(kind, direction, time_major, with_lengths, second_order, monkeypatch):
    rng = np.random.default_rng(0)
    net = KINDS[kind](num_layers=2, direction=direction, time_major=time_major).to(dtype="float64")
    layers = net.num_layers * net.num_directions
    x_value = rng.standard_normal((T, B, I) if time_major else (B, T, I))
    h_value, c_value = rng.standard_normal((2, layers, B, H))
    lengths = P.to_tensor(np.array([5, 2, 0])) if with_lengths else None
    monkeypatch.setattr(_graph, "_record_hooks", {})  # auto-parallel, once used in this process, watches ops
    fused_calls = []
    run_layer = rnn_fused.run_layer
    monkeypatch.setattr(rnn_fused, "run_layer", lambda *a: fused_calls.append(a[0]) or run_layer(*a))
    results, weights = [], None
    for fused in (True, False):
        x = P.to_tensor(x_value, stop_gradient=False)
        h, c = P.to_tensor(h_value, stop_gradient=False), P.to_tensor(c_value, stop_gradient=False)
        init = (h, c) if net.state_components == 2 else h
        out, finals = net(x, init, lengths) if fused else _loop(net, x, init, lengths, time_major)
        outputs = [out] + (list(finals) if isinstance(finals, tuple) else [finals])
        weights = weights or [P.to_tensor(rng.standard_normal(t.shape)) for t in outputs]
        loss = sum((t * w).sum() for t, w in zip(outputs, weights))
        net.clear_gradients()
        if second_order:
            grad_x, = P.grad(loss, x, create_graph=True)
            (grad_x * grad_x).sum().backward()
        else:
            loss.backward()
        grads = [x.grad, h.grad] + ([c.grad] if net.state_components == 2 else []) + [p.grad for p in net.parameters()]
        results.append(([t.numpy() for t in outputs], [None if g is None else g.numpy() for g in grads]))
    assert len(fused_calls) == layers  # each layer and direction once, in the fused run only
    (values, grads), (want_values, want_grads) = results
    for got, want in zip(values, want_values):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    for got, want in zip(grads, want_grads):  # None: no path (a ReLU's second derivative is 0)
        assert (got is None) == (want is None)
        if got is not None:
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("direction", ["forward", "bidirect"])
@pytest.mark.parametrize("time_major", [False, True])
@pytest.mark.parametrize("with_lengths", [False, True])
def test_the_fused_layers_equal_the_cells_step_by_step(kind, direction, time_major, with_lengths, monkeypatch):
    _run(kind, direction, time_major, with_lengths, False, monkeypatch)


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("direction", ["forward", "bidirect"])
def test_a_second_derivative_through_the_fused_layers_equals_the_cells(kind, direction, monkeypatch):
    _run(kind, direction, False, True, True, monkeypatch)


def test_the_cells_run_where_the_fused_op_cannot(monkeypatch):
    # a projecting LSTM and float16 inputs go step by step, and still train
    calls = []
    monkeypatch.setattr(rnn_fused, "run_layer", lambda *a: calls.append(a[0]))
    x = P.to_tensor(np.ones((2, 3, I), "float32"), stop_gradient=False)
    net = P.nn.LSTM(I, H, proj_size=2)
    out, (h, c) = net(x)
    out.sum().backward()
    assert out.shape == [2, 3, 2] and x.grad is not None and net[0].cell.weight_ho.grad is not None
    half = P.nn.GRU(I, H).to(dtype="float16")
    assert half(x.astype("float16"))[0].dtype == P.float16
    assert calls == []


def test_a_hooked_or_replaced_cell_runs_step_by_step(monkeypatch):
    # the fused op would skip a forward hook on a cell, or a cell put in place of the built one
    calls = []
    monkeypatch.setattr(_graph, "_record_hooks", {})
    monkeypatch.setattr(rnn_fused, "run_layer", lambda *a: calls.append(a[0]))
    x = P.to_tensor(np.ones((2, 3, I), "float32"))
    net = P.nn.LSTM(I, H)
    seen = []
    net[0].cell.register_forward_post_hook(lambda layer, inputs, output: seen.append(1))
    net(x)
    assert calls == [] and len(seen) == 3  # once per time step

    class Cell(P.nn.GRUCell):
        pass
    gru = P.nn.GRU(I, H)
    gru[0].cell = Cell(I, H)
    gru(x)
    assert calls == []


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("dtype, rtol", [("float32", 2e-5), ("float64", 1e-12)])
def test_the_host_step_kernels_equal_the_array_code(kind, dtype, rtol, monkeypatch):
    """On NumPy arrays each step runs through csrc/host_rnn.h (float: its own vectorized exp and
    tanh); the array code, which CuPy arrays run, is the reference. Inputs span saturated gates
    (|x| up to 40) and tiny ones (tanh's series), with lengths and both directions."""
    from pycoll.kernels import host_math

    monkeypatch.setattr(_graph, "_record_hooks", {})
    rng = np.random.default_rng(3)
    net = KINDS[kind](num_layers=2, direction="bidirect").to(dtype=dtype)
    x_value = (rng.standard_normal((B, T, I)) * np.array([40.0, 1.0, 1e-6, 3.0])).astype(dtype)
    lengths = P.to_tensor(np.array([5, 2, 0]))
    results, served = [], []
    kernels_for = host_math.rnn_steps
    for kernels in (True, False):
        monkeypatch.setattr(host_math, "rnn_steps",
                            (lambda *arrays: served.append(kernels_for(*arrays)) or served[-1]) if kernels
                            else (lambda *arrays: None))
        x = P.to_tensor(x_value, stop_gradient=False)
        out, finals = net(x, None, lengths)
        finals = list(finals) if isinstance(finals, tuple) else [finals]
        loss = (out * out).sum() + sum((f * f).sum() for f in finals)
        net.clear_gradients()
        loss.backward()
        results.append([t.numpy() for t in [out, *finals, x.grad, *(p.grad for p in net.parameters())]])
    assert len(served) == 4 and all(k is not None for k in served)  # 2 layers x 2 directions, on the kernels
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * max(1.0, np.abs(want).max()))
