"""In-place ops (Tensor methods, paddle's names), each returning the tensor it changed:
``zero_``, ``fill_``, ``scale_``, ``add_``, ``subtract_``, ``multiply_``, ``divide_``, ``clip_``,
``exp_``, ``sqrt_``, ``uniform_``, ``normal_``, ``copy_``, ``increment``, ``masked_fill_``, the
shape changers ``unsqueeze_``, ``squeeze_``, ``reshape_``, ``flatten_``, the in-place forms of some
other ops (``tanh_``, ``pow_``, ``bitwise_and_``, ... see `_SIMPLE`) and assignment, ``x[i] = v``.

Each but copy_ (paddle's storage copy, see there) runs its op as usual, the result then taking
x's place. paddle's rules for
autograd: a leaf that takes a gradient (a parameter) cannot be changed in place while the graph is
recorded (ValueError, as paddle's); an op's output can, and its gradient then flows through the
op (zero for zero_, fill_, uniform_ and normal_), to y too where y takes one. Such a tensor gets
the op's new array rather than being overwritten, so the backward functions that kept its old
values stay right; where it views another tensor (``y[0]``, ``y.reshape(...)``, ``y.T``), that
tensor takes the new values too (`write_through`), and the views taken of it are taken again of its
new values (`refresh_views`), as the shared memory gives them outside the graph. Everywhere else
(no gradient, or under ``no_grad``) the values are written into
the tensor's memory, as ``x[...] = v`` writes them, and counted (``inplace_version``): a backward
that holds x's old values refuses to run then, as paddle's does (see `pycoll._graph`). As in
paddle, a result of another dtype makes x that dtype (float32 x plus float64 y is float64; an
integer x divided is float32), and y may broadcast to x's shape but not beyond it.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from pycoll import _graph, math_ops, search_ops, shape_ops
from pycoll._fp_quiet import quiet
from pycoll._param_aliases import param_aliases
from pycoll._tensor_ops import check_device_index, index_arrays, needs_grad, op_output, paired, placed
from pycoll.device import array_module, is_array, move, place_of, to_module
from pycoll.elementwise_ops import rounded_divide
from pycoll.random import get_rng, normal_draw
from pycoll.tensor import Tensor, wrap


class LeafInplaceError(ValueError, RuntimeError):
    """A leaf that takes a gradient (a parameter) changed in place while the graph is recorded:
    a ValueError, as paddle raises it, and a RuntimeError, as pycoll's ``x[i] = v`` raised it."""


def _named(t: Tensor) -> str:
    """The tensor's name and a space, or nothing for an unnamed one (in the errors' sentences)."""
    return f"{t.name} " if t.name else ""


def in_place(x: Tensor, op: str, compute: Callable[[], Tensor], keep_shape: bool = True) -> Tensor:
    """Make `x` hold ``compute()``, an op on x (and maybe others) recorded as usual (the rules are
    the module docstring's); returns x. ``keep_shape=False``: the op may reshape x (squeeze_)."""
    if _graph.is_grad_enabled() and not x.stop_gradient and x.grad_node is None:
        raise LeafInplaceError(f"{op}: leaf tensor {_named(x)}takes a gradient (stop_gradient=False) "
                               f"and cannot be changed in place; do it under pycoll.no_grad()")
    out = compute()
    if keep_shape and out._array.shape != x._array.shape and out.shape != x.shape:  # (the arrays' first: cheap)
        raise ValueError(f"{op}: the result has shape {out.shape} and x has shape {x.shape}; an in-place op "
                         f"cannot change x's shape (y may broadcast to x's, not beyond it)")
    if out.grad_node is not None:
        if not write_through(x, out, op):
            take(x, out)
        x._bump_inplace_version(memory_written=False)  # counted (paddle's inplace_version), in new memory
    elif out.dtype == x.dtype and out._array.shape == x._array.shape:
        if not getattr(x._array.flags, "writeable", True):
            raise ValueError(f"{op}: tensor {_named(x)}is read-only (a gradient handed to a hook, or a view of "
                             f"read-only memory) and cannot be changed in place; use the op's out-of-place form "
                             f"(a hook returns the new gradient)")
        array_module(x._array).copyto(x._array, out._array)
        x._bump_inplace_version()
    else:
        x._array = out._array
        x._bump_inplace_version(memory_written=False)
    if getattr(out, "placements", None) is not None:  # auto-parallel: where its new value lies
        if getattr(x, "placements", None) is None and type(x) is Tensor:
            x.__class__ = type(out)  # a plain tensor given a distributed value becomes one
        if hasattr(x, "_set_dist"):
            x._set_dist(out.process_mesh, out.placements, out.shape)
    return x


