"""Samples into batches: paddle's ``default_collate_fn``, and the step that makes Tensors of a
batch's arrays in the training process (collating may run in a worker process: host samples stay
NumPy; samples already on a GPU, CuPy arrays or GPU Tensors, are stacked there)."""
from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import Any, List

import numpy as np

from pycoll.device import array_module, is_array


def default_collate_fn(batch: List[Any]) -> Any:
    """Stack a list of samples field by field: arrays and Tensors into one array with a new
    first axis, numbers into an array, strings into a list; tuples, lists and dicts of these
    field by field (every sample must have the same structure)."""
    sample = batch[0]
    if isinstance(sample, np.ndarray) or hasattr(sample, "__pycoll_array__"):
        arrays = [s.__pycoll_array__() if hasattr(s, "__pycoll_array__") else s for s in batch]
        if not isinstance(arrays[0], np.ndarray):  # on a GPU: stacked there, not through the host
            return array_module(arrays[0]).stack(arrays)
        return np.stack([np.asarray(s) for s in batch])
    if is_array(sample):  # a CuPy array
        return array_module(sample).stack(batch)
    if isinstance(sample, (numbers.Number, np.generic)):
        return np.array(batch)
    if isinstance(sample, (str, bytes)):
        return list(batch)
    if isinstance(sample, Mapping):
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


def to_tensors(batch: Any) -> Any:
    """``batch`` with every NumPy array made a pycoll Tensor on the current device (a CuPy
    array: a Tensor over it, where it is)."""
    from pycoll.tensor import to_tensor, wrap

    if isinstance(batch, np.ndarray):
        return to_tensor(batch)
    if is_array(batch):
        return wrap(batch)
    if isinstance(batch, dict):
        return {key: to_tensors(value) for key, value in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_tensors(value) for value in batch)
    return batch
