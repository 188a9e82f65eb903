"""Every reshard transition against NumPy, forward and backward, on a 1-d mesh of 2 ranks or a 2x2
mesh of 4 ranks (whichever the job has).

For each pair of placements: the global array G (the same on every rank) is laid out with
shard_tensor, moved with reshard, and this rank's piece is compared with the block NumPy cuts
from G (paddle's rule for sizes that do not divide: blocks of ceil(n / parts)); a Partial piece is
G's block at index 0 along the Partial dimension and zeros elsewhere (SUM) or G's block everywhere
(AVG). Backward: each rank's loss is sum(piece * C's piece) for a constant C, so the gradient of
the whole is C; x.grad must be C laid out as x is (a Partial's gradient whole; AVG's divided by n).
"""
import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from pycoll.distributed import Partial, ProcessMesh, Replicate, Shard

from expect import expect

S0, S1, R, P = Shard(0), Shard(1), Replicate(), Partial()
AVG, MAX = Partial(dist.ReduceOp.AVG), Partial(dist.ReduceOp.MAX)

PAIRS_1D = [([S0], [R]), ([S1], [R]), ([R], [S0]), ([R], [S1]), ([P], [R]), ([P], [S0]), ([P], [S1]),
            ([R], [P]), ([S0], [S1]), ([S1], [S0]), ([S0], [P]), ([P], [P]), ([AVG], [R]), ([R], [AVG]),
            ([AVG], [S1]), ([MAX], [R]), ([S0], [S0]), ([R], [R])]
PAIRS_2D = [([S0, S1], [R, R]), ([R, R], [S0, S1]), ([S0, S0], [R, R]), ([R, R], [S0, S0]),
            ([S0, S0], [R, S0]), ([S0, S1], [S1, S0]), ([P, S1], [R, S1]), ([P, R], [S0, R]),
            ([S0, P], [S0, S0]), ([P, P], [R, R]), ([R, S1], [P, S1]), ([S1, R], [R, S0]),
            ([P, AVG], [S1, R]), ([R, R], [R, P])]


