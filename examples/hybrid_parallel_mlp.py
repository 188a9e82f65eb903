"""Hybrid parallelism: an MLP split over 2 ranks (model parallel), replicated over the rest (data parallel).

    python -m pycoll.launch --nproc_per_node 4 examples/hybrid_parallel_mlp.py [--steps 20]

On 4 ranks the model-parallel groups are [0, 1] and [2, 3]: each holds one copy of the MLP,
ColumnParallelLinear -> tanh -> RowParallelLinear(input_is_parallel=True), with the hidden layer's
units split between its two ranks (no communication between the two layers; one all-reduce after
the second). The data-parallel groups [0, 2] and [1, 3] join the ranks that hold the same blocks:
DataParallel(group=dp_group) averages their gradients, while each copy trains on its half of every
global batch. Any even number of ranks works (2 ranks: model parallel only).

Rank 0 prints the global loss of every step next to the loss of the same MLP, unsplit, trained in
one process on the whole batches: the same seed gives both the same initial weights, so the two
columns agree up to float32 rounding.
"""
import argparse

import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn

MP_DEGREE = 2
IN, HIDDEN, OUT, BATCH = 16, 64, 4, 64


class ParallelMLP(nn.Layer):
    def __init__(self, mp_group):
        super().__init__()
        self.fc1 = dist.ColumnParallelLinear(IN, HIDDEN, has_bias=True, gather_output=False, mp_group=mp_group)
        self.fc2 = dist.RowParallelLinear(HIDDEN, OUT, input_is_parallel=True, group=mp_group)

    def forward(self, x):
        return self.fc2(pycoll.tanh(self.fc1(x)))


class MLP(nn.Layer):
    """The same network unsplit: the single-process reference."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(IN, HIDDEN)
        self.fc2 = nn.Linear(HIDDEN, OUT)

    def forward(self, x):
        return self.fc2(pycoll.tanh(self.fc1(x)))


def make_groups(rank, world):
    """Every rank creates every group, in the same order; each keeps the two it belongs to."""
    mp_groups = [dist.new_group(list(range(start, start + MP_DEGREE)))
                 for start in range(0, world, MP_DEGREE)]
    dp_groups = [dist.new_group(list(range(offset, world, MP_DEGREE))) for offset in range(MP_DEGREE)]
    return mp_groups[rank // MP_DEGREE], dp_groups[rank % MP_DEGREE]


def batches(steps):
    """A fixed random teacher network's regression task; the same batches on every rank."""
    rng = np.random.default_rng(0)
    teacher = rng.standard_normal((IN, OUT)) / np.sqrt(IN)
    for _ in range(steps):
        x = rng.standard_normal((BATCH, IN)).astype(np.float32)
        yield x, np.sin(x @ teacher).astype(np.float32)


def mse(model, x, y):
    return ((model(pycoll.to_tensor(x)) - pycoll.to_tensor(y)) ** 2).mean()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    steps = parser.parse_args().steps

    dist.init_parallel_env()
    rank, world = dist.get_rank(), dist.get_world_size()
    if world % MP_DEGREE:
        raise SystemExit(f"run on a multiple of {MP_DEGREE} ranks, got {world}")
    mp_group, dp_group = make_groups(rank, world)
    dp_rank, dp_size = dist.get_rank(dp_group), dist.get_world_size(dp_group)

    pycoll.seed(2024)
    model = pycoll.DataParallel(ParallelMLP(mp_group), group=dp_group)
    optimizer = pycoll.optimizer.Adam(learning_rate=0.005, parameters=model.parameters())
    pycoll.seed(2024)
    reference = MLP()
    ref_optimizer = pycoll.optimizer.Adam(learning_rate=0.005, parameters=reference.parameters())

    if rank == 0:
        print(f"{world} ranks: {world // MP_DEGREE} data-parallel copies x {MP_DEGREE}-way model parallel")
        print("step  hybrid loss  single-process loss")
    for step, (x, y) in enumerate(batches(steps)):
        loss = mse(model, np.split(x, dp_size)[dp_rank], np.split(y, dp_size)[dp_rank])
        loss.backward()
        optimizer.step()
        optimizer.clear_grad()
        global_loss = loss.detach().clone()  # the mean over the data-parallel copies
        dist.all_reduce(global_loss, op=dist.ReduceOp.AVG, group=dp_group)

        ref_loss = mse(reference, x, y)
        ref_loss.backward()
        ref_optimizer.step()
        ref_optimizer.clear_grad()
        if rank == 0:
            print(f"{step:4d}  {float(global_loss):11.6f}  {float(ref_loss):19.6f}", flush=True)


if __name__ == "__main__":
    main()
