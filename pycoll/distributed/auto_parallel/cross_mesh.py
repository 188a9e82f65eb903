"""Moving a distributed tensor from one process mesh to another (paddle's cross-mesh reshard, the
hand-over between two pipeline stages' meshes), on NumPy/CuPy arrays; autograd is ``dtensor.py``'s.

Meshes of one shape: the tensor takes its new placements on the old mesh (``transitions``), then
the rank at each coordinate of the old mesh sends its piece to the rank at the same coordinate of
the new one. Meshes of different shapes: the old mesh makes the tensor whole, each rank of the new
mesh receives it from one rank of the old (they take turns), and keeps its block. A rank that is
on both meshes keeps what it would send itself; one on neither only joins in making the meshes'
groups (collective over the world, and done here for both meshes' every dimension, so that the
backward's transitions, whose placements differ, make none).
"""
from __future__ import annotations

from typing import Any, List, Sequence, Tuple

import pycoll.distributed as dist
from pycoll.device import array_module
from pycoll.distributed.auto_parallel.mesh import ProcessMesh
from pycoll.distributed.auto_parallel.placements import Placement, Replicate, local_bounds
from pycoll.distributed.auto_parallel.transitions import local_block, transition


def between_meshes(arr: Any, global_shape: Sequence[int], src_mesh: ProcessMesh, src: Sequence[Placement],
                   dst_mesh: ProcessMesh, dst: Sequence[Placement]) -> Any:
    """This rank's array under ``dst`` on ``dst_mesh`` from its array under ``src`` on
    ``src_mesh`` (an empty array where this rank is not on ``dst_mesh``)."""
    dist.init_parallel_env()  # (as making a mesh's groups does; meshes of one rank make none)
    for mesh in (src_mesh, dst_mesh):
        for axis in range(mesh.ndim):
            if mesh.shape[axis] > 1:
                mesh.get_group(axis)
    same_shape = src_mesh.shape == dst_mesh.shape
    sent = transition(arr, global_shape, src_mesh, src, dst if same_shape else [Replicate()] * src_mesh.ndim)
    senders = src_mesh.process_ids
    pairs = [(senders[k] if same_shape else senders[k % len(senders)], receiver)
             for k, receiver in enumerate(dst_mesh.process_ids)]
    coord = dst_mesh.coordinate()
    xp = array_module(arr)
    if coord is None:
        received = xp.empty((0,) * max(len(global_shape), 1), dtype=arr.dtype)
    else:
        shape = _piece_shape(global_shape, dst_mesh, dst, coord) if same_shape else tuple(global_shape)
        received = xp.empty(shape, dtype=arr.dtype)
    _exchange(xp.ascontiguousarray(sent), received, pairs)
    if coord is None or same_shape:
        return received
    return local_block(received, dst_mesh, dst, coord)


def _piece_shape(global_shape: Sequence[int], mesh: ProcessMesh, placements: Sequence[Placement],
                 coord: Sequence[int]) -> Tuple[int, ...]:
    return tuple(hi - lo for lo, hi in local_bounds(global_shape, mesh, placements, coord))


def _exchange(sent: Any, received: Any, pairs: List[Tuple[int, int]]) -> None:
    """Every (sender, receiver) transfer this rank takes part in, in the list's order on every
    rank (so that two ranks' batches match); a rank that is both keeps ``sent`` itself."""
    rank = dist.get_rank()
    ops = []
    for sender, receiver in pairs:
        if sender == receiver == rank:
            received[...] = sent
        elif sender == rank:
            ops.append(dist.P2POp(dist.isend, sent, receiver))
        elif receiver == rank:
            ops.append(dist.P2POp(dist.irecv, received, sender))
    for task in dist.batch_isend_irecv(ops) if ops else ():
        task.wait()
