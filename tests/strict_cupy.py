"""A strict CuPy stand-in for the tensor/nn side: "device" arrays that refuse what CuPy refuses.

tests/host_cuda.py's ``ndarray`` subclasses ``numpy.ndarray``, so it takes every host/device
mistake silently. Here :class:`ndarray` wraps a NumPy array (host memory, as the "device" memory)
and is no ``numpy.ndarray``; it behaves as CuPy 14's does where pycoll's GPU bugs hide:

- ``numpy.asarray(a)`` / ``np.array(a)`` / ``np.ascontiguousarray(a)`` (``__array__``) raise
  CuPy's TypeError "Implicit conversion to a NumPy array is not allowed";
- an elementwise op (operator, ufunc, ``cupy.*`` function) with a ``numpy.ndarray`` operand (any
  shape, 0-d too, as CuPy's kernels take only Python and NumPy *scalars*) or a list raises
  TypeError, whichever side the host array is on (``__array_ufunc__`` as CuPy's);
- NumPy's array functions on device arrays dispatch to this module, as CuPy's
  ``__array_function__`` does (``np.sum(a)`` is a device 0-d array), and fail for names CuPy lacks;
- reductions give 0-d device arrays, not NumPy scalars; there is no ``__index__``;
- ``a[basic] = host_array`` is refused (CuPy's ``fill``: "non-scalar numpy.ndarray cannot be used
  for fill"), advanced-index writes and index arrays from the host are taken, as CuPy takes them;
- the ``cupy`` namespace (and ``cupy.linalg``, ``fft``, ``random``, ``lib.stride_tricks``,
  ``cuda``, ``cupyx``) offers only names real CuPy 14 has (``tests/data/cupy_names.json``, made by
  ``python tests/strict_cupy.py --snapshot`` where CuPy is installed), each over NumPy's.

:func:`installed` puts it in CuPy's place in ``sys.modules`` (and the NCCL engine's, through
host_cuda's :class:`~host_cuda.HostCuda` over this array module) and restores everything after.

Counting (tests/device_counts.py): while ``_COUNTER[0]`` is a function, the stand-in calls it as
``counter(kind, name)`` for each device->host transfer (kind ``"sync"``: ``get``, ``item``,
``tolist``, ``__float__``/``__int__``/``__bool__``/``__complex__``, printing, ``asnumpy``, pickling,
and the ops whose output size CuPy must read back: a boolean-mask index, ``nonzero`` & co.), each
host->device copy (``"upload"``) and each device operation (``"op"``: a ufunc, a reduction, a
matmul, a copy, an allocation, a write through an index; views and reshapes that move no data
are not counted). Nothing else changes.

Not checked: streams and asynchrony, real device memory limits, CuPy's own numerics (its
reductions' summation order, its float16 paths), kernels (``ElementwiseKernel``/``RawKernel`` are
absent), DLPack to other frameworks (the capsule is NumPy's).
"""
from __future__ import annotations

import contextlib
import importlib.machinery
import json
import os
import sys
import types
import weakref
from typing import Any, Callable, Dict, Iterator, List, Optional

import numpy as np

_NAMES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "cupy_names.json")
_IMPLICIT = ("Implicit conversion to a NumPy array is not allowed. "
             "Please use `.get()` to construct a NumPy array explicitly.")


_COUNTER: List[Optional[Callable[[str, str], None]]] = [None]  # see the module docstring


def _note(kind: str, name: str) -> None:
    counter = _COUNTER[0]
    if counter is not None:
        counter(kind, name)


def _root(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _note_result(name: str, result: Any, held: Dict[int, Any]) -> None:
    """One ``"op"`` for a call whose result holds memory none of its device inputs own (a new
    buffer), or that returned None after taking a device array (it wrote in place)."""
    if _COUNTER[0] is None:
        return
    if result is None:
        if held:
            _note("op", name)
        return
    arrays = result if isinstance(result, (list, tuple)) else (result,)
    inputs = {id(_root(x._a)) for x in held.values()}
    if any(isinstance(r, ndarray) and id(_root(r._a)) not in inputs for r in arrays):
        _note("op", name)


def _names() -> Dict[str, Any]:
    with open(_NAMES_FILE) as f:
        return json.load(f)


NAMES = _names()


def _check_call(qualname: str, args: tuple, kwargs: dict) -> None:
    """TypeError, as CuPy raises it, for a call that CuPy's own signature of ``qualname`` (e.g.
    ``cupy.pad``, ``cupy.ndarray.max``) does not take (an unknown keyword, too many arguments)."""
    params = NAMES["signatures"].get(qualname)
    if params is None:
        return
    import inspect

    signature = inspect.Signature([inspect.Parameter(name, kind, default=None if has_default else inspect.Parameter.empty)
                                   for name, kind, has_default in params])
    try:
        signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"{qualname}() in CuPy {NAMES['version']}: {exc}") from None


