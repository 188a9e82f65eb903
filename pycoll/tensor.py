"""`pycoll.Tensor`: a NumPy or CuPy array with autograd, plus the ops and creation functions.

A Tensor owns nothing but its array (`Tensor.array`, zero-copy). Every op below computes on raw
arrays with the array's own module and, when the graph is being recorded, gives its output a
backward function through `record()` (see `pycoll.autograd`). Broadcasting ops reduce their
gradients back to each input's shape.
"""
from __future__ import annotations

import builtins as _builtins
import copy as _copy
import math
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from pycoll import autograd as _ag
from pycoll.autograd import Node, RemovableHandle, edge
from pycoll.device import (array_module, current_place, import_cupy, is_array, module_for, move,
                           parse_place, place_of, place_str, to_module)
from pycoll.random import get_rng

float16 = np.dtype("float16")
float32 = np.dtype("float32")
float64 = np.dtype("float64")
int32 = np.dtype("int32")
int64 = np.dtype("int64")

DTypeLike = Union[str, np.dtype, type, None]
ShapeLike = Union[int, Sequence[int]]


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
        return transpose(self, list(range(self._array.ndim))[::-1])

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
        return add(self, other)

    def __radd__(self, other: Any) -> "Tensor":
        return add(other, self)

    def __sub__(self, other: Any) -> "Tensor":
        return subtract(self, other)

    def __rsub__(self, other: Any) -> "Tensor":
        return subtract(other, self)

    def __mul__(self, other: Any) -> "Tensor":
        return multiply(self, other)

    def __rmul__(self, other: Any) -> "Tensor":
        return multiply(other, self)

    def __truediv__(self, other: Any) -> "Tensor":
        return divide(self, other)

    def __rtruediv__(self, other: Any) -> "Tensor":
        return divide(other, self)

    def __pow__(self, other: Any) -> "Tensor":
        return pow(self, other)

    def __rpow__(self, other: Any) -> "Tensor":
        return pow(other, self)

    def __matmul__(self, other: Any) -> "Tensor":
        return matmul(self, other)

    def __rmatmul__(self, other: Any) -> "Tensor":
        return matmul(other, self)

    def __neg__(self) -> "Tensor":
        return neg(self)

    def __getitem__(self, index: Any) -> "Tensor":
        return _getitem(self, index)

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
        return _compare(self, other, "__lt__")

    def __le__(self, other: Any) -> "Tensor":
        return _compare(self, other, "__le__")

    def __gt__(self, other: Any) -> "Tensor":
        return _compare(self, other, "__gt__")

    def __ge__(self, other: Any) -> "Tensor":
        return _compare(self, other, "__ge__")

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        return _compare(self, other, "__eq__")

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        return _compare(self, other, "__ne__")

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


def _data(v: Any) -> Any:
    return v._array if isinstance(v, Tensor) else v


def _needs(v: Any) -> bool:
    return isinstance(v, Tensor) and not v.stop_gradient


def _unbroadcast(g: Any, shape: tuple) -> Any:
    """Sum `g` over the dimensions that broadcasting added to reach it from `shape`."""
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    if lead:
        g = g.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g


def _shape_arg(shape: Any) -> Tuple[int, ...]:
    if isinstance(shape, Tensor):
        shape = shape.tolist()
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, (list, tuple)) or not all(
            isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s >= 0 for s in shape):
        raise ValueError(f"shape must be a list or tuple of non-negative ints, got {shape!r}")
    return tuple(int(s) for s in shape)


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


# ---- elementwise arithmetic ----------------------------------------------------------------

def add(x: Any, y: Any) -> Tensor:
    x, y = _operand(x), _operand(y)
    rx, ry = _needs(x), _needs(y)
    xs, ys = np.shape(_data(x)), np.shape(_data(y))

    def backward(g: Any) -> tuple:
        return (_unbroadcast(g, xs) if rx else None, _unbroadcast(g, ys) if ry else None)
    return record(_data(x) + _data(y), backward, x, y)


def subtract(x: Any, y: Any) -> Tensor:
    x, y = _operand(x), _operand(y)
    rx, ry = _needs(x), _needs(y)
    xs, ys = np.shape(_data(x)), np.shape(_data(y))

    def backward(g: Any) -> tuple:
        return (_unbroadcast(g, xs) if rx else None, _unbroadcast(-g, ys) if ry else None)
    return record(_data(x) - _data(y), backward, x, y)


