"""A backward refuses to run on memory written in place after its op used it (paddle's and torch's
version counters): the gradient would otherwise come, silently, from values the forward never saw.
Which ops raise follows paddle 3.3.1 (each case below was run there: ``RAISE`` or ``ok``), except
where pycoll's backward does not read the memory at all (it then computes the right gradient and
needs no error) and for optimizer steps and ``set_value``, which paddle does not count (its backward
then silently uses the new values; pycoll raises, as torch does)."""
import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
import pycoll.nn.functional as F
from pycoll.autograd import PyLayer

ERROR = "used in the forward pass"


def operands():
    pycoll.seed(0)
    x = pycoll.randn([2, 3]) + 3
    w = pycoll.randn([2, 3])
    w.stop_gradient = False
    return x, w, w * 1  # a non-leaf copy of w, which may be changed in place


# op -> whether the backward raises when the op's operand h is then changed by add_ under no_grad:
# what paddle 3.3.1 does, but where pycoll's backward does not read h's values (noted)
PADDLE_RAISES = {
    "multiply": (lambda x, h: x * h, False),  # paddle raises; h's gradient needs x alone
    "multiply_self": (lambda x, h: h * h, True),
    "matmul": (lambda x, h: pycoll.matmul(x, h.T), True),  # through the transposed view of h
    "linear": (lambda x, h: F.linear(x, h.T), True),
    "log": (lambda x, h: pycoll.log(h.abs() + 1), True),
    "square": (lambda x, h: pycoll.square(h), True),
    "divide": (lambda x, h: x / h, True),
    "gelu": (lambda x, h: F.gelu(h), True),
    "max": (lambda x, h: h.max(), True),
    "clip": (lambda x, h: pycoll.clip(h, -0.5, 0.5), True),
    "add": (lambda x, h: x + h, False),
    "reshape": (lambda x, h: pycoll.reshape(h, [6]), False),
    "getitem": (lambda x, h: h[0], False),
    "sum": (lambda x, h: h.sum(), False),
    "embedding": (lambda x, h: F.embedding(pycoll.to_tensor([0, 1]), h), False),
    "mul_scalar": (lambda x, h: h * 3, False),
    "relu": (lambda x, h: F.relu(h), False),  # keeps its output, not h
    "exp": (lambda x, h: pycoll.exp(h), False),
    "cross_entropy": (lambda x, h: F.cross_entropy(h, pycoll.to_tensor([0, 1])), False),
    "concat": (lambda x, h: pycoll.concat([x, h]), False),
}


@pytest.mark.parametrize("op", sorted(PADDLE_RAISES))
def test_raises_where_paddle_raises(op):
    fn, raises = PADDLE_RAISES[op]
    x, w, h = operands()
    y = fn(x, h).sum()
    with pycoll.no_grad():
        h.add_(pycoll.ones([2, 3]))
    assert h.inplace_version == 1
    if raises:
        with pytest.raises(RuntimeError, match=ERROR):
            y.backward()
    else:
        y.backward()
        assert w.grad is not None


def test_the_error_names_the_op_and_the_tensor_and_the_job_goes_on():
    x, w, h = operands()
    y = (x * h).sum()
    with pycoll.no_grad():
        x.scale_(2.0)  # the values multiply kept to make h's gradient
    with pytest.raises(RuntimeError) as info:
        y.backward()
    message = str(info.value)
    assert message.startswith("backward of multiply: a tensor (shape [2, 3], float32)")
    assert "optimizer.step()" in message
    (x * w).sum().backward()  # a fresh forward works
    np.testing.assert_allclose(w.grad.numpy(), x.numpy())


def test_an_optimizer_step_between_forward_and_backward_is_refused():
    """The GAN mistake: a loss computed through D, D stepped, then that loss's backward. Paddle
    computes it from D's new weights without a word; torch and pycoll refuse."""
    pycoll.seed(1)
    d = nn.Linear(3, 1)
    opt = pycoll.optimizer.SGD(0.1, parameters=d.parameters())
    data = pycoll.randn([4, 3])
    loss_g = d(data).mean()
    loss_d = (d(data) ** 2).mean()
    loss_d.backward()
    opt.step()
    with pytest.raises(RuntimeError, match="backward of linear"):
        loss_g.backward()
    opt.clear_grad()
    d(data).mean().backward()  # recomputed after the step: fine


def test_a_training_loop_that_writes_after_backward_runs():
    pycoll.seed(2)
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    opt = pycoll.optimizer.Momentum(0.1, parameters=net.parameters())
    x, target = pycoll.randn([8, 3]), pycoll.randn([8, 1])
    losses = []
    for _ in range(4):
        loss = F.mse_loss(net(x), target)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    assert losses[-1] < losses[0]


def test_set_value_and_setitem_count_as_writes():
    x, w, h = operands()
    y = (w * w).sum()
    w.set_value(np.zeros([2, 3], dtype=np.float32))
    assert w.inplace_version == 1
    with pytest.raises(RuntimeError, match=ERROR):
        y.backward()
    x, w, h = operands()
    y = (x * h).sum()
    x[0, 0] = 7.0  # x takes no gradient: its memory is written
    with pytest.raises(RuntimeError, match=ERROR):
        y.backward()


def test_writes_through_views_and_detached_tensors_count():
    x, w, h = operands()
    y = pycoll.tanh(h)
    z = y.sum()
    y.detach().zero_()  # the memory tanh kept for its backward (paddle raises too)
    with pytest.raises(RuntimeError, match="backward of tanh"):
        z.backward()
    x, w, h = operands()
    y = (x * h).sum()
    with pycoll.no_grad():
        x[0:1].zero_()  # a view of x, which multiply kept to make h's gradient
    with pytest.raises(RuntimeError, match="backward of multiply"):
        y.backward()


