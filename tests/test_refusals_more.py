"""Inputs paddle 3.3.1 refuses and pycoll once computed silently (a probe's finds): integer division
by zero, stack/flatten/unsqueeze axes out of range, clip with min > max, float repeat_times and
sections, negative embedding ids, matmul/linear operands of two real dtypes; and 'cuda' places,
which paddle reads as 'gpu'. Accepted neighbours are checked against the values paddle 3.3.1's CPU
build printed for the same calls (noted at each)."""
import numpy as np
import pytest

import pycoll
import pycoll.nn.functional as F
from pycoll.device import gpu_count


def t(values, dtype=None):
    return pycoll.to_tensor(values, dtype=dtype)


# ---- 1. integer division by zero ----------------------------------------------------------

@pytest.mark.parametrize("op", [
    lambda a, b: a // b, lambda a, b: a % b, pycoll.floor_divide, pycoll.remainder, pycoll.mod, pycoll.floor_mod,
    lambda a, b: a // 0, lambda a, b: 7 // b, lambda a, b: a.clone().divide_(b, rounding_mode="trunc"),
    lambda a, b: a.clone().floor_divide_(b), lambda a, b: a.clone().remainder_(b),
    lambda a, b: a.clone().floor_mod_(b),
    lambda a, b: pycoll.floor_divide(a.astype("int32"), b.astype("int32")),
])
def test_integer_division_by_zero_is_refused(op):
    # paddle 3.3.1: "InvalidArgumentError: Integer division by zero encountered in (floor/trunc) divide"
    a, b = t([7, -2]), t([0, 3])
    with pytest.raises(ValueError, match="y holds a zero; integer division by zero"):
        op(a, b)


