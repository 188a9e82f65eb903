"""pycoll's distributed GPU paths on 2 ranks without a GPU: tensors on "gpu" over the strict CuPy
stand-in (tests/strict_cupy.py, NCCL's bytes moved over MPI), each training checked against the
same computation on CPU tensors in this process, one process on the whole batch (rtol 1e-6).

Here: DataParallel (SGD and Adam, several buckets, no_sync accumulation, find_unused_parameters);
group_sharded_parallel at os, os_g and p_g_os, offload=True (the state in host memory), a GradScaler (which scales on the GPU
only: a step with an inf gradient on one rank is skipped by both) and ClipGradByGlobalNorm;
recompute; SyncBatchNorm; the object collectives and alltoall_single on device tensors. Then the
fleet parts (strict_gpu_fleet.py) and auto-parallel (strict_gpu_auto.py). argv: the parts to run
(default all).
"""
import sys
import warnings

from strict_gpu_device import cupy, on, same  # noqa: I100 - installs the stand-in first

import numpy as np  # noqa: E402

import pycoll  # noqa: E402
import pycoll.distributed as dist  # noqa: E402
import pycoll.nn as nn  # noqa: E402
from pycoll.distributed.fleet.utils import recompute  # noqa: E402
from pycoll.distributed.sharding import group_sharded_parallel  # noqa: E402

dist.init_parallel_env()
assert dist.get_backend() == "NCCL", dist.get_backend()
rank, n = dist.get_rank(), dist.get_world_size()


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(6, 16)
        self.hidden = nn.Linear(16, 16)
        self.branch = nn.Linear(16, 16)  # used only where a chunk's data asks for it
        self.out = nn.Linear(16, 3)

    def forward(self, x, use_branch=True):
        h = pycoll.tanh(self.inp(x))
        h = pycoll.tanh(self.hidden(h))
        if use_branch:
            h = h + pycoll.tanh(self.branch(h))
        return self.out(h)


def made(place, cls=Net, seed=7):
    with on(place):
        pycoll.seed(seed)
        return cls()


def data(step, micro=0, shape=(4, 6), outputs=3):
    rng = np.random.default_rng(100 + 10 * step + micro)
    return (rng.standard_normal((n * shape[0],) + shape[1:]).astype(np.float32),
            rng.standard_normal((n * shape[0], outputs)).astype(np.float32))


def mine(a):
    return pycoll.to_tensor(np.split(a, n)[rank])


def cpu(a):
    return pycoll.to_tensor(a, place="cpu")


def loss_of(model, x, y, use_branch=True):
    return ((model(x, use_branch) - y) ** 2).mean()


def optimizer(kind, params, clip=None):
    if kind == "sgd":
        return pycoll.optimizer.SGD(learning_rate=0.1, parameters=params, grad_clip=clip)
    return pycoll.optimizer.Adam(learning_rate=0.01, parameters=params, grad_clip=clip)


def compare_models(model, reference, what):
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        same(p, q, f"{what}: {name}")


def data_parallel():
    for kind, unused in (("sgd", False), ("adam", True)):
        model, reference = made("gpu"), made("cpu")
        dp = pycoll.DataParallel(model, comm_buffer_size=0.0005, last_comm_buffer_size=0.0002,
                                 find_unused_parameters=unused)
        assert len(dp._reducer.buckets) >= 3, dp._reducer.bucket_indices()
        opt, ref_opt = optimizer(kind, dp.parameters()), optimizer(kind, reference.parameters())
        for step in range(3):
            ref_loss = 0
            for micro in range(2):  # the first under no_sync: gradients accumulate locally
                x, y = data(step, micro)
                branch = [not unused or (step + r) % 2 == 0 for r in range(n)]
                if micro == 0:
                    with dp.no_sync():
                        loss_of(dp, mine(x), mine(y), branch[rank]).backward()
                else:
                    loss_of(dp, mine(x), mine(y), branch[rank]).backward()
                for r, (xr, yr) in enumerate(zip(np.split(x, n), np.split(y, n))):
                    ref_loss = ref_loss + loss_of(reference, cpu(xr), cpu(yr), branch[r])
            (ref_loss / n).backward()
            for (name, p), q in zip(model.named_parameters(), reference.parameters()):
                same(p.grad, q.grad, f"DataParallel {kind} step {step}: gradient of {name}")
            opt.step()
            opt.clear_grad()
            ref_opt.step()
            ref_opt.clear_grad()
        compare_models(model, reference, f"DataParallel {kind}")
    return "dp(sgd,adam+unused,no_sync)"


class Lookup(nn.Layer):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(200, 4, sparse=True)
        self.out = nn.Linear(4, 3)

    def forward(self, ids, use_branch=True):
        return self.out(self.emb(ids).mean(axis=1))


