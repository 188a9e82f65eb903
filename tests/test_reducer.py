"""The reducer's state machine in one process (a world of one, where every all-reduce is a copy):
bucket assignment, launches strictly in bucket order whatever order gradients become ready in,
the rebuild from the first step's ready order, unused parameters, and no_sync. The multi-rank
behaviour (averages equal to one process's) is in test_data_parallel."""
import numpy as np
import pytest

import pycoll
import pycoll.distributed as dist
from pycoll.parallel import reducer as reducer_module
from pycoll.parallel.reducer import Reducer

FLOAT_BYTES = 4


@pytest.fixture
def world():
    group = dist.init_parallel_env()
    yield group
    dist.destroy_process_group()


@pytest.fixture
def launches(monkeypatch):
    """The buffers the reducer hands to all_reduce, in order (the call still runs)."""
    seen = []
    real = dist.all_reduce

    def recording(tensor, *args, **kwargs):
        seen.append(tensor)
        return real(tensor, *args, **kwargs)

    monkeypatch.setattr(reducer_module.dist, "all_reduce", recording)
    return seen


def parameters(sizes):
    pycoll.seed(0)
    return [pycoll.randn([n]) for n in sizes]


def make(world, params, cap_floats, last_floats, find_unused=False):
    for p in params:
        p.stop_gradient = False
    return Reducer(params, [f"p{i}" for i in range(len(params))], world, cap_floats * FLOAT_BYTES,
                   last_floats * FLOAT_BYTES, find_unused)


def loss_of(params, order):
    """A loss whose backward makes the gradients of ``params`` final in ``order``: each one
    enters the sum one step further from the loss than the one before it."""
    total = None
    for i in reversed(order):
        term = (params[i] * (i + 1.0)).sum()
        total = term if total is None else (total * 1.0 + term)
    return total


def test_buckets_take_parameters_in_reverse_order_up_to_their_caps(world):
    r = make(world, parameters([4, 4, 4, 4, 4]), cap_floats=8, last_floats=4)
    assert r.bucket_indices() == [[4, 3], [2, 1], [0]]  # the last bucket (earliest params) is small


def test_buckets_launch_in_bucket_order_whatever_order_gradients_arrive_in(world, launches):
    params = parameters([4, 4, 4, 4])
    r = make(world, params, cap_floats=4, last_floats=4)
    assert r.bucket_indices() == [[3], [2], [1], [0]]
    loss = loss_of(params, order=[0, 1, 2, 3])  # the opposite of the buckets' order
    r.prepare_for_backward(loss)
    loss.backward()
    assert r._ready_order == [0, 1, 2, 3], "the gradients did arrive against the buckets' order"
    assert [id(x) for x in launches] == [id(b.buffer) for b in r.buckets], "launched in bucket order"
    for i, p in enumerate(params):  # world of one: the average is the gradient itself
        np.testing.assert_allclose(p.grad.numpy(), np.full(4, i + 1.0))


def test_the_first_steps_ready_order_rebuilds_the_buckets_once(world):
    params = parameters([4, 4, 4, 4])
    r = make(world, params, cap_floats=8, last_floats=4)
    before = r.bucket_indices()
    for step in range(3):
        loss = loss_of(params, order=[1, 3, 0, 2])
        r.prepare_for_backward(loss)
        loss.backward()
        if step == 0:
            assert r._ready_order == [1, 3, 0, 2]
            assert r.bucket_indices() == before, "the rebuild comes with the next step"
    assert r.bucket_indices() == [[1, 3], [0], [2]] != before
    assert sorted(sum(r.bucket_indices(), [])) == [0, 1, 2, 3]


def test_unused_parameters_are_ready_at_once_and_keep_no_gradient(world, launches):
    params = parameters([4, 4, 4])
    r = make(world, params, cap_floats=4, last_floats=4, find_unused=True)
    loss = loss_of(params, order=[0, 2])  # params[1] takes no part
    r.prepare_for_backward(loss)
    loss.backward()
    assert len(launches) == 3  # the three buckets (their flags say which gradients exist)
    assert params[1].grad is None, "a parameter no rank used keeps .grad None, as in one process"
    np.testing.assert_allclose(params[2].grad.numpy(), np.full(4, 3.0))


