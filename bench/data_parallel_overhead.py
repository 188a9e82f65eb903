"""DataParallel's cost on a ~10M-parameter MLP (float32, CPU ranks), measured in one run.

    python bench/data_parallel_overhead.py                                        # world size 1
    OMP_NUM_THREADS=1 python -m pycoll.launch --nproc_per_node 2 bench/data_parallel_overhead.py

World size 1: the step time (forward, backward, SGD step) of the model wrapped in DataParallel
against the same model unwrapped, interleaved. World size > 1: the step time; the time of the
same buckets' all-reduces run on their own; the step time under no_sync() (no communication);
hence how much of the all-reduce time backward hid; the bucket count and the flatten/unflatten
time per step.
"""
import argparse
import statistics
import time

import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn

WIDTHS = [1024, 2048, 2048, 1536, 512]


def mlp() -> nn.Layer:
    layers = []
    for a, b in zip(WIDTHS, WIDTHS[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


def timed_steps(model, opt, x, y, steps, context=None):
    times = []
    for _ in range(steps):
        dist.barrier()
        start = time.perf_counter()
        if context is not None:
            with context():
                ((model(x) - y) ** 2).mean().backward()
        else:
            ((model(x) - y) ** 2).mean().backward()
        opt.step()
        opt.clear_grad()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    dist.init_parallel_env()
    rank, world = dist.get_rank(), dist.get_world_size()
    pycoll.seed(0)
    rng = np.random.default_rng(rank)
    x = pycoll.to_tensor(rng.standard_normal((args.batch, WIDTHS[0])).astype(np.float32))
    y = pycoll.to_tensor(rng.standard_normal((args.batch, WIDTHS[-1])).astype(np.float32))
    inner = mlp()
    nparams = sum(p.size for p in inner.parameters())
    dp = pycoll.DataParallel(inner)
    opt = pycoll.optimizer.SGD(learning_rate=1e-4, parameters=dp.parameters())
    timed_steps(dp, opt, x, y, 2)  # warm-up (and the bucket rebuild)
    say = print if rank == 0 else (lambda *a, **k: None)
    say(f"# MLP {WIDTHS}: {nparams / 1e6:.1f} M parameters, batch {args.batch} per rank, "
        f"{world} rank(s), median of {args.steps} steps x {args.rounds} interleaved rounds")
    if world == 1:
        wrapped, plain = [], []
        for r in range(args.rounds):  # alternate which goes first, so order effects cancel
            pair = [(wrapped, dp), (plain, inner)]
            for times, model in (pair if r % 2 == 0 else pair[::-1]):
                times.append(timed_steps(model, opt, x, y, args.steps))
        w, p = statistics.median(wrapped), statistics.median(plain)
        say("| world | DataParallel step (ms) | unwrapped step (ms) | ratio |")
        say("|---:|---:|---:|---:|")
        say(f"| 1 | {w * 1e3:.1f} | {p * 1e3:.1f} | {w / p:.3f} |")
        return
    reducer = dp._reducer
    buffers = [b.buffer.copy() for b in reducer.buckets]
    synced, local, comm = [], [], []
    for _ in range(args.rounds):
        before = dict(reducer.stats)
        synced.append(timed_steps(dp, opt, x, y, args.steps))
        flatten_ms = (reducer.stats["flatten_s"] - before["flatten_s"]) / args.steps * 1e3
        unflatten_ms = (reducer.stats["unflatten_s"] - before["unflatten_s"]) / args.steps * 1e3
        local.append(timed_steps(dp, opt, x, y, args.steps, context=dp.no_sync))
        laps = []
        for _ in range(args.steps):
            dist.barrier()
            start = time.perf_counter()
            for buf in buffers:
                dist.all_reduce(buf)
            laps.append(time.perf_counter() - start)
        comm.append(statistics.median(laps))
    s, l, c = statistics.median(synced), statistics.median(local), statistics.median(comm)
    exposed = max(0.0, s - l)
    hidden = min(1.0, max(0.0, 1 - exposed / c))
    say("| world | step (ms) | no_sync step (ms) | all-reduce alone (ms) | exposed (ms) | hidden | "
        "buckets | flatten/step (ms) | unflatten/step (ms) |")
    say("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    say(f"| {world} | {s * 1e3:.1f} | {l * 1e3:.1f} | {c * 1e3:.1f} | {exposed * 1e3:.1f} | "
        f"{hidden:.0%} | {len(reducer.buckets)} | {flatten_ms:.2f} | {unflatten_ms:.2f} |")


if __name__ == "__main__":
    main()
