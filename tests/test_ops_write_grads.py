"""Gradients through writes: ``assign(x, output=buf)`` puts buf in the graph, and assignment with
repeated indices keeps, and credits, only the value written last to a place. Expected values
measured on paddle 3.3.1 (CPU) where they agree with the derivative; see the note below."""
import numpy as np
import pytest

import pycoll
from pycoll import inplace_ops

W = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


def test_assign_into_output_links_it_into_the_graph():
    v = pycoll.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
    a = pycoll.to_tensor([1.0, 1.0, 1.0], stop_gradient=False)
    buf = pycoll.zeros([3])
    assert pycoll.assign(v * 2, output=buf) is buf
    assert buf.stop_gradient is False and buf.numpy().tolist() == [2.0, 4.0, 6.0]
    (buf * pycoll.to_tensor([1.0, 10.0, 100.0]) + a).sum().backward()
    assert v.grad.numpy().tolist() == [2.0, 20.0, 200.0]  # paddle 3.3.1: [2, 20, 200]
    assert a.grad.numpy().tolist() == [1.0, 1.0, 1.0]
    plain = pycoll.zeros([3])
    pycoll.assign(pycoll.to_tensor([1.0, 2.0, 3.0]), output=plain)  # no gradient: a plain copy
    assert plain.stop_gradient and plain.grad_node is None and plain.numpy().tolist() == [1.0, 2.0, 3.0]
    other = pycoll.zeros([4])  # paddle 3.3.1: the output takes x's shape, and the gradient flows
    pycoll.assign(v * 2, output=other)
    assert other.shape == [3]
    v.clear_gradient()
    (other * pycoll.to_tensor([1.0, 10.0, 100.0])).sum().backward()
    assert v.grad.numpy().tolist() == [2.0, 20.0, 200.0]


@pytest.mark.parametrize("index, values, y, v_grad", [
    # (index, values, y, v.grad); y is paddle 3.3.1's. paddle sends the gradient to the FIRST of
    # the repeated values (v.grad [4, 0, 0] in the first case) although the last one is written;
    # pycoll credits the value that reaches y, which is the derivative.
    (([1, 1, 1], [0, 0, 0]), [5.0, 7.0, 9.0], [[0, 0, 0], [9, 0, 0]], [0, 0, 4]),
    (([1, 0, 1], [0, 2, 0]), [5.0, 7.0, 9.0], [[0, 0, 7], [9, 0, 0]], [0, 3, 4]),
    (([0, 1, 0, 1],), [[1.0, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]], [[7, 8, 9], [10, 11, 12]],
     [[0, 0, 0], [0, 0, 0], [1, 2, 3], [4, 5, 6]]),
    (([1, 1], [0, 0]), 3.0, [[0, 0, 0], [3, 0, 0]], None),  # a number: nothing to credit
])
def test_repeated_indices_keep_and_credit_the_last_value(index, values, y, v_grad):
    a = pycoll.to_tensor(np.zeros((2, 3), "float32"), stop_gradient=False)
    v = pycoll.to_tensor(values, stop_gradient=False) if isinstance(values, list) else values
    out = a * 1.0
    out[index] = v
    (out * pycoll.to_tensor(W)).sum().backward()
    assert out.numpy().tolist() == y
    if v_grad is not None:
        assert v.grad.numpy().tolist() == v_grad
    written = np.zeros((2, 3), bool)
    written[index] = True
    np.testing.assert_array_equal(a.grad.numpy(), np.where(written, 0.0, W))  # paddle's a.grad too


def test_repeated_indices_with_a_broadcast_value_and_without_gradients():
    out = pycoll.zeros([2, 3])
    v = pycoll.to_tensor([[1.0, 2.0, 3.0]], stop_gradient=False)  # broadcast over the two rows written
    y = out * 1.0
    y[[1, 1]] = v
    (y * pycoll.to_tensor(W)).sum().backward()
    assert y.numpy().tolist() == [[0, 0, 0], [1, 2, 3]] and v.grad.numpy().tolist() == [[4, 5, 6]]
    x = pycoll.zeros([3])
    x[pycoll.to_tensor([0, 0, 0])] = pycoll.to_tensor([1.0, 2.0, 3.0])  # paddle 3.3.1: [3, 0, 0]
    assert x.numpy().tolist() == [3.0, 0.0, 0.0]


def test_write_last_keeps_the_last_value_on_a_strided_target():
    target = np.zeros((4, 6))[:, ::2]  # not contiguous: written through its own index
    kept = inplace_ops._write_last(target, (np.array([2, 0, 2]), np.array([1, 1, 1])), np.array([5.0, 6.0, 7.0]))
    assert kept.tolist() == [False, True, True] and target[2, 1] == 7.0 and target[0, 1] == 6.0
    assert inplace_ops.last_writes(np.array([3, 1, 3, 3, 1])).tolist() == [False, False, False, True, True]
