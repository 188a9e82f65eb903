"""Three of paddle 3.3.1's behaviours a probe of its documented examples met (values measured on
paddle 3.3.1): the dtypes to_tensor gives lists of NumPy scalars, slice_scatter's broadcast value,
and assign into an output of another shape."""
import numpy as np
import pytest

import pycoll


@pytest.mark.parametrize("data, dtype", [
    ([np.float16(1)], "float32"), ([np.float32(1.5)], "float32"), ([np.float64(1.0)], "float32"),
    ([np.uint8(1)], "uint8"), ([np.int8(1)], "int8"), ([[np.int16(1)]], "int16"),
    ([np.int32(1), 2], "int64"), ((np.int32(1),), "int64"), ([np.bool_(True)], "bool"),
    ([np.complex64(1)], "complex64"), (np.int32(3), "int32"), ([1], "int64"), ([1.5], "float32"),
])
def test_to_tensor_of_lists_of_numpy_scalars(data, dtype):
    assert pycoll.to_tensor(data).dtype == np.dtype(dtype)


def test_slice_scatter_broadcasts_the_value_and_sums_its_gradient():
    x = pycoll.zeros([3, 4])
    v = pycoll.to_tensor([[1.0], [2.0], [3.0]], stop_gradient=False)
    out = pycoll.slice_scatter(x, v, axes=[1], starts=[0], ends=[2], strides=[1])
    np.testing.assert_array_equal(out.numpy(), [[1, 1, 0, 0], [2, 2, 0, 0], [3, 3, 0, 0]])
    out.sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), [[2.0], [2.0], [2.0]])
    with pytest.raises(ValueError, match=r"shape \[3, 2\] or one that broadcasts to it, got \[3, 3\]"):
        pycoll.slice_scatter(x, pycoll.ones([3, 3]), axes=[1], starts=[0], ends=[2], strides=[1])


def test_assign_gives_the_output_the_values_shape_and_dtype():
    out = pycoll.zeros([5])
    assert pycoll.assign(np.ones((2, 3), "float32"), out) is out
    assert out.shape == [2, 3] and out.numpy().sum() == 6
    out = pycoll.zeros([2], dtype="int32")
    pycoll.assign(pycoll.to_tensor([1.5, 2.5, 3.5]), out)
    assert out.dtype == np.float32 and out.numpy().tolist() == [1.5, 2.5, 3.5]
    w = pycoll.to_tensor([1.0, 2.0], stop_gradient=False)
    out = pycoll.zeros([3])
    pycoll.assign(w * 3, out)
    out.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [3.0, 3.0])
