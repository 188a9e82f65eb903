"""The model's events a profiler records (pycoll.profiler.op_events): the operators a program
calls (once each, as called: not what they call inside), each layer's forward, each backward with
its gradient nodes, each optimizer step; the Model and Operator summaries paddle prints from them;
and every wrapped name given back when recording stops."""
import inspect
import pickle
import threading
import types

import numpy as np
import pytest

import pycoll
import pycoll.nn.functional as F
import pycoll.profiler as profiler
from pycoll import _graph
from pycoll.nn.layer import Layer
from pycoll.profiler.recorder import HostEvent
from pycoll.profiler.result import ProfilerResult
from pycoll.profiler.summary_tables import build_summary

T = profiler.TracerEventType


def _train(steps, prof, net, opt, x, y):
    for _ in range(steps):
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        prof.step()


def _recorded(steps=3):
    pycoll.seed(0)
    net = pycoll.nn.Sequential(pycoll.nn.Linear(6, 8), pycoll.nn.ReLU(), pycoll.nn.Linear(8, 3))
    opt = pycoll.optimizer.Adam(parameters=net.parameters())
    x = pycoll.to_tensor(np.random.default_rng(0).random((4, 6), dtype=np.float32))
    y = pycoll.to_tensor(np.array([0, 1, 2, 1]))
    prof = profiler.Profiler(on_trace_ready=lambda p: None)
    with prof:
        _train(steps, prof, net, opt, x, y)
    return prof


def test_a_training_step_records_its_operators_layers_backward_and_step():
    prof = _recorded(steps=3)
    events = prof.profiler_result.get_data()
    by_kind = {}
    for e in events:
        by_kind.setdefault(e.type, []).append(e.name)
    # the operators as the program called them: Linear's F.linear, ReLU's F.relu, the loss; what
    # cross_entropy computes inside (softmax, a gather...) is its own time, not rows of its own
    ops = sorted(set(by_kind[T.Operator]))
    assert ops == ["CrossEntropyGradNode", "LinearGradNode", "ReluGradNode", "cross_entropy", "linear", "relu"]
    assert by_kind[T.Operator].count("linear") == 6 and by_kind[T.Operator].count("LinearGradNode") == 6
    assert sorted(by_kind[T.Forward]) == sorted(["Sequential", "Linear", "ReLU", "Linear"] * 3)
    assert by_kind[T.Backward] == ["Gradient Backward"] * 3
    assert by_kind[T.Optimization] == ["Optimization"] * 3
    # each gradient node runs inside its backward, each operator inside a step
    backward = [e for e in events if e.type == T.Backward]
    for node in (e for e in events if e.name.endswith("GradNode")):
        assert any(b.start_ns <= node.start_ns and node.end_ns <= b.end_ns for b in backward)


def test_wrapped_names_are_given_back_when_recording_stops():
    before = (pycoll.matmul, F.linear, pycoll.Tensor.__add__, pycoll.Tensor.sum, Layer.__call__,
              pycoll.optimizer.Adam.step, pycoll.autograd.backward)
    _recorded(steps=1)
    after = (pycoll.matmul, F.linear, pycoll.Tensor.__add__, pycoll.Tensor.sum, Layer.__call__,
             pycoll.optimizer.Adam.step, pycoll.autograd.backward)
    assert all(a is b for a, b in zip(before, after))
    assert _graph.node_timer is None


def test_tensor_operators_methods_and_a_failing_op_are_recorded_by_paddles_names():
    x = pycoll.to_tensor([[1.0, 2.0], [3.0, 4.0]], stop_gradient=False)
    prof = profiler.Profiler(on_trace_ready=lambda p: None)
    with prof:
        y = (x + 1) * x
        s = y.sum()
        with pytest.raises(ValueError):
            pycoll.reshape(x, [3])  # raises inside a recorded op: the next one is still recorded
        z = x[0] @ x
        pycoll.autograd.backward([s])
        prof.step()
    names = [e.name for e in prof.profiler_result.get_data() if e.type == T.Operator]
    assert names[:5] == ["add", "multiply", "sum", "reshape", "slice"] and "matmul" in names
    assert {"SumGradNode", "MultiplyGradNode", "AddGradNode"} <= set(names)
    assert [e.name for e in prof.profiler_result.get_data() if e.type == T.Backward] == ["Gradient Backward"]
    np.testing.assert_allclose(z.numpy(), [7.0, 10.0])


def test_ops_a_layer_calls_by_its_own_names_are_recorded():
    # Conv2D calls its functional module's conv2d, MaxPool2D holds max_pool2d as a staticmethod,
    # MultiHeadAttention calls matmul and reshape as its module imported them
    pycoll.seed(0)
    net = pycoll.nn.Sequential(pycoll.nn.Conv2D(2, 3, 3), pycoll.nn.MaxPool2D(2))
    attention = pycoll.nn.MultiHeadAttention(8, 2)
    prof = profiler.Profiler(on_trace_ready=lambda p: None)
    with prof:
        net(pycoll.randn([1, 2, 6, 6]))
        attention(pycoll.randn([1, 3, 8]))
        prof.step()
    names = {e.name for e in prof.profiler_result.get_data() if e.type == T.Operator}
    assert {"conv2d", "max_pool2d", "linear", "matmul", "reshape"} <= names