def writes_directly(x: Tensor, *others: Any, any_dtype: bool = False) -> bool:
    """Whether an in-place op of x (with ``others``, its other operands) may compute straight into
    x's memory, one pass instead of a new array copied in (paddle's kernels write in place:
    scale_ of 1e6 floats took 5x paddle's time): nothing to record (no gradient wanted of x nor
    the others, no record hooks, not distributed) and a writeable float32/float64 array (any
    dtype with ``any_dtype``), so that the values are the general path's to the bit."""
    if getattr(x, "placements", None) is not None or _graph.has_record_hooks():  # (distributed: placed ops)
        return False
    if _graph.is_grad_enabled() and any(isinstance(v, Tensor) and not v.stop_gradient for v in (x, *others)):
        return False
    a = x._array
    return getattr(a.flags, "writeable", True) and (any_dtype or a.dtype in _DIRECT_DTYPES)


_DIRECT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def written_directly(x: Tensor, write: Callable[[Any, Any], Any]) -> Tensor:
    """x after ``write(xp, x's array)`` wrote its new values in place (`writes_directly` said so),
    counted as any in-place write."""
    with quiet():  # overflows and NaN, unwarned as the general path's
        write(array_module(x._array), x._array)
    x._bump_inplace_version()
    return x


def _operand_array(x: Tensor, y: Any) -> Any:
    """y as what a direct add_/subtract_/multiply_ of x takes: a Python number, or y's array where
    y is a Tensor of x's dtype on x's device whose shape broadcasts into x's; else None (the
    general path promotes, refuses or moves)."""
    if isinstance(y, (int, float)) and not isinstance(y, bool):
        return y
    if isinstance(y, Tensor) and getattr(y, "placements", None) is None and y._array.dtype == x._array.dtype:
        b = y._array
        if array_module(b) is array_module(x._array) and np.broadcast_shapes(b.shape, x._array.shape) == x._array.shape:
            return b
    return None


def take(x: Tensor, out: Tensor) -> None:
    """x becomes `out`, an op's output in the graph: new memory, so what a backward holds of x's
    old values stays as it was. The views taken of x in the graph (``x[:2]``, ``x.reshape(...)``)
    are taken again of its new values, as the shared memory gives them outside the graph (their
    gradients flow to x's new value)."""
    x._array = out._array
    x.stop_gradient, x.grad_node, x.output_index = False, out.grad_node, out.output_index
    refresh_views(x)


def refresh_views(x: Tensor) -> None:
    """Take each view recorded of x in the graph (`shape_ops.viewed`) again of x's new memory:
    recorded where the graph is (its gradient then flows to x's new value), else its array alone."""
    for view in shape_ops.views_of(x):
        _, how, arg = view.__dict__["_view"]
        again = shape_ops.view_of(x, how, arg)
        if again.grad_node is not None:
            take(view, again)
        else:
            view._array = again._array
            refresh_views(view)
        shape_ops.viewed(view, x, how, arg)  # recorded again: the object the user holds


