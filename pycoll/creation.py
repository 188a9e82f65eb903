"""The creation functions: random, constant-filled and range tensors on the current device, and
assign, tolist and the DLPack exchange (to_dlpack / from_dlpack)."""
from __future__ import annotations

import ctypes

from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from pycoll._graph import is_grad_enabled
from pycoll._param_aliases import param_aliases
from pycoll._tensor_ops import fit_to, needs_grad, value_output
from pycoll.device import array_module, is_array, module_for, move
from pycoll.inplace_ops import setitem
from pycoll.random import get_rng
from pycoll.shape_ops import clone, plain_ints
from pycoll.dtypes import DTypeLike, convert_dtype, default_float, float32, float64, int64, is_floating
from pycoll.tensor import Tensor, wrap
from pycoll.torch_forms import ints_as_list
from pycoll.creation_options import creation_options

ShapeLike = Union[int, Sequence[int]]


def shape_arg(shape: Any) -> Tuple[int, ...]:
    """A shape: an int, a list or tuple of ints or one-element integer Tensors, or a 0-d or 1-d
    Tensor or NumPy array of its sizes (whole-valued floats too, as paddle's rand takes them)."""
    if isinstance(shape, (Tensor, np.ndarray)):
        if shape.ndim > 1:
            raise ValueError(f"shape must be a list or tuple of non-negative ints, or a 1-D Tensor of them, got a "
                             f"{shape.ndim}-D {type(shape).__name__} of shape {list(shape.shape)}")
        sizes = (shape.numpy() if isinstance(shape, Tensor) else shape).reshape(-1)
        whole = sizes.dtype.kind == "f" and bool(np.all(sizes == np.floor(sizes)))
        shape = (sizes.astype(np.int64) if whole else sizes).tolist()
    shape = plain_ints(shape)
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, (list, tuple)) or not all(
            isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s >= 0 for s in shape):
        raise ValueError(f"shape must be a list or tuple of non-negative ints, got {shape!r}")
    return tuple(int(s) for s in shape)


def float_dtype(dtype: DTypeLike, name: str) -> np.dtype:
    dt = convert_dtype(dtype) or default_float()
    if not is_floating(dt):
        raise TypeError(f"{name} makes floating-point tensors; dtype must be float16/32/64, got {dt}")
    return dt


def _from_host(host: np.ndarray) -> Tensor:
    return wrap(move(host))


@creation_options()
@ints_as_list("shape", after=0)  # randn(2, 3), paddle 3.3's torch-style form
@param_aliases({"size": "shape"})
def randn(shape: ShapeLike, dtype: DTypeLike = None, name: Optional[str] = None) -> Tensor:
    """Standard-normal values from pycoll's generator (drawn on the host, then moved). A complex
    dtype draws the real and imaginary parts each from N(0, 1/2), so that E|z|^2 = 1 (paddle's)."""
    dt = convert_dtype(dtype) or default_float()
    if dt.kind == "c":
        part = float64 if dt == np.complex128 else float32
        pairs = get_rng().standard_normal(shape_arg(shape) + (2,), dtype=part) * part.type(np.sqrt(0.5))
        return _from_host(pairs.view(dt)[..., 0])
    if not is_floating(dt):
        raise TypeError(f"randn makes floating-point or complex tensors; dtype must be float16/32/64, bfloat16 or "
                        f"complex64/128, got {dt}")
    draw = get_rng().standard_normal(shape_arg(shape), dtype=float64 if dt == float64 else float32)
    return _from_host(draw.astype(dt, copy=False))


@creation_options()
@ints_as_list("shape", after=0)  # rand(2, 3), paddle 3.3's torch-style form
@param_aliases({"size": "shape"})
def rand(shape: ShapeLike, dtype: DTypeLike = None, name: Optional[str] = None) -> Tensor:
    """Uniform [0, 1) values from pycoll's generator (drawn on the host, then moved)."""
    dt = float_dtype(dtype, "rand")
    draw = get_rng().random(shape_arg(shape), dtype=float64 if dt == float64 else float32)
    return _from_host(draw.astype(dt, copy=False))


