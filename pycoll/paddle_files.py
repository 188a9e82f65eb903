"""Reading the files ``paddle.save`` writes (``.pdparams``, ``.pdopt``, any state dict), so that
weights trained with paddle load into pycoll (``pycoll.load`` hands such files here).

Paddle's file is a pickle of the saved tree, with each Tensor stored as ``(name, ndarray)``.
Unpickling runs whatever callables a file names, so this reader builds only containers, numbers,
strings, bytes and plain NumPy arrays: any other callable the file names (a paddle Layer, a
function, os.system) is refused by name before it is built, and an array of Python objects too.
The tree then comes back as paddle's load gives it: a layer's state dict (arrays, with the
parameter names under ``StructuredToParameterName@@``) as Tensors of those names; elsewhere each
``(name, ndarray)`` a Tensor of that name, or, in a file with no such pair, every array a Tensor
(the arrays themselves with ``return_numpy=True``). Arrays that paddle cut into slices to fit an
old pickle protocol (``UnpackBigParamInfor@@``) are put back together first.
"""
from __future__ import annotations

import collections
import io
import pickle
from typing import Any, Callable

import numpy as np

from pycoll.dtypes import bfloat16
from pycoll.tensor import to_tensor

# (module, name) of each callable a paddle file may use to build its tree
_ALLOWED = {
    ("builtins", "tuple"), ("builtins", "list"), ("builtins", "dict"), ("builtins", "set"),
    ("builtins", "frozenset"), ("builtins", "complex"), ("builtins", "slice"),
    ("collections", "OrderedDict"),
    ("_codecs", "encode"),  # protocol 2's way of writing bytes
    ("numpy", "ndarray"), ("numpy", "dtype"),
    ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
}
PICKLE_START = b"\x80"  # a pickle of protocol 2 or later begins with PROTO
NAME_TABLE = "StructuredToParameterName@@"  # a layer's state dict: key -> parameter name
SLICED = "UnpackBigParamInfor@@"  # key -> {"OriginShape": shape, "slices": [keys of its parts]}


class _TreeUnpickler(pickle.Unpickler):
    """An unpickler that finds only the callables in `_ALLOWED`."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _ALLOWED:
            raise ValueError(f"it names {module}.{name}, which pycoll does not build from a paddle file "
                             f"(it reads containers, numbers, strings and arrays: save a state_dict, "
                             f"not a Layer or other object)")
        return super().find_class(module, name)


def is_paddle_file(head: bytes) -> bool:
    """Whether a file beginning with `head` is a pickle (what paddle.save writes)."""
    return head.startswith(PICKLE_START)


def load_paddle_file(data: bytes, return_numpy: bool = False) -> Any:
    """The tree paddle.save pickled into `data`, its tensors as pycoll Tensors (see the module
    docstring). ValueError for a callable or an array of objects it will not build."""
    tree = _TreeUnpickler(io.BytesIO(data), encoding="latin1").load()  # paddle's encoding
    _refuse_object_arrays(tree)
    if isinstance(tree, dict):
        tree = _joined(tree)
        if NAME_TABLE in tree:
            names = tree.pop(NAME_TABLE)
            return {k: _tensor(v, names.get(k), return_numpy) if isinstance(v, np.ndarray) else v
                    for k, v in tree.items()}
    if _any(tree, _is_named_tensor):
        return _convert(tree, _is_named_tensor, lambda pair: _tensor(pair[1], pair[0], return_numpy))
    return _convert(tree, lambda v: isinstance(v, np.ndarray), lambda a: _tensor(a, None, return_numpy))


def _joined(tree: dict) -> dict:
    """`tree` with the arrays paddle sliced put back together (paddle's ``_pack_loaded_dict``)."""
    if SLICED not in tree:
        return tree
    tree = dict(tree)
    for key, info in tree.pop(SLICED).items():
        parts = info["slices"]
        tree[key] = np.concatenate([tree.pop(part) for part in parts]).reshape(info["OriginShape"])
    return tree


def _is_named_tensor(value: Any) -> bool:
    """paddle's ``(tensor.name, tensor.numpy())``."""
    return (type(value) is tuple and len(value) == 2 and isinstance(value[0], str)
            and isinstance(value[1], np.ndarray))


def _tensor(array: np.ndarray, name: Any, return_numpy: bool) -> Any:
    """A Tensor of `array` named `name`; paddle writes a bfloat16 tensor as its 16-bit patterns
    (uint16, a dtype paddle's tensors do not have), which become bfloat16 again, as in paddle."""
    if return_numpy:
        return array
    if array.dtype == np.uint16:
        array = array.view(bfloat16())
    t = to_tensor(array)
    t.name = name
    return t


def _children(value: Any) -> Any:
    if isinstance(value, dict):
        return value.values()
    return value if type(value) in (list, tuple, set, frozenset) else ()


def _any(tree: Any, test: Callable[[Any], bool]) -> bool:
    return test(tree) or any(_any(v, test) for v in _children(tree))


def _convert(tree: Any, test: Callable[[Any], bool], make: Callable[[Any], Any]) -> Any:
    if test(tree):
        return make(tree)
    if isinstance(tree, dict):
        kind = collections.OrderedDict if isinstance(tree, collections.OrderedDict) else dict
        return kind((k, _convert(v, test, make)) for k, v in tree.items())
    if type(tree) in (list, tuple):
        return type(tree)(_convert(v, test, make) for v in tree)
    return tree


def _refuse_object_arrays(tree: Any) -> None:
    if isinstance(tree, np.ndarray) and tree.dtype.hasobject:
        raise ValueError("it holds an array of Python objects, which pycoll does not load")
    for v in _children(tree):
        _refuse_object_arrays(v)

