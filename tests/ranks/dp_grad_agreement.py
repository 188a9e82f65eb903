"""Replicas stay equal where a parameter's gradient comes from some ranks only (argv[1]):

- ``no_sync_unused``: with find_unused_parameters=True, ``b`` is used on rank 0 only, inside a
  no_sync micro-step, and by nobody in the synchronised one. Its no_sync gradient is part of what
  the step averages (torch's rule): every rank gets the average, (rank 0's gradient) / world.
- ``zero_grad``: with find_unused_parameters=False, rank 0 uses ``b`` with an exactly-zero
  gradient and the other ranks do not use it: ``b`` was used, so every rank gets a zero gradient
  (not None on some ranks), and Momentum moves it alike everywhere.
- ``nobody``: with find_unused_parameters=False, no rank uses ``b``: it keeps no gradient anywhere.
"""
import sys

import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn

mode = sys.argv[1]
dist.init_parallel_env()
rank, world = dist.get_rank(), dist.get_world_size()


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 1)
        self.b = nn.Linear(4, 1)

    def forward(self, x, use_b):
        return self.a(x) + use_b * self.b(x) if use_b is not None else self.a(x)


pycoll.seed(0)
net = Net()
model = pycoll.DataParallel(net, find_unused_parameters=(mode == "no_sync_unused"))
opt = pycoll.optimizer.Momentum(learning_rate=0.1, momentum=0.9, parameters=model.parameters())
x = pycoll.ones([2, 4])
model(x, 1.0).mean().backward()  # a first step in which everyone uses b: Momentum gets a velocity
opt.step()
opt.clear_grad(set_to_zero=False)
if mode == "no_sync_unused":
    with model.no_sync():
        model(x, 1.0 if rank == 0 else None).mean().backward()
    model(x, None).mean().backward()
    expected = np.full(4, 1.0 / world, np.float32)  # d mean(b(x)) / d b.weight = 1 on rank 0 only
elif mode == "zero_grad":
    model(x, 0.0 if rank == 0 else None).mean().backward()
    expected = np.zeros(4, np.float32)
else:
    model(x, None).mean().backward()
    expected = None
grad = net.b.weight.grad
assert (grad is None) == (expected is None), f"rank {rank}: b.weight.grad is {grad}, expected {expected}"
if expected is not None:
    np.testing.assert_allclose(grad.numpy().ravel(), expected, rtol=1e-6)
opt.step()
weights = []
dist.all_gather(weights, net.b.weight.detach())
assert all(np.array_equal(w.numpy(), weights[0].numpy()) for w in weights), \
    f"the replicas' b.weight differ: {[w.numpy().ravel().tolist() for w in weights]}"
print(f"dp_grad_agreement {mode} OK rank={rank}", flush=True)