def write_through(view: Tensor, out: Tensor, op: str) -> bool:
    """If `view` views another tensor's memory (``x[0]``, ``x.reshape(...)``, ``x.T``; see
    `shape_ops.viewed`), give that base `out` (the view's new values) where the view covers it, as
    a recorded op (the base's old values there get no gradient, `out` gets theirs), through the
    base's own base too; the view then views the base's new values. False where `view` is no
    (longer a) view, or `out` changed its dtype or shape: the view alone takes `out` then."""
    spec = view.__dict__.get("_view")
    if spec is None or out.dtype != view.dtype or out._array.shape != view._array.shape:
        return False
    base, how, arg = spec
    if not shape_ops.views_memory_of(view, base):  # the base has new memory since: a stale view
        return False
    if not base.stop_gradient and base.grad_node is None:
        raise LeafInplaceError(f"{op}: it changes a view of leaf tensor {_named(base)}which takes a "
                               f"gradient (stop_gradient=False) and cannot be changed in place; do it under "
                               f"pycoll.no_grad()")
    if how == "index":
        new_base = written(base, arg, out._array, out)
    elif how == "reshape":
        new_base = shape_ops.reshape(out, base.shape)
    else:
        new_base = shape_ops.transpose(out, [int(i) for i in np.argsort(arg)])
    if not write_through(base, new_base, op):
        take(base, new_base)
    again = shape_ops.view_of(base, how, arg)
    take(view, again)
    view.__dict__["_view"] = again.__dict__.get("_view", spec)
    return True


def setitem(x: Tensor, index: Any, value: Any) -> None:
    """``x[index] = value`` (paddle's ``__setitem__``): `value` (a number, list, array or Tensor)
    broadcast to ``x[index]`` and cast to x's dtype. Recorded when x or a Tensor value takes a
    gradient: the gradient reaching x's old values is zero where they were overwritten, and the
    value gets the gradient of the places written (summed over its broadcasting). Where an index
    repeats, the last value written to a place is the one kept (on the GPU too) and the only one
    that gets its gradient (paddle 3.3.1 keeps the last value but sends the gradient to the first).
    A leaf that takes a gradient is refused outside no_grad, as in paddle; otherwise x's memory is
    written. A value of one element and some dimensions (shape [1], [1, 1]) is taken as 0-d first,
    as paddle takes it, so it also fits a single element (``y[1] = t``); a Tensor is reshaped in
    the graph, so its gradient still reaches it."""
    if value is None:  # NumPy would write NaN (float) or refuse late (int); paddle refuses it
        raise ValueError("__setitem__: the value assigned is None; assign a number, a list, an array or a Tensor")
    xp = array_module(x._array)
    idx = index_arrays(index, xp)
    check_device_index("__setitem__", idx, x._array.shape)
    if isinstance(value, Tensor):
        if value._array.ndim and value._array.size == 1:
            value = shape_ops.reshape(value, [])
        values = to_module(value._array, xp)
    elif isinstance(value, (list, tuple)) or is_array(value):  # paddle refuses both sequences; NumPy takes them
        values = to_module(np.asarray(value) if isinstance(value, (list, tuple)) else value, xp)
        if values.ndim and values.size == 1:
            values = values.reshape(())
    else:
        values = value
    try:
        if not (_graph.is_grad_enabled() and (not x.stop_gradient or needs_grad(value))):
            if xp is np or not _may_repeat(idx):  # NumPy itself lets the last write win
                x._array[idx] = values
            else:
                _write_last(x._array, idx, values)
            x._bump_inplace_version()
            return
        in_place(x, "__setitem__", lambda: written(x, idx, values, value if needs_grad(value) else None))
    except IndexError as exc:  # NumPy's words, with the tensor's shape and the index given (as reading says)
        given = f"an index of shape {list(index.shape)}" if isinstance(index, Tensor) and index.size > 8 else (
            repr(index.numpy()) if isinstance(index, Tensor) else repr(index))
        raise IndexError(f"__setitem__: indexing a Tensor of shape {list(x.shape)} with {given}: {exc}") from None


