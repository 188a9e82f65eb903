"""paddle.geometric's message passing: ``send_u_recv`` (node features sent along edges, reduced
at their destinations), ``send_ue_recv`` (combined with edge features first) and ``send_uv``
(source and destination features combined per edge). Compositions of pycoll's ops (index_select
and the arithmetic, whose gradients they take) with `segment_reduce`.

Features broadcast as paddle's: x's rows (after the node or edge dimension) against y's,
aligned at the right, so edge weights of shape [E] scale every feature of their edge. 'div' is
paddle's x * (1 / (y + 1e-12)): a zero y gives x * 1e12 (0 for x = 0), not inf or NaN, and
NumPy warns of nothing (the library prints nothing).
"""
from __future__ import annotations

from typing import Any, Optional

from pycoll._fp_quiet import quiet as fp_quiet
from pycoll._tensor_ops import as_tensor
from pycoll.geometric.graph_inputs import check_in_range
from pycoll.geometric.segment import segment_ids, segment_reduce
from pycoll.index_ops import index_select
from pycoll.math_ops import add, multiply, subtract
from pycoll.shape_ops import reshape
from pycoll.tensor import Tensor
from pycoll.unary_ops import reciprocal

_DIV_EPSILON = 1e-12  # paddle's send_ue_recv/send_uv add it to the divisor


def _times_reciprocal(x: Tensor, y: Tensor) -> Tensor:
    """paddle's 'div' message: x * (1 / (y + 1e-12))."""
    return multiply(x, reciprocal(add(y, _DIV_EPSILON)))


_MESSAGE_OPS = {"add": add, "sub": subtract, "mul": multiply, "div": _times_reciprocal}


def _edges(src_index: Any, dst_index: Any, fn: str, sources: int, targets: Optional[int] = None) -> tuple:
    """The edges' source and destination rows as 1-D integer arrays ([E, 1] columns too, as
    paddle takes them), each source row < ``sources`` and, where given, each destination row <
    ``targets`` (ValueError naming the index otherwise, before any gather)."""
    src = as_tensor(src_index)
    if not (src.ndim == 1 or (src.ndim == 2 and src.shape[1] == 1)):
        raise ValueError(f"{fn}: src_index must be 1-D (or a column [E, 1]), got shape {src.shape}")
    edges = src.shape[0]
    src_rows, dst_rows = segment_ids(src, edges, fn, "src_index"), segment_ids(dst_index, edges, fn, "dst_index")
    check_in_range(src_rows, sources, fn, "src_index", "the rows of x")
    if targets is not None:
        check_in_range(dst_rows, targets, fn, "dst_index", "the rows of y")
    return src_rows, dst_rows


def _aligned(a: Tensor, b: Tensor) -> tuple:
    """a and b (one row per edge) with 1s inserted after the edge dimension of the one with
    fewer feature dimensions, so that their features broadcast from the right."""
    gap = a.ndim - b.ndim
    if gap > 0:
        b = reshape(b, [b.shape[0]] + [1] * gap + b.shape[1:])
    elif gap < 0:
        a = reshape(a, [a.shape[0]] + [1] * -gap + a.shape[1:])
    return a, b


def _message(a: Tensor, b: Tensor, message_op: str, fn: str) -> Tensor:
    if message_op not in _MESSAGE_OPS:
        raise ValueError(f"{fn}: message_op must be one of {list(_MESSAGE_OPS)}, got {message_op!r}")
    with fp_quiet():  # a zero divisor's inf, 0 * inf's NaN are answers, as paddle's
        return _MESSAGE_OPS[message_op](*_aligned(a, b))


def _out_rows(x: Tensor, out_size: Any) -> int:
    if isinstance(out_size, Tensor):
        out_size = int(out_size.item())
    return x.shape[0] if out_size is None or out_size <= 0 else int(out_size)


def send_u_recv(x: Tensor, src_index: Tensor, dst_index: Tensor, reduce_op: str = "sum",
                out_size: Optional[Any] = None, name: Optional[str] = None) -> Tensor:
    """x[src_index] reduced (sum, mean, max, min) into the rows dst_index names; the result has
    `out_size` rows (x's row count when None or <= 0), 0 where nothing arrives."""
    x = as_tensor(x)
    src, dst = _edges(src_index, dst_index, "send_u_recv", x.shape[0])
    return segment_reduce(index_select(x, src), dst, _out_rows(x, out_size), reduce_op, "send_u_recv")


def send_ue_recv(x: Tensor, y: Tensor, src_index: Tensor, dst_index: Tensor, message_op: str = "add",
                 reduce_op: str = "sum", out_size: Optional[Any] = None, name: Optional[str] = None) -> Tensor:
    """x[src_index] combined with the edge features y (add, sub, mul, div), then reduced into the
    rows dst_index names, as send_u_recv."""
    x, y = as_tensor(x), as_tensor(y)
    src, dst = _edges(src_index, dst_index, "send_ue_recv", x.shape[0])
    if y.ndim < 1 or y.shape[0] != src.shape[0]:
        raise ValueError(f"send_ue_recv: y must have one row per edge ({src.shape[0]}), got shape {y.shape}")
    message = _message(index_select(x, src), y, message_op, "send_ue_recv")
    return segment_reduce(message, dst, _out_rows(x, out_size), reduce_op, "send_ue_recv")


def send_uv(x: Tensor, y: Tensor, src_index: Tensor, dst_index: Tensor, message_op: str = "add",
            name: Optional[str] = None) -> Tensor:
    """One row per edge: x[src_index] combined with y[dst_index] (add, sub, mul, div)."""
    x, y = as_tensor(x), as_tensor(y)
    src, dst = _edges(src_index, dst_index, "send_uv", x.shape[0], y.shape[0])
    return _message(index_select(x, src), index_select(y, dst), message_op, "send_uv")
