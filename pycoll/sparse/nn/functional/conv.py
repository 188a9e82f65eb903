"""Sparse (point-cloud) convolution and max pooling, channels last: x is a COO tensor
[N, *spatial, C] whose sparse dims are N and the spatial ones and whose values are [nnz, C].

A "rulebook" pairs input entries with output positions, one list of pairs per kernel offset:
input position p reaches output position o through offset k when ``o * stride - padding +
k * dilation == p``. A regular convolution stores every output position some input reaches
(sorted); a submanifold one (``subm``) stores the input's positions only, in the input's order,
as paddle's. The values are sums over offsets of ``values[pairs] @ weight[k]`` (pycoll's
differentiable gather, matmul and index_add), so the gradients reach x's values, the weight
and the bias. Work is nnz * kernel volume * C * O, no dense volume.
"""
from __future__ import annotations

import itertools
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from pycoll import math_ops
from pycoll.device import array_module
from pycoll.geometric.segment import segment_reduce
from pycoll.index_ops import index_add
from pycoll.search_ops import gather
from pycoll.shape_ops import reshape
from pycoll.sparse.convert import linear_index, unravel
from pycoll.sparse.tensor import COO, SparseTensor, new_coo, sparse_arg
from pycoll.tensor import Tensor, wrap


def _ints(v: Any, dims: int, fn: str, arg: str) -> List[int]:
    vals = [v] * dims if isinstance(v, int) and not isinstance(v, bool) else list(v)
    if len(vals) != dims or any(isinstance(i, bool) or not isinstance(i, int) for i in vals):
        raise ValueError(f"{fn}: {arg} must be an int or {dims} ints, got {v!r}")
    return vals


def _padding(padding: Any, dims: int, fn: str) -> List[int]:
    """Symmetric padding per spatial dim ('VALID' is 0; pairs must be equal)."""
    if isinstance(padding, str):
        if padding.upper() != "VALID":
            raise ValueError(f"{fn}: padding as a string must be 'VALID' (sparse convolutions have no 'SAME'), "
                             f"got {padding!r}")
        return [0] * dims
    if isinstance(padding, (list, tuple)) and len(padding) == 2 * dims:
        pairs = [padding[2 * i:2 * i + 2] for i in range(dims)]
    elif isinstance(padding, (list, tuple)) and padding and all(isinstance(p, (list, tuple)) for p in padding):
        pairs = padding[1:1 + dims] if len(padding) == dims + 2 else padding  # [[0, 0], *spatial, [0, 0]]
    else:
        return _ints(padding, dims, fn, "padding")
    if any(len(p) != 2 or p[0] != p[1] for p in pairs) or len(pairs) != dims:
        raise ValueError(f"{fn}: padding must be the same before and after each dim, got {padding!r}")
    return [int(p[0]) for p in pairs]


_CHUNK = 1 << 15  # kernel offsets times entries per block (a block of int64 positions stays in a core's cache)