def blocks(size, parts, index):
    width = -(-size // parts)
    return min(index * width, size), min((index + 1) * width, size)


def expected_piece(whole, mesh, placements, coord):
    """What the rank at ``coord`` holds of ``whole`` under ``placements``, by paddle's rules."""
    piece = whole
    for d in range(whole.ndim):
        for axis, p in enumerate(placements):  # mesh order: outer dimensions cut first
            if p.is_shard(d):
                lo, hi = blocks(piece.shape[d], mesh.shape[axis], coord[axis])
                piece = np.take(piece, np.arange(lo, hi), axis=d)
    for axis, p in enumerate(placements):
        if p.is_partial() and p.reduce_type() == dist.ReduceOp.SUM and coord[axis] != 0:
            piece = np.zeros_like(piece)
    return piece


def gradient_layout(placements, mesh):
    """A Partial's gradient is whole (SUM) or whole / n (AVG): (placements, factor)."""
    factor = 1.0
    for axis, p in enumerate(placements):
        if p.is_partial() and p.reduce_type() == dist.ReduceOp.AVG:
            factor /= mesh.shape[axis]
    return [R if p.is_partial() else p for p in placements], factor


def check_pair(mesh, whole, src, dst, constant):
    coord = mesh.coordinate()
    where = f"{src} -> {dst} on {mesh.shape}, shape {list(whole.shape)}"
    x = dist.shard_tensor(whole, mesh, src)
    np.testing.assert_array_equal(x._local_value().numpy(), expected_piece(whole, mesh, src, coord), err_msg=f"shard_tensor {where}")
    y = dist.reshard(x, mesh, dst)
    assert y.shape == list(whole.shape) and y.placements == dst, (y.shape, y.placements, where)
    want = expected_piece(whole, mesh, dst, coord)
    if any(p == AVG or p == MAX for p in src + dst):
        np.testing.assert_allclose(y._local_value().numpy(), want, rtol=1e-6, err_msg=where)
    else:
        np.testing.assert_array_equal(y._local_value().numpy(), want, err_msg=where)
    np.testing.assert_allclose(dist.unshard_dtensor(y).numpy(), whole, rtol=1e-6, err_msg=f"unshard {where}")
    if MAX in src + dst:
        return
    xg = dist.shard_tensor(whole, mesh, src, stop_gradient=False)
    yg = dist.reshard(xg, mesh, dst)
    out_layout, out_factor = gradient_layout(dst, mesh)
    c_piece = expected_piece(constant, mesh, out_layout, coord) * out_factor
    # each rank's piece times its piece of the constant, summed locally: local_map keeps it local
    dist.local_map(lambda y: (y * pycoll.to_tensor(c_piece)).sum(), out_placements=[None])(yg).backward()
    in_layout, in_factor = gradient_layout(src, mesh)
    np.testing.assert_allclose(xg.grad._local_value().numpy(), expected_piece(constant, mesh, in_layout, coord) * in_factor,
                               rtol=1e-6, err_msg=f"gradient of {where}")


def check_bad_input(mesh):
    x = dist.shard_tensor(np.ones((4, 4), np.float32), mesh, [S0] + [R] * (mesh.ndim - 1))
    expect(TypeError, ["mesh must be a dist.ProcessMesh"], dist.reshard, x, mesh.process_ids, [R])
    expect(ValueError, ["placements", "mesh has"], dist.reshard, x, mesh, [R] * mesh.ndim + [Shard(0)])
    expect(ValueError, ["placements[0]", "Shard(dim=2)", "2 dimension"], dist.reshard, x, mesh, [Shard(2)])
    expect(TypeError, ["dist_tensor"], dist.reshard, np.ones(3), mesh, [R])
    expect(NotImplementedError, ["MAX", "gradient"], dist.reshard,
           dist.shard_tensor(np.ones(4, np.float32), mesh, [MAX], stop_gradient=False), mesh, [R])
    # where a layer needs equal blocks: a Linear's columns, the data-parallel batch
    rest = [R] * (mesh.ndim - 1)
    linear = nn.Linear(4, 5)
    linear.weight = dist.shard_tensor(linear.weight, mesh, [S1] + rest)
    expect(ValueError, ["weight", "Shard(dim=1)", "size 5", "divide evenly"], dist.shard_layer, linear, mesh)
    # (a pycoll DataLoader's uneven batch is re-read as int(3 / dp) rows per rank, paddle's way; an
    # iterable of ready batches cannot be)
    loader = dist.shard_dataloader([pycoll.to_tensor(np.ones((3, 2), np.float32))], mesh, shard_dims=0)
    expect(ValueError, ["shard_dims=", "size 3", "divide evenly"], next, iter(loader))


def check_logical_partials(mesh):
    """paddle's ReduceType.kRedAny / kRedAll: a Partial of flags is any rank's / every rank's."""
    coord = mesh.process_ids.index(dist.get_rank()) if mesh.ndim == 1 else None
    if coord is None:
        return
    n = len(mesh.process_ids)
    flags = np.zeros((4, 2), bool)
    flags[coord] = True  # row i true on the rank at mesh index i only
    flags[3] = True  # true everywhere
    for kind, whole in ((dist.ReduceType.kRedAny, np.zeros((4, 2), bool)), (dist.ReduceType.kRedAll, None)):
        if whole is not None:
            whole[:n] = True
            whole[3] = True
        else:
            whole = np.zeros((4, 2), bool)
            whole[3] = True
        for dtype in ("bool", "float32"):
            part = dist.dtensor_from_local(pycoll.to_tensor(flags.astype(dtype)), mesh, [Partial(kind)])
            replicated = dist.reshard(part, mesh, [Replicate()])
            assert replicated._local_value().numpy().tolist() == whole.astype(dtype).tolist(), (kind, replicated)
            lo, hi = blocks(4, n, coord)
            sharded = dist.reshard(part, mesh, [Shard(0)])
            assert sharded._local_value().numpy().tolist() == whole[lo:hi].astype(dtype).tolist(), (kind, sharded)
    # on values other than flags, paddle reduces them as MAX / MIN (a probe's [1, -2] and [2, 5])
    values = np.array([1.0, -2.0]) if coord == 0 else np.array([2.0, 5.0])
    for kind, whole in ((dist.ReduceType.kRedAny, [2.0, 5.0]), (dist.ReduceType.kRedAll, [1.0, -2.0])):
        part = dist.dtensor_from_local(pycoll.to_tensor(values.astype(np.float32)), mesh, [Partial(kind)])
        if n == 2:
            assert dist.reshard(part, mesh, [Replicate()])._local_value().numpy().tolist() == whole, (kind, part)
    assert repr(Partial(dist.ReduceType.kRedAny)) == "Partial(reduce_type=ANY)"  # paddle's names
    assert repr(Partial(dist.ReduceOp.PROD)) == "Partial(reduce_type=PRODUCT)"


def main():
    dist.init_parallel_env()
    rank, world = dist.get_rank(), dist.get_world_size()
    rng = np.random.default_rng(7)
    # the second mesh numbers its ranks out of order: blocks follow the mesh, not the rank numbers
    if world == 2:
        meshes, pairs = [ProcessMesh([0, 1], dim_names=["x"]), ProcessMesh([1, 0], dim_names=["x"])], PAIRS_1D
        shapes = [(4, 6), (5, 3)]
    else:
        meshes = [ProcessMesh([[0, 1], [2, 3]], dim_names=["a", "b"]),
                  ProcessMesh([[3, 1], [2, 0]], dim_names=["a", "b"])]
        pairs, shapes = PAIRS_2D, [(4, 8), (6, 5)]
    for mesh in meshes:
        for shape in shapes:
            whole = rng.standard_normal(shape).astype(np.float32)
            constant = rng.standard_normal(shape).astype(np.float32)
            for src, dst in pairs:
                check_pair(mesh, whole, src, dst, constant)
    check_bad_input(meshes[0])
    check_logical_partials(meshes[0])
    print(f"OK rank={rank} {len(pairs) * len(shapes) * len(meshes)} transitions", flush=True)


if __name__ == "__main__":
    main()
