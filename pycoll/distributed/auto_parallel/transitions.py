"""Moving a distributed tensor's local array from one list of placements to another on the same
mesh, with the collective each mesh dimension needs:

    Shard(d) -> Replicate       all_gather along d           (innermost mesh dimension first)
    Replicate -> Shard(d)       this rank's block, no communication
    Partial -> Replicate        all_reduce with the Partial's reduce_type
    Partial -> Shard(d)         reduce_scatter along d       (when it is the one new cut of d)
    Replicate -> Partial        the value on index 0 along the dimension, the neutral element
                                elsewhere (SUM, PROD); the value everywhere (AVG, MAX, MIN)
    Shard(d) -> Shard(d')       all_gather along d, then this rank's block along d' (paddle: all_to_all)

Blocks follow paddle's rule for sizes that do not divide (``placements.block``): gathers pad every
block to the largest and trim after. Everything here works on NumPy/CuPy arrays; autograd is
``dtensor.py``'s. A rank outside the mesh still takes part in making the mesh's groups (that is
collective over the world) and then returns its array as it is.
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

import pycoll.distributed as dist
from pycoll.backends.reduce_op import ReduceOp
from pycoll.device import array_module
from pycoll.distributed.auto_parallel.mesh import ProcessMesh
from pycoll.distributed.auto_parallel.placements import (LOGICAL_OPS, Placement, Replicate, Shard, block,
                                                        local_bounds, shard_axes)

Step = Tuple[str, int, int]  # (what, mesh axis, tensor dim): "gather", "reduce", "scatter", "slice", "partial"


def plan(src: Sequence[Placement], dst: Sequence[Placement], ndim: int) -> List[Step]:
    """The steps that take a tensor from ``src`` to ``dst`` placements, in order."""
    gathers: List[Step] = []
    slices: List[Step] = []
    for d in range(ndim):
        old, new = shard_axes(src, d), shard_axes(dst, d)
        keep = 0
        while keep < min(len(old), len(new)) and old[keep] == new[keep]:
            keep += 1
        gathers += [("gather", axis, d) for axis in reversed(old[keep:])]
        slices += [("slice", axis, d) for axis in new[keep:]]
    steps = list(gathers)
    for axis, (a, b) in enumerate(zip(src, dst)):
        if a.is_partial() and not b.is_partial():
            cut = [s for s in slices if s[1] == axis]
            tensor_dim = cut[0][2] if cut else -1
            if cut and [s for s in slices if s[2] == tensor_dim] == cut:
                slices.remove(cut[0])  # the reduce_scatter leaves this rank its block
                steps.append(("scatter", axis, tensor_dim))
            else:
                steps.append(("reduce", axis, -1))
        elif a.is_partial() and b.is_partial() and a != b:
            raise ValueError(f"placements: cannot turn {a!r} into {b!r} on mesh dimension {axis}; go "
                             f"through Replicate()")
    steps += slices
    steps += [("partial", axis, -1) for axis, (a, b) in enumerate(zip(src, dst))
              if b.is_partial() and not a.is_partial()]
    return steps


def communicating_axes(steps: Sequence[Step]) -> List[int]:
    return sorted({axis for what, axis, _ in steps if what in ("gather", "reduce", "scatter")})


def describe(steps: Sequence[Step], mesh: ProcessMesh) -> str:
    """The collectives of ``steps`` in words, e.g. ``all_gather(dim 0) over 'x'``."""
    names = {"gather": "all_gather", "reduce": "all_reduce", "scatter": "reduce_scatter",
             "slice": "slice", "partial": "to_partial"}
    parts = []
    for what, axis, d in steps:
        dim = f"(dim {d})" if d >= 0 else ""
        parts.append(f"{names[what]}{dim} over {mesh.dim_names[axis]!r}")
    return ", ".join(parts) or "no communication"


def transition(arr: Any, global_shape: Sequence[int], mesh: ProcessMesh, src: Sequence[Placement],
               dst: Sequence[Placement]) -> Any:
    """This rank's array for ``dst`` from its array for ``src`` (a new array, never ``arr``)."""
    steps = plan(src, dst, len(global_shape))
    groups = {axis: mesh.get_group(axis) for axis in communicating_axes(steps)
              if mesh.shape[axis] > 1}
    coord = mesh.coordinate()
    if coord is None:
        return arr
    current = list(src)
    out = arr
    for what, axis, d in steps:
        n, index = mesh.shape[axis], coord[axis]
        group = groups.get(axis)
        line = mesh.line(axis)
        if what == "gather":
            current[axis] = Replicate()
            out = _gather(out, d, _extent(global_shape, mesh, current, coord, d), n, group, line)
        elif what == "reduce":
            out = _reduce(out, current[axis].reduce_type(), group)
            current[axis] = Replicate()
        elif what == "scatter":
            out = _reduce_scatter(out, d, n, index, current[axis].reduce_type(), group, line)
            current[axis] = Shard(d)
        elif what == "slice":
            lo, hi = block(out.shape[d], n, index)
            out = _take(out, d, lo, hi)
            current[axis] = Shard(d)
        else:
            out = _to_partial(out, dst[axis].reduce_type(), index)
            current[axis] = dst[axis]
    return out.copy() if out is arr else out