def written(x: Tensor, idx: Any, values: Any, source: Optional[Tensor]) -> Tensor:
    """x with ``values`` written at ``idx``, an op of x and of `source` (the value Tensor, or None
    when it takes no gradient)."""
    new = x._array.copy()
    won = None
    if _may_repeat(idx):
        won = _write_last(new, idx, values)
    else:
        new[idx] = values
    vshape, vdtype = (None, None) if source is None else (source._array.shape, source._array.dtype)

    def backward(g: Any) -> tuple:
        gx = g.copy()
        gx[idx] = 0
        if source is None:
            return gx, None
        gv = g[idx]
        if won is not None:  # a value overwritten by a later one at the same place gets nothing
            gv = gv * won
        if len(vshape) > gv.ndim:  # numpy lets the value have extra leading 1s
            gv = gv.reshape((1,) * (len(vshape) - gv.ndim) + gv.shape)
        gv = shape_ops.unbroadcast(gv, vshape)
        return gx, gv.astype(vdtype, copy=False)
    return op_output(new, backward, x, source)


def _may_repeat(idx: Any) -> bool:
    """Whether the index `idx` (of `index_arrays`) may address a place more than once: it holds an
    integer array."""
    return any(is_array(i) and i.dtype.kind in "iu" and i.ndim > 0
               for i in (idx if isinstance(idx, tuple) else (idx,)))


def last_writes(flat: Any) -> Any:
    """A mask over the flat target positions `flat`: True where that position is written last."""
    xp = array_module(flat)
    n = flat.size
    _, first = xp.unique(flat[::-1], return_index=True)
    win = xp.zeros(n, dtype=bool)
    win[n - 1 - first] = True
    return win


def assign_last(target: Any, places: Any, values: Any) -> None:
    """``target[places] = values`` (``places``: a 1-D index into target's first axis), a place
    given twice keeping the last of its values: NumPy's assignment does so; CuPy, which does not
    promise it, writes the last ones found first (`last_writes`, a sort)."""
    if array_module(target) is np:
        target[places] = values
    else:
        kept = last_writes(places)
        target[places[kept]] = values[kept]


def _write_last(target: Any, idx: Any, values: Any) -> Any:
    """``target[idx] = values`` where a place addressed more than once takes the last value
    written to it (NumPy's rule, which CuPy does not promise); returns the mask, of
    ``target[idx]``'s shape, of the values that were kept."""
    xp = array_module(target)
    places = xp.arange(target.size).reshape(target.shape)[idx]
    vals = xp.asarray(values, dtype=target.dtype)
    if vals.ndim > places.ndim:  # NumPy lets the value have extra leading 1s
        vals = vals.reshape(vals.shape[vals.ndim - places.ndim:])
    flat = places.reshape(-1)
    won = last_writes(flat)
    target[xp.unravel_index(flat[won], target.shape)] = xp.broadcast_to(vals, places.shape).reshape(-1)[won]
    return won.reshape(places.shape)


def _replaced(x: Tensor, values: Any) -> Tensor:
    """`values` (an array of x's shape) as an op on x whose gradient is zero."""
    xp = array_module(x._array)
    return op_output(values, lambda g: (xp.zeros_like(g),), x)


def zero_(x: Tensor) -> Tensor:
    """Set every element to 0."""
    if writes_directly(x, any_dtype=True):
        return written_directly(x, lambda xp, a: a.fill(0))
    return in_place(x, "zero_", lambda: _replaced(x, array_module(x._array).zeros_like(x._array)))


def fill_(x: Tensor, value: float) -> Tensor:
    """Set every element to `value` (a number; an integer tensor truncates it)."""
    if not isinstance(value, (int, float)):
        raise TypeError(f"fill_: value must be an int or a float, got {type(value).__name__}")
    if writes_directly(x, any_dtype=True) and x._array.dtype.kind in "fc":  # (full_like's cast of value to ints)
        return written_directly(x, lambda xp, a: a.fill(value))
    return in_place(x, "fill_", lambda: _replaced(x, array_module(x._array).full_like(x._array, value)))