class _Pointer:
    """``a.data``: CuPy's MemoryPointer, as far as pycoll reads it (``mem``: the allocation it
    points into, whose ``ptr`` is the allocation's start)."""

    def __init__(self, ptr: int, mem: Any = None):
        self.ptr, self.device_id = ptr, 0
        self.mem = self if mem is None else mem

    def copy_from_device_async(self, src: "_Pointer", size: int, stream: Any = None) -> None:
        """``size`` bytes from ``src`` to here (CuPy's MemoryPointer method; host memory here)."""
        import ctypes

        _note("op", "memcpy")
        ctypes.memmove(self.ptr, src.ptr, size)


def _pointer(a: np.ndarray) -> _Pointer:
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    return _Pointer(a.__array_interface__["data"][0], _Pointer(root.__array_interface__["data"][0]))


class Device:
    """``cupy.cuda.Device``: the one "GPU" (id 0)."""

    def __init__(self, device: Any = None):
        self.id = 0 if device is None else int(device)
        if self.id != 0:
            raise RuntimeError(f"strict_cupy has one device, got {device!r}")

    def use(self) -> None:
        pass

    def synchronize(self) -> None:
        pass

    mem_info = (1 << 34, 1 << 34)  # (free, total) bytes

    def __enter__(self) -> "Device":
        return self

    def __exit__(self, *exc: Any) -> None:
        pass

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Device) and other.id == self.id

    __hash__ = object.__hash__


# The stand-in array over each NumPy array that owns its memory, while that stand-in lives: a view
# made later has it as its ``base``, as a CuPy view's base is the very array it views (never a new
# object), which pycoll's in-graph view writes test by identity (shape_ops.views_memory_of).
_OWNERS: "weakref.WeakValueDictionary[int, ndarray]" = weakref.WeakValueDictionary()


def _owner_of(host: np.ndarray) -> "ndarray":
    """The stand-in array over ``host``'s memory owner (made if none lives)."""
    while isinstance(host.base, np.ndarray):
        host = host.base
    owner = _OWNERS.get(id(host))
    return owner if owner is not None and owner._a is host else ndarray._of(host)