def multiply(x: Any, y: Any) -> Tensor:
    x, y = _operand(x), _operand(y)
    xa, ya = _data(x), _data(y)
    rx, ry = _needs(x), _needs(y)

    def backward(g: Any) -> tuple:
        return (_unbroadcast(g * ya, xa.shape) if rx else None,
                _unbroadcast(g * xa, ya.shape) if ry else None)
    return record(xa * ya, backward, x, y)


def divide(x: Any, y: Any) -> Tensor:
    x, y = _operand(x), _operand(y)
    xa, ya = _data(x), _data(y)
    rx, ry = _needs(x), _needs(y)

    def backward(g: Any) -> tuple:
        return (_unbroadcast(g / ya, xa.shape) if rx else None,
                _unbroadcast(-(g * xa) / (ya * ya), ya.shape) if ry else None)
    return record(xa / ya, backward, x, y)


def pow(x: Any, y: Any) -> Tensor:  # noqa: A001 - paddle's name
    """x ** y; either side may be a number."""
    x, y = _operand(x), _operand(y)
    xa, ya = _data(x), _data(y)
    rx, ry = _needs(x), _needs(y)
    out = xa ** ya

    def backward(g: Any) -> tuple:
        gx = _unbroadcast(g * ya * xa ** (ya - 1), xa.shape) if rx else None
        gy = None
        if ry:
            log_x = array_module(g).log(xa) if isinstance(x, Tensor) else math.log(xa)
            gy = _unbroadcast(g * out * log_x, ya.shape)
        return gx, gy
    return record(out, backward, x, y)


def neg(x: Tensor) -> Tensor:
    x = _tensor(x)
    return record(-x._array, lambda g: (-g,), x)


def matmul(x: Any, y: Any, transpose_x: bool = False, transpose_y: bool = False) -> Tensor:
    """Matrix product with NumPy's rules for 1-D and batched operands."""
    x, y = _operand(x), _operand(y)
    if not isinstance(x, Tensor) or not isinstance(y, Tensor):
        raise TypeError(f"matmul needs tensors or arrays, got {type(x).__name__} and {type(y).__name__}")
    if transpose_x:
        x = transpose(x, _swap_last(x.ndim))
    if transpose_y:
        y = transpose(y, _swap_last(y.ndim))
    xa, ya = x._array, y._array
    rx, ry = _needs(x), _needs(y)
    if xa.ndim == 0 or ya.ndim == 0:
        raise ValueError(f"matmul needs operands of at least 1 dimension, got shapes {x.shape} "
                         f"and {y.shape}")

    def backward(g: Any) -> tuple:
        if xa.ndim == 2 and ya.ndim == 2:
            return (g @ ya.T if rx else None, xa.T @ g if ry else None)
        a = xa if xa.ndim > 1 else xa[None, :]
        b = ya if ya.ndim > 1 else ya[:, None]
        xp = array_module(g)
        if ya.ndim == 1:
            g = g[..., None]
        if xa.ndim == 1:
            g = g[..., None, :]
        gx = _unbroadcast(g @ xp.swapaxes(b, -1, -2), a.shape).reshape(xa.shape) if rx else None
        gy = _unbroadcast(xp.swapaxes(a, -1, -2) @ g, b.shape).reshape(ya.shape) if ry else None
        return gx, gy
    return record(xa @ ya, backward, x, y)


def _swap_last(ndim: int) -> List[int]:
    perm = list(range(ndim))
    if ndim >= 2:
        perm[-1], perm[-2] = perm[-2], perm[-1]
    return perm


# ---- unary math ----------------------------------------------------------------------------

def tanh(x: Tensor) -> Tensor:
    x = _tensor(x)
    out = array_module(x._array).tanh(x._array)
    return record(out, lambda g: (g * (1 - out * out),), x)


def exp(x: Tensor) -> Tensor:
    x = _tensor(x)
    out = array_module(x._array).exp(x._array)
    return record(out, lambda g: (g * out,), x)


def log(x: Tensor) -> Tensor:
    x = _tensor(x)
    a = x._array
    return record(array_module(a).log(a), lambda g: (g / a,), x)


