"""paddle's smaller maths functions pycoll lacked: multiplex, baddbmm, broadcast_shapes, polar,
ldexp, frexp, nextafter, msort, reduce_as and shard_index (also Tensor methods, with paddle's
in-place ``baddbmm_`` and ``ldexp_``).

The differentiable ones are compositions of pycoll's ops (stack and indexing, bmm, cos/sin and
complex, pow, sort, sum), which give them their gradients, to higher orders where those ops have
them; nextafter, frexp's exponent and shard_index take none, as in paddle.
"""
from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from pycoll._fp_quiet import quietly
from pycoll._promotion import INT_TO_FLOAT
from pycoll._tensor_ops import as_tensor, delivered, op_output, paired, value_output
from pycoll.complex_ops import complex as complex_
from pycoll.device import array_module, to_module
from pycoll.inplace_ops import in_place_form
from pycoll.math_ops import add, bmm, cast, multiply, pow as pow_, sum as sum_
from pycoll.reshape_ops import broadcast_shape
from pycoll.search_ops import sort
from pycoll.shape_ops import clone, reshape, stack
from pycoll.tensor import Tensor
from pycoll.unary_ops import cos, sin


def _tensor(v: Any, fn: str, name: str) -> Tensor:
    if not isinstance(v, Tensor):
        raise TypeError(f"{fn}: {name} must be a Tensor, got {type(v).__name__}")
    return v


def multiplex(inputs: Sequence[Tensor], index: Tensor, name: Optional[str] = None) -> Tensor:
    """Row i of the result is row i of ``inputs[index[i]]``: `inputs` are two or more tensors of
    one shape [N, ...], `index` an int32/int64 tensor of shape [N, 1]."""
    if isinstance(inputs, Tensor) or not isinstance(inputs, (list, tuple)) or len(inputs) < 2:
        raise ValueError("multiplex: inputs must be a list of two or more tensors")
    tensors = [as_tensor(t) for t in inputs]
    if len({tuple(t.shape) for t in tensors}) > 1:
        raise ValueError(f"multiplex: all the inputs must have the same shape, got {[t.shape for t in tensors]}")
    index = _tensor(index, "multiplex", "index")
    rows = tensors[0].shape[0] if tensors[0].ndim else 0
    if index.dtype not in (np.int32, np.int64) or index.shape != [rows, 1]:
        raise ValueError(f"multiplex: index must be an int32/int64 tensor of shape [{rows}, 1], got "
                         f"{index.dtype} {index.shape}")
    xp = array_module(tensors[0]._array)
    pick = to_module(index._array, xp).reshape(-1)
    if pick.size and (int(pick.min()) < 0 or int(pick.max()) >= len(tensors)):
        raise ValueError(f"multiplex: index must lie in [0, {len(tensors)}), got values from {int(pick.min())} "
                         f"to {int(pick.max())}")
    return stack(tensors)[pick, xp.arange(rows)]


def baddbmm(input: Tensor, x: Tensor, y: Tensor, beta: float = 1.0, alpha: float = 1.0,  # noqa: A002
            name: Optional[str] = None) -> Tensor:
    """beta * input + alpha * (x @ y) for batches of matrices x [B, M, K] and y [B, K, N];
    `input` (2-D or 3-D) broadcasts to [B, M, N]."""
    input, x, y = as_tensor(input), as_tensor(x), as_tensor(y)
    if x.ndim != 3 or y.ndim != 3:
        raise ValueError(f"baddbmm: x and y must be 3-D, got shapes {x.shape} and {y.shape}")
    if x.shape[2] != y.shape[1] or x.shape[0] != y.shape[0]:
        raise ValueError(f"baddbmm: x [B, M, K] and y [B, K, N] do not match: {x.shape} and {y.shape}")
    target = [x.shape[0], x.shape[1], y.shape[2]]
    if input.ndim not in (2, 3) or any(n not in (1, t) for n, t in zip(input.shape[::-1], target[::-1])):
        raise ValueError(f"baddbmm: input must be 2-D or 3-D and broadcast to {target}, got shape {input.shape}")
    return add(multiply(input, beta), multiply(bmm(x, y), alpha))


def broadcast_shapes(*shapes: Sequence[int]) -> List[int]:
    """The shape tensors of all these shapes broadcast to (ValueError if they do not)."""
    out: List[int] = []
    for shape in shapes:
        out = broadcast_shape(out, list(shape))
    return out


def _float_pair(a: Tensor, b: Tensor, fn: str, names: Tuple[str, str]) -> Tuple[Tensor, Tensor]:
    """a and b, float32/float64 tensors, cast to the wider of their dtypes."""
    for v, n in zip((a, b), names):
        if _tensor(v, fn, n).dtype not in (np.float32, np.float64):
            raise TypeError(f"{fn}: {n} must be a float32 or float64 Tensor, got {v.dtype}")
    if a.dtype != b.dtype:
        a, b = cast(a, np.float64), cast(b, np.float64)
    return a, b


