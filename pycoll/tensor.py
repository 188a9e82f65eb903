"""`pycoll.Tensor`: a NumPy or CuPy array with autograd, and what the ops share.

A Tensor owns nothing but its array (`Tensor.array`, zero-copy). Every op (`pycoll.math_ops`,
`pycoll.shape_ops`) computes on raw arrays with the array's own module and, when the graph is
being recorded, gives its output a backward function through `record()` (see `pycoll.autograd`).
The creation functions are in `pycoll.creation`.
"""
from __future__ import annotations

import builtins as _builtins
import copy as _copy
from typing import Any, Callable, Iterator, List, Optional, Tuple, Union

import numpy as np

from pycoll import autograd as _ag
from pycoll.autograd import Node, RemovableHandle, edge
from pycoll.device import (array_module, current_place, import_cupy, is_array, move, parse_place,
                           place_of, place_str, to_module)

float16 = np.dtype("float16")
float32 = np.dtype("float32")
float64 = np.dtype("float64")
int32 = np.dtype("int32")
int64 = np.dtype("int64")

DTypeLike = Union[str, np.dtype, type, None]


def convert_dtype(dtype: DTypeLike) -> Optional[np.dtype]:
    """A NumPy dtype for 'float32', numpy.float32, numpy.dtype(...); None stays None."""
    if dtype is None or isinstance(dtype, np.dtype):
        return dtype
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype must be a dtype name like 'float32' or a numpy dtype, got {dtype!r}") from None