class ndarray:
    """A "device" array over host memory (``_a``, a NumPy array); see the module docstring."""

    __slots__ = ("_a", "_base", "__weakref__")
    __array_priority__ = 100
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, shape: Any, dtype: Any = float, memptr: Any = None, strides: Any = None,
                 order: str = "C"):
        _note("op", "ndarray")
        self._a, self._base = np.ndarray(shape, dtype, order=order), None
        _OWNERS[id(self._a)] = self

    @classmethod
    def _of(cls, host: np.ndarray) -> "ndarray":
        out = object.__new__(cls)
        out._a = host
        out._base = _owner_of(host.base) if isinstance(host.base, np.ndarray) else None
        if host.base is None:
            _OWNERS[id(host)] = out
        return out

    # ---- host conversion: explicit only ------------------------------------------------
    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        raise TypeError(_IMPLICIT)

    def get(self, stream: Any = None, order: str = "C", out: Any = None, blocking: bool = True) -> np.ndarray:
        _note("sync", "get")
        if out is not None:
            np.copyto(out, self._a)
            return out
        return np.array(self._a, order=order)

    def set(self, arr: np.ndarray, stream: Any = None) -> None:
        if not isinstance(arr, np.ndarray) or arr.shape != self._a.shape or arr.dtype != self._a.dtype:
            raise ValueError("strict_cupy: set() needs a numpy.ndarray of the same shape and dtype")
        _note("upload", "set")
        np.copyto(self._a, arr)

    def item(self, *args: Any) -> Any:
        _note("sync", "item")
        return self._a.item(*args)

    def tolist(self) -> Any:
        _note("sync", "tolist")
        return self._a.tolist()

    def __int__(self) -> int:
        _note("sync", "__int__")
        return int(self._a)

    def __float__(self) -> float:
        _note("sync", "__float__")
        return float(self._a)

    def __complex__(self) -> complex:
        _note("sync", "__complex__")
        return complex(self._a)

    def __bool__(self) -> bool:
        _note("sync", "__bool__")
        return bool(self._a)

    def __repr__(self) -> str:
        _note("sync", "__repr__")
        return repr(self._a)

    def __str__(self) -> str:
        _note("sync", "__str__")
        return str(self._a)

    def __format__(self, spec: str) -> str:
        _note("sync", "__format__")
        return format(self._a, spec)

    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self) -> Iterator["ndarray"]:
        if self._a.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self._a)))

    # ---- attributes ----------------------------------------------------------------------
    shape = property(lambda self: self._a.shape, lambda self, s: setattr(self._a, "shape", s))
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    strides = property(lambda self: self._a.strides)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    flags = property(lambda self: self._a.flags)
    _c_contiguous = property(lambda self: self._a.flags.c_contiguous)  # CuPy's readonly cdef fields
    _f_contiguous = property(lambda self: self._a.flags.f_contiguous)
    T = property(lambda self: ndarray._of(self._a.T))
    mT = property(lambda self: ndarray._of(self._a.mT))
    base = property(lambda self: self._base)
    data = property(lambda self: _pointer(self._a))
    device = property(lambda self: Device(0))

    @property
    def real(self) -> "ndarray":
        return ndarray._of(self._a.real)

    @real.setter
    def real(self, value: Any) -> None:
        self.real[...] = value

    @property
    def imag(self) -> "ndarray":
        return ndarray._of(self._a.imag)

    @imag.setter
    def imag(self, value: Any) -> None:
        self.imag[...] = value

    @property
    def __cuda_array_interface__(self) -> dict:
        face = dict(self._a.__array_interface__)
        face["version"] = 3
        face["stream"] = 1
        return face

    def __dlpack_device__(self) -> tuple:
        return (2, 0)  # kDLCUDA, device 0: NumPy's from_dlpack refuses it, as for a real one

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: Any = None) -> Any:
        return self._a.__dlpack__()

    def __copy__(self) -> "ndarray":
        _note("op", "copy")
        return ndarray._of(self._a.copy())

    def __deepcopy__(self, memo: dict) -> "ndarray":
        _note("op", "copy")
        return ndarray._of(self._a.copy())

    def __reduce__(self) -> tuple:
        _note("sync", "pickle")
        return (array, (self._a.copy(),))

    # ---- indexing ----------------------------------------------------------------------------
    def __getitem__(self, index: Any) -> "ndarray":
        if _COUNTER[0] is not None:
            parts = index if isinstance(index, tuple) else (index,)
            if any(isinstance(p, ndarray) and p.dtype == np.bool_ for p in parts):
                _note("sync", "mask index")  # CuPy reads the mask's count back to size the result
            if _is_advanced(_index(index)) or any(isinstance(p, ndarray) for p in parts):
                _note("op", "gather")
        return ndarray._of(self._a[_wrapped(_index(index), self.shape)])

    def __setitem__(self, index: Any, value: Any) -> None:
        _note("op", "setitem")
        index = _wrapped(_index(index), self.shape)
        if isinstance(value, ndarray):
            self._a[index] = value._a
        elif _is_advanced(index):
            self._a[index] = _host_value(value)  # CuPy copies host values for these (core.array)
        else:  # CuPy's fill: scalars (and 0-d host arrays) only
            if isinstance(value, (list, tuple)):
                raise TypeError(f"Unsupported type {type(value)}")
            if np.asarray(value).shape != ():
                raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
            self._a[index] = value

    def fill(self, value: Any) -> None:
        _note("op", "fill")
        if isinstance(value, ndarray):
            if value.shape != ():
                raise ValueError("non-scalar cupy.ndarray cannot be used for fill")
            value = value._a
        elif np.asarray(value).shape != ():
            raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
        self._a.fill(value)

    def scatter_add(self, slices: Any, value: Any) -> None:
        _note("op", "scatter_add")
        np.add.at(self._a, _wrapped(_index(slices), self.shape), _operand(value))

    def scatter_max(self, slices: Any, value: Any) -> None:
        _note("op", "scatter_max")
        np.maximum.at(self._a, _wrapped(_index(slices), self.shape), _operand(value))

    def scatter_min(self, slices: Any, value: Any) -> None:
        _note("op", "scatter_min")
        np.minimum.at(self._a, _wrapped(_index(slices), self.shape), _operand(value))

    # ---- numpy protocols, as CuPy answers them -------------------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        func = getattr(_cupy_module(), ufunc.__name__, None)
        if func is None:
            return NotImplemented
        if method != "__call__":
            func = getattr(func, method)
        if "out" in kwargs:
            kwargs["out"] = kwargs["out"][0]
        return func(*inputs, **kwargs)

    def __array_function__(self, func: Callable, types_: Any, args: tuple, kwargs: dict) -> Any:
        module: Any = _cupy_module()
        try:
            for part in func.__module__.split(".")[1:]:
                module = getattr(module, part)
            ours = getattr(module, func.__name__)
        except AttributeError:
            return NotImplemented
        if not all(issubclass(t, (ndarray, np.ndarray)) for t in types_):
            return NotImplemented
        return ours(*args, **kwargs)