class Rulebook:
    """Which input entry meets which output row through which kernel offset (see the module
    docstring): ``pairs[k] = (input entries, output rows)``, the output's indices and shape."""

    def __init__(self, x: SparseTensor, kernel: Sequence[int], stride: List[int], padding: List[int],
                 dilation: List[int], subm: bool, fn: str, ceil_mode: bool = False):
        dims = len(kernel)
        shape = x._dense_shape
        spatial = shape[1:1 + dims]
        if subm:
            out_spatial = list(spatial)
        else:
            out_spatial = []
            for n, k, s, p, d in zip(spatial, kernel, stride, padding, dilation):
                span = n + 2 * p - d * (k - 1) - 1
                out_spatial.append((span + (s - 1 if ceil_mode else 0)) // s + 1)
        if any(o < 1 for o in out_spatial):
            raise ValueError(f"{fn}: the kernel does not fit in x of shape {list(shape)} (output spatial shape "
                             f"{out_spatial})")
        idx = x._indices
        xp = array_module(idx)
        grid = [shape[0]] + out_spatial
        offsets = xp.asarray(list(itertools.product(*[range(n) for n in kernel])), dtype=np.int64)
        per = max(1, _CHUNK // max(idx.shape[1], 1))  # offsets at once
        found = [self._landings(idx, offsets[first:first + per], first, padding, stride, dilation, out_spatial)
                 for first in range(0, len(offsets), per)]
        k_of, inputs, lin = (xp.concatenate(part) for part in zip(*found))  # offset-major
        in_lin = linear_index(idx[:1 + dims], [shape[0]] + list(spatial))
        if subm:  # the output rows are the input's entries: keep the pairs landing on one
            order = xp.argsort(in_lin)
            ranked = in_lin[order]
            at = xp.minimum(xp.searchsorted(ranked, lin), max(ranked.shape[0] - 1, 0))
            hit = ranked[at] == lin if ranked.shape[0] else lin < 0
            k_of, inputs, rows = k_of[hit], inputs[hit], order[at[hit]]
            self.indices = idx[:1 + dims]
        else:
            uniq, rows = xp.unique(lin, return_inverse=True)
            rows = rows.reshape(-1)
            self.indices = unravel(uniq, grid)
        ends = np.cumsum(np.bincount(wrap(k_of).numpy(), minlength=len(offsets)))
        self.pairs = [(k, inputs[end - count:end], rows[end - count:end])
                      for k, (end, count) in enumerate(zip(ends, np.diff(ends, prepend=0)))]
        self.rows = int(self.indices.shape[1])
        self.out_spatial = out_spatial

    @staticmethod
    def _landings(idx: Any, offsets: Any, first: int, padding: List[int], stride: List[int],
                  dilation: List[int], out_spatial: List[int]) -> Tuple[Any, Any, Any]:
        """For kernel offsets ``first``, ``first + 1``...: each (offset, input entry) pair that
        lands on an output position, and that position's row-major index in the output grid."""
        xp = array_module(idx)
        ok, cells = True, []
        for d, size in enumerate(out_spatial):  # [K, nnz] per spatial dim
            q = idx[1 + d].astype(np.int64)[None] + (padding[d] - offsets[:, d:d + 1] * dilation[d])
            if stride[d] != 1:  # (integer division is slow: only where a stride asks for it)
                ok = ok & (q % stride[d] == 0)
                q = q // stride[d]
            ok = ok & (q >= 0) & (q < size)
            cells.append(q)
        k_of, inputs = xp.nonzero(ok)  # inputs ascending within an offset
        lin = idx[0][inputs].astype(np.int64)
        for q, size in zip(cells, out_spatial):
            lin = lin * size + q[k_of, inputs]
        return k_of + first, inputs, lin


def _check_x(x: Any, dims: int, fn: str) -> SparseTensor:
    x = sparse_arg(x, fn, fmt=COO)
    if x.ndim != dims + 2 or x.sparse_dim() != dims + 1:
        raise ValueError(f"{fn}: x must be a COO tensor [N, {'D, ' if dims == 3 else ''}H, W, C] with the last "
                         f"dim dense, got shape {list(x.shape)} with sparse_dim {x.sparse_dim()}")
    return x


def _conv(x: Any, weight: Tensor, bias: Optional[Tensor], stride: Any, padding: Any, dilation: Any, groups: int,
          subm: bool, data_format: str, dims: int, fn: str) -> SparseTensor:
    fmt = "NDHWC" if dims == 3 else "NHWC"
    if data_format != fmt:
        raise ValueError(f"{fn}: data_format must be '{fmt}', got {data_format!r}")
    if groups != 1:
        raise ValueError(f"{fn}: groups must be 1 (as paddle's), got {groups!r}")
    x = _check_x(x, dims, fn)
    if not isinstance(weight, Tensor) or isinstance(weight, SparseTensor) or weight.ndim != dims + 2:
        raise ValueError(f"{fn}: weight must be a dense Tensor [{'kD, ' if dims == 3 else ''}kH, kW, C, O]")
    kernel = list(weight.shape[:dims])
    c, o = weight.shape[dims], weight.shape[dims + 1]
    if c != x.shape[-1]:
        raise ValueError(f"{fn}: weight's in-channels {c} differ from x's channels {x.shape[-1]}")
    pad, strides, dilations = _padding(padding, dims, fn), _ints(stride, dims, fn, "stride"), _ints(dilation, dims, fn,
                                                                                                 "dilation")
    if subm:  # paddle centres a submanifold kernel on each entry, whatever padding and stride say
        pad, strides = [d * (k // 2) for k, d in zip(kernel, dilations)], [1] * dims
    book = Rulebook(x, kernel, strides, pad, dilations, subm, fn)
    w = reshape(weight, [-1, c, o])
    values = x.values()
    xp = array_module(book.indices)
    out = wrap(xp.zeros((book.rows, o), dtype=values.dtype))
    for k, inputs, rows in book.pairs:
        if inputs.shape[0]:
            out = index_add(out, wrap(rows), 0, math_ops.matmul(gather(values, wrap(inputs), 0), w[k]))
    if bias is not None:
        out = math_ops.add(out, bias)
    return new_coo(book.indices, out, (x.shape[0], *book.out_spatial, o), coalesced=not subm)


def conv3d(x: SparseTensor, weight: Tensor, bias: Optional[Tensor] = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1, data_format: str = "NDHWC", name: Optional[str] = None) -> SparseTensor:
    """Sparse 3-D convolution of a COO x [N, D, H, W, C] by weight [kD, kH, kW, C, O]: every
    output position some input entry reaches is stored."""
    return _conv(x, weight, bias, stride, padding, dilation, groups, False, data_format, 3, "conv3d")


def subm_conv3d(x: SparseTensor, weight: Tensor, bias: Optional[Tensor] = None, stride: Any = 1,
                padding: Any = 0, dilation: Any = 1, groups: int = 1, data_format: str = "NDHWC",
                key: Optional[str] = None, name: Optional[str] = None) -> SparseTensor:
    """Submanifold 3-D convolution: the output stores x's positions only, the kernel centred on
    each (stride and padding are not used, as paddle's; ``key``, paddle's rulebook cache name,
    changes nothing)."""
    return _conv(x, weight, bias, stride, padding, dilation, groups, True, data_format, 3, "subm_conv3d")


def conv2d(x: SparseTensor, weight: Tensor, bias: Optional[Tensor] = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1, data_format: str = "NHWC", name: Optional[str] = None) -> SparseTensor:
    """Sparse 2-D convolution of a COO x [N, H, W, C] by weight [kH, kW, C, O]."""
    return _conv(x, weight, bias, stride, padding, dilation, groups, False, data_format, 2, "conv2d")


def subm_conv2d(x: SparseTensor, weight: Tensor, bias: Optional[Tensor] = None, stride: Any = 1,
                padding: Any = 0, dilation: Any = 1, groups: int = 1, data_format: str = "NHWC",
                key: Optional[str] = None, name: Optional[str] = None) -> SparseTensor:
    """Submanifold 2-D convolution: the output stores x's positions only."""
    return _conv(x, weight, bias, stride, padding, dilation, groups, True, data_format, 2, "subm_conv2d")


# paddle's implicit-GEMM kernels compute the same convolutions (on GPUs only in paddle)
subm_conv3d_igemm = subm_conv3d
subm_conv2d_igemm = subm_conv2d


def max_pool3d(x: SparseTensor, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               data_format: str = "NDHWC", name: Optional[str] = None) -> SparseTensor:
    """Sparse 3-D max pooling: each output position some entry reaches holds, per channel, the
    largest of the stored values it covers (absent entries take no part)."""
    if data_format != "NDHWC":
        raise ValueError(f"max_pool3d: data_format must be 'NDHWC', got {data_format!r}")
    x = _check_x(x, 3, "max_pool3d")
    kernel = _ints(kernel_size, 3, "max_pool3d", "kernel_size")
    strides = kernel if stride is None else _ints(stride, 3, "max_pool3d", "stride")
    book = Rulebook(x, kernel, strides, _padding(padding, 3, "max_pool3d"), [1, 1, 1], False, "max_pool3d",
                    ceil_mode=bool(ceil_mode))
    xp = array_module(book.indices)
    inputs = xp.concatenate([i for _, i, _ in book.pairs])
    rows = xp.concatenate([r for _, _, r in book.pairs])
    out = segment_reduce(gather(x.values(), wrap(inputs), 0), rows, book.rows, "max", "max_pool3d")
    return new_coo(book.indices, out, (x.shape[0], *book.out_spatial, x.shape[-1]), coalesced=True)

