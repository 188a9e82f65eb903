"""fleet's recompute in one process: a recomputed block gives the values and gradients of the same
block run plainly (dropout included, through the preserved random state), its parameters get
their gradients in the ordinary backward walk, and paddle's rules for blocks whose inputs need
no gradient. DataParallel and model parallelism with recompute run on ranks in
tests/ranks/recompute_mp.py (tests/test_model_parallel.py)."""
import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
from pycoll.distributed.fleet import recompute as recompute_module
from pycoll.distributed.fleet.utils import recompute
from pycoll.parallel import get_rng_state_tracker


def block(width=6, p=0.5):
    return nn.Sequential(nn.Linear(width, width), nn.Dropout(p), nn.ReLU(), nn.Linear(width, width), nn.Tanh())


class Net(nn.Layer):
    def __init__(self, recomputed=(), **kwargs):
        super().__init__()
        self.blocks = nn.LayerList([block() for _ in range(3)])
        self.head = nn.Linear(6, 1)
        self.recomputed, self.kwargs = recomputed, kwargs

    def forward(self, x):
        for i, b in enumerate(self.blocks):
            x = recompute(b, x, **self.kwargs) if i in self.recomputed else b(x)
        return self.head(x)


def train(recomputed, steps=4, **kwargs):
    pycoll.seed(7)
    net = Net(recomputed, **kwargs)
    opt = pycoll.optimizer.Adam(learning_rate=0.01, parameters=net.parameters())
    losses, grads = [], []
    for _ in range(steps):
        x = pycoll.rand([5, 6])
        loss = (net(x) ** 2).mean()
        loss.backward()
        losses.append(loss.item())
        grads.append([p.grad.numpy().copy() for p in net.parameters()])
        opt.step()
        opt.clear_grad()
    return np.array(losses), grads, [p.numpy() for p in net.parameters()]


def test_recomputed_blocks_train_exactly_like_plain_ones_with_dropout():
    plain = train(())
    for recomputed, kwargs in [((1,), {}), ((1, 2), {}), ((0, 1, 2), {"use_reentrant": False})]:
        again = train(recomputed, **kwargs)  # block 0 takes the data (no gradient): see below
        np.testing.assert_array_equal(again[0], plain[0])
        for g, h in zip(again[1], plain[1]):
            for a, b in zip(g, h):
                np.testing.assert_array_equal(a, b)
        for a, b in zip(again[2], plain[2]):
            np.testing.assert_array_equal(a, b)


def test_without_the_preserved_random_state_dropout_draws_again_and_gradients_differ():
    plain = train(())
    again = train((1,), preserve_rng_state=False)
    np.testing.assert_array_equal(again[0][:1], plain[0][:1])  # forward values are the first run's
    assert not all(np.array_equal(a, b) for a, b in zip(again[1][0], plain[1][0]))


def test_the_recompute_runs_the_block_again_in_backward_only():
    calls = []
    lin = nn.Linear(3, 3)

    def fn(x):
        calls.append(pycoll.is_grad_enabled())
        return lin(x)
    x = pycoll.rand([2, 3])
    x.stop_gradient = False
    y = recompute(fn, x)
    assert len(calls) == 1 and y.grad_node is not None
    y.sum().backward()
    assert calls == [True, True]
    ref_x = x.detach()
    ref_x.stop_gradient = False
    ref_w = lin.weight.grad.numpy().copy()
    lin.clear_gradients()
    lin(ref_x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), ref_x.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(ref_w, lin.weight.grad.numpy(), rtol=1e-6)