def randint(low: int = 0, high: Any = None, shape: ShapeLike = (1,), dtype: DTypeLike = None,
            name: Optional[str] = None) -> Tensor:
    """Integers drawn uniformly from [low, high) (from [0, low) without ``high``), int64 unless
    ``dtype`` says otherwise (paddle's ``randint``)."""
    if high is None:
        low, high = 0, low
    if high <= low:
        raise ValueError(f"randint: high ({high}) must be greater than low ({low})")
    dt = convert_dtype(dtype) or int64
    if dt.kind not in "iu":
        raise TypeError(f"randint makes integer tensors; dtype must be int32 or int64, got {dt}")
    check_int_range("randint", low, high, dt)
    return _from_host(get_rng().integers(low, high, shape_arg(shape)).astype(dt, copy=False))


def check_int_range(fn: str, low: int, high: int, dtype: np.dtype) -> None:
    """ValueError naming op ``fn`` unless integer ``dtype`` holds every value of [low, high) (a
    draw outside would wrap around silently when cast); a float dtype holds them all."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if low < info.min or high - 1 > info.max:
            raise ValueError(f"{fn}: [low, high) = [{low}, {high}) holds values outside {dtype}'s range "
                             f"[{info.min}, {info.max}]")


@creation_options()
@ints_as_list("shape", after=0)  # empty(2, 3), paddle 3.3's torch-style form
@param_aliases({"size": "shape"})
def empty(shape: ShapeLike, dtype: DTypeLike = None, name: Optional[str] = None) -> Tensor:
    """A tensor whose values are whatever its memory held (the default dtype unless ``dtype`` says)."""
    return wrap(module_for().empty(shape_arg(shape), dtype=convert_dtype(dtype) or default_float()))


@creation_options(with_out=False)
@param_aliases({"input": "x"})
def empty_like(x: Tensor, dtype: DTypeLike = None, name: Optional[str] = None) -> Tensor:
    """A plain tensor of x's (whole) shape, as paddle's is for a distributed x too."""
    a = x._array
    return wrap(array_module(a).empty(tuple(x.shape), dtype=convert_dtype(dtype) or a.dtype))


@creation_options()
@param_aliases({"size": "shape"})
def full(shape: ShapeLike, fill_value: Any, dtype: DTypeLike = None, name: Optional[str] = None) -> Tensor:
    """``shape`` filled with ``fill_value``; without ``dtype``, bool for a bool value, complex128
    for a complex one (paddle's), else the default floating dtype."""
    dt = convert_dtype(dtype) or (np.dtype(bool) if isinstance(fill_value, (bool, np.bool_)) else
                                  np.dtype(np.complex128) if isinstance(fill_value, (complex, np.complexfloating))
                                  else default_float())
    if isinstance(fill_value, Tensor) and fill_value.dtype.kind == "c" and np.dtype(dt).kind != "c":
        fill_value = fill_value.real()  # a real fill keeps the real part (paddle's, without NumPy's warning)
    return wrap(module_for().full(shape_arg(shape), fill_value, dtype=dt))


@creation_options()
@ints_as_list("shape", after=0)  # zeros(2, 3), paddle 3.3's torch-style form
@param_aliases({"size": "shape"})
def zeros(shape: ShapeLike, dtype: DTypeLike = None, name: Optional[str] = None) -> Tensor:
    return wrap(module_for().zeros(shape_arg(shape), dtype=convert_dtype(dtype) or default_float()))


@creation_options()
@ints_as_list("shape", after=0)  # ones(2, 3), paddle 3.3's torch-style form
@param_aliases({"size": "shape"})
def ones(shape: ShapeLike, dtype: DTypeLike = None, name: Optional[str] = None) -> Tensor:
    return wrap(module_for().ones(shape_arg(shape), dtype=convert_dtype(dtype) or default_float()))


@creation_options(with_out=False)
@param_aliases({"input": "x"})
def zeros_like(x: Tensor, dtype: DTypeLike = None, name: Optional[str] = None) -> Tensor:
    a = x._array
    filled = array_module(a).zeros(a.shape, dtype=convert_dtype(dtype) or a.dtype)
    return value_output(filled, "_filled", x)  # auto-parallel: laid as x is


@creation_options(with_out=False)
@param_aliases({"input": "x"})
def ones_like(x: Tensor, dtype: DTypeLike = None, name: Optional[str] = None) -> Tensor:
    a = x._array
    filled = array_module(a).ones(a.shape, dtype=convert_dtype(dtype) or a.dtype)
    return value_output(filled, "_filled", x)  # auto-parallel: laid as x is


@creation_options(with_out=False)
@param_aliases({"input": "x"})
def full_like(x: Tensor, fill_value: Any, dtype: DTypeLike = None, name: Optional[str] = None) -> Tensor:
    a = x._array
    filled = array_module(a).full(a.shape, fill_value, dtype=convert_dtype(dtype) or a.dtype)
    return value_output(filled, "_filled", x)  # auto-parallel: laid as x is


@creation_options()
def arange(start: Any = 0, end: Any = None, step: Any = 1, dtype: DTypeLike = None,
           name: Optional[str] = None) -> Tensor:
    """Values in [start, end) by step; int64 when all bounds are ints (or integer Tensors), else
    the default float dtype (paddle). A bound may be a Tensor of one element."""
    start, end, step = (_bound(v, n) for v, n in ((start, "start"), (end, "end"), (step, "step")))
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueError(f"arange: step must not be 0, got {step!r}")
    ints = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
    dt = convert_dtype(dtype) or (int64 if ints else default_float())
    return wrap(module_for().arange(start, end, step, dtype=dt))


def _bound(v: Any, name: str) -> Any:
    """An arange bound: a Tensor of one element becomes its Python number (an int for an integer
    Tensor)."""
    if not isinstance(v, Tensor):
        return v
    if v._array.size != 1:
        raise ValueError(f"arange: {name} must be a number or a Tensor of one element, got shape {v.shape}")
    return v._array.item()


def _count_arg(v: Any, name: str) -> int:
    if isinstance(v, Tensor):
        v = v.item()
    if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 0:
        raise ValueError(f"{name} must be an int >= 0, got {v!r}")
    return int(v)


@creation_options()
@param_aliases({"n": "num_rows", "m": "num_columns"})
def eye(num_rows: Any, num_columns: Any = None, dtype: DTypeLike = None, name: Optional[str] = None) -> Tensor:
    """A [num_rows, num_columns] matrix with ones on its diagonal (square without num_columns);
    the default dtype unless ``dtype`` says otherwise."""
    rows = _count_arg(num_rows, "num_rows")
    cols = rows if num_columns is None else _count_arg(num_columns, "num_columns")
    return wrap(module_for().eye(rows, cols, dtype=convert_dtype(dtype) or default_float()))


@creation_options()
@param_aliases({"end": "stop", "steps": "num"})
def linspace(start: Any, stop: Any, num: Any, dtype: DTypeLike = None, name: Optional[str] = None) -> Tensor:
    """`num` evenly spaced values from start to stop, both included; the default dtype unless
    ``dtype`` says otherwise."""
    n = _count_arg(num, "num")
    start, stop = (v.item() if isinstance(v, Tensor) else v for v in (start, stop))
    dt = convert_dtype(dtype) or default_float()
    return wrap(module_for().linspace(start, stop, n).astype(dt))


def logspace(start: Any, stop: Any, num: Any, base: Any = 10.0, dtype: DTypeLike = None,
             name: Any = None) -> Tensor:
    """`num` values base ** e for e evenly spaced from start to stop, both included; the default
    dtype unless ``dtype`` says otherwise (an integer dtype truncates)."""
    n = _count_arg(num, "num")
    start, stop, base = (v.item() if isinstance(v, Tensor) else v for v in (start, stop, base))
    dt = convert_dtype(dtype) or default_float()
    return wrap(module_for().logspace(start, stop, n, base=base).astype(dt))


def assign(x: Any, output: Any = None) -> Tensor:
    """A copy of x (a Tensor, an array, a number or a nested list; NumPy arrays and lists keep
    NumPy's dtype, as paddle's do; a lone number, Python's or NumPy's, gives shape [1], as
    paddle's), written into `output` when given (and returned; an output of
    another shape or dtype takes x's, in new memory, as paddle's does). The copy of
    a Tensor stays in the graph; so does `output` when x takes a gradient (paddle's: its
    gradient reaches x)."""
    if isinstance(x, Tensor):
        out = clone(x)
    else:
        arr = x if is_array(x) else np.asarray(x)  # a CuPy array stays on its device
        if isinstance(x, (bool, int, float, np.generic)):
            arr = arr.reshape(1)
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"assign: x must be a Tensor, an array, a number or a list, got {type(x).__name__}")
        out = wrap(move(arr.copy()))
    if output is None:
        return out
    if not isinstance(output, Tensor):
        raise TypeError(f"assign: output must be a Tensor or None, got {type(output).__name__}")
    fit_to(output, out)  # x's shape and dtype, as paddle
    if isinstance(x, Tensor) and needs_grad(x) and is_grad_enabled():
        setitem(output, Ellipsis, x)  # recorded: output takes x's place in the graph, as in paddle
    else:
        output.set_value(out.detach())
    return output