class Tensor:
    """An n-d array (numpy.ndarray on the CPU, cupy.ndarray on a GPU) that records autograd.

    `stop_gradient` is True for plain tensors (paddle's default) and False for parameters; `.grad`
    is a Tensor (stop_gradient True) or None, and backward accumulates into it until clear_grad().
    """

    __slots__ = ("_array", "stop_gradient", "_grad", "_node", "_out_idx", "_ready_hooks", "name",
                 "__weakref__")
    __array_ufunc__ = None  # numpy operators defer to Tensor's reflected methods (ndarray * Tensor)

    def __init__(self, data: Any, dtype: DTypeLike = None, place: Any = None,
                 stop_gradient: bool = True):
        _init_slots(self, _to_array(data, dtype, place))
        self.stop_gradient = bool(stop_gradient)

    # ---- the array and its properties -----------------------------------------------------
    @property
    def array(self) -> Any:
        """The backing numpy/cupy array itself: writing into it writes the tensor."""
        return self._array

    @property
    def shape(self) -> List[int]:
        return list(self._array.shape)

    @property
    def dtype(self) -> np.dtype:
        return self._array.dtype

    @property
    def ndim(self) -> int:
        return self._array.ndim

    @property
    def size(self) -> int:
        return int(self._array.size)

    @property
    def place(self) -> str:
        """'cpu' or 'gpu:N'."""
        return place_str(place_of(self._array))

    @property
    def is_leaf(self) -> bool:
        return self._node is None

    @property
    def T(self) -> "Tensor":
        return shape_ops.transpose(self, list(range(self._array.ndim))[::-1])

    @property
    def grad(self) -> Optional["Tensor"]:
        return self._grad

    @grad.setter
    def grad(self, value: Any) -> None:
        if value is None:
            self._grad = None
            return
        arr = value._array if isinstance(value, Tensor) else value
        if not is_array(arr):
            raise TypeError(f"grad must be a Tensor, an array or None, got {type(value).__name__}")
        if arr.shape != self._array.shape:
            raise ValueError(f"grad must have the tensor's shape {self.shape}, got {list(arr.shape)}")
        self._grad = _new(arr)

    # ---- interop -----------------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """A NumPy array: the same memory on the CPU, a host copy for a GPU tensor."""
        a = self._array
        return a if isinstance(a, np.ndarray) else a.get()

    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> np.ndarray:
        a = self.numpy()
        if dtype is not None and a.dtype != dtype:
            return a.astype(dtype)
        return a.copy() if copy else a

    @property
    def __cuda_array_interface__(self) -> dict:
        if isinstance(self._array, np.ndarray):
            raise AttributeError("a CPU tensor has no __cuda_array_interface__")
        return self._array.__cuda_array_interface__

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self._array.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> Tuple[int, int]:
        return self._array.__dlpack_device__()

    def item(self, *args: Any) -> Any:
        return self._array.item(*args)

    def tolist(self) -> Any:
        return self.numpy().tolist()

    def __float__(self) -> float:
        return float(self._array.item())

    def __int__(self) -> int:
        return int(self._array.item())

    def __bool__(self) -> bool:
        if self._array.size != 1:
            raise ValueError(f"the truth value of a tensor of shape {self.shape} is ambiguous")
        return bool(self._array.item())

    def __len__(self) -> int:
        if self._array.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._array.shape[0]

    def __iter__(self) -> Iterator["Tensor"]:
        for i in range(len(self)):
            yield self[i]

    def __repr__(self) -> str:
        body = np.array2string(self.numpy(), separator=", ", prefix="       ")
        return (f"Tensor(shape={self.shape}, dtype={self.dtype}, place={self.place}, "
                f"stop_gradient={self.stop_gradient},\n       {body})")

    def __deepcopy__(self, memo: dict) -> "Tensor":
        if self._node is not None:
            raise RuntimeError("only leaf tensors can be deep-copied; detach() first")
        new = object.__new__(type(self))
        memo[id(self)] = new
        _init_slots(new, self._array.copy())
        new.stop_gradient = self.stop_gradient
        new.name = self.name
        new._grad = _copy.deepcopy(self._grad, memo)
        if hasattr(self, "__dict__"):
            new.__dict__.update(_copy.deepcopy(self.__dict__, memo))
        return new

    # ---- autograd ----------------------------------------------------------------------------
    def backward(self, grad_tensor: Any = None, retain_graph: bool = False) -> None:
        """Accumulate d(self)/d(leaf) into every reachable leaf's `.grad`.

        A non-scalar tensor is seeded with ones (paddle semantics) unless `grad_tensor` is given.
        The graph is freed afterwards unless `retain_graph` is True.
        """
        _ag.run_backward([self], [self._seed_grad(grad_tensor)], retain_graph)

    def _seed_grad(self, grad_tensor: Any) -> Any:
        if self.stop_gradient:
            raise RuntimeError("backward() on a tensor with stop_gradient=True: nothing in its graph "
                               "needs a gradient")
        xp = array_module(self._array)
        if grad_tensor is None:
            return xp.ones_like(self._array)
        g = grad_tensor._array if isinstance(grad_tensor, Tensor) else grad_tensor
        g = to_module(g, xp)
        if g.shape != self._array.shape:
            raise ValueError(f"grad_tensor must have shape {self.shape}, got {list(g.shape)}")
        return g

    def clear_gradient(self, set_to_zero: bool = True) -> None:
        """Zero `.grad` in place (paddle's default) or, with set_to_zero=False, drop it."""
        if self._grad is None:
            return
        if set_to_zero and getattr(self._grad._array.flags, "writeable", True):
            self._grad._array.fill(0)
        else:
            self._grad = None

    clear_grad = clear_gradient

    def detach(self) -> "Tensor":
        """A tensor sharing this one's memory, outside the graph."""
        return _new(self._array)

    def set_value(self, value: Any) -> None:
        """Copy `value` (Tensor, array or nested list) into this tensor's memory.

        Shape and dtype must match exactly (lists and scalars take the tensor's dtype).
        """
        arr = value._array if isinstance(value, Tensor) else value
        if not is_array(arr):
            arr = np.asarray(arr, dtype=self._array.dtype)
        if tuple(arr.shape) != self._array.shape:
            raise ValueError(f"set_value: value has shape {list(arr.shape)}, the tensor has shape "
                             f"{self.shape}")
        if arr.dtype != self._array.dtype:
            raise ValueError(f"set_value: value has dtype {arr.dtype}, the tensor has dtype "
                             f"{self._array.dtype}")
        xp = array_module(self._array)
        xp.copyto(self._array, to_module(arr, xp))

    def register_grad_ready_hook(self, fn: Callable[["Tensor"], None]) -> RemovableHandle:
        """Call `fn(self)` during backward, as soon as this backward's gradient for this leaf is
        final and accumulated into `.grad` (before the rest of the walk goes on).

        Only leaf tensors take this hook; it fires only in backwards whose graph reaches the leaf.
        """
        if not callable(fn):
            raise TypeError(f"fn must be callable, got {type(fn).__name__}")
        if self._node is not None:
            raise RuntimeError("register_grad_ready_hook needs a leaf tensor (a parameter or a "
                               "tensor made by the user), got the output of an op")
        if self._ready_hooks is None:
            self._ready_hooks = {}
        handle = RemovableHandle(self._ready_hooks)
        self._ready_hooks[handle.id] = fn
        return handle

    # ---- operators ---------------------------------------------------------------------------
    def __add__(self, other: Any) -> "Tensor":
        return math_ops.add(self, other)

    def __radd__(self, other: Any) -> "Tensor":
        return math_ops.add(other, self)

    def __sub__(self, other: Any) -> "Tensor":
        return math_ops.subtract(self, other)

    def __rsub__(self, other: Any) -> "Tensor":
        return math_ops.subtract(other, self)

    def __mul__(self, other: Any) -> "Tensor":
        return math_ops.multiply(self, other)

    def __rmul__(self, other: Any) -> "Tensor":
        return math_ops.multiply(other, self)

    def __truediv__(self, other: Any) -> "Tensor":
        return math_ops.divide(self, other)

    def __rtruediv__(self, other: Any) -> "Tensor":
        return math_ops.divide(other, self)

    def __pow__(self, other: Any) -> "Tensor":
        return math_ops.pow(self, other)

    def __rpow__(self, other: Any) -> "Tensor":
        return math_ops.pow(other, self)

    def __matmul__(self, other: Any) -> "Tensor":
        return math_ops.matmul(self, other)

    def __rmatmul__(self, other: Any) -> "Tensor":
        return math_ops.matmul(other, self)

    def __neg__(self) -> "Tensor":
        return math_ops.neg(self)

    def __getitem__(self, index: Any) -> "Tensor":
        return shape_ops._getitem(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        if _ag._grad_enabled and not self.stop_gradient:
            raise RuntimeError("in-place assignment into a tensor that requires grad is not "
                               "recorded; do it under pycoll.no_grad() or use set_value()")
        xp = array_module(self._array)
        value = value._array if isinstance(value, Tensor) else value
        if isinstance(value, list):
            value = np.asarray(value)
        self._array[_index_arrays(index, xp)] = to_module(value, xp) if is_array(value) else value

    def __lt__(self, other: Any) -> "Tensor":
        return math_ops._compare(self, other, "__lt__")

    def __le__(self, other: Any) -> "Tensor":
        return math_ops._compare(self, other, "__le__")

    def __gt__(self, other: Any) -> "Tensor":
        return math_ops._compare(self, other, "__gt__")

    def __ge__(self, other: Any) -> "Tensor":
        return math_ops._compare(self, other, "__ge__")

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        return math_ops._compare(self, other, "__eq__")

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        return math_ops._compare(self, other, "__ne__")

    __hash__ = object.__hash__

    def cpu(self) -> "Tensor":
        return _to_place(self, ("cpu", 0))

    def cuda(self, device_id: Optional[int] = None) -> "Tensor":
        return _to_place(self, parse_place("gpu" if device_id is None else f"gpu:{device_id}"))


def _init_slots(t: Tensor, array: Any) -> None:
    t._array = array
    t.stop_gradient = True
    t._grad = None
    t._node = None
    t._out_idx = 0
    t._ready_hooks = None
    t.name = None


def _new(array: Any) -> Tensor:
    """Wrap an array in a Tensor without checks or copies (the fast path every op uses)."""
    t = object.__new__(Tensor)
    _init_slots(t, np.asarray(array) if isinstance(array, np.generic) else array)
    return t


def record(out: Any, backward: Callable, *parents: Any) -> Tensor:
    """Wrap the op result `out` and, if a parent needs a gradient, record `backward` for it.

    `backward(grad)` returns one gradient array (or None) per entry of `parents`; non-Tensor
    parents (Python scalars) get None.
    """
    t = _new(out)
    if _ag._grad_enabled:
        for p in parents:
            if isinstance(p, Tensor) and not p.stop_gradient:
                t.stop_gradient = False
                t._node = Node(backward, tuple(edge(q) if isinstance(q, Tensor) else None
                                               for q in parents))
                break
    return t


# ---- conversions ---------------------------------------------------------------------------

def _to_array(data: Any, dtype: DTypeLike = None, place: Any = None) -> Any:
    dt = convert_dtype(dtype)
    target = current_place() if place is None else parse_place(place)
    if isinstance(data, Tensor):
        arr = data._array
    elif is_array(data):
        arr = data
    elif hasattr(data, "__cuda_array_interface__"):
        arr = import_cupy().asarray(data)
    elif hasattr(data, "__dlpack__") and not isinstance(data, np.generic):
        if data.__dlpack_device__()[0] == 1:  # kDLCPU
            arr = np.from_dlpack(data)
        else:
            arr = import_cupy().from_dlpack(data)
    else:
        arr = np.asarray(data)
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"data must be numeric (numbers, nested lists, arrays or Tensors), got "
                            f"{type(data).__name__} of dtype {arr.dtype}")
        if dt is None and arr.dtype == float64 and not isinstance(data, np.generic):
            dt = float32  # Python floats become paddle's default dtype
    arr = move(arr, target)
    if dt is not None and arr.dtype != dt:
        arr = arr.astype(dt)
    return arr


