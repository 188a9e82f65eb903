"""DataParallel's cost on a ~10M-parameter MLP, against the unwrapped model and torch DDP, in one run.

    python bench/data_parallel_overhead.py [--device cpu|gpu] [--torch]              # world size 1
    python -m pycoll.launch --nproc_per_node 2 bench/data_parallel_overhead.py [--device gpu] [--torch]

CPU ranks want OMP_NUM_THREADS=1; ranks sharing one GPU want NCCL_SOCKET_IFNAME=lo. --device
defaults to pycoll's (the GPU where one is visible).

For pycoll (DataParallel) and, with --torch, torch (DistributedDataParallel over gloo on the CPU,
NCCL on the GPU), on the same MLP, batch and SGD step, in interleaved rounds: the step time
(forward, backward, SGD step) of the model wrapped and unwrapped, and their ratio. At world size
> 1 also: the step under no_sync() (no communication); the same buckets' all-reduces run on their
own (torch all-reduces buffers of pycoll's bucket sizes, so both time the same bytes); hence the
exposed communication (wrapped step - no_sync step) and the fraction of the all-reduce time hidden
behind backward (1 - exposed / all-reduce alone). Each timed step starts after a barrier and, on
a GPU, ends with a device synchronize. Also pycoll's bucket count and the host time its reducer
spends in flatten/unflatten per step (on a GPU: the time to enqueue them).
"""
import argparse
import contextlib
import os
import socket
import statistics
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn

WIDTHS = [1024, 2048, 2048, 1536, 512]
Runs = Dict[str, Callable[[], Any]]  # a framework's timed runs by name


