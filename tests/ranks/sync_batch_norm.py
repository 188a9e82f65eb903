"""SyncBatchNorm on 2 ranks: every rank holds part of a batch, and the synchronised layer gives
what a plain BatchNorm gives on the whole batch in one process (computed on every rank):

* outputs and input gradients of each rank's rows, weight and bias gradients once summed over
  the ranks, and the running statistics, over three training steps, then eval outputs; for
  BatchNorm2D (NCHW and NHWC, halves and an uneven 3/5 split) and BatchNorm1D on [N, C], one row
  per rank included; where the whole group holds one value per channel (one row on rank 0, none on
  rank 1) it passes x through as the plain layer does (paddle's rule, see nn._norm_functional);
* over a group of one rank it is the plain layer on that rank's rows alone;
* a CNN converted with convert_sync_batchnorm and wrapped in DataParallel trains step by step
  like the unconverted model on the whole batch.
"""
import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from expect import expect

STATE = {"weight": np.array([1.0, -2.0, 0.5, 1.5], np.float32), "bias": np.array([0.1, 0.2, -0.3, 0.0], np.float32),
         "_mean": np.zeros(4, np.float32), "_variance": np.ones(4, np.float32)}


def close(a, b, what):
    np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6, err_msg=what)


def summed(t):
    """``t`` summed over the ranks, as a NumPy array (a tensor on ``t``'s device: an NCCL group
    takes no host arrays)."""
    out = t.detach().clone()
    dist.all_reduce(out)
    return out.numpy()


def matches_whole_batch(make, shape, rows, group=None):
    """Three training steps and an eval step of the converted layer (or, given a group of one
    rank, of a SyncBatchNorm over it) on this rank's `rows` of each batch against the plain layer
    on the whole batch (on those rows alone for the group)."""
    plain = make()
    plain.set_state_dict(STATE)
    sync = nn.SyncBatchNorm.convert_sync_batchnorm(make()) if group is None else nn.SyncBatchNorm(4, group=group)
    sync.set_state_dict(STATE)
    assert isinstance(sync, nn.SyncBatchNorm)
    synced = group is None
    rng = np.random.default_rng(7)  # the same batches on every rank
    for step in range(4):
        x = rng.standard_normal(shape).astype(np.float32) * 2 + 1
        r = rng.standard_normal(shape).astype(np.float32)
        if step == 3:
            plain.eval(), sync.eval()
        whole = pycoll.to_tensor(x if synced else x[rows], stop_gradient=False)
        out = plain(whole)
        (out * pycoll.to_tensor(r if synced else r[rows])).sum().backward()
        part = pycoll.to_tensor(x[rows], stop_gradient=False)
        mine = sync(part)
        (mine * pycoll.to_tensor(r[rows])).sum().backward()
        want = out.numpy() if not synced else out.numpy()[rows]
        close(mine.numpy(), want, f"output, step {step}")
        close(part.grad.numpy(), whole.grad.numpy() if not synced else whole.grad.numpy()[rows], "input gradient")
        for name in ("weight", "bias"):
            got = getattr(sync, name).grad
            close(summed(got) if synced else got.numpy(), getattr(plain, name).grad.numpy(), f"{name} gradient")
        close(sync._mean.numpy(), plain._mean.numpy(), "running mean")
        close(sync._variance.numpy(), plain._variance.numpy(), "running variance")
        plain.clear_gradients(), sync.clear_gradients()


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2D(2, 4, 3, padding=1), nn.BatchNorm2D(4), nn.ReLU())
        self.head = nn.Sequential(nn.AdaptiveAvgPool2D(1), nn.Flatten(), nn.Linear(4, 3))

    def forward(self, x):
        return self.head(self.body(x))


def trains_like_one_process(rank):
    pycoll.seed(5)
    plain = Net()
    pycoll.seed(5)
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(Net())
    assert isinstance(converted.body[1], nn.SyncBatchNorm)
    assert [n for n, _ in converted.named_parameters()] == [n for n, _ in plain.named_parameters()]
    model = pycoll.DataParallel(converted)
    opts = [pycoll.optimizer.SGD(learning_rate=0.1, parameters=m.parameters()) for m in (plain, model)]
    rng = np.random.default_rng(3)
    for _ in range(3):
        x = rng.standard_normal((8, 2, 5, 5)).astype(np.float32)
        y = rng.integers(0, 3, 8)
        for m, opt, rows in ((plain, opts[0], slice(0, 8)), (model, opts[1], slice(4 * rank, 4 * rank + 4))):
            loss = nn.functional.cross_entropy(m(pycoll.to_tensor(x[rows])), pycoll.to_tensor(y[rows]))
            loss.backward()
            opt.step()
            opt.clear_grad()
        for (name, p), q in zip(plain.named_parameters(), converted.parameters()):
            close(q.numpy(), p.numpy(), f"{name} after a step")


def main():
    dist.init_parallel_env()
    rank = dist.get_rank()
    assert dist.get_world_size() == 2
    halves = slice(4 * rank, 4 * rank + 4)
    matches_whole_batch(lambda: nn.BatchNorm2D(4), (8, 4, 3, 2), halves)
    matches_whole_batch(lambda: nn.BatchNorm2D(4, data_format="NHWC"), (8, 3, 2, 4), halves)
    matches_whole_batch(lambda: nn.BatchNorm2D(4), (8, 4, 3, 2), slice(0, 3) if rank == 0 else slice(3, 8))
    matches_whole_batch(lambda: nn.BatchNorm1D(4), (8, 4), halves)
    matches_whole_batch(lambda: nn.BatchNorm1D(4), (2, 4), slice(rank, rank + 1))
    matches_whole_batch(lambda: nn.BatchNorm1D(4), (1, 4), slice(0, 1) if rank == 0 else slice(1, 1))
    alone = [dist.new_group([0]), dist.new_group([1])][rank]
    matches_whole_batch(lambda: nn.BatchNorm2D(4), (8, 4, 3, 2), halves, group=alone)
    other = [dist.new_group([0]), dist.new_group([1])][1 - rank]
    expect(ValueError, ["not a member"], nn.SyncBatchNorm(4, group=other), pycoll.ones([2, 4]))
    trains_like_one_process(rank)
    print(f"OK rank={rank}", flush=True)


if __name__ == "__main__":
    main()
