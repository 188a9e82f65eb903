"""DataParallel on N ranks against one process training on the global batch (argv[1] = mode).

Every rank builds the same global batches and a reference model; the reference takes the mean
of the ranks' chunk losses (what DataParallel's averaged gradients must equal) in one process.
Modes: "sync" (every step synchronised), "no_sync" (one local micro-batch, then a synchronised
one), "unused" (a branch that each rank's data switches on or off, find_unused_parameters=True),
"unused_late" (the same model without the flag: the buckets of the parameters a rank's data
leaves unused are reduced after its backward, and training is the same).
In every mode rank 0 alone also evaluates the model after each step, with gradients enabled (no
``no_grad``, as scripts often do): a forward that no backward follows must send nothing, or the
ranks' collectives fall out of step.
"""
import sys

import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from pycoll.autograd import PyLayer


class Cube(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, dy):
        x, = ctx.saved_tensor()
        return dy * 3 * x * x


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(6, 16)
        self.hidden = nn.Linear(16, 16)
        self.branch = nn.Linear(16, 16)   # used only when a chunk's data asks for it
        self.out = nn.Linear(16, 3)

    def forward(self, x, use_branch=False):
        h = pycoll.tanh(self.inp(x))
        h = Cube.apply(self.hidden(h)) * 0.1
        if use_branch:
            h = h + pycoll.tanh(self.branch(h))
        return self.out(h)


def chunk_loss(model, x, y, use_branch):
    return ((model(x, use_branch) - y) ** 2).mean()


def batches(step, n, micro):
    rng = np.random.default_rng(1000 + step * 10 + micro)
    x = rng.standard_normal((4 * n, 6)).astype(np.float32)
    y = rng.standard_normal((4 * n, 3)).astype(np.float32)
    return np.split(x, n), np.split(y, n)


def branch_on(mode, step, r):
    # data-dependent in the unused modes: on some steps some ranks use the branch, on others none do
    return not mode.startswith("unused") or (step + r) % 3 == 0


def main():
    mode = sys.argv[1]
    dist.init_parallel_env()
    rank, n = dist.get_rank(), dist.get_world_size()
    pycoll.seed(7)
    model = Net()
    pycoll.seed(7)
    reference = Net()
    dp = pycoll.DataParallel(model, comm_buffer_size=0.0005, last_comm_buffer_size=0.0002,
                             find_unused_parameters=(mode == "unused"))
    opt = pycoll.optimizer.Momentum(learning_rate=0.05, momentum=0.9, parameters=dp.parameters())
    ref_opt = pycoll.optimizer.Momentum(learning_rate=0.05, momentum=0.9, parameters=reference.parameters())
    assert len(dp._reducer.buckets) >= 4, dp._reducer.bucket_indices()
    micro_batches = 2 if mode == "no_sync" else 1
    for step in range(6):
        ref_loss = 0
        for micro in range(micro_batches):
            xs, ys = batches(step, n, micro)
            x, y = pycoll.to_tensor(xs[rank]), pycoll.to_tensor(ys[rank])
            if micro < micro_batches - 1:
                with dp.no_sync():
                    chunk_loss(dp, x, y, branch_on(mode, step, rank)).backward()
            else:
                chunk_loss(dp, x, y, branch_on(mode, step, rank)).backward()
            for r in range(n):
                ref_loss = ref_loss + chunk_loss(reference, pycoll.to_tensor(xs[r]), pycoll.to_tensor(ys[r]),
                                                 branch_on(mode, step, r))
        (ref_loss / n).backward()
        for (name, p), q in zip(model.named_parameters(), reference.parameters()):
            if q.grad is None:
                assert p.grad is None, f"step {step}: {name} has a gradient, the reference has none"
                continue
            assert p.grad is not None, f"step {step}: {name} has no gradient"
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=2e-5, atol=1e-6,
                                       err_msg=f"step {step}: gradient of {name}")
        opt.step()
        opt.clear_grad()
        ref_opt.step()
        ref_opt.clear_grad()
        if rank == 0:
            dp.eval()
            chunk_loss(dp, x, y, False)  # leaves the branch unused: nothing may be reduced for it
            dp.train()
    assert dp._reducer._rebuilt, "buckets should have been rebuilt after the first step"
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)
        gathered = []
        dist.all_gather(gathered, p)
        assert all(np.array_equal(g.numpy(), p.numpy()) for g in gathered), f"{name} differs across ranks"
    checksum = sum(float(np.abs(p.numpy()).sum()) for p in model.parameters())
    print(f"dp {mode} OK rank={rank} buckets={len(dp._reducer.buckets)} checksum={checksum:.6f}", flush=True)


if __name__ == "__main__":
    main()