def _method(name: str) -> Callable:
    """ndarray.<name> over NumPy's method, with CuPy's operand rules."""

    def method(self: ndarray, *args: Any, **kwargs: Any) -> Any:
        _check_call(f"cupy.ndarray.{name}", args, kwargs)
        held: Dict[int, Any] = {id(self._a): self}
        host_args = [_operand(a, held) for a in args]
        host_kwargs = {k: _operand(v, held) for k, v in kwargs.items()}
        result = _device(getattr(self._a, name)(*host_args, **host_kwargs), held)
        if name in _READS_BACK:
            _note("sync", name)
        _note_result(name, result, held)
        return result

    method.__name__ = name
    return method


_READS_BACK = {"nonzero", "argwhere", "flatnonzero", "unique", "compress"}  # output sized on the host
_OWN = set(vars(ndarray))
for _name in NAMES["cupy.ndarray"]:
    if _name not in _OWN and not _name.startswith("_") and callable(getattr(np.ndarray, _name, None)):
        setattr(ndarray, _name, _method(_name))

_BINARY = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
           "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "matmul": "matmul",
           "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "left_shift",
           "rshift": "right_shift", "divmod": "divmod"}
_COMPARE = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater",
            "ge": "greater_equal"}


def _binary(ufunc_name: str, reflected: bool) -> Callable:
    def op(self: ndarray, other: Any) -> Any:
        if getattr(other, "__array_ufunc__", False) is None:  # e.g. pycoll.Tensor: its reflected op
            return NotImplemented
        func = getattr(_cupy_module(), ufunc_name)
        return func(other, self) if reflected else func(self, other)

    return op


def _inplace(ufunc_name: str) -> Callable:
    def op(self: ndarray, other: Any) -> Any:
        getattr(_cupy_module(), ufunc_name)(self, other, out=self)
        return self

    return op


for _op, _ufunc in {**_BINARY, **_COMPARE}.items():
    setattr(ndarray, f"__{_op}__", _binary(_ufunc, False))
for _op, _ufunc in _BINARY.items():
    setattr(ndarray, f"__r{_op}__", _binary(_ufunc, True))
    if _op != "divmod":
        setattr(ndarray, f"__i{_op}__", _inplace(_ufunc))
for _op, _ufunc in {"neg": "negative", "pos": "positive", "abs": "absolute", "invert": "invert"}.items():
    setattr(ndarray, f"__{_op}__", lambda self, _u=_ufunc: getattr(_cupy_module(), _u)(self))


# ---- operands and results -------------------------------------------------------------------
def _refuse_host(x: Any) -> None:
    raise TypeError(f"Unsupported type {type(x)}")


def _operand(x: Any, held: Any = None) -> Any:
    """A device array's host memory (noted in ``held`` by id, to give the same object back); a
    host array is refused, as CuPy's kernels and functions refuse it; sequences are looked into."""
    if isinstance(x, ndarray):
        if held is not None:
            held[id(x._a)] = x
        return x._a
    if isinstance(x, np.ndarray):
        _refuse_host(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_operand(v, held) for v in x)
    return x


def _kernel_operand(x: Any, held: Dict[int, Any]) -> Any:
    """A ufunc operand: a device array, a Python or NumPy scalar (CuPy's CScalar), nothing else."""
    if isinstance(x, ndarray):
        held[id(x._a)] = x
        return x._a
    if isinstance(x, (bool, int, float, complex, np.generic)) or x is None:
        return x
    _refuse_host(x)


def _host_value(x: Any) -> Any:
    """A value CuPy copies to the device itself (``cupy.asarray``'s, advanced-index writes)."""
    if isinstance(x, ndarray):
        return x._a
    if isinstance(x, (list, tuple)):
        return np.asarray(type(x)(_host_value(v) for v in x))
    return x


def _index(index: Any) -> Any:
    """An index for the host memory: device index arrays unwrapped, host ones taken (CuPy copies
    them)."""
    if isinstance(index, tuple):
        return tuple(_index(i) for i in index)
    if isinstance(index, ndarray):
        return index._a
    if isinstance(index, list):
        return np.asarray(_host_value(index))
    return index


