"""Sparse activations: relu, relu6 and leaky_relu on the stored values (the pattern kept, as
f(0) = 0 for each), and `softmax` over the stored values of each line along an axis (the missing entries are not
zeros but absent, as paddle's sparse softmax takes them)."""
from __future__ import annotations

import functools
from typing import Optional

from pycoll import _graph, math_ops
from pycoll.device import array_module
from pycoll.geometric.segment import segment_reduce
from pycoll.nn import functional as F
from pycoll.search_ops import gather
from pycoll.sparse.convert import coalesced_any, csr_rows, linear_index, prod
from pycoll.sparse.tensor import CSR, SparseTensor, sparse_arg, with_values
from pycoll.sparse.unary import on_each_value
from pycoll.tensor import wrap


def relu(x: SparseTensor, name: Optional[str] = None) -> SparseTensor:
    """max(x, 0) on each stored value."""
    return on_each_value(x, "relu", F.relu)


def relu6(x: SparseTensor, name: Optional[str] = None) -> SparseTensor:
    """min(max(x, 0), 6) on each stored value."""
    return on_each_value(x, "relu6", F.relu6)


def leaky_relu(x: SparseTensor, negative_slope: float = 0.01, name: Optional[str] = None) -> SparseTensor:
    """x where x >= 0, negative_slope * x elsewhere, on each stored value."""
    return on_each_value(x, "leaky_relu", functools.partial(F.leaky_relu, negative_slope=negative_slope))


def softmax(x: SparseTensor, axis: int = -1, name: Optional[str] = None) -> SparseTensor:
    """The softmax of the stored values along ``axis``: each line along it, the other indices
    fixed, is one group (any axis of a COO x, the last of a CSR one, as paddle's). Along a dense
    axis of a COO x with dense dims every element is stored: the values' own softmax."""
    x = coalesced_any(sparse_arg(x, "softmax"))
    if isinstance(axis, bool) or not isinstance(axis, int) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"softmax: axis must be an int in [{-x.ndim}, {x.ndim}), got {axis!r}")
    axis %= x.ndim
    shape = x._dense_shape
    if x._format == CSR:
        if axis != x.ndim - 1:
            raise ValueError(f"softmax: a CSR x takes the last axis only (-1, as paddle's), got {axis}")
        rows, n = csr_rows(x), prod(shape[:-1])
    elif axis >= x.sparse_dim():  # a dense axis: values [nnz, *dense] along 1 + (axis - sparse_dim)
        return with_values(x, F.softmax(x.values(), axis=1 + axis - x.sparse_dim()))
    else:
        others = [d for d in range(x.sparse_dim()) if d != axis]
        rows = linear_index(x._indices[others], [shape[d] for d in others])
        n = prod([shape[d] for d in others])
    values = x.values()
    with _graph.no_grad():  # a per-row shift, for range only: the softmax does not change with it
        top = segment_reduce(values, rows, n, "max", "softmax")._array
    xp = array_module(rows)
    e = math_ops.exp(math_ops.subtract(values, wrap(xp.take(top, rows, axis=0))))
    total = segment_reduce(e, rows, n, "sum", "softmax")
    return with_values(x, math_ops.divide(e, gather(total, wrap(rows), 0)))
