"""Bad arguments raise at once with a message naming the op and the argument (paddle 3.3.1 raises
for each of these too; its messages were read from its CPU build), instead of NumPy's nameless
ones: broadcasting, duplicate reduction axes, index ranges, bool arithmetic, argument types."""
import os

import numpy as np
import pytest

import pycoll
import pycoll.nn.functional as F


def _raises(exc, words, fn):
    with pytest.raises(exc) as info:
        fn()
    for w in words:
        assert w in str(info.value), (w, str(info.value))


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide", "maximum", "atan2"])
def test_binary_broadcast_names_op_and_operands(op):
    _raises(ValueError, [f"{op}:", "x of shape [2, 3]", "y of shape [4]", "dimension -1: 3 vs 4"],
            lambda: getattr(pycoll, op)(pycoll.ones([2, 3]), pycoll.ones([4])))


@pytest.mark.parametrize("compare, op", [(lambda x, y: x == y, "equal"), (lambda x, y: x < y, "less_than"),
                                         (lambda x, y: x >= y, "greater_equal"), (pycoll.not_equal, "not_equal"),
                                         (pycoll.equal, "equal"), (pycoll.less_than, "less_than")])
def test_comparisons_name_their_op_and_operands_when_shapes_do_not_broadcast(compare, op):
    _raises(ValueError, [f"{op}:", "x of shape [3]", "y of shape [2]", "do not broadcast"],
            lambda: compare(pycoll.ones([3]), pycoll.ones([2])))


def test_broadcasting_shapes_still_compute():
    out = pycoll.ones([2, 1, 3]) + pycoll.to_tensor(np.arange(4, dtype="float32").reshape(4, 1))
    np.testing.assert_array_equal(out.numpy(), 1 + np.broadcast_to(np.arange(4.0).reshape(4, 1), (2, 4, 3)))


def test_other_broadcasting_ops_name_their_arguments():
    x = pycoll.ones([4, 3])
    mask = pycoll.to_tensor([True, False])
    _raises(ValueError, ["masked_fill:", "mask of shape [2]"], lambda: pycoll.masked_fill(x, mask, 0.0))
    _raises(ValueError, ["masked_select:", "mask of shape [2]"], lambda: pycoll.masked_select(x, mask))
    _raises(ValueError, ["where:", "condition of shape [2]"], lambda: pycoll.where(mask, x, x))
    _raises(ValueError, ["mse_loss: input and label do not broadcast", "x of shape [2, 3]", "y of shape [3, 2]"],
            lambda: F.mse_loss(pycoll.ones([2, 3]), pycoll.ones([3, 2])))
    _raises(ValueError, ["l1_loss: input and label", "y of shape [3, 2]"], lambda: F.l1_loss(pycoll.ones([2, 3]), pycoll.ones([3, 2])))
    mha = pycoll.nn.MultiHeadAttention(8, 2)
    _raises(ValueError, ["attn_mask of shape [2, 2, 5, 4]"],
            lambda: mha(pycoll.ones([2, 5, 8]), attn_mask=pycoll.ones([2, 2, 5, 4])))


@pytest.mark.parametrize("op", ["sum", "mean", "max", "prod", "all"])
def test_reductions_refuse_duplicate_axes(op):
    _raises(ValueError, [f"{op}:", "duplicate", "dimension 1"], lambda: getattr(pycoll, op)(pycoll.ones([4, 3]), axis=[1, -1]))


@pytest.mark.parametrize("op", ["subtract", "pow", "maximum", "remainder"])
def test_bool_arithmetic_without_paddle_kernel(op):
    b = pycoll.to_tensor([True, False])
    _raises(TypeError, [f"{op}:", "bool"], lambda: getattr(pycoll, op)(b, b))


def test_bool_add_and_multiply_still_work():
    b = pycoll.to_tensor([True, False])
    assert (b + b).numpy().tolist() == [True, False] and (b * b).numpy().tolist() == [True, False]
    _raises(TypeError, ["subtract:", "bool"], lambda: b - True)


def test_index_ranges_are_named():
    x = pycoll.ones([4, 3])
    _raises(IndexError, ["put_along_axis:", "indices", ">= -4 and < 4", "got 9"],
            lambda: pycoll.put_along_axis(x, pycoll.to_tensor([[0, 9, 1]]), 2.0, axis=0))
    _raises(IndexError, ["take_along_axis:", "indices", "got -9"],
            lambda: pycoll.take_along_axis(x, pycoll.to_tensor([[0, -9, 1]]), axis=0))
    _raises(ValueError, ["gather_nd:", "index", "axis 1 of size 3", "got 5"],
            lambda: pycoll.gather_nd(x, pycoll.to_tensor([[0, 5]])))
    _raises(IndexError, ["scatter:", "index", "got 9"],
            lambda: pycoll.scatter(x, pycoll.to_tensor([0, 9]), pycoll.zeros([2, 3])))
    _raises(IndexError, ["gather:", "index", "got 9"], lambda: pycoll.gather(x, pycoll.to_tensor([0, 9])))
    # in range, negative included, still reads the right rows
    np.testing.assert_array_equal(pycoll.take_along_axis(pycoll.to_tensor(np.arange(12.0).reshape(4, 3)),
                                                         pycoll.to_tensor([[-1, 0, 3]]), axis=0).numpy(), [[9, 1, 11]])