def test_division_without_a_zero_and_float_division_by_zero_keep_their_values():
    # paddle 3.3.1 printed: [7, -7] // [2, 2] -> [3, -4]; [7, -7] % [-3, 3] -> [-2, 2];
    # float [7, -2] // [0, 0] -> [inf, -inf]; float [7, -2] % [0, 0] -> [nan, nan]
    np.testing.assert_array_equal((t([7, -7]) // t([2, 2])).numpy(), [3, -4])
    np.testing.assert_array_equal((t([7, -7]) % t([-3, 3])).numpy(), [-2, 2])
    np.testing.assert_array_equal((t([7., -2.]) // t([0., 0.])).numpy(), [np.inf, -np.inf])
    assert np.isnan((t([7., -2.]) % t([0., 0.])).numpy()).all()
    assert (t([7., -2.]) // t([0., 0.])).dtype == pycoll.float32


# ---- 2. axes out of range ------------------------------------------------------------------

@pytest.mark.parametrize("axis", [3, -4, 7])
def test_stack_axis_out_of_range(axis):
    # paddle 3.3.1: "Attr(axis) must be inside [-(rank+1), rank+1), where rank = 2, but received axis is:3"
    x = pycoll.ones([2, 3])
    with pytest.raises(ValueError, match=r"stack: axis must be an int in \[-3, 3\)"):
        pycoll.stack([x, x], axis=axis)


def test_stack_axis_at_the_ends_of_the_range():
    # paddle 3.3.1: axis=2 -> [2, 3, 2], axis=-3 -> [2, 2, 3]
    x = pycoll.to_tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert pycoll.stack([x, x], axis=2).shape == [2, 3, 2]
    out = pycoll.stack([x, x + 10], axis=-3)
    assert out.shape == [2, 2, 3]
    np.testing.assert_array_equal(out.numpy()[1], x.numpy() + 10)


@pytest.mark.parametrize("start,stop,match", [
    (2, 1, "stop_axis .1. must not come before start_axis .2."),
    (-1, 0, "stop_axis .0. must not come before start_axis .-1."),
    (0, 5, r"stop_axis must be an int in \[-3, 3\)"),
    (-5, -1, r"start_axis must be an int in \[-3, 3\)"),
    (1.0, -1, "start_axis must be an int"),
])
def test_flatten_axes_refused(start, stop, match):
    # paddle 3.3.1 refuses each: "The stop_axis should be larger than stat_axis", "The stop_axis should
    # be a int, and in range [-rank(x), rank(x))", "The start_axis should be a int, ..."
    y = pycoll.ones([2, 3, 4])
    with pytest.raises(ValueError, match=match):
        pycoll.flatten(y, start, stop)
    with pytest.raises(ValueError, match=match):
        y.clone().flatten_(start, stop)
    with pytest.raises(ValueError, match=match):
        pycoll.nn.Flatten(start, stop)(y)


def test_flatten_accepted_axes():
    # paddle 3.3.1: flatten(y, 1, 1) and (-1, -1) keep [2, 3, 4]; (-3, -1) -> [24]; a 0-d x -> [1];
    # a 0-d x with stop_axis 5: "should be 0 or -1 when the input tensor is a 0-D-Tensor"
    y = pycoll.ones([2, 3, 4])
    assert pycoll.flatten(y, 1, 1).shape == [2, 3, 4]
    assert pycoll.flatten(y, -1, -1).shape == [2, 3, 4]
    assert pycoll.flatten(y, -3, -1).shape == [24]
    assert pycoll.flatten(y, 0, -2).shape == [6, 4]
    assert pycoll.flatten(pycoll.to_tensor(3.0)).shape == [1]
    with pytest.raises(ValueError, match=r"stop_axis must be an int in \[-1, 1\)"):
        pycoll.flatten(pycoll.to_tensor(3.0), 0, 5)


@pytest.mark.parametrize("axis", [5, -5, 3, -4, [0, 4], [3, 0], [-4, -4], [2, -5]])
def test_unsqueeze_axis_out_of_range(axis):
    # paddle 3.3.1 refuses each on a [2, 3] x ("The insert dimension value should not be larger than
    # the dimension size of input tensor" / "... should not be less than 0"): axes go in one at a time
    x = pycoll.ones([2, 3])
    with pytest.raises(ValueError, match="unsqueeze: axis .* must be an int in"):
        pycoll.unsqueeze(x, axis)
    with pytest.raises(ValueError, match="unsqueeze: axis"):
        x.clone().unsqueeze_(axis)


def test_unsqueeze_accepted_axes():
    # paddle 3.3.1: 2 -> [2, 3, 1]; -3 -> [1, 2, 3]; [0, 3] -> [1, 2, 3, 1]; [-1, -1] -> [2, 3, 1, 1];
    # a 0-d x takes 0 or -1 only (1 is refused)
    x = pycoll.ones([2, 3])
    assert pycoll.unsqueeze(x, 2).shape == [2, 3, 1]
    assert pycoll.unsqueeze(x, -3).shape == [1, 2, 3]
    assert pycoll.unsqueeze(x, [0, 3]).shape == [1, 2, 3, 1]
    assert pycoll.unsqueeze(x, [-1, -1]).shape == [2, 3, 1, 1]
    assert pycoll.unsqueeze(pycoll.to_tensor(1.0), -1).shape == [1]
    with pytest.raises(ValueError, match="unsqueeze: axis 1"):
        pycoll.unsqueeze(pycoll.to_tensor(1.0), 1)


# ---- 3. clip with min > max ----------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda x: pycoll.clip(x, min=6, max=2), lambda x: x.clip(6, 2), lambda x: x.clone().clip_(6, 2),
    lambda x: pycoll.clip(x, min=pycoll.to_tensor(6.), max=pycoll.to_tensor(2.)),
    lambda x: pycoll.clip(x.astype("int64"), min=6, max=2),
])
def test_clip_min_above_max_is_refused(call):
    # paddle 3.3.1: "max should be greater than or equal to min. But received min = 6.000000, max = 2.000000"
    with pytest.raises(ValueError, match="max must be greater than or equal to min|min must be <= max"):
        call(t([1., 5., 9.]))


def test_clip_min_equal_max():
    # paddle 3.3.1: clip([1, 5, 9], min=2, max=2) -> [2, 2, 2]
    np.testing.assert_array_equal(pycoll.clip(t([1., 5., 9.]), min=2, max=2).numpy(), [2, 2, 2])


# ---- 4. floats where ints are needed -------------------------------------------------------

@pytest.mark.parametrize("reps", [[1.5, 2], (1, 2.5), [2.0], [np.float32(2)]])
def test_tile_float_repeat_times(reps):
    # paddle 3.3.1: "tile(): argument (position 2) must be list of int, but got float at pos 0"
    with pytest.raises(TypeError, match="tile: repeat_times must be a list of ints, got the float"):
        pycoll.tile(pycoll.ones([2, 3]), reps)


def test_tile_int_repeat_times():
    # paddle 3.3.1: tile(ones([2, 3]), 2) and [np.int64(2)] -> [2, 6]
    x = pycoll.to_tensor(np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(pycoll.tile(x, 2).numpy(), np.tile(np.arange(6).reshape(2, 3), 2))
    assert pycoll.tile(x, [np.int64(2)]).shape == [2, 6]


@pytest.mark.parametrize("sections", [[2.0, 4.0], [2, 4.0], [-1, 2.0]])
def test_split_float_sections(sections):
    # paddle 3.3.1: "split(): argument (position 2) must be list of int, but got float at pos 1"
    with pytest.raises(TypeError, match="split: num_or_sections must be a list of ints, got the float"):
        pycoll.split(pycoll.ones([6]), sections)
    with pytest.raises(TypeError, match="num_or_sections"):  # paddle: "must be int, list or tuple"
        pycoll.split(pycoll.ones([6]), 2.0)


def test_split_int_sections():
    parts = pycoll.split(pycoll.arange(6), [2, -1])
    np.testing.assert_array_equal(parts[1].numpy(), [2, 3, 4, 5])


# ---- 5. embedding ids ----------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda w: F.embedding(t([-1]), w),
    lambda w: F.embedding(t([-1, 3]), w, padding_idx=-1),
    lambda w: F.embedding(t([[0, 1], [2, -4]]), w),
])
def test_embedding_negative_ids_are_refused(call):
    # paddle 3.3.1's CPU kernel reads garbage for id -1 (6.7e-44); its GPU kernel and its bound
    # message refuse ids outside [0, num_embeddings); padding_idx=-1 names row 3, not the id -1
    w = pycoll.arange(8, dtype="float32").reshape([4, 2])
    with pytest.raises(ValueError, match="embedding: x holds the id -.; ids must be >= 0 and < 4"):
        call(w)


def test_embedding_ids_past_the_rows_and_padding_idx_past_them():
    # paddle 3.3.1: "Variable value (input) of OP(embedding) expected >= 0 and < 4, but got 4";
    # padding_idx=4: "padding_idx must be within [-4, 4)"
    w = pycoll.arange(8, dtype="float32").reshape([4, 2])
    with pytest.raises(ValueError, match="x holds the id 4; ids must be >= 0 and < 4"):
        F.embedding(t([4]), w)
    with pytest.raises(ValueError, match=r"padding_idx must be within \[-4, 4\), got 4"):
        F.embedding(t([1]), w, padding_idx=4)
    with pytest.raises(ValueError, match="x holds the id -1"):
        pycoll.nn.Embedding(4, 2, padding_idx=-1)(t([-1]))


def test_embedding_padding_idx_minus_one_is_the_last_row():
    # paddle 3.3.1: embedding([0, 3], arange(8).reshape([4, 2]), padding_idx=-1) -> [[0, 1], [0, 0]]
    w = pycoll.arange(8, dtype="float32").reshape([4, 2])
    np.testing.assert_array_equal(F.embedding(t([0, 3]), w, padding_idx=-1).numpy(), [[0, 1], [0, 0]])


# ---- 6. matmul / linear dtypes -------------------------------------------------------------

MIXES = [("int64", "float32"), ("float64", "float32"), ("float32", "float64"), ("int32", "int64"),
         ("float16", "float32")]


@pytest.mark.parametrize("a,b", MIXES)
def test_products_of_two_real_dtypes_are_refused(a, b):
    # paddle 3.3.1 refuses each of matmul, mm, bmm and F.linear for these ("The type of data we are
    # trying to retrieve (float32) does not match the type of data (int64) currently contained in the
    # container")
    x, y = pycoll.ones([2, 2], dtype=a), pycoll.ones([2, 2], dtype=b)
    for call in (pycoll.matmul, pycoll.mm, F.linear, lambda p, q: x.matmul(q),
                 lambda p, q: pycoll.bmm(p.unsqueeze(0), q.unsqueeze(0))):
        with pytest.raises(TypeError, match=f"has dtype {a} and (y|weight) {b}; both must have the same dtype"):
            call(x, y)


@pytest.mark.parametrize("a,b", [("float32", "int64"), ("float32", "int32"), ("float64", "int64")])
def test_a_floating_x_takes_an_integer_y(a, b):
    # paddle 3.3.1: matmul, mm and F.linear of a float32 x and an int32/int64 y give float32 (its float64 x
    # refuses them, a quirk; pycoll takes every floating x)
    x, y = pycoll.ones([2, 2], dtype=a), pycoll.to_tensor([[1, 2], [3, 4]], dtype=b)
    for call in (pycoll.matmul, pycoll.mm, F.linear):
        out = call(x, y)
        assert out.dtype == a
        assert out.numpy().tolist() == [[4.0, 6.0], [4.0, 6.0]]


def test_linear_layer_refuses_another_dtype():
    # paddle 3.3.1: Linear(3, 2) (float32) on an int64 or float64 x refuses
    lin = pycoll.nn.Linear(3, 2)
    with pytest.raises(TypeError, match="linear: x has dtype int64 and weight float32.*x.astype\\('float32'\\)"):
        lin(t([[1, 2, 3]]))
    with pytest.raises(TypeError, match="linear: x has dtype float64 and weight float32"):
        lin(pycoll.ones([1, 3], dtype="float64"))


def test_complex_with_real_and_the_at_operator():
    # paddle 3.3.1: matmul(complex64, float32) and (float32, complex64) -> complex64 [2+0j ...];
    # ones([2, 2], float32) @ ones(float64) -> float32, float64 @ float32 -> float64, int64 @ float32
    # -> int64 (the operator casts y to x's dtype)
    c, f = pycoll.ones([2, 2], dtype="complex64"), pycoll.ones([2, 2])
    assert pycoll.matmul(c, f).dtype == pycoll.complex64 and pycoll.matmul(f, c).dtype == pycoll.complex64
    np.testing.assert_array_equal(pycoll.matmul(f, c).numpy(), np.full((2, 2), 2 + 0j))
    assert (f @ pycoll.ones([2, 2], dtype="float64")).dtype == pycoll.float32
    assert (pycoll.ones([2, 2], dtype="float64") @ f).dtype == pycoll.float64
    x = pycoll.to_tensor([[1.5, -2.25]], dtype="float64")
    np.testing.assert_array_equal((x @ t([[2.5, 3.], [4., 5.]])).numpy(), [[-5.25, -6.75]])
    assert (pycoll.ones([2, 2], dtype="int64") @ f).dtype == pycoll.int64


def test_conv_keeps_its_refusal():
    with pytest.raises(TypeError, match="conv2d: x has dtype int64 and the weight float32.*x.astype\\('float32'\\)"):
        pycoll.nn.Conv2D(1, 1, 1)(pycoll.ones([1, 1, 2, 2], dtype="int64"))


# ---- 7. 'cuda' places ----------------------------------------------------------------------

@pytest.mark.skipif(gpu_count() > 0, reason="checks the refusal on a machine without a GPU")
@pytest.mark.parametrize("call", [
    lambda: pycoll.set_device("cuda"), lambda: pycoll.set_device("cuda:0"), lambda: pycoll.set_device("CUDA:0"),
    lambda: pycoll.ones([2]).to("cuda"), lambda: pycoll.nn.Linear(2, 2).to("cuda:1"),
])
def test_cuda_places_read_as_gpu(call):
    # paddle 3.3.1 maps 'cuda' to 'gpu' (paddle/device/__init__.py _convert_to_place) and its CPU
    # build then refuses: "The device should not be 'gpu', since PaddlePaddle is not compiled with CUDA"
    try:
        with pytest.raises(ValueError, match="visible GPUs"):
            call()
    finally:
        pycoll.set_device("cpu")


def test_cuda_place_parses_as_gpu():
    from pycoll.device import parse_place
    assert parse_place("cuda:1") == ("gpu", 1) and parse_place("cuda") == parse_place("gpu")
    with pytest.raises(ValueError, match="place must be 'cpu', 'gpu' or 'gpu:N', got 'cudax'"):
        parse_place("cudax")


def test_messages_name_the_tensor_the_index_and_the_key():
    # a probe's mistakes: NumPy's words named no tensor, no index, no state_dict key
    with pytest.raises(ValueError, match=r"only one element tensors can be converted to Python scalars; this one "
                                         r"has shape \[3\] \(3 elements\)"):
        float(pycoll.ones([3]))
    with pytest.raises(AssertionError):  # paddle 3.3.1's float() of several elements asserts
        int(pycoll.ones([2]))
    x = pycoll.ones([2, 3])
    with pytest.raises(IndexError, match=r"__setitem__: indexing a Tensor of shape \[2, 3\] with 3: index 3 is out"):
        x[3] = 1.0
    assert x.numpy().tolist() == [[1.0] * 3] * 2
    with pytest.raises(IndexError, match=r"with an index of shape \[1000\]: index 2 is out of bounds"):
        x[pycoll.arange(1000)] = 1.0  # a long index tensor is named by its shape, not printed whole
    with pytest.raises(ValueError, match=r"linear: x must have at least 1 dimension .* got a 0-d tensor"):
        pycoll.nn.Linear(4, 3)(pycoll.to_tensor(1.0))
    with pytest.raises(ValueError, match=r"^sum: axis must be ints in \[-2, 2\), got 2"):
        x.sum(axis=2)
    layer = pycoll.nn.Linear(2, 2)
    before = layer.weight.numpy().copy()
    with pytest.raises(TypeError, match="set_state_dict: the value of 'bias' must be a Tensor, an array, a list or a "
                                        "number, got str 'zeros'"):
        layer.set_state_dict({"weight": np.zeros((2, 2), np.float32), "bias": "zeros"})
    assert np.array_equal(layer.weight.numpy(), before)  # nothing loaded


def test_an_activation_names_itself_for_a_keyword_it_does_not_take():
    # paddle 3.3.1: "ReLU.__init__() got an unexpected keyword argument 'inplace'" (torch's inplace=True)
    with pytest.raises(TypeError, match=r"^ReLU.__init__\(\) got an unexpected keyword argument 'inplace'$"):
        pycoll.nn.ReLU(inplace=True)
