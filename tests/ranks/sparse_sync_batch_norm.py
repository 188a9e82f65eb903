"""pycoll.sparse.nn.SyncBatchNorm on 2 ranks: each rank holds part of a point cloud's entries
(rank 0 the first 7, rank 1 the rest), and the synchronised layer gives what the plain sparse
BatchNorm gives on all the entries in one process: outputs and input gradients of this rank's
entries, weight gradients once summed over the ranks, running statistics, then eval outputs."""
import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.sparse as sp


def cloud(idx, vals):
    x = sp.sparse_coo_tensor(idx, vals, [2, 3, 4, 3])
    x.stop_gradient = False
    return x


def main():
    dist.init_parallel_env()
    rank = dist.get_rank()
    rng = np.random.default_rng(11)  # the same entries on every rank
    idx = np.stack(np.nonzero(rng.random((2, 3, 4)) < 0.6))
    mine = slice(0, 7) if rank == 0 else slice(7, None)
    plain = sp.nn.BatchNorm(3)
    sync = sp.nn.SyncBatchNorm.convert_sync_batchnorm(sp.nn.BatchNorm(3))
    assert isinstance(sync, sp.nn.SyncBatchNorm)
    for step in range(3):
        vals = (rng.standard_normal((idx.shape[1], 3)) * 2 + 1).astype(np.float32)
        g = rng.standard_normal(vals.shape).astype(np.float32)
        if step == 2:
            plain.eval(), sync.eval()
        whole, part = cloud(idx, vals), cloud(idx[:, mine], vals[mine])
        a, b = plain(whole), sync(part)
        np.testing.assert_allclose(b.values().numpy(), a.values().numpy()[mine], rtol=2e-5, atol=2e-6)
        (a.values() * pycoll.to_tensor(g)).sum().backward()
        (b.values() * pycoll.to_tensor(g[mine])).sum().backward()
        np.testing.assert_allclose(part.grad.values().numpy(), whole.grad.values().numpy()[mine], rtol=2e-5, atol=2e-5)
        if step < 2:
            summed = sync.weight.grad.numpy().copy()
            dist.all_reduce(summed)
            np.testing.assert_allclose(summed, plain.weight.grad.numpy(), rtol=2e-5, atol=2e-5)
        np.testing.assert_allclose(sync._mean.numpy(), plain._mean.numpy(), rtol=2e-5, atol=2e-6)
        np.testing.assert_allclose(sync._variance.numpy(), plain._variance.numpy(), rtol=2e-5, atol=2e-6)
        plain.clear_gradients(), sync.clear_gradients()
    print(f"OK rank={rank}", flush=True)


if __name__ == "__main__":
    main()
