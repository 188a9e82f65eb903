"""Batches from the DataLoader's workers through shared memory (``use_shared_memory``, paddle's
default), not through the result queue's pipe.

A worker writes each large array of a batch into a file of its own in ``/dev/shm`` (tmpfs: the
pages are memory) and sends its name, shape and dtype in the array's place; the training process
maps the file, unlinks it at once (the mapping stays until the array that views it is freed) and
hands out an array over the mapping. A batch then costs one copy (the worker's write) where the
pipe cost four (pickling, the pipe's two copies, unpickling): for batches of tens of MB, most of
a worker pass's time. Small arrays, and every array where ``/dev/shm`` is missing, still go
through the pipe.

The files are named ``pycoll_dl_<training pid>_<pool>_<worker pid>_<n>``: when a pool shuts down
it removes those of its own that were never taken (a pass left early, a failed worker); the
training process removes its own as it exits; and what a killed training process left is removed
by the next pool started on the machine (its name's pid no longer runs) or, under the launchers,
by ``job_leftovers`` when the job ends.
"""
from __future__ import annotations

import atexit
import itertools
import mmap
import os
from typing import Any

import numpy as np

from pycoll._batch_files import DIR, PREFIX, owner_ended
from pycoll.tensor import Tensor, wrap
MIN_BYTES = 1 << 16  # below this an array goes through the pipe: a file costs more than the copies

_pools = itertools.count()


def available() -> bool:
    """Whether this machine has a shared-memory folder to pass batches through."""
    return os.path.isdir(DIR) and os.access(DIR, os.W_OK)


_exit_tidy_for = None  # the process whose exit removes its files (registered once, in it)


def pool_prefix() -> str:
    """The name prefix of a new pool's files (made in the training process), after removing the
    files of training processes that no longer run and arranging for this one's to go at exit."""
    global _exit_tidy_for
    owner = os.getpid()
    if _exit_tidy_for != owner:  # a forked child inherits the registration, not the process
        atexit.register(_tidy_at_exit, owner)
        _exit_tidy_for = owner
    _remove_orphans()
    return f"{PREFIX}{owner}_{next(_pools)}_"


def _tidy_at_exit(owner: int) -> None:
    if os.getpid() == owner:  # not in a child that inherited the handler
        remove_left(f"{PREFIX}{owner}_")


def _remove_orphans() -> None:
    """Remove the files whose training process has ended (killed before it could)."""
    try:
        names = [name for name in os.listdir(DIR) if name.startswith(PREFIX)]
    except OSError:
        return
    for name in names:
        if owner_ended(name):
            try:
                os.unlink(os.path.join(DIR, name))
            except OSError:  # removed meanwhile
                pass


class SharedArray:
    """What crosses the queue in place of an array: its file's name, shape and dtype (the dtype
    itself: ml_dtypes' bfloat16 has no type string of its own), and whether it was a Tensor's."""

    __slots__ = ("name", "shape", "dtype", "tensor")

    def __init__(self, name: str, shape: tuple, dtype: np.dtype, tensor: bool):
        self.name, self.shape, self.dtype, self.tensor = name, shape, dtype, tensor

    def __reduce__(self) -> tuple:
        return SharedArray, (self.name, self.shape, self.dtype, self.tensor)


class Writer:
    """A worker's side: ``packed(batch)`` writes the batch's large arrays to files."""

    def __init__(self, prefix: str):
        self.prefix = f"{prefix}{os.getpid()}_"
        self.count = itertools.count()

    def packed(self, tree: Any) -> Any:
        """``tree`` (a collated batch: arrays and host Tensors in dicts, lists and tuples) with
        its large arrays in files."""
        if isinstance(tree, np.ndarray) or (isinstance(tree, Tensor) and isinstance(tree._array, np.ndarray)):
            array = tree if isinstance(tree, np.ndarray) else tree._array
            if array.nbytes < MIN_BYTES or array.dtype.hasobject:
                return tree
            return self._written(np.ascontiguousarray(array), isinstance(tree, Tensor))
        return _rebuilt(tree, self.packed)

    def _written(self, array: np.ndarray, tensor: bool) -> SharedArray:
        name = f"{self.prefix}{next(self.count)}"
        fd = os.open(os.path.join(DIR, name), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        try:
            data = memoryview(array.reshape(-1).view(np.uint8))  # bytes: any dtype (bfloat16's too)
            done = 0
            while done < len(data):
                done += os.write(fd, data[done:])
        finally:
            os.close(fd)
        return SharedArray(name, array.shape, array.dtype, tensor)


def unpacked(tree: Any) -> Any:
    """The training process's side: ``tree`` with each SharedArray replaced by an array over its
    file's mapping (a Tensor where it was one); the files are unlinked."""
    if isinstance(tree, SharedArray):
        path = os.path.join(DIR, tree.name)
        fd = os.open(path, os.O_RDWR)
        try:
            mapping = mmap.mmap(fd, os.fstat(fd).st_size)
        finally:
            os.close(fd)
            os.unlink(path)
        array = np.frombuffer(mapping, dtype=tree.dtype).reshape(tree.shape)
        return wrap(array) if tree.tensor else array
    return _rebuilt(tree, unpacked)


def _rebuilt(tree: Any, leaf: Any) -> Any:
    """``tree`` with ``leaf`` applied to what its dicts, lists and tuples hold (their types kept)."""
    if isinstance(tree, dict):
        items = [(key, leaf(value)) for key, value in tree.items()]
        return dict(items) if type(tree) is dict else _same_type(tree, items, dict)
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):  # a namedtuple
        return type(tree)(*(leaf(value) for value in tree))
    if isinstance(tree, (list, tuple)):
        values = [leaf(value) for value in tree]
        return values if type(tree) is list else _same_type(tree, values, type(tree).__mro__[-2])
    return tree


def _same_type(tree: Any, contents: list, plain: type) -> Any:
    """``contents`` in ``tree``'s type where it can be made from them alone, else in ``plain``."""
    try:
        return type(tree)(contents)
    except TypeError:  # a subclass that needs more (defaultdict's factory, say)
        return plain(contents)


def remove_left(prefix: str) -> None:
    """Unlink the files of ``prefix`` still in the folder (never taken)."""
    try:
        names = [name for name in os.listdir(DIR) if name.startswith(prefix)]
    except OSError:
        return
    for name in names:
        try:
            os.unlink(os.path.join(DIR, name))
        except OSError:  # taken meanwhile
            pass