def test_keyword_arguments_tuple_outputs_and_tensors_a_function_closes_over():
    scale = pycoll.to_tensor([2.0, 3.0], stop_gradient=False)  # a leaf no argument names

    def fn(a, b, power=1.0):
        return a * b * scale, "tag", a + b ** power
    a = pycoll.to_tensor([1.0, 2.0], stop_gradient=False)
    b = pycoll.to_tensor([3.0, 4.0], stop_gradient=False)
    first, tag, second = recompute(fn, a, b, power=2.0)
    assert tag == "tag"
    (first.sum() + second.sum()).backward()
    np.testing.assert_allclose(a.grad.numpy(), [3 * 2 + 1, 4 * 3 + 1])
    np.testing.assert_allclose(b.grad.numpy(), [1 * 2 + 2 * 3, 2 * 3 + 2 * 4])
    np.testing.assert_allclose(scale.grad.numpy(), [3.0, 8.0])


def test_a_parameter_hook_fires_once_per_backward_with_the_whole_gradient():
    lin = nn.Linear(2, 2)
    seen = []
    lin.weight.register_hook(lambda g: seen.append(g.numpy().copy()))
    x = pycoll.ones([3, 2])
    x.stop_gradient = False
    recompute(lin, x).sum().backward()
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0], np.full((2, 2), 3.0))


def test_inputs_that_need_no_gradient_follow_paddle(caplog):
    lin = nn.Linear(2, 2)
    x = pycoll.ones([1, 2])  # stop_gradient=True, as data is
    with caplog.at_level("WARNING", logger="pycoll"):
        y = recompute(lin, x)
    assert "None of the inputs to current recompute block need grad" in caplog.text
    assert y.stop_gradient  # paddle's reentrant recompute: the block is outside the graph
    y = recompute(lin, x, use_reentrant=False)
    assert not y.stop_gradient
    y.sum().backward()
    np.testing.assert_allclose(lin.weight.grad.numpy(), np.ones((2, 2)))


def test_under_no_grad_the_block_just_runs():
    lin = nn.Linear(2, 2)
    x = pycoll.ones([1, 2])
    x.stop_gradient = False
    with pycoll.no_grad():
        y = recompute(lin, x)
    assert y.stop_gradient
    np.testing.assert_allclose(y.numpy(), lin(x).numpy())


