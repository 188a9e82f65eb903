"""reshard from one process mesh to another (paddle's cross-mesh reshard: pipeline stages' meshes),
on 4 ranks, forward and backward against NumPy: disjoint meshes of one shape, overlapping ones,
one mesh's ranks in another order, meshes of different shapes; paddle's guide example (2.3); an
op on a rank off its inputs' mesh refused by name.

Each rank's piece after the move must be the block NumPy cuts from the whole value for its place
on the new mesh (an empty array off it); the gradient that comes back must be the constant C laid
out as x was (the loss on the new mesh is sum(piece * C's piece) on each of its ranks).
"""
import numpy as np

import pycoll
import pycoll.distributed as dist
from pycoll.distributed import Partial, ProcessMesh, Replicate, Shard

from auto_parallel_reshard import expected_piece, gradient_layout
from expect import expect

S0, S1, R, P = Shard(0), Shard(1), Replicate(), Partial()
M01, M23, M12 = (ProcessMesh(ids, dim_names=["x"]) for ids in ([0, 1], [2, 3], [1, 2]))
GRID = ProcessMesh([[0, 1], [2, 3]], dim_names=["a", "b"])
CASES = [  # (from mesh, placements, to mesh, placements)
    (M01, [R], M23, [S0]), (M01, [S0], M23, [R]), (M01, [S0], M23, [S1]), (M01, [P], M23, [R]),
    (M01, [R], M23, [P]), (M23, [S1], M01, [S1]), (M01, [S0], M12, [S0]), (M12, [R], M01, [S1]),
    (ProcessMesh([0, 1, 2, 3]), [S0], ProcessMesh([3, 2, 1, 0]), [S0]),
    (GRID, [S0, S1], M23, [R]), (ProcessMesh([0]), [R], ProcessMesh([1, 2, 3]), [S0]),
    (M01, [P], GRID, [S1, R])]


def piece_on(mesh, whole, placements):
    coord = mesh.coordinate()
    return np.empty((0,) * whole.ndim, whole.dtype) if coord is None else expected_piece(whole, mesh, placements, coord)


def check_case(src_mesh, src, dst_mesh, dst, whole, constant):
    where = f"{src_mesh.process_ids} {src} -> {dst_mesh.process_ids} {dst}"
    y = dist.reshard(dist.shard_tensor(whole, src_mesh, src), dst_mesh, dst)
    assert y.process_mesh == dst_mesh and y.placements == dst and y.shape == list(whole.shape), where
    np.testing.assert_array_equal(y._local_value().numpy(), piece_on(dst_mesh, whole, dst), err_msg=where)
    read = y.numpy()  # collective over the mesh: the whole value on it, nothing off it (paddle's)
    if dst_mesh.coordinate() is None:
        assert read.size == 0, (where, read)
    else:
        np.testing.assert_allclose(read, whole, rtol=1e-6, err_msg=f"numpy() {where}")
    x = dist.shard_tensor(whole, src_mesh, src, stop_gradient=False)
    moved = dist.reshard(x, dst_mesh, dst)
    out_layout, out_factor = gradient_layout(dst, dst_mesh)
    c_piece = piece_on(dst_mesh, constant, out_layout) * out_factor
    dist.local_map(lambda t: (t * pycoll.to_tensor(c_piece)).sum(), out_placements=[None])(moved).backward()
    in_layout, in_factor = gradient_layout(src, src_mesh)
    np.testing.assert_allclose(x.grad._local_value().numpy(), piece_on(src_mesh, constant, in_layout) * in_factor,
                               rtol=1e-6, err_msg=f"gradient of {where}")


def guide_example():
    """paddle's auto-parallel guide, 2.3: a replicated [2, 3] on ranks 0, 1 becomes rows on 2, 3."""
    dense = pycoll.to_tensor([[1, 2, 3], [4, 5, 6]])
    moved = dist.reshard(dist.shard_tensor(dense, M01, [R]), M23, [S0])
    rank = dist.get_rank()
    want = {2: [[1, 2, 3]], 3: [[4, 5, 6]]}.get(rank, np.empty((0, 0)).tolist())
    assert moved._local_value().numpy().tolist() == want, (rank, moved._local_value())
    assert moved.dtype == pycoll.int64 and moved.placements == [S0]


def one_rank_meshes_without_init():
    """paddle's guide never calls init_parallel_env: a move between two meshes of one rank starts it
    as every other reshard does (run first, before anything else started it)."""
    moved = dist.reshard(dist.shard_tensor(np.arange(6.0).reshape(2, 3), ProcessMesh([0]), [R]), ProcessMesh([3]), [S1])
    want = np.arange(6.0).reshape(2, 3) if dist.get_rank() == 3 else np.empty((0, 0))
    np.testing.assert_array_equal(moved._local_value().numpy(), want)


def off_mesh_ops_are_refused():
    """paddle skips an op on a rank off its inputs' mesh; pycoll says it cannot (rather than give a
    piece of a wrong shape), and the job goes on."""
    w = dist.shard_tensor(np.ones((3, 2), np.float32), M01, [R])
    if M01.coordinate() is not None:
        assert pycoll.matmul(pycoll.ones([4, 3]), w).shape == [4, 2] and (w * 2.0).shape == [3, 2]
        return
    words = [f"this rank ({dist.get_rank()}) is not on the process mesh [0, 1]", "PipelineLayer"]
    expect(NotImplementedError, ["matmul"] + words, pycoll.matmul, pycoll.ones([4, 3]), w)
    expect(NotImplementedError, words, lambda: w * 2.0)
    expect(NotImplementedError, ["relu"] + words, pycoll.nn.functional.relu, w)


def main():
    one_rank_meshes_without_init()
    assert dist.get_world_size() == 4
    rng = np.random.default_rng(3)
    for case in CASES:
        for shape in ((4, 6), (5, 3)):
            check_case(*case, rng.standard_normal(shape).astype(np.float32),
                       rng.standard_normal(shape).astype(np.float32))
    guide_example()
    off_mesh_ops_are_refused()
    print(f"OK rank={dist.get_rank()} {len(CASES) * 2} cross-mesh reshards", flush=True)


if __name__ == "__main__":
    main()
