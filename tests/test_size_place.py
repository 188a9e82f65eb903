"""Tensor metadata as paddle 3.3.1 gives it: ``x.shape`` (a Size), ``x.size`` (an int that can be
called), ``x.place`` (a place object), and the torch-style dtype names. The expected answers are
paddle 3.3.1's, measured on its CPU build for the same expressions (``paddle`` read as ``pycoll``)."""
import copy
import io
import json
import pickle

import numpy as np
import pytest

import pycoll


def test_shape_is_a_size_equal_to_lists_and_tuples():
    s = pycoll.ones([2, 3]).shape
    assert type(s) is pycoll.Size and isinstance(s, list) and not isinstance(s, tuple)
    assert s == [2, 3] and s == (2, 3) and (2, 3) == s and [2, 3] == s and not s != (2, 3)
    assert s != (2, 4) and s != [3] and not s == 6
    assert repr(s) == str(s) == "pycoll.Size([2, 3])"  # paddle: paddle.Size([2, 3])
    assert f"{s}" == "[2, 3]" and "{:>8}".format(s) == "  [2, 3]"  # pycoll's messages interpolate shapes
    assert repr(pycoll.ones([]).shape) == "pycoll.Size([])"
    assert s[0] == 2 and s[-1] == 3 and type(s[0]) is int and len(s) == 2


@pytest.mark.parametrize("make, want", [
    (lambda s: s[:1] + (4,), [2, 4]), (lambda s: s[:1] + [4], [2, 4]), (lambda s: (4,) + s, [4, 2, 3]),
    (lambda s: [4] + s, [4, 2, 3]), (lambda s: s[:1], [2]), (lambda s: s[::-1], [3, 2]),
    (lambda s: s * 2, [2, 3, 2, 3]), (lambda s: 2 * s, [2, 3, 2, 3]), (lambda s: s + s, [2, 3, 2, 3]),
    (lambda s: s + pycoll.Size([1]), [2, 3, 1]),
])
def test_what_a_size_makes_is_a_size(make, want):
    out = make(pycoll.ones([2, 3]).shape)
    assert type(out) is pycoll.Size and list(out) == want


def test_size_is_a_list_for_python_numpy_json_and_pickle():
    x = pycoll.ones([2, 3])
    s = x.shape
    with pytest.raises(TypeError, match="unhashable"):
        hash(s)
    assert tuple(s) == (2, 3) and list(s) == [2, 3] and type(s.copy()) is list  # paddle: copy() is a list
    assert np.zeros(s).shape == (2, 3) and np.ones(s[::-1]).shape == (3, 2)
    assert json.dumps(s) == "[2, 3]" and json.dumps({"shape": s}) == '{"shape": [2, 3]}'
    back = pickle.loads(pickle.dumps(s))
    assert type(back) is pycoll.Size and back == [2, 3]
    assert type(copy.deepcopy(s)) is pycoll.Size
    assert pycoll.reshape(pycoll.arange(6), s).shape == [2, 3] and pycoll.zeros(s).shape == [2, 3]
    grown = x.shape
    grown.append(9)
    grown += [1]
    assert type(grown) is pycoll.Size and grown == [2, 3, 9, 1] and x.shape == [2, 3]  # a new list each time
    assert (s == np.array([2, 3])).tolist() == [True, True]  # NumPy compares elementwise, as with paddle's
    saved = io.BytesIO()
    pycoll.save({"shape": s, "numel": x.size}, saved)
    saved.seek(0)
    assert pycoll.load(saved) == {"shape": [2, 3], "numel": 6}


def test_size_numel_and_construction():
    assert pycoll.ones([2, 3]).shape.numel() == 6
    assert pycoll.ones([0, 3]).shape.numel() == 0 and pycoll.ones([]).shape.numel() == 1
    assert pycoll.Size() == [] and pycoll.Size((2, 3)) == [2, 3] and pycoll.Size([-1]) == [-1]
    assert pycoll.Size([np.int64(2), pycoll.to_tensor(3)]) == [2, 3]
    assert all(type(d) is int for d in pycoll.Size([np.int64(2), pycoll.to_tensor(3)]))
    with pytest.raises(TypeError, match="item 0 is float"):
        pycoll.Size([2.5])
    with pytest.raises(TypeError, match="iterable of ints, got int"):
        pycoll.Size(5)
    with pytest.raises(TypeError, match="unsupported operand"):
        pycoll.ones([2]).shape + 1