def scale_(x: Tensor, scale: float = 1.0, bias: float = 0.0, bias_after_scale: bool = True,
           act: Any = None, name: Any = None) -> Tensor:
    """x = scale * x + bias (``bias_after_scale=False``: scale * (x + bias)), as ``pycoll.scale``
    computes it; `act` must be None (paddle's in-place form applies no activation either)."""
    if act is not None:
        raise ValueError(f"scale_: act must be None, got {act!r}")
    if writes_directly(x) and isinstance(scale, (int, float)) and isinstance(bias, (int, float)):
        def write(xp: Any, a: Any) -> None:  # math_ops.scaled_array's arithmetic, in place
            if bias_after_scale:
                xp.multiply(a, scale, out=a)
                xp.add(a, bias, out=a)
            else:
                xp.add(a, bias, out=a)
                xp.multiply(a, scale, out=a)
        return written_directly(x, write)
    return in_place(x, "scale_", lambda: math_ops.scale(x, scale, bias, bias_after_scale))


def _times(y: Any, alpha: float) -> Any:
    """add_'s and subtract_'s y * alpha (y itself for alpha 1)."""
    if alpha == 1:
        return y
    return math_ops.multiply(y, alpha) if isinstance(y, Tensor) else y * alpha


def _arithmetic(x: Tensor, op: str, compute: Callable[[], Tensor]) -> Tensor:
    """``in_place`` for add_, subtract_ and multiply_, which do not turn an integer (or bool) x
    floating: paddle refuses that promotion in place (a TypeError), as torch does."""
    def checked() -> Tensor:
        out = compute()
        if x.dtype.kind in "iub" and out.dtype.kind not in "iub":
            raise TypeError(f"{op}: x has dtype {x.dtype} and x {op[:-1]} y would be {out.dtype}; an in-place op "
                            f"cannot make an integer tensor floating (use the out-of-place {op[:-1]}, or cast x)")
        return out
    return in_place(x, op, checked)


def _direct_arithmetic(x: Tensor, y: Any, ufunc: str) -> Optional[Tensor]:
    """x after ``xp.<ufunc>(x, y, out=x)`` where `writes_directly` and `_operand_array` allow it,
    else None."""
    if not writes_directly(x, y):
        return None
    b = _operand_array(x, y)
    return None if b is None else written_directly(x, lambda xp, a: getattr(xp, ufunc)(a, b, out=a))


@param_aliases({"input": "x", "other": "y"})
def add_(x: Tensor, y: Any, name: Optional[str] = None, *, alpha: float = 1) -> Tensor:
    """x = x + alpha * y."""
    y = _times(y, alpha)
    done = _direct_arithmetic(x, y, "add")
    return done if done is not None else _arithmetic(x, "add_", lambda: math_ops.add(x, y))


@param_aliases({"input": "x", "other": "y"})
def subtract_(x: Tensor, y: Any, name: Optional[str] = None, *, alpha: float = 1) -> Tensor:
    """x = x - alpha * y."""
    y = _times(y, alpha)
    done = _direct_arithmetic(x, y, "subtract")
    return done if done is not None else _arithmetic(x, "subtract_", lambda: math_ops.subtract(x, y))


@param_aliases({"input": "x", "other": "y"})
def multiply_(x: Tensor, y: Any, name: Optional[str] = None) -> Tensor:
    """x = x * y."""
    done = _direct_arithmetic(x, y, "multiply")
    return done if done is not None else _arithmetic(x, "multiply_", lambda: math_ops.multiply(x, y))


@param_aliases({"input": "x", "other": "y"})
def divide_(x: Tensor, y: Any, name: Optional[str] = None, *, rounding_mode: Optional[str] = None) -> Tensor:
    """x = x / y (an integer x becomes float32), or with rounding_mode 'floor' / 'trunc' the
    quotient rounded down / towards zero in x's dtype. The rounded quotients take no gradient
    (paddle passes x's gradient through them unchanged, as if x had not been divided)."""
    if rounding_mode not in (None, "floor", "trunc"):
        raise ValueError(f"divide_: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")
    if rounding_mode is None:
        return in_place(x, "divide_", lambda: math_ops.divide(x, y))
    return in_place(x, "divide_", lambda: rounded_divide(x, y, rounding_mode))


