"""One DataParallel training job whose median step time (the slowest rank's) is printed by rank 0 (used by
bench/launch_threads.py, and by hand: ``python -m pycoll.launch --nproc_per_node 2
bench/dp_step.py --hidden 256``).

The issue-11 model: an MLP 256 -> H -> H -> 16, batch 64 per rank, SGD, on CPU ranks. The same
code runs on Paddle (``--framework paddle`` under ``python -m paddle.distributed.launch``, in a
virtual environment with paddlepaddle): pycoll's API is paddle's.
"""
import argparse
import importlib
import statistics
import time

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--framework", choices=["pycoll", "paddle"], default="pycoll")
    args = parser.parse_args()
    fw = importlib.import_module(args.framework)
    dist = importlib.import_module(args.framework + ".distributed")
    nn = importlib.import_module(args.framework + ".nn")
    dist.init_parallel_env()
    rank = dist.get_rank()
    fw.seed(0)
    model = fw.DataParallel(nn.Sequential(nn.Linear(256, args.hidden), nn.ReLU(),
                                              nn.Linear(args.hidden, args.hidden), nn.ReLU(),
                                              nn.Linear(args.hidden, 16)))
    opt = fw.optimizer.SGD(learning_rate=1e-3, parameters=model.parameters())
    rng = np.random.default_rng(rank)
    x = fw.to_tensor(rng.standard_normal((64, 256)).astype(np.float32))
    y = fw.to_tensor(rng.integers(0, 16, 64))
    loss_fn = nn.CrossEntropyLoss()
    times = []
    for step in range(args.steps + 5):
        start = time.perf_counter()
        loss_fn(model(x), y).backward()
        opt.step()
        opt.clear_grad()
        if step >= 5:  # warm-up: the buckets are rebuilt after the first step
            times.append(time.perf_counter() - start)
    slowest = fw.to_tensor(np.array([statistics.median(times)]))
    if dist.get_world_size() > 1:  # Paddle refuses collectives in a world of one
        dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    if rank == 0:
        print(f"median_step_ms={slowest.numpy()[0] * 1e3:.3f}", flush=True)


if __name__ == "__main__":
    main()