def test_nested_recompute_and_recompute_sequential_match_the_plain_chain():
    pycoll.seed(3)
    layers = nn.Sequential(*[nn.Linear(4, 4) for _ in range(5)])
    x = pycoll.rand([2, 4])
    x.stop_gradient = False

    def grads_of(out):
        out.sum().backward()
        got = [x.grad.numpy().copy()] + [p.grad.numpy().copy() for p in layers.parameters()]
        x.clear_gradient()
        layers.clear_gradients()
        return out.numpy(), got
    plain = grads_of(layers(x))
    for segments in (1, 2, 3, 5):
        out = recompute_module.recompute_sequential({"segments": segments}, layers, x)
        again = grads_of(out)
        np.testing.assert_allclose(again[0], plain[0], rtol=1e-6)
        for a, b in zip(again[1], plain[1]):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    nested = grads_of(recompute(lambda v: recompute(layers[:3], v) * 1.0, x))
    partial = grads_of(layers[:3](x))
    np.testing.assert_allclose(nested[0], partial[0], rtol=1e-6)
    for a, b in zip(nested[1][:7], partial[1][:7]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_recompute_keeps_the_tracker_states_of_model_parallel_dropout():
    tracker = get_rng_state_tracker()
    tracker.reset()
    tracker.add("model_parallel_rng", 123)
    drop = nn.Dropout(0.5)

    def fn(x):
        with tracker.rng_state():
            return drop(x) * 2.0
    x = pycoll.ones([4, 8])
    x.stop_gradient = False
    y = recompute_module.recompute_hybrid({"mp_group": None, "offload": False, "partition": False}, fn, x)
    y.sum().backward()
    kept = y.numpy() != 0
    np.testing.assert_array_equal(x.grad.numpy() != 0, kept)  # the backward dropped what forward did
    with pytest.raises(ValueError, match="ctx takes mp_group"):
        recompute_module.recompute_hybrid({"segments": 2}, fn, x)
    tracker.reset()


def test_the_tracker_draws_from_its_own_states():
    tracker = get_rng_state_tracker()
    tracker.reset()
    tracker.add("a", 1)
    pycoll.seed(5)
    outside = pycoll.rand([3]).numpy()
    pycoll.seed(5)
    with tracker.rng_state("a"):
        inside = pycoll.rand([3]).numpy()
    np.testing.assert_array_equal(pycoll.rand([3]).numpy(), outside)  # the global state did not move
    np.testing.assert_array_equal(inside, np.random.default_rng(1).random(3, dtype=np.float32))
    saved = tracker.get_states_tracker()
    with tracker.rng_state("a"):
        first = pycoll.rand([2]).numpy()
    tracker.set_states_tracker(saved)
    with tracker.rng_state("a"):
        np.testing.assert_array_equal(pycoll.rand([2]).numpy(), first)
    with pytest.raises(ValueError, match="seed 1 already exists"):
        tracker.add("b", 1)
    with pytest.raises(ValueError, match="state a already exists"):
        tracker.add("a", 2)
    with pytest.raises(ValueError, match="state nope does not exist"):
        with tracker.rng_state("nope"):
            pass
    tracker.reset()


def test_global_rng_state_round_trip():
    state = pycoll.get_rng_state()
    first = pycoll.randn([4]).numpy()
    pycoll.set_rng_state(state)
    np.testing.assert_array_equal(pycoll.randn([4]).numpy(), first)
    if not pycoll.device.gpu_count():
        assert pycoll.get_cuda_rng_state() == []  # paddle's without a GPU
    pycoll.set_cuda_rng_state([])
    with pytest.raises(ValueError, match="state_list must be a list of one state"):
        pycoll.set_rng_state("state")


def test_bad_arguments_are_refused_by_name():
    x = pycoll.ones([1, 2])
    with pytest.raises(TypeError, match="function must be a Layer or a callable"):
        recompute("not a function", x)
    with pytest.raises(TypeError, match="must return a Tensor or a tuple/list"):
        x.stop_gradient = False
        recompute(lambda v: {"out": v}, x)
    with pytest.raises(ValueError, match=r"ctx\['segments'\] must be an int in \[1, 2\]"):
        recompute_module.recompute_sequential({"segments": 3}, [nn.Linear(2, 2), nn.Linear(2, 2)], x)


def test_the_cuda_rng_state_replays_gpu_draws():
    """With a GPU (the strict stand-in's), get_cuda_rng_state/set_cuda_rng_state replay the draws
    of GPU tensors, as paddle's do (they gave [] and restored nothing before)."""
    import strict_cupy

    with strict_cupy.installed():
        pycoll.set_device("gpu")
        try:
            pycoll.seed(3)
            state = pycoll.get_cuda_rng_state()
            first = pycoll.rand([5]).numpy()
            pycoll.randn([7])  # draws in between
            pycoll.set_cuda_rng_state(state)
            np.testing.assert_array_equal(pycoll.rand([5]).numpy(), first)
        finally:
            pycoll.set_device("cpu")


def test_an_output_that_takes_no_gradient_stays_so_without_reentrancy():
    """paddle 3.3.1: use_reentrant=False leaves a mask computed in the block with stop_gradient
    True, as without recompute; the reentrant form (a PyLayer) marks every output."""
    lin = nn.Linear(4, 4)

    def block(x):
        h = lin(x)
        return h, (h > 0).astype("float32")

    x = pycoll.to_tensor(np.linspace(-1, 1, 8).reshape(2, 4).astype("float32"))
    x.stop_gradient = False
    h, mask = recompute(block, x, use_reentrant=False)
    assert not h.stop_gradient and mask.stop_gradient
    assert not recompute(block, x)[1].stop_gradient
    (h * mask).sum().backward()
    plain = x.detach()
    plain.stop_gradient = False
    want_h, want_mask = block(plain)
    (want_h * want_mask).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), plain.grad.numpy(), rtol=1e-6)