def sqrt(x: Tensor) -> Tensor:
    x = _tensor(x)
    out = array_module(x._array).sqrt(x._array)
    return record(out, lambda g: (g / (2 * out),), x)


def square(x: Tensor) -> Tensor:
    x = _tensor(x)
    a = x._array
    return record(a * a, lambda g: (g * (2 * a),), x)


def abs(x: Tensor) -> Tensor:  # noqa: A001 - paddle's name
    x = _tensor(x)
    a = x._array
    xp = array_module(a)
    return record(xp.abs(a), lambda g: (g * xp.sign(a),), x)


def relu(x: Tensor) -> Tensor:
    x = _tensor(x)
    out = array_module(x._array).maximum(x._array, 0)
    return record(out, lambda g: (g * (out > 0),), x)


def sigmoid(x: Tensor) -> Tensor:
    x = _tensor(x)
    xp = array_module(x._array)
    out = xp.exp(-xp.logaddexp(0, -x._array)).astype(x._array.dtype, copy=False)
    return record(out, lambda g: (g * out * (1 - out),), x)


def clip(x: Tensor, min: Optional[float] = None, max: Optional[float] = None) -> Tensor:  # noqa: A002
    x = _tensor(x)
    """Clamp to [min, max]; the gradient flows where x lies inside the range."""
    if min is None and max is None:
        raise ValueError("clip needs min or max, got neither")
    a = x._array
    xp = array_module(a)

    def backward(g: Any) -> tuple:
        mask = xp.ones(a.shape, dtype=bool)
        if min is not None:
            mask &= a >= min
        if max is not None:
            mask &= a <= max
        return (g * mask,)
    return record(xp.clip(a, min, max), backward, x)


def cast(x: Tensor, dtype: DTypeLike) -> Tensor:
    x = _tensor(x)
    dt = convert_dtype(dtype)
    src = x._array.dtype
    return record(x._array.astype(dt), lambda g: (g.astype(src),), x)


# ---- reductions ----------------------------------------------------------------------------

