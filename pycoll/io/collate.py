"""Samples into batches: paddle's ``default_collate_fn``, and the step that makes Tensors of a
batch's arrays in the training process (collating may run in a worker process, whose Tensors are
host ones; samples already on a GPU, CuPy arrays or GPU Tensors, are stacked there)."""
from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import Any, List

import numpy as np

from pycoll.device import array_module, current_place, is_array, place_of


def _same_shapes(arrays: List[Any]) -> List[Any]:
    """``arrays``, which a batch stacks: ValueError naming the first sample of another shape."""
    first = arrays[0].shape
    for i, a in enumerate(arrays):
        if a.shape != first:
            raise ValueError(f"default_collate_fn: the samples of a batch must have one shape to be stacked: "
                             f"sample 0's field has shape {list(first)}, sample {i}'s {list(a.shape)} (pad "
                             f"them, or pass a collate_fn)")
    return arrays


def default_collate_fn(batch: List[Any]) -> Any:
    """Stack a list of samples field by field, as paddle's: arrays into one array with a new
    first axis, Tensors into one Tensor (a new one, which takes no gradient), numbers into an
    array, strings into a list; tuples, lists and dicts of these field by field (every sample
    must have the same structure)."""
    sample = batch[0]
    if isinstance(sample, np.ndarray):
        return np.stack(_same_shapes(batch))
    if hasattr(sample, "__pycoll_array__"):  # Tensors: stacked where they lie (on a GPU, not through the host)
        from pycoll.tensor import wrap

        arrays = [s.__pycoll_array__() for s in batch]
        return wrap(array_module(arrays[0]).stack(_same_shapes(arrays)))
    if is_array(sample):  # a CuPy array
        return array_module(sample).stack(_same_shapes(batch))
    if isinstance(sample, (str, bytes)):  # before np.generic: np.str_ and np.bytes_ are both
        return list(batch)
    if isinstance(sample, (numbers.Number, np.generic)):
        return np.array(batch)
    if isinstance(sample, Mapping):
        odd = next((s for s in batch if not isinstance(s, Mapping) or set(s) != set(sample)), None)
        if odd is not None:
            other = sorted(map(str, odd)) if isinstance(odd, Mapping) else f"a {type(odd).__name__}"
            raise ValueError(f"default_collate_fn: the samples of a batch have different keys "
                             f"({sorted(map(str, sample))} and {other}); each must have the same")
        return {key: default_collate_fn([s[key] for s in batch]) for key in sample}
    if isinstance(sample, Sequence):
        if any(len(s) != len(sample) for s in batch):
            raise ValueError(f"default_collate_fn: the samples of a batch have different numbers of "
                             f"fields ({sorted({len(s) for s in batch})}); each must have the same")
        return [default_collate_fn(list(fields)) for fields in zip(*batch)]
    raise TypeError(f"default_collate_fn: cannot batch samples of type {type(sample).__name__}; give "
                    f"the DataLoader a collate_fn")


def default_convert_fn(batch: Any) -> Any:
    """paddle's collate without batching (``DataLoader(batch_size=None)``): the sample ``batch``
    (paddle's name) as it is, but its tuples and lists, at any depth, as lists (and mappings as dicts)."""
    if isinstance(batch, (str, bytes)):
        return batch
    if isinstance(batch, Mapping):
        return {key: default_convert_fn(value) for key, value in batch.items()}
    if isinstance(batch, Sequence):
        return [default_convert_fn(value) for value in batch]
    return batch


def to_tensors(batch: Any, fresh: bool) -> Any:
    """``batch`` as the DataLoader hands it out: every array a Tensor on the current device (a
    CuPy array: a Tensor over it, where it is), tuples as lists (paddle's), dicts as dicts.

    ``fresh``: the batch's arrays and Tensors are new (stacked by `default_collate_fn`, or
    received from a worker), so they become Tensors as they are. Otherwise (a ``collate_fn`` of
    the user's, ``batch_size=None``) they may be the dataset's own, and each is copied, as
    paddle's loader always makes new tensors: an in-place op on a batch must not write into the
    dataset, nor a kept batch change with the next, nor a Tensor's graph reach the training step.
    """
    from pycoll.tensor import Tensor, tensor_of, to_tensor, wrap

    if isinstance(batch, np.ndarray):
        return tensor_of(batch) if fresh else to_tensor(batch)
    if is_array(batch):
        return wrap(batch if fresh else batch.copy())
    if isinstance(batch, Tensor):
        return batch if fresh and place_of(batch._array) == current_place() else to_tensor(batch)
    if isinstance(batch, dict):
        return {key: to_tensors(value, fresh) for key, value in batch.items()}
    if isinstance(batch, (list, tuple)):
        return [to_tensors(value, fresh) for value in batch]
    return batch
