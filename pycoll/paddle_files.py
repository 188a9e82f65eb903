"""paddle.save's file format, both ways: ``pycoll.save`` writes what paddle 3.3.1's ``paddle.save``
writes, so ``paddle.load`` reads pycoll's files, and ``pycoll.load`` reads paddle's (``.pdparams``,
``.pdopt``, any saved tree).

The file is a pickle (protocol 2, 3 or 4) in one of two layouts, chosen as paddle chooses them
(``is_state_dict``):

- a state dict (a dict whose values are all Tensors, or dicts holding no Tensor: what a layer's or
  an optimizer's ``state_dict()`` gives) becomes a plain dict of host arrays plus
  ``"StructuredToParameterName@@"``, each key's tensor name; with protocol 2 or 3 an array of 1 GiB
  or more is cut into flat slices ``key@@.0``, ``key@@.1``... listed under
  ``"UnpackBigParamInfor@@"`` (one object of those protocols holds less than 4 GiB);
- anything else is pickled as it is, each Tensor as the tuple ``(name, host array)``.

Both write a bfloat16 tensor as its 16-bit patterns (uint16) and a float8 one as int8, as paddle
does. A tensor pycoll left
unnamed is written under its key in a state dict (paddle names an optimizer's accumulators so) and
as ``generated_tensor_N`` elsewhere (paddle's names for its tensors).

Unpickling runs the callables a file names, so pycoll's unpickler finds only those in
``ALLOWED_GLOBALS`` (the constructors of containers, numbers, arrays, dtypes and numpy scalars, and
``argparse.Namespace``; a ``paddle.dtype`` comes back as pycoll's dtype) and refuses any other by
name before anything is built; it sets state (pickle's BUILD) only on arrays, dtypes and
Namespaces, so a file cannot rebind the attributes of a class it names, and reads no length the
file does not hold. ``pycoll.save`` checks a tree against the same list before it writes
(``check_savable``), so every file pycoll writes it reads back.

What comes back is what paddle.load gives: for a state dict file the listed arrays as Tensors of
their names (the table itself dropped unless ``keep_name_table``); for any other tree each
``(name, array)`` as a Tensor of that name or, in a tree with no such pair, every array as a Tensor
(``return_numpy=True`` keeps arrays). Arrays paddle sliced are put back together first.
"""
from __future__ import annotations

import argparse
import collections
import dataclasses
import itertools
import pickle
import warnings
from typing import Any, BinaryIO, Callable, Dict, Mapping, Optional, Tuple

import numpy as np

from pycoll.device import is_array, move
from pycoll.dtypes import bfloat16, convert_dtype
from pycoll.size import Size, TensorSize
from pycoll.tensor import Tensor, tensor_of

# (module, name) of every callable a paddle file may name to build its tree
ALLOWED_GLOBALS = frozenset({
    ("builtins", "tuple"), ("builtins", "list"), ("builtins", "dict"), ("builtins", "set"),
    ("builtins", "frozenset"), ("builtins", "bytearray"), ("builtins", "complex"), ("builtins", "slice"),
    ("builtins", "int"),  # how x.size (an int that can be called) is written
    ("collections", "OrderedDict"), ("argparse", "Namespace"),
    ("_codecs", "encode"),  # protocol 2's way of writing bytes
    ("builtins", "bytes"),  # protocol 2's way of writing empty bytes (an empty array's data)
    ("numpy", "ndarray"), ("numpy", "dtype"),
    ("ml_dtypes", "bfloat16"), ("ml_dtypes", "float8_e4m3fn"), ("ml_dtypes", "float8_e5m2"),
    ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
})
_PY2_MODULES = {"__builtin__": "builtins", "copy_reg": "copyreg"}  # what protocol 2 writes
PICKLE_START = b"\x80"  # a pickle of protocol 2 or later begins with PROTO
NAME_TABLE = "StructuredToParameterName@@"  # a state dict's key -> tensor name
SLICED = "UnpackBigParamInfor@@"  # key -> {"OriginShape": shape, "slices": [keys of its parts]}
MAX_SLICE_BYTES = 2 ** 30 - 1  # paddle's bound on one array of a protocol 2/3 state dict
MAX_DEPTH = 128  # containers inside containers: a checkpoint's tree is a few levels deep
_WALKED = (dict, collections.OrderedDict, list, tuple)  # what paddle looks into for Tensors
# the dtypes paddle writes as their bit patterns (numpy has no such dtype); bfloat16 loads back as
# bfloat16, float8 as int8 (as in paddle)
_BIT_PATTERNS = {"bfloat16": np.uint16, "float8_e4m3fn": np.int8, "float8_e5m2": np.int8}
_REFUSED_WHERE_WALKED = (bytes, bytearray, frozenset)  # paddle.save walks trees and stops at these


