"""Tensor methods and properties of paddle 3.3.1 that are conveniences over pycoll's ops, attached
to Tensor when this module is imported: ``dim()`` / ``ndimension()``, ``mT``, the dtype
conversions (``float()``, ``long()``, ``bfloat16()``, ...), ``new_full`` / ``new_zeros`` /
``new_ones`` / ``new_empty``, ``gradient()``, ``requires_grad`` / ``requires_grad_()``,
``is_cuda``, ``itemsize``, ``element_size()``, ``type_as``, ``contiguous`` / ``is_contiguous``,
``is_same_shape``, ``repeat``, ``detach_``, ``to`` (a dtype, a device or another tensor's),
unary ``+``, ``operator.index`` and ``complex()``, and paddle's short names of ops (``mul``,
``sub``, ``div``, ``eq``, ``lt``, ...).
"""
from __future__ import annotations

import operator
from typing import Any, Callable, Optional

import numpy as np

from pycoll import math_ops, shape_ops
from pycoll._param_aliases import param_aliases
from pycoll.creation import shape_arg
from pycoll.device import module_for, parse_place, place_of
from pycoll.dtypes import DTypeLike, convert_dtype
from pycoll.tensor import Tensor, wrap
from pycoll.torch_forms import ints_as_list


def dim(x: Tensor) -> int:
    """The number of dimensions (paddle's ``dim()``, also ``ndimension()``; a sparse tensor's too)."""
    return x.ndim


def _matrix_transpose(x: Tensor) -> Tensor:
    if x._array.ndim < 2:
        raise ValueError(f"mT: the tensor must have at least 2 dimensions, got {x._array.ndim}")
    perm = list(range(x._array.ndim))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    return shape_ops.transpose(x, perm)


# method name -> dtype; the method gives x itself when x already has the dtype, as paddle does
_CONVERSIONS = {
    "bool": "bool", "float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16",
    "int": "int32", "long": "int64", "short": "int16", "char": "int8", "byte": "uint8",
    "cfloat": "complex64", "cdouble": "complex128",
    **{name: name for name in ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
                               "complex64", "complex128")},
}


def _conversion(method: str, dtype: str) -> Callable[[Tensor], Tensor]:
    def convert(x: Tensor) -> Tensor:
        dt = convert_dtype(dtype)
        return x if x._array.dtype == dt else math_ops.cast(x, dt)
    convert.__name__ = convert.__qualname__ = method
    convert.__doc__ = f"x as {dtype} (x itself when it is {dtype} already); the gradient flows through the cast."
    return convert


def _new_tensor(x: Tensor, size: Any, fill: Optional[Any], dtype: DTypeLike, device: Any,
                requires_grad: bool) -> Tensor:
    """A new tensor of shape `size` filled with `fill` (None: uninitialised), of x's dtype and
    place unless `dtype` / `device` say otherwise."""
    dt = convert_dtype(dtype) or x._array.dtype
    place = place_of(x._array) if device is None else parse_place(device)
    xp = module_for(place)
    shape = shape_arg(size)
    if place[0] == "gpu":
        with xp.cuda.Device(place[1]):
            arr = xp.empty(shape, dtype=dt) if fill is None else xp.full(shape, fill, dtype=dt)
    else:
        arr = xp.empty(shape, dtype=dt) if fill is None else xp.full(shape, fill, dtype=dt)
    out = wrap(arr)
    out.stop_gradient = not requires_grad
    return out


def _size_args(args: tuple, size: Any, method: str) -> Any:
    """The shape given to new_zeros & co: ``size=``, one list/tuple, or ints one by one."""
    if size is not None:
        if args:
            raise TypeError(f"{method}: got the size both positionally and as size=")
        return size
    if len(args) == 1:
        return args[0]
    if not args:
        raise TypeError(f"{method}: missing the size (a list of ints, or ints one by one)")
    return list(args)