def _wrapped(index: Any, shape: tuple) -> Any:
    """A host index with its integer arrays taken modulo the size of the axis each indexes: CuPy
    wraps an out-of-range integer-array index around where NumPy raises IndexError (CuPy's
    documented difference, "Out-of-bounds indices"), so a missing bounds check reads or writes
    the wrong element here too, silently, as on a GPU."""
    items = index if isinstance(index, tuple) else (index,)
    if not any(isinstance(i, np.ndarray) and i.dtype.kind in "iu" for i in items):
        return index

    def width(i: Any) -> int:
        if i is None or i is Ellipsis:
            return 0
        return i.ndim if isinstance(i, np.ndarray) and i.dtype == np.bool_ else 1
    rest, axis, out = len(shape) - sum(width(i) for i in items), 0, []
    for i in items:
        if i is Ellipsis:
            axis += rest
        elif isinstance(i, np.ndarray) and i.dtype.kind in "iu" and axis < len(shape) and shape[axis]:
            i = np.mod(i, shape[axis])
        out.append(i)
        axis += width(i) if i is not Ellipsis else 0
    return tuple(out) if isinstance(index, tuple) else out[0]


def _is_advanced(index: Any) -> bool:
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(p, (np.ndarray, list)) or (isinstance(p, (bool, np.bool_))) for p in parts)


def _device(result: Any, held: Dict[int, Any]) -> Any:
    """NumPy's result as CuPy gives it: arrays and NumPy scalars as device arrays (an ``out``
    or the input itself as that same object), tuples and lists looked into."""
    if isinstance(result, np.ndarray):
        same = held.get(id(result))
        return ndarray._of(result) if same is None else same
    if isinstance(result, np.generic):
        return ndarray._of(np.asarray(result))
    if isinstance(result, list):
        return [_device(r, held) for r in result]
    if isinstance(result, tuple):
        items = [_device(r, held) for r in result]
        return type(result)(*items) if hasattr(result, "_fields") else tuple(items)
    return result


# ---- the namespace ---------------------------------------------------------------------------
class ufunc:
    """A CuPy ufunc over NumPy's: operands are device arrays or scalars (CuPy's kernel rule)."""

    def __init__(self, host: np.ufunc):
        self._host = host
        self.__name__ = self.name = host.__name__
        self.nin, self.nout, self.nargs = host.nin, host.nout, host.nargs

    def _run(self, fn: Callable, args: tuple, kwargs: dict, takes: tuple) -> Any:
        unknown = set(kwargs) - set(takes)
        if unknown:  # e.g. NumPy's where= (CuPy's ufuncs name it _where), order=, initial=
            raise TypeError(f"Wrong arguments {dict((k, kwargs[k]) for k in sorted(unknown))} "
                            f"(cupy ufunc {self.__name__})")
        if "_where" in kwargs:
            kwargs["where"] = kwargs.pop("_where")
        held: Dict[int, Any] = {}
        host_args = [_kernel_operand(a, held) for a in args]
        out = kwargs.get("out")
        if out is not None:
            kwargs["out"] = tuple(_kernel_operand(o, held) for o in out) if isinstance(out, tuple) \
                else _kernel_operand(out, held)
        if kwargs.get("where") is not None:
            kwargs["where"] = _kernel_operand(kwargs["where"], held)
        _note("op", self.__name__)
        return _device(fn(*host_args, **kwargs), held)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._run(self._host, args, kwargs, ("out", "dtype", "casting", "_where"))

    _METHOD_KEYWORDS = {"reduce": ("axis", "dtype", "out", "keepdims"), "accumulate": ("axis", "dtype", "out"),
                        "reduceat": ("axis", "dtype", "out"), "outer": ("out", "dtype", "casting"), "at": ()}

    def __getattr__(self, method: str) -> Callable:
        takes = self._METHOD_KEYWORDS.get(method)
        if takes is None:
            raise AttributeError(f"cupy ufunc has no attribute {method!r}")
        return lambda *args, **kwargs: self._run(getattr(self._host, method), args, kwargs, takes)

    def __repr__(self) -> str:
        return f"<ufunc '{self.__name__}'>"