def is_paddle_file(head: bytes) -> bool:
    """Whether a file beginning with `head` is a pickle (what paddle.save writes)."""
    return head.startswith(PICKLE_START)


# -- writing ----------------------------------------------------------------------------------------
def is_state_dict(obj: Any) -> bool:
    """paddle's ``_is_state_dict``: a dict whose values are Tensors, or dicts none of whose values
    holds a Tensor."""
    if not isinstance(obj, dict):
        return False
    for value in obj.values():
        if isinstance(value, dict):
            if any(_holds_tensor(v, set()) for v in value.values()):
                return False
        elif not isinstance(value, Tensor):
            return False
    return True


def _holds_tensor(value: Any, seen: set) -> bool:
    if isinstance(value, Tensor):
        return True
    if type(value) not in _WALKED or id(value) in seen:
        return False
    seen.add(id(value))
    return any(_holds_tensor(v, seen) for v in (value.values() if isinstance(value, dict) else value))


def check_savable(obj: Any, state_dict: bool) -> None:
    """Refuse, naming where it sits, anything in `obj` that pycoll.load would not build back, or
    that paddle.save refuses (`state_dict`: `obj` is written as a state dict)."""
    if state_dict:  # only its values are pickled, and paddle.load looks no further than them
        for key, value in obj.items():
            _check(key, f"a key of obj ({key!r})", 1, False, {})
            _check(value, f"obj[{key!r}]", 1, False, {})
    else:
        _check(obj, "obj", 0, True, {})


def _check(node: Any, where: str, depth: int, walked: bool, seen: Dict[int, int]) -> None:
    """`walked`: paddle.save looks into the tree here (outside a state dict's values and outside
    a Namespace), and refuses bytes and frozensets (its load could not read them back)."""
    if depth > MAX_DEPTH:
        raise ValueError(f"save: {where} nests containers more than {MAX_DEPTH} deep (a container "
                         f"holding itself?); pycoll.save stores at most {MAX_DEPTH} levels")
    kind = {Size: list, TensorSize: int}.get(type(node), type(node))  # x.shape, x.size: a list, an int
    if node is None or kind in (bool, int, float, complex, str) or isinstance(node, Tensor):
        return
    if kind in _REFUSED_WHERE_WALKED and walked:
        raise TypeError(f"save: cannot store {kind.__name__} at {where}: paddle.save refuses it outside "
                        f"a state dict's values (paddle.load could not read it back); store a str, "
                        f"list or tuple instead")
    if isinstance(node, np.dtype) or isinstance(node, np.generic) or kind is np.ndarray or (
            is_array(node) and not isinstance(node, np.ndarray)):
        dtype = node if isinstance(node, np.dtype) else node.dtype
        if not _dtype_savable(dtype):
            raise TypeError(f"save: cannot store the dtype {dtype} at {where}: pycoll.load builds arrays "
                            f"of numbers, booleans, strings and bfloat16, not of Python objects or "
                            f"{dtype.type.__module__}.{dtype.type.__name__}")
        return
    if kind in (bytes, bytearray):
        return
    if id(node) in seen and seen[id(node)] <= depth:  # already checked from no deeper
        return
    if kind in (dict, collections.OrderedDict):
        for key, value in node.items():
            _check(key, f"a key of {where} ({key!r})", depth + 1, walked, seen)
            _check(value, f"{where}[{key!r}]", depth + 1, walked, seen)
    elif kind in (list, tuple, set, frozenset):
        for i, value in enumerate(node):
            _check(value, f"{where}[{i}]" if kind in (list, tuple) else f"an item of {where}",
                   depth + 1, walked, seen)
    elif kind is argparse.Namespace:
        for name, value in vars(node).items():
            _check(value, f"{where}.{name}", depth + 1, False, seen)
    elif kind is slice:
        for part in (node.start, node.stop, node.step):
            _check(part, f"{where} (a slice)", depth + 1, walked, seen)
    else:
        hint = " (save its state_dict() instead)" if hasattr(node, "state_dict") else ""
        raise TypeError(f"save: cannot store {kind.__name__} at {where}{hint}; pycoll.save stores "
                        f"what pycoll.load builds back: Tensors, arrays, numpy scalars and dtypes, "
                        f"numbers, strings, None, slices, argparse.Namespace and dicts, OrderedDicts, "
                        f"lists, tuples and sets of them")
    seen[id(node)] = depth


