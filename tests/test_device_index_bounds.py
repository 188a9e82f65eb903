"""Integer indices out of range on a GPU tensor raise IndexError, as on the CPU.

CuPy wraps an out-of-range integer-array index around where NumPy raises (its documented
difference from NumPy); tests/strict_cupy.py wraps as CuPy does. Without pycoll's own check,
``x[[1, 5]]`` of a 3-row tensor read row 2 on a GPU, and writes went to the wrong row."""
import numpy as np
import pytest

import pycoll
import strict_cupy


@pytest.fixture
def on_gpu():
    with strict_cupy.installed():
        pycoll.set_device("gpu")
        try:
            yield
        finally:
            pycoll.set_device("cpu")


def _x():
    return pycoll.to_tensor(np.arange(12, dtype="float32").reshape(3, 4))


CASES = {
    "getitem": lambda x, i: x[i],
    "getitem on axis 1": lambda x, i: x[:, i],
    "getitem after an ellipsis": lambda x, i: x[..., i],
    "setitem": lambda x, i: x.__setitem__(i, 7.0),
    "index_put": lambda x, i: pycoll.index_put(x, (i,), pycoll.to_tensor(np.float32(7.0))),
    "index_add": lambda x, i: pycoll.index_add(x, i, 0, pycoll.ones([2, 4])),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("place", ["cpu", "gpu"])
def test_an_index_out_of_range_raises_on_either_place(case, place, request):
    if place == "gpu":
        request.getfixturevalue("on_gpu")
    x = _x()
    with pytest.raises(IndexError):
        CASES[case](x, pycoll.to_tensor(np.array([1, 5])))
    np.testing.assert_array_equal(x.numpy(), np.arange(12, dtype="float32").reshape(3, 4))  # nothing written


@pytest.mark.parametrize("case", sorted(CASES))
def test_indices_in_range_negative_ones_included_work_on_the_gpu(case, on_gpu):
    results = {}
    for place in ("cpu", "gpu"):
        pycoll.set_device(place)
        x = _x()
        got = CASES[case](x, pycoll.to_tensor(np.array([-1, 0])))
        results[place] = (x if got is None else got).numpy()
    np.testing.assert_array_equal(results["gpu"], results["cpu"])


def test_the_error_names_the_axis_and_its_size(on_gpu):
    with pytest.raises(IndexError, match="index 9 is out of range for axis 1 of size 4"):
        _x()[:, pycoll.to_tensor(np.array([0, 9]))]