def _function(host: Callable, name: str, converts: bool) -> Callable:
    """``name`` (``cupy.pad``) over NumPy's ``host``: device arrays in, device arrays out; CuPy's
    signature; host arrays refused unless it is one of CuPy's host-to-device conversions
    (``converts``)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        _check_call(name, args, kwargs)
        if name in _ARRAY_FIRST and args and not isinstance(args[0], ndarray):
            raise TypeError(f"{name}: Argument 'array' has incorrect type (expected cupy.ndarray, got "
                            f"{type(args[0]).__name__})")
        held: Dict[int, Any] = {}
        take = _host_value if converts else (lambda x: _operand(x, held))
        result = host(*[take(a) for a in args], **{k: take(v) for k, v in kwargs.items()})
        if converts:
            _note("upload", name)
            return ndarray._of(np.asarray(result))
        result = _device(result, held)
        if name.rsplit(".", 1)[-1] in _READS_BACK:
            _note("sync", name)
        _note_result(name, result, held)
        return result

    call.__name__ = name
    return call


# CuPy's functions that take their first argument as a device array (Cython's typed ``_ndarray_base``
# or its methods) and refuse a Python or NumPy scalar where NumPy's take one (found on an H100,
# 2026-11-27: ``cupy.broadcast_to(0, shape)``)
_ARRAY_FIRST = {"cupy.broadcast_to", "cupy.reshape", "cupy.ravel", "cupy.transpose", "cupy.squeeze",
                "cupy.swapaxes", "cupy.moveaxis", "cupy.expand_dims"}


_CONVERTING = {"array", "asarray", "asanyarray", "frombuffer", "fromfile", "fromfunction", "fromiter",
               "fromstring", "loadtxt", "genfromtxt"}


_ABSENT = object()


class Namespace(types.ModuleType):
    """A ``cupy`` (sub)module: the names real CuPy has there, over those of ``host`` (NumPy's
    module of the same place) unless given in ``own``."""

    def __init__(self, name: str, host: Any, own: Dict[str, Any]):
        super().__init__(name)
        self._names = set(NAMES[name])
        self._host = host
        for key, value in own.items():
            setattr(self, key, value)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name not in self._names:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        found = getattr(self._host, name, _ABSENT) if self._host is not None else _ABSENT
        if found is _ABSENT or (isinstance(found, type) and self.__name__ == "cupy.random"):
            raise AttributeError(f"strict_cupy: {self.__name__}.{name} is CuPy's, not provided by the stand-in")
        if isinstance(found, np.ufunc):
            value: Any = ufunc(found)
        elif isinstance(found, type) or not callable(found):
            value = found  # dtypes (cupy.float32 is numpy.float32), finfo, constants
        else:
            value = _function(found, f"{self.__name__}.{name}", name in _CONVERTING)
        setattr(self, name, value)
        return value


_MODULE: Dict[str, Any] = {}


def _cupy_module() -> Any:
    return _MODULE["cupy"]


def array(obj: Any, dtype: Any = None, copy: bool = True, order: str = "K", subok: bool = False,
          ndmin: int = 0, *, blocking: bool = False) -> ndarray:
    _note("op" if isinstance(obj, ndarray) else "upload", "array")
    return ndarray._of(np.array(_host_value(obj), dtype=dtype, copy=copy, order=order, ndmin=ndmin))


def asarray(a: Any, dtype: Any = None, order: Any = None, *, copy: Any = None, blocking: bool = False) -> ndarray:
    if isinstance(a, ndarray) and (dtype is None or a.dtype == np.dtype(dtype)) and not copy:
        return a
    _note("op" if isinstance(a, ndarray) else "upload", "asarray")
    return ndarray._of(np.array(_host_value(a), dtype=dtype, order=order or "K",
                                copy=True if copy is None else copy))


def ascontiguousarray(a: Any, dtype: Any = None) -> ndarray:
    if not isinstance(a, ndarray):
        raise TypeError(f"Argument 'a' has incorrect type (expected cupy._core.core._ndarray_base, "
                        f"got {type(a).__name__})")
    host = np.ascontiguousarray(a._a, dtype=dtype)
    if host is not a._a:
        _note("op", "ascontiguousarray")
    return a if host is a._a else ndarray._of(host)


def asnumpy(a: Any, stream: Any = None, order: str = "C", out: Any = None, blocking: bool = True) -> np.ndarray:
    if isinstance(a, ndarray):
        return a.get(order=order, out=out)
    return np.asarray(a, order=order)


def diagonal(a: ndarray, offset: int = 0, axis1: int = 0, axis2: int = 1) -> ndarray:
    """CuPy's diagonal: a writable view (NumPy's is read-only)."""
    _note("op", "diagonal")
    view = np.diagonal(a._a, offset, axis1, axis2)
    view.flags.writeable = a._a.flags.writeable
    return ndarray._of(view)


def get_array_module(*args: Any) -> Any:
    return _cupy_module() if any(isinstance(a, ndarray) for a in args) else np


def from_dlpack(x: Any, *, device: Any = None, copy: Any = None) -> ndarray:
    if isinstance(x, ndarray):
        return x
    if not hasattr(x, "__dlpack_device__") or x.__dlpack_device__()[0] != 2:
        raise TypeError(f"strict_cupy.from_dlpack takes device objects only, got {type(x).__name__}")
    capsule = x.__dlpack__()
    host = types.SimpleNamespace(__dlpack__=lambda **_: capsule, __dlpack_device__=lambda: (1, 0))
    return ndarray._of(np.from_dlpack(host))


class _Pool:
    """``get_default_memory_pool()`` / ``get_default_pinned_memory_pool()``: the stand-in's
    memory is NumPy's, so the pool holds nothing and ``malloc`` hands out empty pointers."""

    def malloc(self, size: int) -> _Pointer:
        return _Pointer(0)

    def free_all_blocks(self) -> None:
        pass

    def used_bytes(self) -> int:
        return 0

    def total_bytes(self) -> int:
        return 0

    def n_free_blocks(self) -> int:
        return 0


