"""Host syncs of a DataParallel training step on 2 ranks of "gpu" tensors (the strict CuPy
stand-in; NCCL's bytes over MPI): the bench's MLP (small widths, as tests/test_device_counts.py),
SGD, MSELoss, counted by tests/device_counts.py after two warm-up steps (the buckets are rebuilt
after the first). Prints 'counts rank=R {phase: {kind: n}}' (ops counted here are the kernels'
CuPy fallback's, not the CUDA kernels': only the syncs are asserted)."""
import sys

from strict_gpu_device import held_on_device  # noqa: I100 - installs the stand-in first

import numpy as np  # noqa: E402

import pycoll  # noqa: E402
import pycoll.distributed as dist  # noqa: E402
import pycoll.nn as nn  # noqa: E402
from device_counts import step_counts  # noqa: E402
from test_device_counts import WIDTHS, mlp  # noqa: E402

dist.init_parallel_env()
rank = dist.get_rank()
pycoll.seed(1)
model = pycoll.DataParallel(mlp())
rng = np.random.default_rng(rank)
x = pycoll.to_tensor(rng.standard_normal((4, WIDTHS[0])).astype(np.float32))
y = pycoll.to_tensor(rng.standard_normal((4, WIDTHS[-1])).astype(np.float32))
sgd = pycoll.optimizer.SGD(1e-3, parameters=model.parameters())
held_on_device(model.parameters()[0], "the first weight")
counts = step_counts(model, nn.MSELoss(), sgd, x, y, warmup=2, where="--where" in sys.argv)
print(f"counts rank={rank} {counts.table()}", flush=True)
for phase, sites in counts.sites.items():
    for (kind, call, site), n in sites.items():
        if kind == "sync" or "--ops" in sys.argv:
            print(f"rank={rank} {phase} {n} {call} {site}", flush=True)