def test_a_recorded_function_stands_in_for_its_function():
    relu, matmul = F.relu, pycoll.matmul
    prof = profiler.Profiler(on_trace_ready=lambda p: None)
    with prof:
        assert F.relu is not relu and F.relu == relu and hash(F.relu) == hash(relu)
        assert {relu: "kept"}[F.relu] == "kept"  # a table keyed by the function finds it
        assert pickle.loads(pickle.dumps(F.relu)) is relu and pickle.loads(pickle.dumps(pycoll.matmul)) is matmul
        assert inspect.signature(F.relu) == inspect.signature(relu) and F.relu.__name__ == "relu"
        assert isinstance(F.relu, types.FunctionType) and inspect.isfunction(pycoll.matmul)
        assert pycoll.to_tensor([1.0, -1.0]).abs().numpy().tolist() == [1.0, 1.0]  # a method stays bound
        layer = pycoll.nn.TransformerEncoderLayer(4, 1, 8)  # it keeps F.relu's stand-in as its activation
        prof.step()
    assert F.relu is relu
    copy = pickle.loads(pickle.dumps(layer))
    assert copy.activation is relu


def test_an_op_in_another_thread_is_recorded_on_that_thread():
    x = pycoll.ones([3])
    prof = profiler.Profiler(on_trace_ready=lambda p: None)
    with prof:
        worker = threading.Thread(target=lambda: pycoll.exp(x), name="worker")
        worker.start()
        worker.join()
        pycoll.exp(x)
        prof.step()
    threads = sorted(e.thread_name for e in prof.profiler_result.get_data() if e.name == "exp")
    assert threads == ["MainThread", "worker"]


def _event(name, kind, start_us, end_us, tid=1):
    return HostEvent(name, kind, start_us * 1000, end_us * 1000, tid, "MainThread")


def test_model_and_operator_summaries_from_known_spans():
    events = [_event("ProfileStep#0", T.ProfileStep, 0, 1000), _event("ProfileStep#1", T.ProfileStep, 1000, 2000),
              _event("Net", T.Forward, 0, 400), _event("Linear", T.Forward, 100, 300),  # nested: counted once
              _event("Net", T.Forward, 1000, 1200),
              _event("Gradient Backward", T.Backward, 400, 700), _event("Optimization", T.Optimization, 700, 800),
              _event("Net", T.Forward, 500, 600),  # recomputed inside the backward: the backward's time
              _event("linear", T.Operator, 100, 300), _event("linear", T.Operator, 1000, 1100),
              _event("LinearGradNode", T.Operator, 450, 650)]
    text = build_summary(ProfilerResult(events, {}), time_unit="us")
    lines = text.splitlines()
    model = lines[lines.index(next(x for x in lines if "Model Summary" in x)):]
    rows = [line.split()[:10] for line in model[5:11]]
    assert rows[0][:2] == ["ProfileStep", "2"]
    assert rows[1] == ["Forward", "2", "600.00", "/", "300.00", "/", "400.00", "/", "200.00", "/"]
    assert model[6].split()[10] == "30.00"  # of the steps' 2000 us
    assert [r[:3] for r in rows[2:5]] == [["Backward", "1", "300.00"], ["Optimization", "1", "100.00"],
                                         ["Others", "-", "1000.00"]]
    # operators: by total, each one's share of all operator time (paddle's), the name column 52 wide
    ops = lines[lines.index(next(x for x in lines if "Operator Summary" in x)):]
    linear = next(x for x in ops if x.startswith("linear "))
    assert linear.index("2 ") == 54 and "300.00 / 150.00 / 200.00 / 100.00 / 60.00" in linear
    assert "200.00 / 200.00 / 200.00 / 200.00 / 40.00" in next(x for x in ops if x.startswith("LinearGradNode"))
    only_ops = build_summary(ProfilerResult(events, {}), views=[profiler.SummaryView.OperatorView])
    assert "Operator Summary" in only_ops and "Model Summary" not in only_ops
    table = [line for line in only_ops.splitlines() if line]
    assert table[3].split()[-1] == "FLOPs" and table[-1].startswith("-" * 52 + "  ------")  # paddle's closing rule
    assert next(x for x in table if x.startswith("linear ")).split()[-1] == "-"  # no FLOPs counted here


def test_one_profiler_records_at_a_time():
    outer, inner = (profiler.Profiler(on_trace_ready=lambda p: None) for _ in range(2))
    outer.start()
    pycoll.exp(pycoll.ones([2]))
    with pytest.raises(RuntimeError, match="another Profiler is running"):
        inner.start()  # (it cleared the outer one's events and took its wrappers away)
    with pytest.raises(RuntimeError, match="not the one running"):
        inner.stop()
    pycoll.tanh(pycoll.ones([2]))
    outer.stop()
    assert [e.name for e in outer.profiler_result.get_data() if e.type == T.Operator] == ["ones", "exp", "ones", "tanh"]
    inner.start()  # the outer one stopped: free again
    inner.stop()
    timer = profiler.Profiler(timer_only=True)  # a step timer records nothing: it may run beside one
    outer.start()
    timer.start()
    timer.stop()
    outer.stop()