def _dtype_savable(dtype: np.dtype) -> bool:
    if dtype.fields:
        return all(_dtype_savable(field[0]) for field in dtype.fields.values())
    if dtype.subdtype is not None:
        return _dtype_savable(dtype.subdtype[0])
    scalar = dtype.type
    return not dtype.hasobject and (scalar.__module__ == "numpy"
                                    or (scalar.__module__, scalar.__name__) in ALLOWED_GLOBALS)


def _host_array(tensor: Tensor) -> np.ndarray:
    """What paddle writes for a tensor: its values on the host (a distributed tensor's whole
    value), C-ordered, bfloat16 and float8 as their bit patterns."""
    array = tensor.numpy()
    if not array.flags.c_contiguous:
        array = np.array(array, order="C")  # ascontiguousarray would make a 0-d array 1-d
    patterns = _BIT_PATTERNS.get(array.dtype.name)
    return array if patterns is None else array.view(patterns)


def saved_state_dict(obj: Dict[Any, Any], protocol: int, max_slice_bytes: int = MAX_SLICE_BYTES) -> dict:
    """The dict paddle pickles for state dict `obj`: host arrays, the name table and, for
    protocols 2 and 3, the arrays of more than `max_slice_bytes` bytes sliced."""
    saved, names, sliced, parts = {}, {}, {}, {}
    for key, value in obj.items():
        if not isinstance(value, Tensor):
            saved[key] = value
            continue
        array = _host_array(value)
        names[key] = value._name or key  # a name given (a parameter's); else the key, as paddle's state tensors
        per_slice = max_slice_bytes // array.dtype.itemsize
        if protocol < 4 and array.size > per_slice:
            flat = array.reshape(-1)
            keys = [f"{key}@@.{i}" for i in range(-(-array.size // per_slice))]
            sliced[key] = {"OriginShape": array.shape, "slices": keys}
            parts.update((k, flat[i * per_slice:(i + 1) * per_slice]) for i, k in enumerate(keys))
        else:
            saved[key] = array
    saved[NAME_TABLE] = names
    if sliced:
        saved.update(parts)
        saved[SLICED] = sliced
    return saved


class _Pickler(pickle.Pickler):
    """paddle's pickler: a Tensor is written as ``(name, host array)``, a device array as its host
    copy, and a class or function outside ``ALLOWED_GLOBALS`` is refused."""

    def __init__(self, f: BinaryIO, protocol: int):
        super().__init__(f, protocol)
        self._protocol = protocol
        self._unnamed = itertools.count()

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Tensor):
            name = obj._name or f"generated_tensor_{next(self._unnamed)}"  # a name given, not an eager_tmp one
            return tuple, ((name, _host_array(obj)),)
        if is_array(obj) and not isinstance(obj, np.ndarray):
            return move(obj, ("cpu", 0)).__reduce_ex__(self._protocol)
        if isinstance(obj, np.ndarray) and obj.dtype.name in _BIT_PATTERNS:  # as paddle's .numpy() has them
            return obj.view(_BIT_PATTERNS[obj.dtype.name]).__reduce_ex__(self._protocol)
        if type(obj) is Size:  # x.shape: written as a list, which paddle.load reads too
            return list, (list(obj),)
        if type(obj) is TensorSize:  # x.size: written as the int it is
            return int, (int(obj),)
        if callable(obj):  # pickled by reference: check it is one the loader finds
            global_name = (getattr(obj, "__module__", None), getattr(obj, "__qualname__", None))
            if global_name not in ALLOWED_GLOBALS:
                raise TypeError(f"save: the tree would name {global_name[0]}.{global_name[1]}, which "
                                f"pycoll.load does not build")
        return NotImplemented


def write_paddle_file(obj: Any, f: BinaryIO, protocol: int) -> None:
    """Pickle `obj` into `f` in paddle.save's layout (checked with `check_savable` first)."""
    state_dict = is_state_dict(obj)
    check_savable(obj, state_dict)
    if state_dict and not obj:
        warnings.warn("The input state dict is empty, no need to save.")  # paddle's warning
    _Pickler(f, protocol).dump(saved_state_dict(obj, protocol) if state_dict else obj)


# -- reading ----------------------------------------------------------------------------------------
def _latin1_bytes(text: Any, encoding: Any) -> bytes:
    """``_codecs.encode(text, "latin1")``, protocol 2's bytes, and no other codec (one could import
    modules or inflate data)."""
    if type(text) is not str or encoding not in ("latin1", "latin-1"):
        raise ValueError(f"it calls _codecs.encode with the codec {encoding!r}; pycoll allows 'latin1' only")
    return text.encode("latin1")


def _empty_bytes(*args: Any) -> bytes:
    """``bytes()``, protocol 2's empty bytes, and no other call (``bytes(n)`` would allocate n)."""
    if args:
        raise ValueError("it calls bytes with arguments; pycoll allows bytes() only")
    return b""


class RefusedName(ValueError):
    """A file names a class or function pycoll does not build (the file is readable)."""


class _PaddleDType:
    """Where a file names ``paddle.dtype`` (a dtype kept in a config, ``{'dtype': paddle.float32}``):
    built empty, then given paddle's number of the dtype (pickle's BUILD), it becomes pycoll's
    dtype (a NumPy one) in the tree (see ``_TreeUnpickler._load_build``)."""

    __slots__ = ()


# paddle's DataType numbers (what its paddle.dtype objects pickle as): the dtype each names
_PADDLE_DTYPE_NUMBERS = {1: "bool", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "uint32", 7: "int32",
                         8: "uint64", 9: "int64", 10: "float32", 11: "float64", 12: "complex64", 13: "complex128",
                         15: "float16", 16: "bfloat16", 17: "float8_e4m3fn", 18: "float8_e5m2"}


class _TreeUnpickler(pickle._Unpickler):  # the Python one: its BUILD can be checked
    """An unpickler that finds only `ALLOWED_GLOBALS` and sets state only on arrays, dtypes and
    Namespaces; and, where the caller names them (`records`: (module, name) -> a dataclass of its
    own), builds those dataclasses, setting only their fields."""
    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, f: Any, records: Optional[Mapping[Tuple[str, str], type]] = None, **kwargs: Any):
        super().__init__(f, **kwargs)
        self._records = dict(records or {})
        self._record_types = frozenset(self._records.values())

    def find_class(self, module: str, name: str) -> Any:
        module = _PY2_MODULES.get(module, module)
        if (module, name) in self._records:
            return self._records[(module, name)]
        if (module, name) == ("paddle", "dtype"):
            return _PaddleDType
        if (module, name) not in ALLOWED_GLOBALS:
            raise RefusedName(f"it names {module}.{name}, which pycoll does not build from a paddle file: "
                              f"building a class runs code the file chooses, so pycoll.load builds "
                              f"containers, numbers, strings, arrays, dtypes and argparse.Namespace only "
                              f"(save a state_dict, or plain values, instead of a Layer or other object)")
        if (module, name) == ("_codecs", "encode"):
            return _latin1_bytes
        if (module, name) == ("builtins", "bytes"):
            return _empty_bytes
        return super().find_class(module, name)

    def _load_build(self) -> None:
        state, target = self.stack[-1], self.stack[-2]
        if type(target) is _PaddleDType:
            if type(state) is not int or state not in _PADDLE_DTYPE_NUMBERS:
                raise ValueError(f"it gives a paddle.dtype the state {state!r}, no dtype paddle numbers so")
            dtype = convert_dtype(_PADDLE_DTYPE_NUMBERS[state])
            self.stack[-2:] = [dtype]
            for key, value in self.memo.items():  # where the file refers to it again
                if value is target:
                    self.memo[key] = dtype
            return
        if type(target) is argparse.Namespace:
            if type(state) is not dict or not all(type(k) is str for k in state):
                raise ValueError("it gives a Namespace a state that is not a dict of names")
        elif type(target) in self._record_types:
            names = {field.name for field in dataclasses.fields(target)}
            if type(state) is not dict or not all(type(k) is str and k in names for k in state):
                raise ValueError(f"it gives a {type(target).__name__} a state other than values of its "
                                 f"fields {sorted(names)}")
        elif type(target) is not np.ndarray and not isinstance(target, np.dtype):
            raise ValueError(f"it sets the state of a {type(target).__name__}; pycoll sets the state "
                             f"of arrays, dtypes and Namespaces only")
        pickle._Unpickler.load_build(self)

    dispatch[pickle.BUILD[0]] = _load_build


class _BoundedReader:
    """`f`'s read and readline, refusing to read past the `left` bytes it holds: a length in the
    pickle is checked before anything that long is allocated."""

    def __init__(self, f: BinaryIO, left: int):
        self._f, self._left = f, left

    def read(self, n: int) -> bytes:
        if not 0 <= n <= self._left:
            raise ValueError(f"it claims {n} bytes where {self._left} are left (truncated?)")
        data = self._f.read(n)
        self._left -= len(data)
        return data

    def readline(self) -> bytes:
        line = self._f.readline(self._left)
        self._left -= len(line)
        return line


def read_paddle_file(f: BinaryIO, size: int, return_numpy: bool = False, keep_name_table: bool = False,
                     records: Optional[Mapping[Tuple[str, str], type]] = None) -> Any:
    """The tree paddle.save pickled into `f` (holding `size` bytes from its position),
    as paddle.load gives it (see the module docstring). ValueError for a callable, a state or an
    array of objects it will not build. `records` lets the file name classes of paddle's own
    ((module, name) -> the dataclass built in their place, which gets only its fields set)."""
    tree = _TreeUnpickler(_BoundedReader(f, size), records, encoding="latin1").load()
    _check_loaded(tree, 0, {})
    if isinstance(tree, dict):
        tree = _joined(tree)
        if NAME_TABLE in tree:  # a state dict
            names = tree[NAME_TABLE] if keep_name_table else tree.pop(NAME_TABLE)
            for key, name in names.items():
                if isinstance(tree[key], np.ndarray):
                    tree[key] = _tensor(tree[key], name, return_numpy)
            return tree
    if _contains(tree, _is_named_tensor, set()):
        return _converted(tree, _is_named_tensor, lambda pair: _tensor(pair[1], pair[0], return_numpy), {})
    return _converted(tree, lambda v: isinstance(v, np.ndarray), lambda a: _tensor(a, None, return_numpy), {})


def _check_loaded(node: Any, depth: int, seen: Dict[int, int]) -> None:
    """Refuse arrays of Python objects, and trees nested deeper than `MAX_DEPTH` (cycles too)."""
    if isinstance(node, np.ndarray) and node.dtype.hasobject:
        raise ValueError("it holds an array of Python objects, which pycoll does not load")
    if depth > MAX_DEPTH:
        raise ValueError(f"it nests containers more than {MAX_DEPTH} deep")
    kind = type(node)
    if kind in (dict, collections.OrderedDict):
        children: Any = itertools.chain(node.keys(), node.values())
    elif kind in (list, tuple, set, frozenset):
        children = node
    elif kind is argparse.Namespace:
        children = vars(node).values()
    else:
        return
    if id(node) in seen and seen[id(node)] <= depth:
        return
    for child in children:
        _check_loaded(child, depth + 1, seen)
    seen[id(node)] = depth


def _joined(tree: dict) -> dict:
    """`tree` with the arrays paddle sliced put back together (paddle's ``_pack_loaded_dict``)."""
    if SLICED not in tree:
        return tree
    for key, info in tree.pop(SLICED).items():
        tree[key] = np.concatenate([tree.pop(part) for part in info["slices"]]).reshape(info["OriginShape"])
    return tree


def _is_named_tensor(value: Any) -> bool:
    """paddle's ``(tensor.name, tensor.numpy())``."""
    return (type(value) is tuple and len(value) == 2 and isinstance(value[0], str)
            and isinstance(value[1], np.ndarray))


def _tensor(array: np.ndarray, name: Any, return_numpy: bool) -> Any:
    """A Tensor of `array` named `name`; a uint16 array is a bfloat16 tensor's 16-bit patterns, as
    paddle.load takes it."""
    if return_numpy:
        return array
    if array.dtype == np.uint16:
        array = array.view(bfloat16())
    t = tensor_of(array)
    t.name = name
    return t


def _contains(tree: Any, test: Callable[[Any], bool], seen: set) -> bool:
    """paddle's ``_contain_x``: whether `test` holds for `tree` or anything in its dicts, lists and tuples."""
    if test(tree):
        return True
    if type(tree) not in _WALKED or id(tree) in seen:
        return False
    seen.add(id(tree))
    return any(_contains(v, test, seen) for v in (tree.values() if isinstance(tree, dict) else tree))


def _converted(tree: Any, test: Callable[[Any], bool], make: Callable[[Any], Any], done: Dict[int, Any]) -> Any:
    """paddle's ``_parse_every_object``: `tree` with `make(v)` for each `v` that passes `test`,
    dicts and lists changed in place, tuples and sets rebuilt (each container once)."""
    if test(tree):
        return make(tree)
    kind = type(tree)
    if kind not in _WALKED and kind is not set:
        return tree
    if id(tree) in done:
        return done[id(tree)]
    if kind in (dict, collections.OrderedDict, list):
        done[id(tree)] = tree
        for key in list(tree.keys()) if kind is not list else range(len(tree)):
            tree[key] = _converted(tree[key], test, make, done)
        return tree
    done[id(tree)] = result = kind(_converted(v, test, make, done) for v in tree)
    return result
