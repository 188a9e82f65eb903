"""paddle's ``paddle.distributed.utils.moe_utils``: the all-to-all exchanges of expert (MoE)
parallelism, by expert counts, over ``alltoall_single``.

With ``W`` ranks in the group and ``E`` experts on each, a count tensor has ``W * E`` entries,
entry ``c * E + e`` for expert ``e`` of rank ``c``. ``global_scatter``'s ``x`` holds its rows
rank-major in that order (``local_count[c * E + e]`` rows for expert ``e`` of rank ``c``); what
arrives (``global_count[c * E + e]`` rows from rank ``c`` for this rank's expert ``e``) comes out
expert-major: expert 0's rows from rank 0, 1, ..., then expert 1's. ``global_gather`` is the way
back, and each is the other's backward."""
from __future__ import annotations

from typing import Any, List, Optional

import numpy as np

import pycoll.distributed as dist
from pycoll.autograd import PyLayer, PyLayerContext
from pycoll.device import array_module
from pycoll.tensor import Tensor, wrap

__all__ = ["global_gather", "global_scatter"]


def _host_counts(count: Any, name: str, fn: str, nranks: int) -> List[int]:
    """``count`` as a list of ints, checked: ``nranks * n_expert`` non-negative entries."""
    if not isinstance(count, Tensor):
        raise TypeError(f"{fn}: {name} must be an int64 Tensor of n_expert * world_size counts, "
                        f"got {type(count).__name__}")
    values = count.numpy().reshape(-1)  # host copy of a few counts, also for a device tensor
    if values.dtype.kind not in "iu":
        raise TypeError(f"{fn}: {name} must hold integer counts, got dtype {values.dtype}")
    if values.size == 0 or values.size % nranks:
        raise ValueError(f"{fn}: {name} has {values.size} entries; it needs n_expert * world_size, a positive "
                         f"multiple of the group's {nranks} ranks")
    if (values < 0).any():
        raise ValueError(f"{fn}: {name} holds negative counts {values.tolist()}")
    return [int(v) for v in values]


def _per_rank(counts: List[int], nranks: int) -> List[int]:
    experts = len(counts) // nranks
    return [sum(counts[c * experts:(c + 1) * experts]) for c in range(nranks)]


def _expert_major(counts: List[int], nranks: int) -> Any:
    """The row order taking rank-major blocks (``counts[c * E + e]`` rows each) to expert-major."""
    experts = len(counts) // nranks
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    blocks = [np.arange(starts[c * experts + e], starts[c * experts + e] + counts[c * experts + e], dtype=np.int64)
              for e in range(experts) for c in range(nranks)]
    return np.concatenate(blocks) if blocks else np.zeros(0, np.int64)


def _exchange(arr: Any, sent: List[int], received: List[int], nranks: int, group: Optional[dist.Group],
              to_expert_major: bool) -> Any:
    """Scatter (``to_expert_major``): send rank-major ``arr`` by ``sent`` counts, receive by
    ``received`` and reorder expert-major. Gather: reorder expert-major ``arr`` (``sent``
    counts) rank-major, send, and receive rank-major by ``received``."""
    xp = array_module(arr)
    if not to_expert_major:
        arr = arr[xp.asarray(np.argsort(_expert_major(sent, nranks), kind="stable"))]
    out = xp.empty((sum(received),) + tuple(arr.shape[1:]), dtype=arr.dtype)
    dist.alltoall_single(out, xp.ascontiguousarray(arr), _per_rank(sent, nranks), _per_rank(received, nranks),
                         group=group)
    return out[xp.asarray(_expert_major(received, nranks))] if to_expert_major else out


class _Exchange(PyLayer):
    @staticmethod
    def forward(ctx: PyLayerContext, x: Tensor, sent: List[int], received: List[int], nranks: int,
                group: Optional[dist.Group], to_expert_major: bool) -> Tensor:
        ctx.args = (received, sent, nranks, group, not to_expert_major)
        return wrap(_exchange(x.array, sent, received, nranks, group, to_expert_major))

    @staticmethod
    def backward(ctx: PyLayerContext, dy: Tensor) -> Any:
        return _exchange(dy.array, *ctx.args)


def _run(fn: str, x: Tensor, local_count: Tensor, global_count: Tensor, group: Optional[dist.Group],
         scatter: bool) -> Optional[Tensor]:
    if group is not None and not isinstance(group, dist.Group):
        raise TypeError(f"{fn}: group must be a Group from new_group() or None (the world), got {type(group).__name__}")
    if dist.get_rank(group) < 0:
        return None  # paddle's: a rank outside the group gets nothing
    if not isinstance(x, Tensor) or x.ndim == 0:
        raise TypeError(f"{fn}: x must be a Tensor with rows along dim 0, got "
                        f"{type(x).__name__ if not isinstance(x, Tensor) else '0-d Tensor'}")
    nranks = dist.get_world_size(group)
    local = _host_counts(local_count, "local_count", fn, nranks)
    remote = _host_counts(global_count, "global_count", fn, nranks)
    if len(local) != len(remote):
        raise ValueError(f"{fn}: local_count has {len(local)} entries and global_count {len(remote)}; both need "
                         f"n_expert * world_size")
    sent, received = (local, remote) if scatter else (remote, local)
    if sum(sent) != x.shape[0]:
        raise ValueError(f"{fn}: x has {x.shape[0]} rows, but {'local_count' if scatter else 'global_count'} "
                         f"sends {sum(sent)}; they must agree")
    return _Exchange.apply(x, sent, received, nranks, group, scatter)


def global_scatter(x: Tensor, local_count: Tensor, global_count: Tensor, group: Optional[dist.Group] = None,
                   use_calc_stream: bool = True) -> Optional[Tensor]:
    """Send ``local_count[c * E + e]`` rows of ``x`` (rank-major, in that order) to expert ``e``
    of rank ``c``; return the ``sum(global_count)`` rows received, expert-major
    (``global_count[c * E + e]`` of them from rank ``c`` for expert ``e``). Backward is
    ``global_gather``. ``use_calc_stream``: paddle's; pycoll's call is synchronous."""
    return _run("global_scatter", x, local_count, global_count, group, scatter=True)


def global_gather(x: Tensor, local_count: Tensor, global_count: Tensor, group: Optional[dist.Group] = None,
                  use_calc_stream: bool = True) -> Optional[Tensor]:
    """``global_scatter``'s way back: ``x`` holds expert-major rows by ``global_count``; each
    block goes back to the rank it came from, and the ``sum(local_count)`` rows returned are in
    ``global_scatter``'s input order (rank-major by ``local_count``). Backward is
    ``global_scatter``."""
    return _run("global_gather", x, local_count, global_count, group, scatter=False)