def to_tensor(data: Any, dtype: DTypeLike = None, place: Any = None,
              stop_gradient: bool = True) -> Tensor:
    """A Tensor from numbers, nested lists, numpy/cupy arrays, DLPack objects or Tensors.

    Arrays already of `dtype` on `place` (default: the current device) are wrapped without a copy,
    and so is another Tensor's array; Python floats default to float32.
    """
    return Tensor(data, dtype, place, stop_gradient)


def _to_place(x: Tensor, place: Any) -> Tensor:
    src = place_of(x._array)
    return record(move(x._array, place), lambda g: (move(g, src),), x)


# ---- what the ops share --------------------------------------------------------------------

def _operand(v: Any) -> Any:
    if isinstance(v, Tensor):
        return v
    if isinstance(v, np.generic):  # before float: numpy.float64 subclasses float
        return v.item()
    if isinstance(v, (bool, int, float)):
        return v
    if is_array(v) or isinstance(v, (list, tuple)):
        return to_tensor(v)
    raise TypeError(f"operand must be a Tensor, a number or an array, got {type(v).__name__}")


def _tensor(x: Any) -> Tensor:
    """x itself if it is a Tensor, else x converted (arrays, lists); TypeError otherwise."""
    if isinstance(x, Tensor):
        return x
    if is_array(x) or isinstance(x, (list, tuple, int, float)):
        return to_tensor(x)
    raise TypeError(f"x must be a Tensor or an array, got {type(x).__name__}")


def _needs(v: Any) -> bool:
    return isinstance(v, Tensor) and not v.stop_gradient


def _axes(axis: Any, ndim: int) -> Optional[Tuple[int, ...]]:
    if axis is None:
        return None
    items = axis if isinstance(axis, (list, tuple)) else [axis]
    n = _builtins.max(ndim, 1)
    out = []
    for a in items:
        if not isinstance(a, (int, np.integer)) or not -n <= a < n:
            raise ValueError(f"axis must be ints in [-{ndim}, {ndim}), got {axis!r}")
        out.append(int(a) % n)
    return tuple(out)


def _index_arrays(index: Any, xp: Any) -> Any:
    """`index` with Tensors and lists turned into arrays of module xp."""
    if isinstance(index, tuple):
        return tuple(_index_arrays(i, xp) for i in index)
    if isinstance(index, Tensor):
        return to_module(index._array, xp)
    if isinstance(index, list) or is_array(index):
        return to_module(np.asarray(index) if isinstance(index, list) else index, xp)
    return index


# The ops import Tensor from here, so they are imported last; each binds its functions as Tensor
# methods, and the operators above call them through these modules.
from pycoll import math_ops, shape_ops  # noqa: E402