def test_a_parameter_counted_unused_that_backward_reaches_before_its_bucket_goes_keeps_its_gradient(world):
    """find_unused_parameters=True counts what forward's outputs do not reach as ready at
    backward's start; a parameter used outside forward (in the loss) then reached it again and
    was counted twice, so its bucket went early and zeros overwrote the other gradients (a probe:
    a.bias never trained, silently)."""
    params = parameters([4, 4, 4])
    r = make(world, params, cap_floats=8, last_floats=8, find_unused=True)
    assert r.bucket_indices() == [[2], [1, 0]]
    for _ in range(2):
        outputs = loss_of(params, order=[2, 0])  # forward's outputs: params[1] not reached; params[0] last
        loss = (params[1] * 5.0).sum() + outputs  # ... but the loss uses it
        r.prepare_for_backward(outputs)
        loss.backward()
        for i, want in ((0, 1.0), (1, 5.0), (2, 3.0)):
            np.testing.assert_allclose(params[i].grad.numpy(), np.full(4, want), err_msg=f"params[{i}]")
        for p in params:
            p.clear_gradient(False)


def test_a_gradient_that_comes_after_its_bucket_went_is_refused_by_name(world):
    params = parameters([4, 4, 4])
    r = make(world, params, cap_floats=4, last_floats=4, find_unused=True)
    assert r.bucket_indices() == [[2], [1], [0]]
    deep = (params[1] * 5.0).sum()
    for _ in range(4):
        deep = deep * 1.0  # params[1]'s gradient comes after params[2]'s, its bucket gone by then
    outputs = (params[2] * 3.0).sum()
    r.prepare_for_backward(outputs)
    with pytest.raises(RuntimeError, match="parameter 'p1' got its gradient after its bucket was reduced"):
        (deep + outputs + (params[0] * 1.0).sum()).backward()


def test_without_find_unused_a_missing_gradient_is_reduced_late_and_named_once(world, caplog):
    params = parameters([4, 4])
    r = make(world, params, cap_floats=4, last_floats=4)
    for _ in range(2):
        loss = loss_of(params, order=[1])
        r.prepare_for_backward(loss)
        with caplog.at_level("WARNING", logger="pycoll"):
            loss.backward()
        assert params[0].grad is None, "a parameter no rank used keeps .grad None (paddle's)"
        assert params[1].grad is not None
    said = [rec.getMessage() for rec in caplog.records if "received no gradient" in rec.getMessage()]
    assert len(said) == 1 and "['p0']" in said[0] and "find_unused_parameters=True" in said[0], said


def test_a_skipped_sync_communicates_nothing(world, launches):
    params = parameters([4, 4])
    r = make(world, params, cap_floats=4, last_floats=4)
    r.skip_sync()
    loss_of(params, order=[0, 1]).backward()
    assert launches == [] and params[0].grad is not None


def test_sharded_buckets_are_reduce_scattered_and_only_the_pieces_are_kept(world, monkeypatch):
    params = parameters([4, 3, 2])
    for p in params:
        p.stop_gradient = False
    scattered = []
    real = dist.reduce_scatter
    monkeypatch.setattr(reducer_module.dist, "reduce_scatter",
                        lambda tensor, parts, **kw: scattered.append(len(parts)) or real(tensor, parts, **kw))
    r = Reducer(params, ["a", "b", "c"], world, 4 * FLOAT_BYTES, 4 * FLOAT_BYTES, False, shard=True)
    assert all(b.buffer is None for b in r.buckets), "sharded buckets make their buffers at launch"
    for step in (1, 2):  # a second synchronised backward adds into the pieces
        loss = loss_of(params, order=[2, 1, 0])
        r.prepare_for_backward(loss)
        loss.backward()
        assert scattered == [1] * len(r.buckets) * step
        assert all(b.buffer is None and p.grad is None for b in r.buckets for p in b.params)
        for i, p in enumerate(params):  # a world of one: its piece is the whole averaged gradient
            np.testing.assert_allclose(r.sharded_grad(p), np.full(p.size, (i + 1.0) * step))
    r.clear_sharded_grads()  # clear_grad()'s default: zeroed in place (a later step reads zeros)
    assert r.sharded_grad(params[0]).tolist() == [0.0] * 4
    r.clear_sharded_grads(set_to_zero=False)
    assert r.sharded_grad(params[0]) is None


def test_data_parallel_takes_a_groups_process_group_as_paddles_examples_pass_it(world):
    layer = pycoll.nn.Linear(2, 2)
    assert pycoll.DataParallel(layer, group=world.process_group)._group is world
    with pytest.raises(TypeError, match="DataParallel: group must be a pycoll.distributed.Group"):
        pycoll.DataParallel(layer, group="world")


def test_data_parallel_s_state_dict_is_the_layer_s_and_set_state_dict_returns_none(world):
    layer = pycoll.nn.Linear(2, 2)
    model = pycoll.DataParallel(layer)
    state = {k: v * 2 for k, v in model.state_dict().items()}
    assert list(state) == ["weight", "bias"] and model.set_state_dict(state) is None  # paddle's returns None
    np.testing.assert_array_equal(layer.weight.numpy(), state["weight"].numpy())
