"""A resumable fully_shard checkpoint on 2 ranks: ``save DIR`` trains 2 steps, saves the layer's
and the optimizer's whole state dicts (collective; rank 0 writes them), then trains 2 more steps
and records those losses; ``load DIR`` (new processes) builds the model and optimizer afresh,
loads both files on every rank, and its next 2 losses equal the uninterrupted run's to 1e-6.
The saved dicts have the unsharded shapes (an AdamW with an LR scheduler: its state too)."""
import json
import os
import sys

import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from pycoll.distributed.fsdp import fully_shard

dist.init_parallel_env()
rank = dist.get_rank()
phase, folder = sys.argv[1], sys.argv[2]
pycoll.seed(3 if phase == "save" else 99)  # the loaded run starts from other values
model = nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, 3))
shapes = {k: v.shape for k, v in model.state_dict().items()}
scheduler = pycoll.optimizer.lr.StepDecay(0.05, step_size=1, gamma=0.7)
opt = pycoll.optimizer.AdamW(learning_rate=scheduler, parameters=model.parameters())
fully_shard(model)


def step(i):
    x = pycoll.to_tensor(np.random.default_rng(10 * i + rank).standard_normal((4, 5)).astype(np.float32))
    loss = (model(x) ** 2).mean()
    loss.backward()
    opt.step()
    opt.clear_grad()
    scheduler.step()
    return float(loss)


if phase == "save":
    [step(i) for i in range(2)]
    weights, state = model.state_dict(), opt.state_dict()  # every rank calls them
    assert {k: v.shape for k, v in weights.items()} == shapes, weights
    moments = {k: v.shape for k, v in state.items() if "moment1" in k}
    assert sorted(map(tuple, moments.values())) == [(3,), (5, 7), (7,), (7, 3)], moments
    if rank == 0:
        pycoll.save(weights, os.path.join(folder, "model.pdparams"))
        pycoll.save(state, os.path.join(folder, "model.pdopt"))
    losses = [step(i) for i in range(2, 4)]
    with open(os.path.join(folder, f"losses{rank}.json"), "w") as f:  # each rank's own batches
        json.dump(losses, f)
else:
    model.set_state_dict(pycoll.load(os.path.join(folder, "model.pdparams")))
    opt.set_state_dict(pycoll.load(os.path.join(folder, "model.pdopt")))
    losses = [step(i) for i in range(2, 4)]
    with open(os.path.join(folder, f"losses{rank}.json")) as f:
        want = json.load(f)
    np.testing.assert_allclose(losses, want, rtol=1e-6)
    assert abs(opt.get_lr() - 0.05 * 0.7 ** 4) < 1e-12, opt.get_lr()
print(f"OK rank={rank} {phase} losses={losses}", flush=True)