def data_parallel_rows():
    """An Embedding(sparse=True) weight under DataParallel: its gradient averaged as rows
    (pycoll.parallel.row_grads) on device arrays, against the dense average on the CPU."""
    model, reference = made("gpu", Lookup), made("cpu", Lookup)
    dp = pycoll.DataParallel(model)
    opt = pycoll.optimizer.Adam(0.01, parameters=dp.parameters(), lazy_mode=True)
    ref_opt = pycoll.optimizer.Adam(0.01, parameters=reference.parameters(), lazy_mode=True)
    for step in range(2):
        ids = np.random.default_rng(step).integers(0, 200, (n * 4, 3))
        y = np.random.default_rng(50 + step).standard_normal((n * 4, 3)).astype(np.float32)
        loss_of(dp, mine(ids), mine(y)).backward()
        assert model.emb.weight.grad.is_selected_rows()
        ref_loss = sum(loss_of(reference, cpu(i), cpu(t)) for i, t in zip(np.split(ids, n), np.split(y, n)))
        (ref_loss / n).backward()
        for (name, p), q in zip(model.named_parameters(), reference.parameters()):
            same(p.grad, q.grad, f"DataParallel rows step {step}: gradient of {name}")
        opt.step()
        opt.clear_grad()
        ref_opt.step()
        ref_opt.clear_grad()
    compare_models(model, reference, "DataParallel rows")
    return "dp_rows(adam lazy)"


def sharded_training(level, kind, clip, scaled, offload=False, steps=3):
    """``level`` on the GPU against one CPU process; with ``scaled``, a GradScaler, and at step 1
    an inf in one rank's gradient: that step is skipped everywhere; with ``offload`` the whole
    optimizer state is in host memory."""
    model, reference = made("gpu"), made("cpu")
    opt = optimizer(kind, model.parameters(), clip)
    ref_opt = optimizer(kind, reference.parameters(), nn.ClipGradByGlobalNorm(0.05) if clip else None)
    clipped = False
    scaler = pycoll.amp.GradScaler(init_loss_scaling=1024.0) if scaled else None
    model, opt, scaler = group_sharded_parallel(model, opt, level, scaler=scaler, segment_size=8, offload=offload)
    for step in range(steps):
        x, y = data(step)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # auto_cast computes in float32 (it says so)
            with pycoll.amp.auto_cast(enable=scaled):  # float16: the scaler scales after it (paddle's rule)
                loss = loss_of(model, mine(x), mine(y))
        (scaler.scale(loss) if scaled else loss).backward()
        skipped = scaled and step == 1
        if skipped and rank == n - 1:
            grads = opt.step_grads()
            assert isinstance(grads[0], cupy.ndarray), f"{level}: a gradient piece in {type(grads[0])}"
            grads[0][...] = np.inf
        if scaled:
            scaler.step(opt)
            scaler.update()
        else:
            opt.step()
        opt.clear_grad()
        if not skipped:
            loss_of(reference, cpu(x), cpu(y)).backward()
            clipped |= sum(float((p.grad ** 2).sum()) for p in reference.parameters()) > 0.05 ** 2
            ref_opt.step()
            ref_opt.clear_grad()
    assert clipped or clip is None, "the clip never acted: make it tighter"
    if offload:
        held = {key: type(value.array).__module__ for key, value in opt.state_dict().items()}
        assert all(isinstance(value.array, np.ndarray) for value in opt.state_dict().values()), held
    if scaled:
        assert float(scaler.state_dict()["scale"][0]) == 512.0, scaler.state_dict()
    if level == "p_g_os":
        model.get_all_parameters()
    compare_models(model, reference, f"{level} clip={clip is not None} scaler={scaled}")


def sharding():
    for level, kind, clip, scaled in (("os", "adam", None, True), ("os_g", "sgd", nn.ClipGradByGlobalNorm(0.05), False),
                                      ("p_g_os", "adam", nn.ClipGradByGlobalNorm(0.05), True)):
        sharded_training(level, kind, clip, scaled)
    sharded_training("os", "adam", None, False, offload=True)
    return "sharding(os+scaler,os_g+clip,p_g_os+clip+scaler,os+offload)"


class Checkpointed(nn.Layer):
    def __init__(self, checkpoint):
        super().__init__()
        self.checkpoint = checkpoint
        self.blocks = nn.LayerList([nn.Sequential(nn.Linear(6, 6), nn.Tanh(), nn.Dropout(0.3)) for _ in range(2)])
        self.out = nn.Linear(6, 3)

    def forward(self, x, use_branch=True):
        for block in self.blocks:
            x = recompute(block, x) if self.checkpoint else block(x)
        return self.out(x)