def local_block(arr: Any, mesh: ProcessMesh, placements: Sequence[Placement],
                coord: Optional[Sequence[int]]) -> Any:
    """The block of the whole ``arr`` that the rank at ``coord`` holds under ``placements``
    (an own, contiguous copy); an empty array for a rank outside the mesh."""
    xp = array_module(arr)
    if coord is None:
        return xp.empty((0,) * max(arr.ndim, 1), dtype=arr.dtype)
    index = tuple(slice(lo, hi) for lo, hi in local_bounds(arr.shape, mesh, placements, coord))
    out = arr[index + (Ellipsis,)].copy()  # Ellipsis: a 0-d array stays an array, not a NumPy scalar
    for axis, p in enumerate(placements):
        if p.is_partial():
            out = _to_partial(out, p.reduce_type(), coord[axis])
    return out


def _extent(global_shape: Sequence[int], mesh: ProcessMesh, placements: Sequence[Placement],
            coord: Sequence[int], d: int) -> int:
    lo, hi = local_bounds(global_shape, mesh, placements, coord)[d]
    return hi - lo


def _take(arr: Any, d: int, lo: int, hi: int) -> Any:
    index = [slice(None)] * arr.ndim
    index[d] = slice(lo, hi)
    return arr[tuple(index)].copy()  # own, C-contiguous memory (collectives need it)


def _gather(arr: Any, d: int, extent: int, n: int, group: Optional[dist.Group], line: List[int]) -> Any:
    """The blocks of the ranks along the group, joined along ``d`` in mesh order (``line``)
    into ``extent`` entries."""
    if n == 1:
        return arr
    xp = array_module(arr)
    width = -(-extent // n)
    pad = [(0, 0)] * arr.ndim
    pad[d] = (0, width - arr.shape[d])
    local = xp.ascontiguousarray(xp.pad(arr, pad) if width != arr.shape[d] else arr)
    parts: list = []
    dist.all_gather(parts, local, group=group)  # in group order: the ranks sorted
    in_mesh_order = [parts[group.ranks.index(r)] for r in line]
    return _take(xp.concatenate(in_mesh_order, axis=d), d, 0, extent)


def _reduce(arr: Any, op: int, group: Optional[dist.Group]) -> Any:
    op = LOGICAL_OPS.get(op, op)  # any / all: paddle's MAX / MIN of the values (OR / AND of flags)
    out = array_module(arr).ascontiguousarray(arr).copy()
    if group is not None:
        dist.all_reduce(out, op=op, group=group)
    return out


def _reduce_scatter(arr: Any, d: int, n: int, index: int, op: int, group: Optional[dist.Group],
                    line: List[int]) -> Any:
    """This rank's block along ``d`` of the reduction of the ranks' whole arrays (block i to the
    rank at mesh index i of ``line``)."""
    op = LOGICAL_OPS.get(op, op)
    if n == 1:
        return _reduce(arr, op, None)
    xp = array_module(arr)
    size = arr.shape[d]
    width = -(-size // n)
    pad = [(0, 0)] * arr.ndim
    pad[d] = (0, width * n - size)
    whole = xp.pad(arr, pad) if width * n != size else arr
    parts = [_take(whole, d, r * width, (r + 1) * width) for r in range(n)]
    out = xp.empty_like(parts[0])
    dist.reduce_scatter(out, [parts[line.index(r)] for r in group.ranks], op=op, group=group)
    lo, hi = block(size, n, index)
    return _take(out, d, 0, hi - lo)


def _to_partial(arr: Any, op: int, index: int) -> Any:
    """A Partial piece of a replicated value: the value itself at index 0 along the dimension
    (and everywhere for AVG, MAX, MIN, any, all), the neutral element of SUM / PROD elsewhere."""
    if index == 0 or op in (ReduceOp.AVG, ReduceOp.MAX, ReduceOp.MIN) or op in LOGICAL_OPS:
        return arr
    xp = array_module(arr)
    return xp.ones_like(arr) if op == ReduceOp.PROD else xp.zeros_like(arr)


def gradient_placements(placements: Sequence[Placement], mesh: ProcessMesh) -> Tuple[List[Placement], float]:
    """How the gradient of a tensor with ``placements`` lies, and the factor that takes it there.

    The gradient of a whole value G lies as the value does, except along a Partial dimension:
    d(sum of the pieces)/d(piece) = 1, so each rank holds G whole (Replicate); for AVG it holds
    G / n, returned as Replicate with the factor 1 / n. MAX, MIN and PROD have no gradient here.
    """
    out: List[Placement] = []
    factor = 1.0
    for axis, p in enumerate(placements):
        if p.is_partial():
            op = p.reduce_type()
            if op not in (ReduceOp.SUM, ReduceOp.AVG):
                raise NotImplementedError(f"reshard: a tensor with {p!r} has no gradient in pycoll; "
                                          f"detach it or use Partial() (SUM) or AVG")
            if op == ReduceOp.AVG:
                factor /= mesh.shape[axis]
            out.append(Replicate())
        else:
            out.append(p)
    return out, factor


def check_divides(global_shape: Sequence[int], mesh: ProcessMesh, placements: Sequence[Placement],
                  arg: str) -> None:
    """ValueError naming ``arg`` unless every Shard cuts its dimension evenly (where a layer
    needs equal blocks: the model-parallel Linear, the data-parallel batch)."""
    for axis, p in enumerate(placements):
        if isinstance(p, Shard):
            parts = int(np.prod([mesh.shape[a] for a in shard_axes(placements, p.dim)]))
            if global_shape[p.dim] % parts:
                raise ValueError(f"{arg}: {p!r} along mesh dimension {mesh.dim_names[axis]!r} cuts a "
                                 f"dimension of size {global_shape[p.dim]} (shape {list(global_shape)}) "
                                 f"into {parts} blocks; it must divide evenly here")