class _Stream:
    null = None

    def __init__(self, null: bool = False, non_blocking: bool = False, ptr: int = 0):
        self.ptr = ptr

    def synchronize(self) -> None:
        pass

    def is_capturing(self) -> bool:
        return False

    def __enter__(self) -> "_Stream":
        return self

    def __exit__(self, *exc: Any) -> None:
        pass


def _scatter(ufunc_: np.ufunc) -> Callable:
    def scatter(a: ndarray, slices: Any, value: Any) -> None:
        if not isinstance(a, ndarray):
            _refuse_host(a)
        _note("op", f"scatter_{ufunc_.__name__}")
        ufunc_.at(a._a, _wrapped(_index(slices), a.shape), _operand(value))

    return scatter


def _build() -> Dict[str, types.ModuleType]:
    """Every module of the stand-in, by the name it takes in ``sys.modules``."""
    from host_cuda import HostCuda  # the NCCL engine's pieces (streams, events, nccl over MPI)

    host = HostCuda(done=True, recording=False)
    runtime = types.SimpleNamespace(
        getDeviceCount=lambda: 1, setDevice=lambda d: None, getDevice=lambda: 0,
        runtimeGetVersion=lambda: 13000, is_hip=False, driverGetVersion=lambda: 13000, memGetInfo=lambda: (1 << 34, 1 << 34),
        getDeviceProperties=lambda index: {"name": b"host memory (strict_cupy)", "totalGlobalMem": 1 << 34,
                                           "major": 9, "minor": 0, "multiProcessorCount": 132})
    stream = _Stream(ptr=0)
    pool = _Pool()
    allocator = [pool.malloc]
    cuda = Namespace("cupy.cuda", None, {
        "get_allocator": lambda: allocator[0], "set_allocator": lambda f=None: allocator.__setitem__(0, f),
        "Device": Device, "runtime": runtime, "nccl": host.nccl, "Stream": _Stream,
        "get_current_stream": lambda device=None: stream, "is_available": lambda: True,
        "get_device_id": lambda: 0})
    names = {
        "cupy.linalg": Namespace("cupy.linalg", np.linalg, {}),
        "cupy.fft": Namespace("cupy.fft", np.fft, {}),
        "cupy.random": Namespace("cupy.random", np.random, {}),
        "cupy.lib.stride_tricks": Namespace("cupy.lib.stride_tricks", np.lib.stride_tricks, {}),
        "cupy.cuda": cuda,
        "cupy.cuda.nccl": host.nccl,
    }
    lib = types.ModuleType("cupy.lib")
    lib.stride_tricks = names["cupy.lib.stride_tricks"]
    names["cupy.lib"] = lib
    cupy = Namespace("cupy", np, {
        "__version__": NAMES["version"], "ndarray": ndarray, "ufunc": ufunc, "array": array, "asarray": asarray,
        "ascontiguousarray": ascontiguousarray, "asnumpy": asnumpy, "diagonal": diagonal,
        "get_array_module": get_array_module,
        "from_dlpack": from_dlpack, "is_available": lambda: True, "get_default_memory_pool": lambda: pool,
        "get_default_pinned_memory_pool": lambda: pool,
        "linalg": names["cupy.linalg"], "fft": names["cupy.fft"], "random": names["cupy.random"],
        "lib": lib, "cuda": cuda})
    names["cupy"] = cupy
    names["cupyx"] = Namespace("cupyx", None, {
        "scatter_add": _scatter(np.add), "scatter_max": _scatter(np.maximum),
        "scatter_min": _scatter(np.minimum)})
    for name, module in names.items():  # importlib.util.find_spec("cupy") reads it (is_compiled_with_cuda)
        module.__spec__ = importlib.machinery.ModuleSpec(name, None)
    host.xp = cupy
    return names, host