def clip_(x: Tensor, min: Optional[float] = None, max: Optional[float] = None,  # noqa: A002 - paddle's names
          name: Optional[str] = None) -> Tensor:
    """Clamp x to [min, max] in its own dtype (neither given: x stays as it is, as in paddle)."""
    if min is None and max is None:
        return x
    if min is not None and max is not None and min > max:
        raise ValueError(f"clip_: min must be <= max, got min={min} and max={max}")

    def clipped() -> Tensor:
        out = math_ops.clip(x, min, max)
        return out if out.dtype == x.dtype else math_ops.cast(out, x.dtype)
    return in_place(x, "clip_", clipped)


def increment(x: Tensor, value: float = 1.0, name: Optional[str] = None) -> Tensor:
    """x = x + value, in place, for an x of one element (paddle's loop counter); returns x."""
    if not isinstance(x, Tensor) or x.size != 1:
        raise ValueError(f"increment: x must be a Tensor of one element, got "
                         f"{'shape ' + str(x.shape) if isinstance(x, Tensor) else type(x).__name__}")
    return in_place(x, "increment", lambda: math_ops.add(x, value))


def exp_(x: Tensor, name: Optional[str] = None) -> Tensor:
    """x = e ** x (an integer x becomes float32)."""
    if writes_directly(x):
        return written_directly(x, lambda xp, a: xp.exp(a, out=a))
    return in_place(x, "exp_", lambda: math_ops.exp(x))


def sqrt_(x: Tensor, name: Optional[str] = None) -> Tensor:
    """x = sqrt(x) (an integer x becomes float32)."""
    if writes_directly(x):
        return written_directly(x, lambda xp, a: xp.sqrt(a, out=a))
    return in_place(x, "sqrt_", lambda: math_ops.sqrt(x))


def random_fill(x: Tensor, op: str, draw: Callable[[np.random.Generator], Any], seed: int = 0,
                integers: bool = False) -> Tensor:
    """x filled with ``draw(generator)`` (host values of x's shape), drawn from pycoll's generator,
    or, for a non-zero `seed`, from a generator of its own (paddle's seed argument). x must hold
    floating-point numbers unless `integers` (random_) allows integer ones."""
    if x.dtype.kind in ("b" if integers else "biu"):
        raise TypeError(f"{op}: x must hold {'integer or ' if integers else ''}floating-point numbers, "
                        f"got dtype {x.dtype}")
    a = x._array
    generator = get_rng() if seed == 0 else np.random.default_rng(seed)
    drawn = wrap(move(draw(generator).astype(a.dtype), place_of(a)))  # x's whole shape
    _, drawn = paired(x, drawn)  # auto-parallel: this rank's piece of it (the plain call's values, seeded alike)
    return in_place(x, op, lambda: _replaced(x, drawn._array))


@param_aliases({"from": "min", "to": "max"})
def uniform_(x: Tensor, min: float = 0, max: float = 1.0, seed: int = 0,  # noqa: A002 - paddle's names
             name: Optional[str] = None) -> Tensor:
    """Fill x with values drawn uniformly from [min, max)."""
    if not min < max:
        raise ValueError(f"uniform_: min must be < max, got min={min} and max={max}")
    return random_fill(x, "uniform_", lambda rng: rng.uniform(min, max, size=tuple(x.shape)), seed)


def normal_(x: Tensor, mean: float = 0.0, std: float = 1.0, name: Optional[str] = None) -> Tensor:
    """Fill x with values drawn from N(mean, std ** 2) (a complex x: see ``normal_draw``)."""
    return random_fill(x, "normal_", normal_draw(tuple(x.shape), mean, std, x.dtype.kind == "c"))