def new_full(x: Tensor, size: Any, fill_value: Any, *, dtype: DTypeLike = None, device: Any = None,
             requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A tensor of shape `size` filled with `fill_value` (a number or one-element Tensor), of x's
    dtype and place unless `dtype` / `device` say otherwise."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _new_tensor(x, size, fill_value, dtype, device, requires_grad)


def _new_filled(method: str, fill: Optional[int]) -> Callable[..., Tensor]:
    def make(x: Tensor, *args: Any, size: Any = None, dtype: DTypeLike = None, device: Any = None,
             requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
        return _new_tensor(x, _size_args(args, size, method), fill, dtype, device, requires_grad)
    make.__name__ = make.__qualname__ = method
    what = "uninitialised" if fill is None else f"filled with {fill}"
    make.__doc__ = (f"A tensor of the given size ({what}), of x's dtype and place unless `dtype` / "
                    f"`device` say otherwise; the size is a list or ints one by one (``x.{method}(2, 3)``).")
    return make


def gradient(x: Tensor) -> Optional[np.ndarray]:
    """paddle's ``gradient()``: ``.grad`` as a NumPy array (a copy), or None without one."""
    return None if x._grad is None else np.array(x._grad.numpy())


def requires_grad_(x: Tensor, requires_grad: bool = True) -> Tensor:
    """Set whether x takes a gradient (``stop_gradient = not requires_grad``); returns x."""
    x.stop_gradient = not requires_grad
    return x


def _set_requires_grad(x: Tensor, value: bool) -> None:
    x.stop_gradient = not value


def element_size(x: Tensor) -> int:
    """Bytes per element."""
    return x._array.dtype.itemsize


def type_as(x: Tensor, other: Tensor) -> Tensor:
    """x cast to other's dtype."""
    return math_ops.cast(x, other._array.dtype)


def is_contiguous(x: Tensor) -> bool:
    """Whether x's elements lie in row-major order without gaps."""
    return bool(x._array.flags.c_contiguous)


def contiguous(x: Tensor) -> Tensor:
    """x itself when contiguous, else a row-major copy that stays in the graph."""
    return x if x._array.flags.c_contiguous else shape_ops.clone(x)


def is_same_shape(x: Tensor, y: Tensor) -> bool:
    """Whether x and y have the same (whole: a distributed tensor's, not its piece's) shape."""
    return list(x.shape) == list(y.shape)


@ints_as_list("repeats")
def repeat(x: Tensor, repeats: Any) -> Tensor:
    """x repeated along each dimension (paddle's ``Tensor.repeat`` is ``tile``); the counts are a
    list or ints one by one (``x.repeat(2, 2)``)."""
    return shape_ops.tile(x, repeats)


def detach_(x: Tensor) -> Tensor:
    """Take x out of the graph, in place (it becomes a leaf that takes no gradient); returns x."""
    x.grad_node, x.output_index, x.stop_gradient = None, 0, True
    return x


_TO_DTYPES = ("bfloat16", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
              "complex64", "complex128", "bool")


def to(x: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """paddle's ``Tensor.to``: ``to(dtype, blocking=None)``, ``to(device, dtype=None,
    blocking=None)`` or ``to(other, blocking=None)`` (other's dtype and place), also by keyword
    (``device=``, ``dtype=``, ``other=``). A new dtype is a cast (the gradient flows back through
    it); a new place a move; with neither, x itself. `blocking`, `non_blocking` and `copy` are
    accepted (copies here are synchronous)."""
    kwargs.pop("non_blocking", None)
    kwargs.pop("copy", None)
    unknown = set(kwargs) - {"device", "dtype", "blocking", "other"}
    if unknown:
        raise TypeError(f"to() got an unexpected keyword argument {sorted(unknown)[0]!r}")
    if not 0 < len(args) + len(kwargs) <= 3:
        raise TypeError(f"to() takes (dtype, blocking), (device, dtype, blocking) or (other, blocking); got "
                        f"{len(args)} positional and {len(kwargs)} keyword arguments")
    device, dtype = kwargs.get("device"), kwargs.get("dtype")
    first = args[0] if args else kwargs.get("other")
    if isinstance(first, Tensor):
        device, dtype = first.place, first._array.dtype
    elif args and (isinstance(first, (np.dtype, type)) or isinstance(first, str) and first.lower() in _TO_DTYPES):
        dtype = first
    elif args:
        device = first
        dtype = args[1] if len(args) > 1 else dtype
    out = x
    if device is not None:
        place = parse_place(device)
        if place != place_of(x._array):
            out = x.cpu() if place[0] == "cpu" else x.cuda(place[1])
    if dtype is not None:
        out = math_ops.cast(out, convert_dtype(dtype.lower() if isinstance(dtype, str) else dtype))
    return out


def _index(x: Tensor) -> int:
    """``operator.index(x)`` (a list index, ``range(x)``, a slice's bound ``x[t:]``): an integer
    tensor of one element, 0-d or of shape [1] as ``argmax(keepdim=True)`` gives (paddle's take both)."""
    if x._array.size != 1 or x._array.dtype.kind not in "biu":
        raise TypeError(f"only integer tensors of one element can be used as an index, got dtype {x.dtype} and "
                        f"shape {x.shape}")
    return operator.index(x._array.reshape(-1)[0].item())


def _alias(name: str, target: str) -> Callable[..., Any]:
    """paddle's other name of a Tensor method, looked up when called (its op module attaches it)."""
    def method(x: Tensor, *args: Any, **kwargs: Any) -> Any:
        return getattr(Tensor, target)(x, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"paddle's other name of ``{target}``."
    # paddle 3.3's short names of the binary ops take torch's input= / other= too
    return param_aliases({"input": "x", "other": "y"})(method)


# div, sub and true_divide, which take options of their own, are pycoll.torch_style_arith's
_ALIASES = {"mul": "multiply", "mul_": "multiply_", "sub_": "subtract_", "div_": "divide_",
            "eq": "equal", "ne": "not_equal", "lt": "less_than", "le": "less_equal", "gt": "greater_than",
            "ge": "greater_equal", "less": "less_than", "greater": "greater_than"}

for _name, _method in {
        "dim": dim, "ndimension": dim, "new_full": new_full, "gradient": gradient,
        "requires_grad_": requires_grad_, "element_size": element_size, "type_as": type_as,
        "is_contiguous": is_contiguous, "contiguous": contiguous, "is_same_shape": is_same_shape,
        "repeat": repeat, "detach_": detach_, "__index__": _index, "to": to,
        "__pos__": lambda x: x, "__complex__": lambda x: complex(x._array.item()),
        **{m: _new_filled(m, fill) for m, fill in (("new_zeros", 0), ("new_ones", 1), ("new_empty", None))},
        **{m: _conversion(m, dt) for m, dt in _CONVERSIONS.items()},
        **{a: _alias(a, t) for a, t in _ALIASES.items()}}.items():
    setattr(Tensor, _name, _method)
del _name, _method
Tensor.mT = property(_matrix_transpose, doc="x with its last two dimensions swapped.")
Tensor.requires_grad = property(lambda x: not x.stop_gradient, _set_requires_grad,
                                doc="Whether x takes a gradient: ``not stop_gradient``.")
Tensor.is_cuda = property(lambda x: place_of(x._array)[0] == "gpu", doc="Whether x lives on a GPU.")
Tensor.itemsize = property(element_size, doc="Bytes per element.")
