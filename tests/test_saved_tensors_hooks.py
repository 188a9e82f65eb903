"""pycoll.autograd.saved_tensors_hooks on PyLayer's saved tensors, against what paddle 3.3.1's
CPU build was seen to do (a probe with the same PyLayer): pack_hook runs once per saved tensor
inside save_for_backward, unpack_hook once per tensor on every ctx.saved_tensor() call, even
after the block has ended, and backward computes with what unpack_hook returns; one pair at a
time. pycoll's built-in ops do not call the hooks (paddle's do: x * x packs x twice); that is
pinned here so that the documented limit stays true."""
import numpy as np
import pytest

import pycoll
from pycoll.autograd import PyLayer, saved_tensors_hooks


class Multiply(PyLayer):
    log = []

    @staticmethod
    def forward(ctx, a, b):
        Multiply.log.append("forward")
        ctx.save_for_backward(a, b)
        Multiply.log.append("saved")
        return a * b

    @staticmethod
    def backward(ctx, dy):
        a, b = ctx.saved_tensor()
        Multiply.log.append("got")
        ctx.saved_tensor()
        Multiply.log.append("got again")
        return dy * b, dy * a


def _hooks(scale=10.0):
    """Hooks that log, pack to a NumPy array in a dict and unpack scaled (so that the test sees
    backward use the unpacked tensors)."""
    log = Multiply.log

    def pack(t):
        log.append(("pack", t.numpy().tolist()))
        return {"value": t.numpy()}

    def unpack(box):
        log.append(("unpack", box["value"].tolist()))
        return pycoll.to_tensor(box["value"] * scale)
    return pack, unpack


@pytest.fixture(autouse=True)
def _clear_log():
    Multiply.log.clear()


def test_pylayer_hooks_order_counts_and_values_as_paddle():
    a = pycoll.to_tensor([1.0, 2.0], stop_gradient=False)
    b = pycoll.to_tensor([3.0, 4.0], stop_gradient=False)
    with saved_tensors_hooks(*_hooks()):
        y = Multiply.apply(a, b)
    Multiply.log.append("outside")
    y.sum().backward()
    # the sequence paddle 3.3.1 logged for the same PyLayer and hooks
    assert Multiply.log == [
        "forward", ("pack", [1.0, 2.0]), ("pack", [3.0, 4.0]), "saved", "outside",
        ("unpack", [1.0, 2.0]), ("unpack", [3.0, 4.0]), "got",
        ("unpack", [1.0, 2.0]), ("unpack", [3.0, 4.0]), "got again"]
    np.testing.assert_array_equal(a.grad.numpy(), [30.0, 40.0])  # paddle's: dy * unpacked b
    np.testing.assert_array_equal(b.grad.numpy(), [10.0, 20.0])


def test_pack_runs_even_without_gradients_and_hooks_end_with_the_block():
    c = pycoll.to_tensor([1.0, 2.0])
    with saved_tensors_hooks(*_hooks()):
        Multiply.apply(c, c)  # paddle packs here too, though nothing needs a gradient
    assert [e[0] for e in Multiply.log if isinstance(e, tuple)] == ["pack", "pack"]
    Multiply.log.clear()
    try:
        with saved_tensors_hooks(*_hooks()):
            raise KeyError("inside")
    except KeyError:
        pass
    a = pycoll.to_tensor([1.0, 2.0], stop_gradient=False)
    Multiply.apply(a, a).sum().backward()  # no pair active any more: nothing packed
    assert not any(isinstance(e, tuple) for e in Multiply.log)
    np.testing.assert_array_equal(a.grad.numpy(), [2.0, 4.0])


def test_builtin_ops_keep_their_arrays_without_the_hooks():
    x = pycoll.to_tensor([1.0, 2.0], stop_gradient=False)
    with saved_tensors_hooks(*_hooks()):
        y = x * x
    y.sum().backward()
    assert Multiply.log == []  # paddle would pack x twice and unpack it twice here
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])


def test_one_pair_at_a_time_and_argument_errors():
    pack, unpack = _hooks()
    with saved_tensors_hooks(pack, unpack):
        with pytest.raises(ValueError, match="only one pair of hooks"):
            with saved_tensors_hooks(pack, unpack):
                pass
    with saved_tensors_hooks(pack, unpack):  # the failed entry left the outer pair's exit intact
        pass
    with pytest.raises(TypeError, match="pack_hook must be callable"):
        saved_tensors_hooks(1, unpack)
    with pytest.raises(TypeError, match="unpack_hook must be callable"):
        saved_tensors_hooks(pack, None)
    a = pycoll.to_tensor([1.0, 2.0], stop_gradient=False)
    with saved_tensors_hooks(pack, lambda box: box["value"]):
        y = Multiply.apply(a, a)
    with pytest.raises(TypeError, match="unpack_hook must return a Tensor, got ndarray"):
        y.sum().backward()