def tolist(x: Tensor) -> Any:
    """x's values as (nested) Python lists."""
    return x.tolist()


def to_dlpack(x: Tensor) -> Any:
    """A DLPack capsule sharing x's memory."""
    return x.__dlpack__()


def from_dlpack(dlpack: Any, *, device: Any = None, copy: Any = None) -> Tensor:
    """A Tensor sharing the memory of a DLPack object (anything with ``__dlpack__``) or capsule."""
    if hasattr(dlpack, "__dlpack__"):
        return Tensor(dlpack, place=device) if device is not None else wrap(_from_dlpack_object(dlpack))
    if type(dlpack).__name__ == "PyCapsule":
        return wrap(_capsule_array(dlpack))
    raise TypeError(f"from_dlpack: dlpack must have __dlpack__ or be a DLPack capsule, got {type(dlpack).__name__}")


def _from_dlpack_object(obj: Any) -> Any:
    if obj.__dlpack_device__()[0] == 1:  # kDLCPU
        return np.from_dlpack(obj)
    from pycoll.device import import_cupy
    return import_cupy().from_dlpack(obj)


def _writeable_view(a: np.ndarray) -> np.ndarray:
    """``a`` writeable, over the same memory. NumPy marks an array it reads from a bare DLPack
    capsule read-only (the old capsule says nothing of it), and paddle's ``from_dlpack`` shares
    memory both ways; the new array keeps ``a`` (and so the capsule's owner) alive."""
    if a.flags.writeable or a.size == 0 or any(step < 0 for step in a.strides):
        return a
    span = sum((n - 1) * step for n, step in zip(a.shape, a.strides)) + a.itemsize
    memory = (ctypes.c_char * span).from_address(a.__array_interface__["data"][0])
    memory.owner = a
    return np.ndarray(a.shape, a.dtype, buffer=memory, strides=a.strides)


class _Capsule:
    """A bare capsule (from ``to_dlpack``) dressed as a DLPack object for ``from_dlpack``."""

    def __init__(self, capsule: Any):
        self.capsule = capsule

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> Any:
        return (1, 0)


def _capsule_array(capsule: Any) -> Any:
    """A capsule's array: CuPy reads device capsules directly; a host one goes through NumPy."""
    try:
        return _writeable_view(np.from_dlpack(_Capsule(capsule)))
    except (RuntimeError, BufferError):  # a device capsule
        from pycoll.device import import_cupy
        return import_cupy().from_dlpack(capsule)