def copy_(x: Tensor, src: Tensor, blocking: bool = True) -> Tensor:
    """paddle's storage copy: x takes src's values and shape (the dtypes must match). It records no
    op, so x keeps its place in the graph and a gradient flows on as if x held its old values
    (paddle's as well); a leaf that takes a gradient may be copied into (it is how weights are
    loaded). `blocking` is accepted for paddle compatibility (copies here are synchronous)."""
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_: src must be a Tensor, got {type(src).__name__}")
    if src.dtype != x.dtype:
        raise TypeError(f"copy_: src has dtype {src.dtype} and x {x.dtype}; they must match (cast src first)")
    _, src = placed("copy_", x, src)  # auto-parallel: src's piece where x's lies
    xp = array_module(x._array)
    values = to_module(src._array, xp)
    if values.shape == x._array.shape and x.grad_node is None:
        xp.copyto(x._array, values)
        x._bump_inplace_version()
    else:  # another shape, or an op's output whose old values a backward may hold
        same_shape = values.shape == x._array.shape
        x._array = xp.array(values, copy=True)
        x._bump_inplace_version(memory_written=False)
        if same_shape:
            refresh_views(x)  # x[:2] taken before sees the copy, as it would in x's memory
    return x


def masked_fill_(x: Tensor, mask: Any, value: Any, name: Optional[str] = None) -> Tensor:
    """x = masked_fill(x, mask, value): `value` where `mask` (broadcast to x's shape) holds."""
    return in_place(x, "masked_fill_", lambda: search_ops.masked_fill(x, mask, value))


def unsqueeze_(x: Tensor, axis: Any, name: Optional[str] = None) -> Tensor:
    """x gets a dimension of size 1 at each of `axis`."""
    return in_place(x, "unsqueeze_", lambda: shape_ops.unsqueeze(x, axis), keep_shape=False)


def squeeze_(x: Tensor, axis: Any = None, name: Optional[str] = None) -> Tensor:
    """x loses its dimensions of size 1 (those of `axis` only, when given)."""
    return in_place(x, "squeeze_", lambda: shape_ops.squeeze(x, axis), keep_shape=False)


def reshape_(x: Tensor, shape: Any, name: Optional[str] = None) -> Tensor:
    """x takes `shape` (paddle's rules: -1 inferred, 0 copies x's dimension)."""
    return in_place(x, "reshape_", lambda: shape_ops.reshape(x, shape), keep_shape=False)


def flatten_(x: Tensor, start_axis: int = 0, stop_axis: int = -1, name: Optional[str] = None) -> Tensor:
    """x with dimensions start_axis..stop_axis merged into one."""
    return in_place(x, "flatten_", lambda: shape_ops.flatten(x, start_axis, stop_axis), keep_shape=False)


def in_place_form(name: str, op: Optional[Callable[..., Tensor]] = None) -> Callable[..., Tensor]:
    """paddle's in-place form ``name_`` of op ``name``: ``x.name_(...)`` is ``in_place(x,
    op(x, ...))``. Without ``op``, the Tensor method ``name``, looked up when called, so that its
    module (which may import this one) need not be imported here."""
    @param_aliases({"input": "x"})  # paddle.trunc_(input=x), as its out-of-place forms take it
    def method(x: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        fn = op if op is not None else getattr(Tensor, name)
        return in_place(x, name + "_", lambda: fn(x, *args, **kwargs))
    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"In place: x = {name}(x, ...) (see ``pycoll.{name}`` for the arguments)."
    return method


# in-place forms of ops that pycoll has as Tensor methods: ``x.tanh_()`` is ``in_place(x, x.tanh())``
_SIMPLE = ("abs", "tanh", "sigmoid", "square", "log", "pow", "floor_divide", "remainder", "mod", "floor_mod",
           "tril", "triu", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "cumsum")


_SIMPLE_FORMS = {base + "_": in_place_form(base) for base in _SIMPLE}
abs_, tanh_, square_ = _SIMPLE_FORMS["abs_"], _SIMPLE_FORMS["tanh_"], _SIMPLE_FORMS["square_"]  # paddle.abs_ ...

for _fn in (zero_, fill_, scale_, add_, subtract_, multiply_, divide_, clip_, exp_, sqrt_, uniform_, normal_,
            copy_, increment, masked_fill_, unsqueeze_, squeeze_, reshape_, flatten_, *_SIMPLE_FORMS.values()):
    setattr(Tensor, _fn.__name__, _fn)
del _fn
Tensor.__setitem__ = setitem