def recomputed():
    """recompute in a DataParallel model on the GPU (its dropout masks drawn again alike in
    backward) against the plain model on the CPU, each chunk seeded as the ranks are."""
    model = made("gpu", lambda: Checkpointed(True))
    reference = made("cpu", lambda: Checkpointed(False))
    dp = pycoll.DataParallel(model)
    x, y = data(0)
    x_gpu, x_cpu = mine(x), cpu(x)
    x_gpu.stop_gradient = x_cpu.stop_gradient = False  # recompute needs an input that takes a gradient
    pycoll.seed(3)
    loss_of(dp, x_gpu, mine(y)).backward()
    ref = 0
    for xr, yr in zip(pycoll.split(x_cpu, n), np.split(y, n)):
        pycoll.seed(3)  # each rank's chunk from the same seed, as every rank draws its masks
        ref = ref + loss_of(reference, xr, cpu(yr)) / n
    ref.backward()
    same(x_gpu.grad, np.split(x_cpu.grad.numpy(), n)[rank] * n, "recompute: input gradient")
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        same(p.grad, q.grad, f"recompute: gradient of {name}")
    return "recompute"


def sync_batch_norm():
    """A CNN with SyncBatchNorm (converted) in DataParallel on the GPU against the plain model on
    the CPU on the whole batch: losses, parameters and running statistics after SGD steps."""
    def cnn():
        return nn.Sequential(nn.Conv2D(2, 4, 3, padding=1), nn.BatchNorm2D(4), nn.ReLU(), nn.Flatten(),
                             nn.Linear(4 * 4 * 4, 3))

    with on("gpu"):
        pycoll.seed(5)
        model = nn.SyncBatchNorm.convert_sync_batchnorm(cnn())
    reference = made("cpu", cnn, seed=5)
    assert isinstance(model[1], nn.SyncBatchNorm)
    dp = pycoll.DataParallel(model)
    opt, ref_opt = optimizer("sgd", dp.parameters()), optimizer("sgd", reference.parameters())
    for step in range(2):
        x, y = data(step, shape=(3, 2, 4, 4))
        ((dp(mine(x)) - mine(y)) ** 2).mean().backward()
        ((reference(cpu(x)) - cpu(y)) ** 2).mean().backward()
        opt.step(), ref_opt.step()
        opt.clear_grad(), ref_opt.clear_grad()
    compare_models(model, reference, "SyncBatchNorm")
    for (name, b), c in zip(model.named_buffers(), reference.buffers()):
        same(b, c, f"SyncBatchNorm: {name}")
    return "sync_batch_norm"


def objects_and_alltoall():
    gathered = []
    dist.all_gather_object(gathered, {"rank": rank, "t": pycoll.to_tensor([rank, 1.0])})
    assert [g["rank"] for g in gathered] == list(range(n)), gathered
    for r, g in enumerate(gathered):
        same(g["t"], np.array([r, 1.0], np.float32), "all_gather_object: a GPU tensor inside")
    objects = [{"lr": 0.5}, pycoll.to_tensor([7.0, 8.0]), "x"] if rank == 0 else [None, None, None]
    dist.broadcast_object_list(objects, src=0)
    assert objects[0] == {"lr": 0.5} and objects[2] == "x", objects
    same(objects[1], np.array([7.0, 8.0], np.float32), "broadcast_object_list: a GPU tensor")
    # alltoall_single, even and uneven: rank r sends r+1 rows to each peer... per its sizes
    sizes = [[1, 2], [3, 1]][rank] if n == 2 else [1] * n
    rows = sum(sizes)
    sent = pycoll.to_tensor(np.arange(rows * 2, dtype=np.float32).reshape(rows, 2) + 100 * rank)
    everyone = []
    dist.all_gather_object(everyone, (sizes, sent.numpy()))
    want = np.concatenate([np.split(a, np.cumsum(s)[:-1])[rank] for s, a in everyone])
    received = pycoll.zeros([len(want), 2])
    dist.alltoall_single(received, sent, in_split_sizes=sizes, out_split_sizes=[s[rank] for s, _ in everyone])
    same(received, want, "alltoall_single uneven")
    even_in = pycoll.to_tensor(np.arange(2 * n, dtype=np.int64) + 10 * rank)
    even_out = pycoll.empty([2 * n], dtype="int64")
    dist.alltoall_single(even_out, even_in)
    same(even_out, np.concatenate([np.arange(2 * rank, 2 * rank + 2) + 10 * r for r in range(n)]), "alltoall_single")
    return "objects+alltoall_single"


PARTS = {"dp": data_parallel, "dp_rows": data_parallel_rows, "sharding": sharding, "recompute": recomputed, "sync_bn": sync_batch_norm,
         "objects": objects_and_alltoall}


def main():
    chosen = sys.argv[1:] or list(PARTS) + ["fleet", "auto"]
    report = []
    for part in chosen:
        if part == "fleet":
            import strict_gpu_fleet

            report.append(strict_gpu_fleet.run(rank, n))
        elif part == "auto":
            import strict_gpu_auto

            report.append(strict_gpu_auto.run(rank, n))
        else:
            report.append(PARTS[part]())
    assert isinstance(cupy.zeros(1), cupy.ndarray)
    print(f"strict gpu OK rank={rank} {' '.join(report)}", flush=True)


if __name__ == "__main__":
    main()