def mlp() -> nn.Layer:
    layers = []
    for a, b in zip(WIDTHS, WIDTHS[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


def timed(run: Callable[[], Any], sync: Callable[[], Any], steps: int) -> float:
    """Median seconds of ``steps`` calls of ``run``, each between a barrier and ``sync()``."""
    times = []
    for _ in range(steps):
        dist.barrier()
        sync()
        start = time.perf_counter()
        run()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def pycoll_runs(batch: int, rank: int, world: int) -> Tuple[Runs, Any]:
    """pycoll's timed runs ({name: fn}) and DataParallel's reducer (None on one rank, where
    DataParallel communicates nothing, as paddle's)."""
    pycoll.seed(0)
    rng = np.random.default_rng(rank)
    x = pycoll.to_tensor(rng.standard_normal((batch, WIDTHS[0])).astype(np.float32))
    y = pycoll.to_tensor(rng.standard_normal((batch, WIDTHS[-1])).astype(np.float32))
    inner = mlp()
    dp = pycoll.DataParallel(inner)
    opt = pycoll.optimizer.SGD(learning_rate=1e-4, parameters=dp.parameters())

    def step(model, context=contextlib.nullcontext):
        with context():
            ((model(x) - y) ** 2).mean().backward()
        opt.step()
        opt.clear_grad()

    for _ in range(2):  # warm-up, and the buckets' rebuild after the first step
        step(dp)
    runs = {"unwrapped": lambda: step(inner), "wrapped": lambda: step(dp)}
    if world > 1:
        buffers = [b.buffer.copy() for b in dp._reducer.buckets]
        runs["no_sync"] = lambda: step(dp, dp.no_sync)
        runs["all_reduce"] = lambda: [dist.all_reduce(buf) for buf in buffers]
    return runs, dp._reducer


def shared_free_port() -> int:
    """A TCP port free on rank 0's host (this host: the ranks share it), the same on every rank."""
    port = 0
    if dist.get_rank() == 0:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
    t = pycoll.to_tensor(np.array([port], np.int64))
    dist.broadcast(t, src=0)
    return int(t.numpy()[0])


def torch_runs(batch: int, rank: int, world: int, gpu: Optional[int],
               bucket_sizes: List[int]) -> Tuple[Runs, Callable[[], Any]]:
    """torch's timed runs ({name: fn}) and its sync, on GPU ``gpu`` (None: the CPU)."""
    import torch
    import torch.distributed as tdist
    from torch.nn.parallel import DistributedDataParallel

    device = torch.device("cpu") if gpu is None else torch.device("cuda", gpu)
    if gpu is not None:
        torch.cuda.set_device(gpu)
    tdist.init_process_group("gloo" if gpu is None else "nccl", rank=rank, world_size=world,
                             init_method=f"tcp://127.0.0.1:{shared_free_port()}")
    torch.manual_seed(0)
    layers = []
    for a, b in zip(WIDTHS, WIDTHS[1:]):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    inner = torch.nn.Sequential(*layers[:-1]).to(device)
    ddp = DistributedDataParallel(inner, device_ids=None if gpu is None else [gpu])
    opt = torch.optim.SGD(inner.parameters(), lr=1e-4)
    rng = torch.Generator().manual_seed(rank)
    x = torch.randn(batch, WIDTHS[0], generator=rng).to(device)
    y = torch.randn(batch, WIDTHS[-1], generator=rng).to(device)

    def step(model, context=contextlib.nullcontext):
        with context():
            ((model(x) - y) ** 2).mean().backward()
        opt.step()
        opt.zero_grad()

    for _ in range(2):
        step(ddp)
    runs = {"unwrapped": lambda: step(inner), "wrapped": lambda: step(ddp)}
    if world > 1:
        buffers = [torch.zeros(n, device=device) for n in bucket_sizes]
        runs["no_sync"] = lambda: step(ddp, ddp.no_sync)
        runs["all_reduce"] = lambda: [tdist.all_reduce(buf) for buf in buffers]
    return runs, (torch.cuda.synchronize if gpu is not None else _nothing)


def _nothing() -> None:
    pass


def interleaved(sides: Dict[str, Tuple[Runs, Callable[[], Any]]], steps: int,
                rounds: int) -> Dict[Tuple[str, str], float]:
    """{(framework, run): median of the rounds' medians}; each round runs every (framework, run)
    once, starting one later than the round before, so that order effects cancel."""
    keys = [(fw, name) for fw, (runs, _) in sides.items() for name in runs]
    laps = {key: [] for key in keys}
    for r in range(rounds):
        shift = r % len(keys)
        for fw, name in keys[shift:] + keys[:shift]:
            runs, sync = sides[fw]
            laps[(fw, name)].append(timed(runs[name], sync, steps))
    return {key: statistics.median(v) for key, v in laps.items()}


def report(medians: Dict[Tuple[str, str], float], frameworks: List[str], world: int) -> None:
    head = "| framework | world | unwrapped step (ms) | wrapped step (ms) | ratio |"
    rule = "|---|---:|---:|---:|---:|"
    if world > 1:
        head += " no_sync step (ms) | all-reduce alone (ms) | exposed (ms) | hidden |"
        rule += "---:|---:|---:|---:|"
    print(head)
    print(rule)
    for fw in frameworks:
        plain, wrapped = medians[(fw, "unwrapped")], medians[(fw, "wrapped")]
        row = f"| {fw} | {world} | {plain * 1e3:.1f} | {wrapped * 1e3:.1f} | {wrapped / plain:.3f} |"
        if world > 1:
            local, comm = medians[(fw, "no_sync")], medians[(fw, "all_reduce")]
            exposed = max(0.0, wrapped - local)
            hidden = min(1.0, max(0.0, 1 - exposed / comm))
            row += f" {local * 1e3:.1f} | {comm * 1e3:.1f} | {exposed * 1e3:.1f} | {hidden:.0%} |"
        print(row)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10, help="timed steps per run and round")
    parser.add_argument("--batch", type=int, default=64, help="samples per rank")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--device", choices=("cpu", "gpu"), default=None,
                        help="where pycoll (and torch) run (default: pycoll's default device)")
    parser.add_argument("--torch", action="store_true",
                        help="also time torch's DistributedDataParallel on the same MLP")
    parser.add_argument("--profile", type=int, default=0, metavar="STEPS",
                        help="then cProfile this many wrapped pycoll steps on rank 0 and print "
                             "the 25 costliest functions (own time): where the host time goes")
    args = parser.parse_args()
    if args.device is not None:
        os.environ["PYCOLL_DEVICE"] = args.device
    dist.init_parallel_env({"cpu": "cpu", "gpu": "nccl", None: None}[args.device])
    rank, world = dist.get_rank(), dist.get_world_size()
    place = pycoll.get_device()
    gpu = int(place.split(":")[1]) if place.startswith("gpu") else None
    sync = _nothing
    if gpu is not None:
        import cupy

        sync = cupy.cuda.Device(gpu).synchronize
    runs, reducer = pycoll_runs(args.batch, rank, world)
    buckets = [] if reducer is None else [b.buffer.size for b in reducer.buckets]
    sides = {"pycoll": (runs, sync)}
    if args.torch:
        sides["torch"] = torch_runs(args.batch, rank, world, gpu, buckets)
    before = None if reducer is None else dict(reducer.stats)
    medians = interleaved(sides, args.steps, args.rounds)
    if rank != 0:
        return
    nparams = sum(WIDTHS[i] * WIDTHS[i + 1] + WIDTHS[i + 1] for i in range(len(WIDTHS) - 1))
    print(f"# MLP {WIDTHS}: {nparams / 1e6:.1f} M parameters, batch {args.batch} per rank, "
          f"{world} rank(s) on {place}, median of {args.steps} steps x {args.rounds} interleaved "
          f"rounds")
    report(medians, list(sides), world)
    if reducer is not None:
        synced = args.steps * args.rounds  # flatten/unflatten run in the wrapped steps only
        per_step = {k: (reducer.stats[k] - before[k]) / synced * 1e3 for k in before}
        print(f"\npycoll: {len(buckets)} buckets; host time per step in flatten "
              f"{per_step['flatten_s']:.2f} ms, unflatten {per_step['unflatten_s']:.2f} ms")
    if args.profile and world == 1:  # several ranks would wait on each other inside the profile
        profiled(runs["wrapped"], sync, args.profile)


def profiled(run: Callable[[], Any], sync: Callable[[], Any], steps: int) -> None:
    """cProfile's 25 costliest functions (own time) over ``steps`` calls of ``run``."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(steps):
        run()
    sync()
    profiler.disable()
    print(f"\ncProfile of {steps} wrapped pycoll steps (own time first):")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