def _kept_shape(shape: tuple, axes: Optional[tuple]) -> tuple:
    if axes is None:
        return (1,) * len(shape)
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def sum(x: Tensor, axis: Any = None, dtype: DTypeLike = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    x = _tensor(x)
    a = x._array
    axes = _axes(axis, a.ndim)
    shape, kept = a.shape, _kept_shape(a.shape, axes)
    xp = array_module(a)
    out = a.sum(axis=axes, keepdims=keepdim, dtype=convert_dtype(dtype))
    return record(out, lambda g: (xp.broadcast_to(g.reshape(kept), shape),), x)


def mean(x: Tensor, axis: Any = None, keepdim: bool = False) -> Tensor:
    x = _tensor(x)
    a = x._array
    axes = _axes(axis, a.ndim)
    shape, kept = a.shape, _kept_shape(a.shape, axes)
    count = a.size // _builtins.max(int(np.prod(kept)), 1) if a.size else 1
    xp = array_module(a)
    out = a.mean(axis=axes, keepdims=keepdim)
    return record(out, lambda g: (xp.broadcast_to(g.reshape(kept) / count, shape),), x)


def _extreme(x: Tensor, axis: Any, keepdim: bool, reduce: str) -> Tensor:
    x = _tensor(x)
    a = x._array
    axes = _axes(axis, a.ndim)
    kept = _kept_shape(a.shape, axes)
    full = getattr(a, reduce)(axis=axes, keepdims=True)

    def backward(g: Any) -> tuple:
        mask = a == full  # ties share the gradient equally
        return (g.reshape(kept) * mask / mask.sum(axis=axes, keepdims=True, dtype=g.dtype),)
    return record(full if keepdim else full.reshape([n for i, n in enumerate(a.shape)
                                                     if axes is not None and i not in axes]),
                  backward, x)


def max(x: Tensor, axis: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    return _extreme(x, axis, keepdim, "max")


def min(x: Tensor, axis: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    return _extreme(x, axis, keepdim, "min")


def argmax(x: Tensor, axis: Optional[int] = None, keepdim: bool = False) -> Tensor:
    x = _tensor(x)
    a = x._array
    out = a.argmax(axis=axis)
    if keepdim and axis is not None:
        out = array_module(a).expand_dims(out, axis)
    return _new(out.astype(int64))


# ---- shape ops ---------------------------------------------------------------------------

def reshape(x: Tensor, shape: Sequence[int]) -> Tensor:
    x = _tensor(x)
    """Reshape; -1 infers one dimension and 0 copies the input's dimension (paddle rules)."""
    a = x._array
    if isinstance(shape, Tensor):
        shape = shape.tolist()
    shape = [int(a.shape[i]) if s == 0 and i < a.ndim else int(s) for i, s in enumerate(shape)]
    try:
        out = a.reshape(shape)
    except ValueError:
        raise ValueError(f"reshape: cannot reshape a tensor of shape {x.shape} into {shape}") from None
    src = a.shape
    return record(out, lambda g: (g.reshape(src),), x)


def transpose(x: Tensor, perm: Sequence[int]) -> Tensor:
    x = _tensor(x)
    ndim = x._array.ndim
    perm = [int(p) % _builtins.max(ndim, 1) for p in perm]
    if sorted(perm) != list(range(ndim)):
        raise ValueError(f"perm must be a permutation of range({ndim}), got {perm}")
    inverse = tuple(np.argsort(perm))
    return record(x._array.transpose(perm), lambda g: (g.transpose(inverse),), x)


def flatten(x: Tensor, start_axis: int = 0, stop_axis: int = -1) -> Tensor:
    shape = x.shape
    if not shape:
        return reshape(x, [1])
    start, stop = start_axis % len(shape), stop_axis % len(shape)
    return reshape(x, shape[:start] + [-1] + shape[stop + 1:])


def unsqueeze(x: Tensor, axis: Union[int, Sequence[int]]) -> Tensor:
    shape = x.shape
    axes = [axis] if isinstance(axis, int) else list(axis)
    for a in axes:
        shape.insert(a % (len(shape) + 1), 1)
    return reshape(x, shape)


def squeeze(x: Tensor, axis: Any = None) -> Tensor:
    axes = _axes(axis, x.ndim)
    shape = [n for i, n in enumerate(x.shape) if not (n == 1 and (axes is None or i in axes))]
    return reshape(x, shape)


def concat(x: Sequence[Tensor], axis: int = 0) -> Tensor:
    tensors = [_operand(t) for t in x]
    arrays = [t._array for t in tensors]
    xp = array_module(arrays[0])
    axis = axis % arrays[0].ndim
    bounds = np.cumsum([0] + [a.shape[axis] for a in arrays])
    lead = (slice(None),) * axis

    def backward(g: Any) -> list:
        return [g[lead + (slice(bounds[i], bounds[i + 1]),)] for i in range(len(arrays))]
    return record(xp.concatenate(arrays, axis=axis), backward, *tensors)


def stack(x: Sequence[Tensor], axis: int = 0) -> Tensor:
    tensors = [_operand(t) for t in x]
    arrays = [t._array for t in tensors]
    xp = array_module(arrays[0])
    axis = axis % (arrays[0].ndim + 1)
    lead = (slice(None),) * axis
    return record(xp.stack(arrays, axis=axis),
                  lambda g: [g[lead + (i,)] for i in range(len(arrays))], *tensors)


# ---- indexing ------------------------------------------------------------------------------

def _index_arrays(index: Any, xp: Any) -> Any:
    """`index` with Tensors and lists turned into arrays of module xp."""
    if isinstance(index, tuple):
        return tuple(_index_arrays(i, xp) for i in index)
    if isinstance(index, Tensor):
        return to_module(index._array, xp)
    if isinstance(index, list) or is_array(index):
        return to_module(np.asarray(index) if isinstance(index, list) else index, xp)
    return index


def _has_int_array(index: Any) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return any(is_array(i) and i.dtype.kind in "iu" for i in items)


def _getitem(x: Tensor, index: Any) -> Tensor:
    a = x._array
    xp = array_module(a)
    index = _index_arrays(index, xp)
    repeats = _has_int_array(index)  # integer arrays may pick an element twice: scatter-add

    def backward(g: Any) -> tuple:
        z = xp.zeros(a.shape, dtype=g.dtype)
        if repeats:
            scatter_add(z, index, g)
        else:
            z[index] = g
        return (z,)
    return record(a[index], backward, x)


def scatter_add(target: Any, index: Any, values: Any) -> None:
    """target[index] += values, in place, adding repeated indices up (np.add.at / cupyx)."""
    if isinstance(target, np.ndarray):
        np.add.at(target, index, values)
    else:
        import cupyx
        cupyx.scatter_add(target, index, values)


def _compare(x: Tensor, other: Any, op: str) -> Any:
    try:
        other = _operand(other)
    except TypeError:
        return NotImplemented
    return _new(getattr(x._array, op)(_data(other)))


def _to_place(x: Tensor, place: Any) -> Tensor:
    src = place_of(x._array)
    return record(move(x._array, place), lambda g: (move(g, src),), x)


def clone(x: Tensor) -> Tensor:
    """A copy of x that stays in the graph."""
    return record(x._array.copy(), lambda g: (g,), x)


# ---- creation ------------------------------------------------------------------------------

def _float_dtype(dtype: DTypeLike, name: str) -> np.dtype:
    dt = convert_dtype(dtype) or float32
    if dt.kind != "f":
        raise TypeError(f"{name} makes floating-point tensors; dtype must be float16/32/64, got {dt}")
    return dt


def _from_host(host: np.ndarray) -> Tensor:
    return _new(move(host))


def randn(shape: ShapeLike, dtype: DTypeLike = None) -> Tensor:
    """Standard-normal values from pycoll's generator (drawn on the host, then moved)."""
    dt = _float_dtype(dtype, "randn")
    draw = get_rng().standard_normal(_shape_arg(shape), dtype=float64 if dt == float64 else float32)
    return _from_host(draw.astype(dt, copy=False))


def rand(shape: ShapeLike, dtype: DTypeLike = None) -> Tensor:
    """Uniform [0, 1) values from pycoll's generator (drawn on the host, then moved)."""
    dt = _float_dtype(dtype, "rand")
    draw = get_rng().random(_shape_arg(shape), dtype=float64 if dt == float64 else float32)
    return _from_host(draw.astype(dt, copy=False))


def full(shape: ShapeLike, fill_value: Any, dtype: DTypeLike = None) -> Tensor:
    dt = convert_dtype(dtype) or float32
    return _new(module_for().full(_shape_arg(shape), fill_value, dtype=dt))


def zeros(shape: ShapeLike, dtype: DTypeLike = None) -> Tensor:
    return _new(module_for().zeros(_shape_arg(shape), dtype=convert_dtype(dtype) or float32))


def ones(shape: ShapeLike, dtype: DTypeLike = None) -> Tensor:
    return _new(module_for().ones(_shape_arg(shape), dtype=convert_dtype(dtype) or float32))


def zeros_like(x: Tensor, dtype: DTypeLike = None) -> Tensor:
    a = x._array
    return _new(array_module(a).zeros(a.shape, dtype=convert_dtype(dtype) or a.dtype))


def ones_like(x: Tensor, dtype: DTypeLike = None) -> Tensor:
    a = x._array
    return _new(array_module(a).ones(a.shape, dtype=convert_dtype(dtype) or a.dtype))


def full_like(x: Tensor, fill_value: Any, dtype: DTypeLike = None) -> Tensor:
    a = x._array
    return _new(array_module(a).full(a.shape, fill_value, dtype=convert_dtype(dtype) or a.dtype))


def arange(start: Any = 0, end: Any = None, step: Any = 1, dtype: DTypeLike = None) -> Tensor:
    """Values in [start, end) by step; int64 when all bounds are ints, else float32 (paddle)."""
    if end is None:
        start, end = 0, start
    ints = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
    dt = convert_dtype(dtype) or (int64 if ints else float32)
    return _new(module_for().arange(start, end, step, dtype=dt))


# ---- methods ---------------------------------------------------------------------------------

for _name, _fn in {
    "add": add, "subtract": subtract, "multiply": multiply, "divide": divide, "pow": pow,
    "matmul": matmul, "tanh": tanh, "exp": exp, "log": log, "sqrt": sqrt, "square": square,
    "abs": abs, "relu": relu, "sigmoid": sigmoid, "clip": clip, "cast": cast, "astype": cast,
    "sum": sum, "mean": mean, "max": max, "min": min, "argmax": argmax, "reshape": reshape,
    "transpose": transpose, "flatten": flatten, "unsqueeze": unsqueeze, "squeeze": squeeze,
    "clone": clone,
}.items():
    setattr(Tensor, _name, _fn)
del _name, _fn
