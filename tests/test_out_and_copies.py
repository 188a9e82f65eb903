"""paddle 3.3.1's out= on the pycoll namespace's functions, and to_tensor's copy of a Tensor
(paddle documents: "If the data is already a Tensor, copy will be performed")."""
import numpy as np
import pytest

import pycoll


@pytest.mark.parametrize("call, expected", [
    (lambda out: pycoll.add(pycoll.ones([2]), pycoll.ones([2]), out=out), [2.0, 2.0]),
    (lambda out: pycoll.multiply(pycoll.full([2], 3.0), pycoll.full([2], 2.0), out=out), [6.0, 6.0]),
    (lambda out: pycoll.matmul(pycoll.ones([1, 2]), pycoll.ones([2, 1]), out=out), [[2.0]]),
    (lambda out: pycoll.exp(pycoll.zeros([2]), out=out), [1.0, 1.0]),
    (lambda out: pycoll.concat([pycoll.ones([1]), pycoll.zeros([1])], out=out), [1.0, 0.0]),
    (lambda out: pycoll.where(pycoll.to_tensor([True, False]), pycoll.ones([2]), pycoll.zeros([2]), out=out),
     [1.0, 0.0]),
])
def test_out_receives_the_result_and_is_returned(call, expected):
    out = pycoll.zeros([5])  # another shape: paddle 3.3.1 gives out the result's shape and dtype
    assert call(out) is out
    np.testing.assert_array_equal(out.numpy(), expected)


def test_the_methods_of_those_functions_take_out_too():
    # paddle 3.3.1's Tensor methods are its functions: x.exp(out=o) fills o as paddle.exp does
    x = pycoll.to_tensor([0.0, 1.0])
    out = pycoll.zeros([2])
    assert x.exp(out=out) is out and out.numpy().tolist() == pytest.approx([1.0, np.e])
    assert x.clip(0.5, 1.0, out=out) is out and out.numpy().tolist() == [0.5, 1.0]
    assert x.cumsum(out=out) is out and out.numpy().tolist() == [0.0, 1.0]
    assert x.exp().numpy().tolist() == pytest.approx([1.0, np.e]), "without out=: the result itself"


def test_out_of_a_function_with_two_results_is_a_pair():
    values, indices = pycoll.zeros([1]), pycoll.zeros([1], dtype="int64")
    got = pycoll.topk(pycoll.to_tensor([1.0, 3.0, 2.0]), 1, out=(values, indices))
    assert got[0] is values and values.numpy().tolist() == [3.0] and indices.numpy().tolist() == [1]
    with pytest.raises(TypeError, match="topk: out must be a tuple of 2 Tensors"):
        pycoll.topk(pycoll.to_tensor([1.0, 3.0]), 1, out=pycoll.zeros([1]))
    with pytest.raises(TypeError, match="add: out must be a Tensor or None, got list"):
        pycoll.add(pycoll.ones([1]), pycoll.ones([1]), out=[0.0])


def test_to_tensor_of_a_tensor_is_a_copy():
    clean = pycoll.to_tensor([[0.5, 0.5]])
    adversarial = pycoll.to_tensor(clean, stop_gradient=False)  # the idiom paddle's docs support
    with pycoll.no_grad():
        adversarial.add_(pycoll.to_tensor([[0.1, -0.1]]))
    assert clean.numpy().tolist() == [[0.5, 0.5]]
    assert adversarial.stop_gradient is False
    array = np.ones(2, np.float32)
    assert pycoll.to_tensor(array)._array is not array  # an array is copied too (paddle's; from_numpy shares)
    assert pycoll.from_numpy(array)._array is array
