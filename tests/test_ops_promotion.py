"""Result dtypes of ops on mixed operands: paddle 3.3's promotion rules (pycoll._promotion).

Every expected dtype and value here was read off paddle 3.3.1 (CPU) running the same expression.
"""
import warnings

import numpy as np
import pytest

import pycoll

I64 = pycoll.to_tensor([1, 2, 3])
I32 = pycoll.to_tensor([1, 2, 3], dtype="int32")
F32 = pycoll.to_tensor([1.0, 2.0, 3.0])
F64 = pycoll.to_tensor([1.0, 2.0, 3.0], dtype="float64")
B = pycoll.to_tensor([True, False, True])


@pytest.mark.parametrize("expr, dtype", [
    # true division and float maths of integers give float32 (paddle's, whatever the default dtype)
    (lambda: I64 / 2, "float32"),
    (lambda: pycoll.divide(I64, I64), "float32"),
    (lambda: I32 / I32, "float32"),
    (lambda: pycoll.exp(I64), "float32"),
    (lambda: pycoll.sqrt(I64), "float32"),
    (lambda: pycoll.log(I64), "float32"),
    (lambda: pycoll.tanh(I64), "float32"),
    (lambda: pycoll.sigmoid(I64), "float32"),
    # numbers: an int tensor with a float is float32, a bool tensor with an int is int64
    (lambda: I64 * 1.5, "float32"),
    (lambda: 1.5 * I32, "float32"),
    (lambda: I64 + 1.5, "float32"),
    (lambda: I64 * 2, "int64"),
    (lambda: I32 * np.int64(2), "int32"),
    (lambda: I64 * np.float64(1.5), "float32"),
    (lambda: I64 ** 0.5, "float32"),
    (lambda: 2.0 ** I64, "float32"),
    (lambda: I32 + True, "int32"),
    (lambda: B + 1, "int64"),
    (lambda: B + 1.5, "float32"),
    (lambda: F32 + np.float64(1.0), "float32"),
    (lambda: F32.astype("float16") * np.float64(2), "float16"),
    # two floating-point tensors: the wider
    (lambda: F32 + F64, "float64"),
    (lambda: F32.astype("float16") + F32, "float32"),
    (lambda: pycoll.maximum(F32, F64), "float64"),
    # a 0-d tensor acts like a number
    (lambda: F32 + pycoll.to_tensor(1), "float32"),
    (lambda: I64 + pycoll.to_tensor(1, dtype="int32"), "int64"),
    (lambda: I32 + pycoll.to_tensor(1), "int32"),
    (lambda: pycoll.to_tensor(1.0, dtype="float64") + F32, "float32"),
    (lambda: I64 + pycoll.to_tensor(1.5), "float32"),
    (lambda: I64 + pycoll.to_tensor(1.5, dtype="float64"), "float64"),
    (lambda: pycoll.to_tensor(1.5) + pycoll.to_tensor(1), "float32"),
    (lambda: pycoll.to_tensor(1, dtype="int32") + pycoll.to_tensor(1), "int64"),
    (lambda: F32 + pycoll.to_tensor(True), "float32"),
    (lambda: B + pycoll.to_tensor(1, dtype="int32"), "int32"),
    # reductions of integers
    (lambda: I32.sum(), "int64"),
    (lambda: I64.mean(), "int64"),
    (lambda: I32.mean(), "int32"),
])
def test_result_dtype_is_paddle_s(expr, dtype):
    assert expr().dtype == np.dtype(dtype)


def test_int_results_keep_paddle_s_values():
    assert (I64 / 2).numpy().tolist() == [0.5, 1.0, 1.5]
    assert (I64 * 1.5).numpy().tolist() == [1.5, 3.0, 4.5]
    # paddle's integer mean truncates towards zero: [1, 2] -> 1, [-1, -2] -> -1, [-1, -4] -> -2
    assert pycoll.to_tensor([1, 2]).mean().item() == 1
    assert pycoll.to_tensor([-1, -2]).mean().item() == -1
    assert pycoll.to_tensor([-1, -4]).mean().item() == -2
    assert pycoll.mean(pycoll.to_tensor([[1, 2], [3, 6]]), axis=0).numpy().tolist() == [2, 4]


def test_float_default_dtype_does_not_change_int_promotion():
    pycoll.set_default_dtype("float64")
    try:  # paddle 3.3.1 still gives float32 here
        assert (I64 / 2).dtype == np.float32 and pycoll.exp(I64).dtype == np.float32
        assert (I64 * 1.5).dtype == np.float32
    finally:
        pycoll.set_default_dtype("float32")