def test_an_in_place_op_in_the_graph_keeps_the_right_gradient():
    """Where h takes a gradient, add_ gives it new memory: the backward that kept h's old values
    stays right (paddle raises here; pycoll needs no error)."""
    x, w, h = operands()
    y = (h * h).sum()
    h.add_(pycoll.ones([2, 3]))
    y.backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * w.numpy(), rtol=1e-6)


class Cube(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        return dy * 3 * x * x


def test_a_pylayer_s_saved_tensors_are_checked():
    x, w, h = operands()
    y = Cube.apply(h).sum()
    with pycoll.no_grad():
        h.add_(pycoll.ones([2, 3]))
    with pytest.raises(RuntimeError, match="backward of the PyLayer"):
        y.backward()
    x, w, h = operands()
    y = Cube.apply(h).sum()
    h.add_(pycoll.ones([2, 3]))  # in the graph: new memory, which the PyLayer would read
    with pytest.raises(RuntimeError, match="given new values"):
        y.backward()
    x, w, h = operands()
    Cube.apply(h).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 3 * w.numpy() ** 2, rtol=1e-6)


@pytest.mark.gpu
def test_the_check_sees_writes_into_gpu_memory():
    """CuPy arrays: views into a parameter (h.T), writes through them and optimizer steps."""
    x = pycoll.to_tensor(np.ones([2, 3], np.float32), place="gpu:0")
    w = pycoll.to_tensor(np.full([2, 3], 2.0, np.float32), place="gpu:0", stop_gradient=False)
    h = w * 1
    y = pycoll.matmul(x, h.T).sum()
    with pycoll.no_grad():
        h[0:1].zero_()
    with pytest.raises(RuntimeError, match="backward of matmul"):
        y.backward()
    lin = nn.Linear(3, 2)
    lin.to("gpu:0")
    opt = pycoll.optimizer.SGD(0.1, parameters=lin.parameters())
    first, second = lin(x).sum(), (lin(x) ** 2).sum()
    first.backward()
    opt.step()
    with pytest.raises(RuntimeError, match="backward of linear"):
        second.backward()


# paddle 3.3.1 runs each of these and gives the right gradient after the operand h is changed in
# place: their backwards need no values of h (or only the op's output), and split's pieces are copies
NO_ALARM = {
    "index_select": lambda h: pycoll.index_select(h, pycoll.to_tensor([1, 0, 1]), axis=1),
    "gather": lambda h: pycoll.gather(h, pycoll.to_tensor([1, 0])),
    "gather_nd": lambda h: pycoll.gather_nd(h, pycoll.to_tensor([[0, 1], [1, 2]])),
    "take_along_axis": lambda h: pycoll.take_along_axis(h, pycoll.to_tensor([[0], [2]]), axis=1),
    "glu": lambda h: F.glu(pycoll.concat([h, h], axis=1)),
    "expm1": lambda h: pycoll.expm1(h),
    "sign": lambda h: pycoll.sign(h),
    "round": lambda h: pycoll.round(h),
    "floor": lambda h: pycoll.floor(h),
    "split_pieces": lambda h: pycoll.multiply(*pycoll.split(pycoll.concat([h, h], axis=1), 2, axis=1)),
}


@pytest.mark.parametrize("op", sorted(NO_ALARM))
def test_no_alarm_where_the_backward_reads_nothing_written(op):
    x, w, h = operands()
    y = NO_ALARM[op](h).sum()
    with pycoll.no_grad():
        reference = pycoll.to_tensor(w.numpy().copy(), stop_gradient=False)
    expected = pycoll.grad(NO_ALARM[op](reference * 1).sum(), reference)[0].numpy()
    with pycoll.no_grad():
        h.add_(pycoll.ones([2, 3]))
    y.backward()
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-6)


def test_split_pieces_are_copies_as_in_paddle():
    x = pycoll.to_tensor(np.arange(8, dtype=np.float32).reshape(2, 4))
    left, right = pycoll.split(x, 2, axis=1)
    first = pycoll.chunk(x, 2, axis=0)[0]
    x.add_(pycoll.ones([2, 4]) * 100)
    assert float(left.max()) < 50 and float(right.max()) < 50 and float(first.max()) < 50


def test_an_rnn_input_buffer_refilled_before_backward_is_no_alarm():
    """Prefetching the next batch into the same tensor (paddle's fused kernel copies its input)."""
    pycoll.seed(3)
    lstm = nn.LSTM(4, 5)
    buf = pycoll.randn([2, 3, 4])
    out, _ = lstm(buf)
    loss = (out ** 2).mean()
    expected = pycoll.grad((lstm(buf)[0] ** 2).mean(), lstm.parameters())
    buf.set_value(np.zeros([2, 3, 4], np.float32))
    loss.backward()
    for p, e in zip(lstm.parameters(), expected):
        np.testing.assert_allclose(p.grad.numpy(), e.numpy(), rtol=1e-5, atol=1e-7)


def test_einsum_operands_and_recompute_inputs_are_checked():
    """Paddle computes both from the new values without a word."""
    from pycoll.distributed.fleet.utils import recompute
    x, w, h = operands()
    data = pycoll.ones([3, 2])
    y = pycoll.einsum("ij,jk->ik", h, data).sum()
    with pycoll.no_grad():
        data.scale_(3.0)
    with pytest.raises(RuntimeError, match="backward of einsum"):
        y.backward()
    x, w, h = operands()
    block = nn.Linear(3, 3)
    y = recompute(block, h).sum()
    with pycoll.no_grad():
        h.add_(pycoll.ones([2, 3]))
    with pytest.raises(RuntimeError, match="backward of recompute"):
        y.backward()