def polar(abs: Tensor, angle: Tensor, name: Optional[str] = None, *,  # noqa: A002 - paddle's names
          out: Optional[Tensor] = None) -> Tensor:
    """The complex numbers abs * (cos(angle) + i sin(angle)) (float32 gives complex64)."""
    r, theta = _float_pair(abs, angle, "polar", ("abs", "angle"))
    return delivered(complex_(multiply(r, cos(theta)), multiply(r, sin(theta))), out, "polar")


def ldexp(x: Tensor, y: Tensor, name: Optional[str] = None) -> Tensor:
    """x * 2 ** y, in float64 if either is float64, else in the default float dtype."""
    x, y = _tensor(x, "ldexp", "x"), _tensor(y, "ldexp", "y")
    dtype = np.dtype(np.float64) if np.float64 in (x.dtype, y.dtype) else np.dtype(INT_TO_FLOAT)
    x, y = (v if v.dtype == dtype else cast(v, dtype) for v in (x, y))
    return multiply(x, pow_(2.0, y))


def frexp(x: Tensor, name: Optional[str] = None) -> Tuple[Tensor, Tensor]:
    """x as mantissa * 2 ** exponent with 0.5 <= |mantissa| < 1 (0 for 0), both in x's dtype
    (float32 or float64). The mantissa's gradient is 2 ** -exponent; the exponent takes none."""
    x = as_tensor(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"frexp: x must be a float32 or float64 Tensor, got {x.dtype}")
    xp = array_module(x._array)
    _, exponent = xp.frexp(x._array)
    # keeps a split; the gradient 2 ** 148 of a float32 subnormal is inf, unwarned
    mantissa = op_output(xp.ldexp(x._array, -exponent), lambda g: (quietly(xp.ldexp, g, -exponent),), x)
    return mantissa, value_output(exponent.astype(x.dtype), "frexp", x)


def nextafter(x: Tensor, y: Tensor, name: Optional[str] = None) -> Tensor:
    """The next floating-point value after x towards y (broadcast); no gradient."""
    x, y = paired(*_float_pair(x, y, "nextafter", ("x", "y")))  # auto-parallel: a whole y cut as a split x
    xp = array_module(x._array)
    return value_output(xp.nextafter(x._array, to_module(y._array, xp)), "nextafter", x, y)


def msort(input: Tensor, *, out: Optional[Tensor] = None) -> Tensor:  # noqa: A002 - paddle's name
    """input sorted along its first axis (``sort(input, axis=0)``)."""
    return delivered(sort(input, axis=0), out, "msort")


def reduce_as(x: Tensor, target: Tensor, name: Optional[str] = None) -> Tensor:
    """x summed down to target's shape (the leading dimensions target lacks, and those where
    target has 1): the reverse of broadcasting x's values to it. Integer and bool sums are
    int64, as paddle's sum; with nothing to sum, x's dtype is kept."""
    x, target = as_tensor(x), as_tensor(target)
    extra = x.ndim - target.ndim
    if extra < 0 or any(t not in (1, n) for t, n in zip(target.shape, x.shape[extra:])):
        raise ValueError(f"reduce_as: x of shape {x.shape} cannot be summed to target's shape {target.shape}")
    kept = [extra + i for i, (t, n) in enumerate(zip(target.shape, x.shape[extra:])) if t == 1 and n != 1]
    axes = list(range(extra)) + kept
    if not axes:  # nothing to sum: a copy in x's dtype (paddle's)
        return clone(x)
    return reshape(sum_(x, axis=axes), target.shape)


def shard_index(input: Tensor, index_num: int, nshards: int, shard_id: int,  # noqa: A002 - paddle's name
                ignore_value: int = -1) -> Tensor:
    """Each label of `input` (int32/int64, at least 2-D, values in [0, index_num)) as its index
    within shard `shard_id` of `nshards` equal shards of [0, index_num) (shard size
    ceil(index_num / nshards)), or `ignore_value` where it belongs to another shard."""
    input = _tensor(input, "shard_index", "input")
    if input.dtype not in (np.int32, np.int64) or input.ndim < 2:
        raise ValueError(f"shard_index: input must be an int32/int64 tensor of at least 2 dimensions, got "
                         f"{input.dtype} of shape {input.shape}")
    if nshards <= 0 or not 0 <= shard_id < nshards:
        raise ValueError(f"shard_index: nshards must be > 0 and shard_id in [0, nshards), got nshards={nshards} "
                         f"and shard_id={shard_id}")
    a = input._array
    if a.size and (int(a.min()) < 0 or int(a.max()) >= index_num):
        raise ValueError(f"shard_index: input's values must lie in [0, index_num={index_num}), got values from "
                         f"{int(a.min())} to {int(a.max())}")
    size = math.ceil(index_num / nshards)
    xp = array_module(a)
    out = xp.where(a // size == shard_id, a % size, ignore_value).astype(a.dtype)
    return value_output(out, "shard_index", input)


baddbmm_ = in_place_form("baddbmm", baddbmm)
ldexp_ = in_place_form("ldexp", ldexp)
for _fn in (multiplex, baddbmm, baddbmm_, broadcast_shapes, polar, ldexp, ldexp_, frexp, nextafter, msort,
            reduce_as, shard_index):
    setattr(Tensor, _fn.__name__, _fn)
del _fn
