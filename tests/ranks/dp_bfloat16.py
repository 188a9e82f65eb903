"""bfloat16 parameters under DataParallel and group_sharded_parallel (os_g) on 2 ranks: the
gradients are averaged in their own dtype (the host kernels scale bfloat16 as the device ones do)
and equal, on every rank, the mean of the ranks' own gradients rounded to bfloat16. argv[1]
``strict``: on 'GPU' tensors of the strict CuPy stand-in (tests/ranks/strict_gpu_device.py,
with PYCOLL_BACKEND=nccl); ``gpu``: the tensors on the GPU (a real one)."""
import sys

if sys.argv[1:] == ["strict"]:
    import strict_gpu_device  # noqa: F401 - the stand-in in CuPy's place, before pycoll

import numpy as np  # noqa: E402

import pycoll  # noqa: E402
import pycoll.distributed as dist  # noqa: E402
import pycoll.nn as nn  # noqa: E402
from pycoll.distributed.sharding import group_sharded_parallel  # noqa: E402

dist.init_parallel_env()
rank = dist.get_rank()
on_device = sys.argv[1:] in (["strict"], ["gpu"])
if on_device:
    assert dist.get_backend() == "NCCL", dist.get_backend()
    pycoll.set_device("gpu")
x = pycoll.to_tensor(np.linspace(-1, 1, 8).reshape(2, 4) * (rank + 1)).astype("bfloat16")


def model():
    pycoll.seed(4)
    layer = nn.Linear(4, 3)
    layer.to(dtype="bfloat16")
    return layer


alone = model()
alone(x).astype("float32").sum().backward()
mine = [p.grad.numpy().astype(np.float32) for p in alone.parameters()]
everyone = []
dist.all_gather_object(everyone, mine)
mean = [(a + b) / 2 for a, b in zip(*everyone)]

wrapped = pycoll.DataParallel(model())
wrapped(x).astype("float32").sum().backward()
for p, want in zip(wrapped.parameters(), mean):
    assert p.grad.dtype == pycoll.bfloat16, p.grad.dtype
    assert p.grad.place.is_gpu_place() == on_device, p.grad.place
    np.testing.assert_allclose(p.grad.numpy().astype(np.float32), want, rtol=1e-2, atol=1e-3)

layer = model()
opt = pycoll.optimizer.AdamW(0.1, parameters=layer.parameters(), multi_precision=True)
sharded, opt, _ = group_sharded_parallel(layer, opt, "os_g")
sharded(x).astype("float32").sum().backward()
opt.step()
weights = [p.numpy().astype(np.float32) for p in layer.parameters()]
others = []
dist.all_gather_object(others, weights)
for a, b in zip(*others):
    np.testing.assert_array_equal(a, b)
print(f"OK rank={rank}", flush=True)