@contextlib.contextmanager
def installed() -> Iterator[Any]:
    """The stand-in in CuPy's place (``sys.modules``, pycoll's engine and its current device,
    made 'gpu:0') inside the ``with`` block; everything as it was after. Yields the ``cupy``
    module. pycoll's CUDA kernels (flatten, Adam), which cannot run on host memory, count as not
    built meanwhile: device arrays take their CuPy fallbacks, as on a build without them."""
    from pycoll import device
    from pycoll.backends import cuda_api
    from pycoll.kernels import compiled
    from pycoll.kernels import device as kernel_path

    modules, host = _build()
    built = compiled.cuda_built, kernel_path.cuda_built
    compiled.cuda_built = kernel_path.cuda_built = lambda: False
    saved = {k: v for k, v in sys.modules.items() if k in ("cupy", "cupyx") or k.startswith(("cupy.", "cupyx."))}
    for key in saved:
        del sys.modules[key]
    sys.modules.update(modules)
    _MODULE["cupy"] = modules["cupy"]
    previous_engine = cuda_api.use(host)
    previous_place = device._current
    try:
        device.set_device("gpu:0")
        yield modules["cupy"]
    finally:
        compiled.cuda_built, kernel_path.cuda_built = built
        device._current = previous_place
        cuda_api.use(previous_engine)
        for key in modules:
            sys.modules.pop(key, None)
        sys.modules.update(saved)
        _MODULE.clear()


def _parameters(fn: Any) -> Any:
    """``fn``'s parameters as [name, kind, has a default] triples (``inspect.Parameter`` kinds),
    from its signature or, for CuPy's Cython methods, its docstring's first line; None if neither."""
    import inspect
    import re

    try:
        return [[p.name, int(p.kind), p.default is not p.empty] for p in inspect.signature(fn).parameters.values()]
    except (TypeError, ValueError):
        pass
    found = re.match(r"[\w.]+\((.*)\)( ->.*)?$", (fn.__doc__ or "").split("\n")[0])
    if found is None:
        return None
    params, kind, depth, part = [], 1, 0, ""
    for ch in found.group(1) + ",":
        depth += ch in "([{" and 1 or (-1 if ch in ")]}" else 0)
        if ch != "," or depth:
            part += ch
            continue
        name, part = part.strip(), ""
        if name in ("self", "/"):
            continue
        if name == "*":
            kind = 3
        elif name.startswith("**"):
            params.append([name[2:], 4, False])
        elif name.startswith("*"):
            params.append([name[1:], 2, False])
            kind = 3
        elif name:
            params.append([name.split("=")[0].split()[-1], kind, "=" in name])  # "Py_ssize_t axis1=0"
    return params


def _snapshot() -> None:
    """Write tests/data/cupy_names.json from the CuPy installed here (names and signatures: no
    GPU needed)."""
    import cupy
    import cupy.lib.stride_tricks  # noqa: F401
    import cupyx

    def public(module: Any) -> list:
        return sorted(n for n in dir(module) if not n.startswith("_"))

    modules = {"cupy": cupy, "cupy.linalg": cupy.linalg, "cupy.fft": cupy.fft, "cupy.random": cupy.random,
               "cupy.lib.stride_tricks": cupy.lib.stride_tricks, "cupy.cuda": cupy.cuda, "cupyx": cupyx}
    found: Dict[str, Any] = {"version": cupy.__version__}
    found.update({name: public(module) for name, module in modules.items()})
    found["cupy.ndarray"] = sorted(n for n in dir(cupy.ndarray) if not n.startswith("_") or n.startswith("__"))
    modules["cupy.ndarray"] = cupy.ndarray
    signatures = {}
    for name, module in modules.items():
        for member in found[name]:
            fn = getattr(module, member)
            if callable(fn) and not isinstance(fn, type) and type(fn).__name__ != "ufunc" \
                    and (name != "cupy.ndarray" or not member.startswith("__")):
                params = _parameters(fn)
                if params is not None:
                    signatures[f"{name}.{member}"] = params
    found["signatures"] = signatures
    with open(_NAMES_FILE, "w") as f:
        json.dump(found, f, indent=0, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__" and sys.argv[1:] == ["--snapshot"]:
    _snapshot()


def on_each_place(compute: Callable[[], Any], seed: Any = None) -> Dict[str, Any]:
    """``{"cpu": compute(), "gpu": compute()}``, the second on the stand-in's GPU (call it inside
    ``installed()``), pycoll seeded with ``seed`` before each when one is given; the device is
    the CPU afterwards, whatever happened.

    The CPU run does without pycoll's host math kernels (erf, gelu, cumsum, batch norm in C++,
    sums in double), so that both runs compute the same formulas and may be compared to 1e-6:
    the kernels differ from the formulas by float32 rounding, which deep normalisation stacks
    amplify, and tests/test_fast_ops_kernels.py checks them against float64 on their own."""
    from pycoll import device, random
    from pycoll.kernels import host_math

    results = {}
    kernels = host_math._kernels
    try:
        host_math._kernels = lambda: None
        for place in ("cpu", "gpu"):
            device.set_device(place)
            if seed is not None:
                random.seed(seed)
            results[place] = compute()
    finally:
        host_math._kernels = kernels
        device.set_device("cpu")
    return results