def test_size_is_the_number_of_elements_and_callable():
    x = pycoll.ones([2, 3])
    assert x.size == 6 and x.size + 1 == 7 and x.size * 2 == 12 and type(x.size * 2) is int
    assert int(x.size) == 6 and f"{x.size}" == "6" and repr(x.size) == "6" and str(x.size) == "6"
    assert json.dumps(x.size) == "6" and pickle.loads(pickle.dumps(x.size)) == 6
    assert x.size() == [2, 3] and type(x.size()) is pycoll.Size
    assert x.size(1) == 3 and x.size(-1) == 3 and x.size(dim=0) == 2 and type(x.size(1)) is int
    assert pycoll.ones([]).size == 1 and pycoll.ones([]).size() == []
    with pytest.raises(IndexError, match="dim 5 is out of range for a tensor of 2 dimensions"):
        x.size(5)
    with pytest.raises(TypeError, match="dim must be an int, got float"):
        x.size(1.0)


def test_place_is_a_place_object():
    x = pycoll.ones([2])
    p = x.place
    assert repr(p) == str(p) == f"{p}" == "Place(cpu)"
    assert p == pycoll.CPUPlace() and pycoll.CPUPlace() == p and hash(p) == hash(pycoll.CPUPlace())
    assert p.is_cpu_place() and not p.is_gpu_place() and p.gpu_device_id() == 0
    assert p == "cpu" and p != "gpu:0"  # pycoll's earlier string places still compare
    assert pycoll.to_tensor([1.0], place=p).place == p and x.to(p) is x
    assert pickle.loads(pickle.dumps(p)) == pycoll.CPUPlace()
    cuda = pycoll.CUDAPlace(1)
    assert repr(cuda) == "Place(gpu:1)" and cuda.is_gpu_place() and cuda.gpu_device_id() == 1 and cuda == "gpu:1"
    assert cuda != p and cuda != pycoll.CUDAPlace(0)
    assert "Place(cpu)" in repr(x)


def test_set_device_returns_the_place():
    place = pycoll.set_device("cpu")
    assert type(place) is pycoll.CPUPlace and repr(place) == "Place(cpu)" and place == "cpu"
    assert pycoll.get_device() == "cpu"
    assert pycoll.get_device(pycoll.to_tensor([1, 2])) == -1  # given a tensor: its GPU's id, -1 on the host
    with pytest.raises(TypeError, match="get_device: x must be a Tensor, got list"):
        pycoll.get_device([1, 2])


def test_torch_style_dtype_names():
    # paddle 3.3.1: float float32, double float64, half float16, int int32, long int64, short int16,
    # cfloat complex64, cdouble complex128
    assert (pycoll.float, pycoll.double, pycoll.half, pycoll.int, pycoll.long, pycoll.short, pycoll.cfloat,
            pycoll.cdouble) == tuple(np.dtype(n) for n in ("float32", "float64", "float16", "int32", "int64", "int16",
                                                           "complex64", "complex128"))
    assert pycoll.bool == np.dtype(bool) and pycoll.uint8 == np.uint8 and pycoll.uint32 == np.uint32
    assert isinstance(pycoll.float32, pycoll.dtype) and isinstance(pycoll.ones([1]).dtype, pycoll.dtype)
    assert pycoll.to_tensor([1.5], dtype=pycoll.long).tolist() == [1]
    assert pycoll.to_tensor([1], dtype=pycoll.float).dtype == np.float32
    assert pycoll.ones([2]).astype(pycoll.long).dtype == np.int64
    assert pycoll.zeros(2, 3, dtype=pycoll.half).dtype == np.float16
    pytest.importorskip("ml_dtypes")
    assert str(pycoll.float8_e4m3fn) == "float8_e4m3fn" and str(pycoll.float8_e5m2) == "float8_e5m2"
    assert pycoll.ones([2], dtype="float8_e4m3fn").dtype == pycoll.float8_e4m3fn
    assert "float8_e5m2" in dir(pycoll)
