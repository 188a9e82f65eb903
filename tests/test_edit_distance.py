"""paddle.nn.functional edit_distance: the values below were measured on Paddle 3.3.1 (CPU) with
paddle.nn.functional.loss.edit_distance, which returns (sequence_num, distance) in that order."""
import numpy as np
import pytest

import pycoll
import pycoll.nn.functional as F


def _ints(rows):
    return pycoll.to_tensor(np.array(rows, dtype=np.int64))


DOC_INPUT = [[1, 2, 3], [4, 5, 6], [4, 4, 4], [1, 1, 1]]
DOC_LABEL = [[1, 3, 4, 1], [4, 5, 8, 1], [7, 7, 7, 1], [1, 1, 1, 1]]


def _levenshtein(a, b):
    """The textbook dynamic programme, one pair at a time."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row = row, [i] + [0] * len(b)
        for j, y in enumerate(b, 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (x != y))
    return row[-1]


@pytest.mark.parametrize("normalized, want", [(False, [3.0, 2.0, 4.0, 1.0]), (True, [0.75, 0.5, 1.0, 0.25])])
def test_docstring_example(normalized, want):
    sequence_num, distance = F.edit_distance(_ints(DOC_INPUT), _ints(DOC_LABEL), normalized=normalized,
                                             input_length=_ints([3, 3, 3, 3]), label_length=_ints([4, 4, 4, 4]))
    assert sequence_num.shape == [1] and sequence_num.dtype == pycoll.int64
    assert sequence_num.numpy().tolist() == [4]
    assert distance.shape == [4, 1] and distance.dtype == pycoll.float32
    assert distance.numpy().ravel().tolist() == want
    assert distance.stop_gradient and sequence_num.stop_gradient


def test_without_lengths_each_row_is_whole():
    """Paddle's eager kernel rejects this call (it wants LoD [N, 1] rows); the docstring asks the
    lengths to equal the widths, which is what a missing length means here."""
    _, distance = F.edit_distance(_ints(DOC_INPUT), _ints(DOC_LABEL), normalized=False)
    assert distance.numpy().ravel().tolist() == [3.0, 2.0, 4.0, 1.0]


def test_lengths_cut_the_rows_and_empty_sequences_count():
    _, distance = F.edit_distance(_ints(DOC_INPUT), _ints(DOC_LABEL), normalized=False,
                                  input_length=_ints([3, 2, 1, 0]), label_length=_ints([4, 3, 0, 1]))
    assert distance.numpy().ravel().tolist() == [3.0, 1.0, 1.0, 1.0]


def test_kitten_sitting():
    kitten, sitting = _ints([[ord(c) for c in "kitten"]]), _ints([[ord(c) for c in "sitting"]])
    lengths = dict(input_length=_ints([6]), label_length=_ints([7]))
    assert F.edit_distance(kitten, sitting, normalized=False, **lengths)[1].numpy().tolist() == [[3.0]]
    normalized = F.edit_distance(kitten, sitting, **lengths)[1].numpy()
    assert normalized.dtype == np.float32 and normalized.tolist() == [[np.float32(3) / np.float32(7)]]


def test_rows_of_different_widths():
    _, distance = F.edit_distance(_ints([[5, 6, 7, 8, 9], [1, 1, 2, 2, 3]]), _ints([[9, 8], [1, 2]]),
                                  input_length=_ints([5, 4]), label_length=_ints([2, 2]))
    assert distance.numpy().ravel().tolist() == [2.0, 1.0]


def test_empty_widths_and_batch():
    empty = pycoll.zeros([2, 0], dtype="int64")
    sequence_num, distance = F.edit_distance(empty, empty, normalized=False,
                                             input_length=_ints([0, 0]), label_length=_ints([0, 0]))
    assert sequence_num.numpy().tolist() == [2] and distance.numpy().ravel().tolist() == [0.0, 0.0]
    _, distance = F.edit_distance(empty, _ints([[1, 2], [3, 3]]), input_length=_ints([0, 0]),
                                  label_length=_ints([2, 1]))
    assert distance.numpy().ravel().tolist() == [1.0, 1.0]
    _, distance = F.edit_distance(_ints([[1, 2], [3, 3]]), empty, normalized=False,
                                  input_length=_ints([2, 1]), label_length=_ints([0, 0]))
    assert distance.numpy().ravel().tolist() == [2.0, 1.0]
    nothing = pycoll.zeros([0, 3], dtype="int64")
    sequence_num, distance = F.edit_distance(nothing, nothing, normalized=False)
    assert sequence_num.numpy().tolist() == [0] and distance.shape == [0, 1]


def test_lengths_of_shape_batch_by_one_are_taken():
    _, distance = F.edit_distance(_ints([[1, 2]]), _ints([[1, 3]]), normalized=False,
                                  input_length=_ints([[2]]), label_length=_ints([[2]]))
    assert distance.numpy().tolist() == [[1.0]]


def test_empty_ignored_tokens_are_accepted():
    _, distance = F.edit_distance(_ints([[1, 2]]), _ints([[1, 3]]), normalized=False, ignored_tokens=[])
    assert distance.numpy().tolist() == [[1.0]]


def test_random_batches_match_the_textbook_programme():
    rng = np.random.default_rng(7)
    for _ in range(20):
        batch, width_in, width_label = rng.integers(1, 5), rng.integers(0, 8), rng.integers(1, 8)
        hyp, ref = rng.integers(0, 3, (batch, width_in)), rng.integers(0, 3, (batch, width_label))
        hyp_len, ref_len = rng.integers(0, width_in + 1, batch), rng.integers(1, width_label + 1, batch)
        _, distance = F.edit_distance(_ints(hyp), _ints(ref), input_length=_ints(hyp_len),
                                      label_length=_ints(ref_len))
        want = [np.float32(_levenshtein(h[:n].tolist(), r[:m].tolist())) / np.float32(m)
                for h, r, n, m in zip(hyp, ref, hyp_len, ref_len)]
        assert distance.numpy().ravel().tolist() == want


def test_same_on_gpu_arrays():
    """tests/strict_cupy.py in CuPy's place: the CPU's distances, held in device arrays."""
    import strict_cupy

    def compute():
        return F.edit_distance(_ints(DOC_INPUT), _ints(DOC_LABEL), input_length=_ints([3, 2, 1, 0]),
                               label_length=_ints([4, 3, 2, 1]))

    with strict_cupy.installed():
        results = strict_cupy.on_each_place(compute)
    for want, got in zip(results["cpu"], results["gpu"]):
        assert isinstance(got.array, strict_cupy.ndarray)
        assert got.numpy().tolist() == want.numpy().tolist()


@pytest.mark.parametrize("call, error, names", [
    # paddle 3.3.1: ValueError "Expected ignored_tokens is None (got [1])"
    (lambda: F.edit_distance(_ints([[1]]), _ints([[1]]), ignored_tokens=[1]), ValueError, "ignored_tokens"),
    # paddle 3.3.1: ValueError "Reference string 3 is empty." (counted from 1)
    (lambda: F.edit_distance(_ints(DOC_INPUT), _ints(DOC_LABEL), input_length=_ints([3, 2, 1, 0]),
                             label_length=_ints([4, 3, 0, 1])), ValueError, "label sequence 2 is empty"),
    # paddle 3.3.1: ValueError, its kernel reads int64 only
    (lambda: F.edit_distance(pycoll.to_tensor([[1, 2]], dtype="int32"), _ints([[1, 2]])), ValueError, "input"),
    (lambda: F.edit_distance(_ints([[1, 2]]), pycoll.to_tensor([[1.0, 2.0]])), ValueError, "label"),
    (lambda: F.edit_distance(_ints([1, 2]), _ints([1, 2])), ValueError, "2-D"),
    (lambda: F.edit_distance(_ints([[1, 2], [1, 2]]), _ints([[1, 2]])), ValueError, "batch size"),
    (lambda: F.edit_distance(_ints([[1, 2], [1, 2]]), _ints([[1, 2], [1, 2]]), input_length=_ints([1]),
                             label_length=_ints([2, 2])), ValueError, "input_length"),
    (lambda: F.edit_distance(_ints([[1, 2]]), _ints([[1, 2]]), label_length=pycoll.to_tensor([2], dtype="int32")),
     ValueError, "label_length"),
    # paddle 3.3.1 reads past the row (a length above the width) or crashes (a negative one)
    (lambda: F.edit_distance(_ints([[1, 2]]), _ints([[1, 2]]), input_length=_ints([5])), ValueError, "input_length"),
    (lambda: F.edit_distance(_ints([[1, 2]]), _ints([[1, 2]]), input_length=_ints([-1])), ValueError, "input_length"),
    # paddle 3.3.1: TypeError "argument (position 5) must be bool, but got int"
    (lambda: F.edit_distance(_ints([[1]]), _ints([[1]]), normalized=1), TypeError, "normalized"),
])
def test_bad_input_names_the_argument(call, error, names):
    with pytest.raises(error, match=names):
        call()
