"""group_sharded_parallel at each level against plain DataParallel on the same model and data:
optimizer state, gradients and parameters held per rank, and step time, alternated in one run
(issue 13).

    python -m pycoll.launch --nproc_per_node 2 bench/sharding.py [--rounds 5] [--hidden 1024]

An MLP 256 -> H -> H -> 16 with Adam, batch 64 per rank; p_g_os with segment_size=0 (every
parameter sharded). Each round times 20 steps of each (after 3 warm-up steps), in an order that
rotates from round to round. Rank 0 prints the table: bytes held by the largest rank (state after
a step, gradients after backward, parameters between steps), the median step time, and ratios
to DataParallel.
"""
import argparse
import statistics
import time

import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from pycoll.distributed.sharding import GroupShardedModel, group_sharded_parallel


KINDS = ("DataParallel", "os", "os_g", "p_g_os")


def setup(kind: str, hidden: int):
    pycoll.seed(0)
    model = nn.Sequential(nn.Linear(256, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                          nn.Linear(hidden, 16))
    opt = pycoll.optimizer.Adam(learning_rate=1e-3, parameters=model.parameters())
    if kind == "DataParallel":
        return pycoll.DataParallel(model), opt
    return group_sharded_parallel(model, opt, kind, segment_size=0)[:2]


def largest(nbytes: int) -> int:
    mine = np.array([nbytes], np.int64)
    dist.all_reduce(mine, op=dist.ReduceOp.MAX)
    return int(mine[0])


def held(model, opt, x):
    """Bytes the largest rank holds: (optimizer moments, gradients after backward, parameters
    between steps), pieces included."""
    sharded = isinstance(model, GroupShardedModel)
    (model(x) ** 2).mean().backward()
    grads = model.gradient_bytes() if sharded else sum(p.grad.array.nbytes for p in model.parameters())
    opt.step()
    opt.clear_grad()
    state = sum(v.numpy().nbytes for k, v in opt.state_dict().items() if "_pow_acc_" not in k)
    params = model.parameter_bytes() if sharded else sum(p.array.nbytes for p in model.parameters())
    return largest(state), largest(grads), largest(params)


def steps(model, opt, x, count: int) -> float:
    dist.barrier()
    start = time.perf_counter()
    for _ in range(count):
        (model(x) ** 2).mean().backward()
        opt.step()
        opt.clear_grad()
    took = np.array([(time.perf_counter() - start) / count])
    dist.all_reduce(took, op=dist.ReduceOp.MAX)
    return float(took[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--hidden", type=int, default=1024)
    args = parser.parse_args()
    dist.init_parallel_env()
    x = pycoll.to_tensor(np.random.default_rng(dist.get_rank()).standard_normal((64, 256)).astype(np.float32))
    runs = {kind: setup(kind, args.hidden) for kind in KINDS}
    times = {kind: [] for kind in runs}
    for kind, (model, opt) in runs.items():
        steps(model, opt, x, 3)
    for r in range(args.rounds):
        for kind in KINDS[r % len(KINDS):] + KINDS[:r % len(KINDS)]:
            times[kind].append(steps(*runs[kind], x, 20))
    memory = {kind: held(*runs[kind], x) for kind in KINDS}
    if dist.get_rank() == 0:
        n = dist.get_world_size()
        params = sum(int(np.prod(p.shape)) for p in runs["DataParallel"][0].parameters())
        base, base_time = memory["DataParallel"], statistics.median(times["DataParallel"])
        print(f"# {n} ranks, {params} parameters (H={args.hidden}), Adam, median of {args.rounds} rounds; "
              f"bytes held by the largest rank (ratio to DataParallel; 1/{n} = {1 / n:.3f})")
        print("| | optimizer state | gradients after backward | parameters between steps | step (ms) | step ratio |")
        print("|---|---:|---:|---:|---:|---:|")
        for kind in KINDS:
            cells = " | ".join(f"{m} ({m / b:.3f})" for m, b in zip(memory[kind], base))
            step = statistics.median(times[kind])
            print(f"| {kind} | {cells} | {step * 1e3:.2f} | {step / base_time:.3f} |")


if __name__ == "__main__":
    main()