@pytest.mark.parametrize("expr", [
    lambda: I64 + I32,
    lambda: pycoll.add(I32, I64),
    lambda: F32 * I64,
    lambda: F32 * B,  # a float tensor with a bool mask: paddle refuses it too
    lambda: I64 * B,
    lambda: I32 == I64,
    lambda: F32 < I64,
    lambda: pycoll.equal(I32, I64),
    lambda: pycoll.maximum(I32, I64),
    lambda: I32 + pycoll.to_tensor([1]),  # shape [1] is not 0-d
    lambda: pycoll.where(B, I64, F32),
    lambda: pycoll.where(B, I64, 0.5),
    lambda: pycoll.where(B, F32, 0),
])
def test_mixes_paddle_refuses_raise_type_error(expr):
    with pytest.raises(TypeError, match="dtype"):
        expr()


def test_promoted_gradients_come_back_in_each_input_s_dtype():
    x = pycoll.to_tensor([1.0, 2.0], stop_gradient=False)
    y = pycoll.to_tensor([3.0, 4.0], dtype="float64", stop_gradient=False)
    h = x * 1.0  # not a leaf: the gradient reaching its op is cast back to float32 on the way
    out = (h * y).sum()
    assert out.dtype == np.float64
    out.backward()
    assert x.grad.dtype == np.float32 and y.grad.dtype == np.float64
    assert x.grad.numpy().tolist() == [3.0, 4.0] and y.grad.numpy().tolist() == [1.0, 2.0]


def test_bool_dtype_name():
    assert pycoll.bool == np.dtype("bool")
    assert pycoll.to_tensor([1, 0]).astype(pycoll.bool).numpy().tolist() == [True, False]
    assert pycoll.to_tensor([1], dtype=pycoll.bool).dtype == pycoll.bool


def test_python_ints_outside_an_integer_dtype_wrap_around_as_paddles():
    """paddle 3.3.1: uint8 [1, 2] + -3 is [254, 255], int8 [1] + 200 is [-55], int32 [1] + 2**31 is
    [-2147483647], int64 [1] + 2**63 is [-9223372036854775807] (NumPy refuses such a number)."""
    def t(values, dtype):
        return pycoll.to_tensor(np.array(values, dtype))
    assert (t([1, 2], np.uint8) + -3).tolist() == [254, 255]
    assert (t([1], np.int8) + 200).tolist() == [-55]
    assert (t([1], np.int32) + 2 ** 31).tolist() == [-2147483647]
    assert (t([1], np.int64) + 2 ** 63).tolist() == [-9223372036854775807]
    assert (t([5], np.uint8) * -1).tolist() == [251] and (t([5], np.uint8) - 300).tolist() == [217]
    assert (t([1], np.int8) + 100).dtype == np.int8  # in range: as it was


def test_dtype_rules_a_probe_found_against_paddle():
    # paddle 3.3.1's results (probe p171) for each
    T = pycoll.to_tensor
    filled = pycoll.full([2], 1 + 1j)
    assert filled.dtype == np.complex128 and filled.numpy().tolist() == [1 + 1j, 1 + 1j]  # (it was float32 1.0)
    assert pycoll.full([1, 2], fill_value=2j).numpy().tolist() == [[2j, 2j]]
    mean = pycoll.mean(T([True, False, False]))
    assert mean.dtype == np.bool_ and mean.item() is True  # a bool mean: whether it is not 0
    assert pycoll.mean(T([[True, False], [False, False]]), axis=1).numpy().tolist() == [True, False]
    dot = pycoll.dot(T([1, 2], dtype="int32"), T([3, 4], dtype="int32"))
    assert dot.dtype == np.int32 and dot.item() == 11
    c = T([True, False])
    assert pycoll.where(c, T([1.0, 2.0]), np.float64(1.5)).dtype == np.float64  # a NumPy scalar keeps its dtype
    assert pycoll.where(c, T([1.0, 2.0]), np.float32(1.5)).dtype == np.float32
    assert pycoll.where(c, T([1.0, 2.0]), 1.5).dtype == np.float32
    power = True ** T([-3, 2], dtype="int32")
    assert power.dtype == np.int32 and power.numpy().tolist() == [1, 1]
    assert (-2 & T([5, 3], dtype="uint8")).numpy().tolist() == [4, 2]  # -2 wraps to 254
    assert (300 & T([5, 3], dtype="int8")).numpy().tolist() == [4, 0]  # 300 wraps to 44
    with pytest.raises(ValueError, match="does not fit in 64 bits"):
        2 ** 70 & T([1])
    with pytest.raises(TypeError, match=r"remainder \(%\): complex numbers have no remainder"):
        T([5 + 1j]) % 2
    with pytest.raises(TypeError, match=r"floor_divide \(//\): complex numbers have no floor division"):
        T([5 + 1j]) // 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (NumPy's ComplexWarning leaked)
        assert pycoll.full([2], T(2 + 1j)).numpy().tolist() == [2.0, 2.0]  # the real part, as paddle's