def test_repeat_interleave_and_arange_arguments():
    _raises(ValueError, ["repeat_interleave:", "repeats", "got shape [2]"],
            lambda: pycoll.repeat_interleave(pycoll.ones([3]), pycoll.to_tensor([1, 2])))
    _raises(ValueError, ["repeat_interleave:", "repeats must be >= 0", "got -2"],
            lambda: pycoll.repeat_interleave(pycoll.ones([3]), pycoll.to_tensor([1, -2, 1])))
    _raises(TypeError, ["repeat_interleave:", "repeats must be an int or a 1-D Tensor", "got list [2, 1]",
                        "paddle.to_tensor([2, 1])"], lambda: pycoll.repeat_interleave(pycoll.ones([2]), [2, 1]))
    _raises(ValueError, ["arange:", "step"], lambda: pycoll.arange(0, 10, 0))
    _raises(ValueError, ["arange:", "step"], lambda: pycoll.arange(0, 1, 0.0))


def test_argument_types_and_misleading_messages(tmp_path):
    x = pycoll.ones([4, 3])
    _raises(TypeError, ["Dropout:", "p", "str"], lambda: pycoll.nn.Dropout("0.5"))
    _raises(TypeError, ["dropout:", "p"], lambda: F.dropout(x, p="0.5"))
    _raises(TypeError, ["pad:", "value", "str"], lambda: F.pad(pycoll.ones([1, 1, 2, 2]), [1, 1, 1, 1], value="a"))
    _raises(ValueError, ["transpose:", "perm", "[0, 1, 3]"], lambda: pycoll.transpose(pycoll.ones([2, 3, 4]), [0, 1, 3]))
    _raises(ValueError, ["chunk:", "chunks", "got 0"], lambda: pycoll.chunk(x, 0))
    _raises(ValueError, ["reshape:", "only one", "-1"], lambda: pycoll.reshape(x, [-1, -1]))
    os.mkdir(tmp_path / "d")
    _raises(ValueError, ["load:", "directory", str(tmp_path / "d")], lambda: pycoll.load(str(tmp_path / "d")))


def test_shape_ops_say_what_is_wrong_with_the_arguments_given():
    """The message speaks of what the caller gave (paddle's say the same: at least 2 dimensions,
    duplicate axes, more chunks than the axis holds), not of an argument it did not pass."""
    x = pycoll.ones([2, 3])
    _raises(ValueError, ["chunk:", "chunks=3", "axis 0 of size 2"], lambda: pycoll.chunk(x, 3, axis=0))
    _raises(ValueError, ["chunk:", "chunks=2", "axis 0 of size 5"], lambda: pycoll.chunk(pycoll.ones([5, 3]), 2))
    assert [c.shape for c in pycoll.chunk(pycoll.ones([6, 3]), 3)] == [[2, 3]] * 3
    _raises(ValueError, ["diagonal:", "at least 2 dimensions", "shape [3]"], lambda: pycoll.diagonal(pycoll.ones([3])))
    _raises(ValueError, ["flip:", "duplicates", "[0, -2]"], lambda: pycoll.flip(x, [0, -2]))
    _raises(ValueError, ["reshape:", "shape [2, 3] into [0, 0, 0] (read as [2, 3, 0]"],
            lambda: pycoll.reshape(x, [0, 0, 0]))
    _raises(ValueError, ["reshape:", "shape [2, 3] into [-1, 4]"], lambda: pycoll.reshape(x, [-1, 4]))


@pytest.mark.parametrize("index, words", [(1.5, "only integers"), ("a", "only integers"),
                                          (slice(0.5, 2), "slice indices"), ((0, 0, 0), "too many indices")])
def test_a_bad_tensor_index_names_the_shape_and_the_index(index, words):
    with pytest.raises(IndexError) as info:
        pycoll.ones([2, 3])[index]
    assert str(info.value).startswith(f"indexing a Tensor of shape [2, 3] with {index!r}: ") and words in str(info.value)


@pytest.mark.parametrize("bias_shape", [[5], [1], [], [1, 5], [2, 5]])
def test_linear_takes_any_bias_that_broadcasts_and_refuses_others_by_name(bias_shape):
    # paddle 3.3.1 CPU: each of these biases gives an output of shape [2, 5]
    w = pycoll.to_tensor(np.ones((4, 5), np.float32))
    b = pycoll.to_tensor(np.full(bias_shape, 2.0, np.float32), stop_gradient=False)
    y = F.linear(pycoll.ones([2, 4]), w, b)
    np.testing.assert_array_equal(y.numpy(), np.full((2, 5), 6.0))
    y.sum().backward()
    assert b.grad.shape == bias_shape and float(b.grad.sum()) == 10.0
    with pytest.raises(ValueError, match=r"linear: x @ weight of shape \[2, 5\] and bias of shape \[3\] do not broadcast"):
        F.linear(pycoll.ones([2, 4]), w, pycoll.ones([3]))
