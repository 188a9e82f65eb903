"""A DataLoader over each rank's share of a dataset (DistributedBatchSampler), read by worker
processes inside an MPI rank, feeding a DataParallel step: every sample is seen once per epoch
across the ranks, and the reshuffled epoch differs."""
import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from pycoll.io import DataLoader, DistributedBatchSampler, TensorDataset

dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
data = TensorDataset([np.arange(24, dtype=np.float32).reshape(12, 2), np.arange(12)])
sampler = DistributedBatchSampler(data, batch_size=2, shuffle=True)
loader = DataLoader(data, batch_sampler=sampler, num_workers=2)
model = pycoll.DataParallel(nn.Linear(2, 1))
opt = pycoll.optimizer.SGD(learning_rate=0.01, parameters=model.parameters())
epochs = []
for epoch in range(2):
    sampler.set_epoch(epoch)
    seen = []
    for x, index in loader:
        model(x).mean().backward()
        opt.step()
        opt.clear_grad()
        seen += index.numpy().tolist()
    everyone = []
    dist.all_gather_object(everyone, seen)
    assert sorted(i for part in everyone for i in part)[:12] == list(range(12)), everyone
    assert len({len(part) for part in everyone}) == 1, everyone
    epochs.append(everyone)
assert epochs[0] != epochs[1], "set_epoch reshuffles"
print(f"loader OK rank={rank} batches={len(loader)}", flush=True)
