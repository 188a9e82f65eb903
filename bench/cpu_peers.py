"""pycoll's all_reduce beside its CPU peers on the same ranks, in one run: raw mpi4py and torch's gloo.

    python -m pycoll.launch --nproc_per_node 2 bench/cpu_peers.py [--plot bench/cpu_peers.png]

For each size (float32), rounds alternate among the contenders; each round times a block of
calls, a block's time being the slowest rank's. The table gives each contender's median time per
call, its bus bandwidth (nccl-tests' all_reduce factor 2(n-1)/n) and its time relative to
pycoll. torch is optional (`pip install torch`); without it the gloo column is left out.
"""
import argparse
import os
import statistics
import time

import numpy as np
from mpi4py import MPI

import pycoll.distributed as dist

SIZES = [1 << s for s in range(10, 27, 2)]  # 1 KiB .. 64 MiB


def gloo_allreduce(rank, world):
    try:
        import torch
        import torch.distributed as tdist
    except ImportError:
        return None
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(29500 + os.getppid() % 1000))
    tdist.init_process_group("gloo", rank=rank, world_size=world)
    return lambda a: (lambda t: lambda: tdist.all_reduce(t))(torch.from_numpy(a))


def block_time(comm, fn, iters):
    comm.Barrier()
    start = time.perf_counter()
    for _ in range(iters):
        fn()
    return comm.allreduce(time.perf_counter() - start, op=MPI.MAX) / iters


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--plot", help="write a PNG of bus bandwidth against size")
    args = parser.parse_args()
    dist.init_parallel_env()
    raw = MPI.COMM_WORLD.Dup()
    rank, world = raw.Get_rank(), raw.Get_size()
    gloo = gloo_allreduce(rank, world)
    factor = 2 * (world - 1) / world
    results = {}
    for nbytes in SIZES:
        arrays = {name: np.ones(nbytes // 4, np.float32) for name in ("pycoll", "mpi4py", "gloo")}
        calls = {"pycoll": lambda a=arrays["pycoll"]: dist.all_reduce(a),
                 "mpi4py": lambda a=arrays["mpi4py"]: raw.Allreduce(MPI.IN_PLACE, a)}
        if gloo is not None:
            calls["gloo"] = gloo(arrays["gloo"])
        iters = max(3, min(1000, (8 << 20) // nbytes * 10))
        times = {name: [] for name in calls}
        for r in range(args.rounds + 1):
            names = list(calls) if r % 2 == 0 else list(reversed(calls))
            for name in names:
                t = block_time(raw, calls[name], iters)
                if r:  # round 0 warms up
                    times[name].append(t)
        results[nbytes] = {name: statistics.median(v) for name, v in times.items()}
    if rank != 0:
        return
    names = list(next(iter(results.values())))
    print(f"# all_reduce float32, {world} ranks, {MPI.Get_library_version().splitlines()[0].split(':')[0]} "
          f"{MPI.Get_version()}, median of {args.rounds} interleaved rounds")
    print("| size | " + " | ".join(f"{n} (us) | {n} busbw (GB/s)" for n in names) + " | "
          + " | ".join(f"{n} / pycoll" for n in names[1:]) + " |")
    print("|---:" * (1 + 2 * len(names) + len(names) - 1) + "|")
    for nbytes, med in results.items():
        cells = [f"{med[n] * 1e6:.1f} | {nbytes * factor / med[n] / 1e9:.2f}" for n in names]
        ratios = [f"{med[n] / med['pycoll']:.2f}" for n in names[1:]]
        size = f"{nbytes >> 20} MiB" if nbytes >= 1 << 20 else f"{nbytes >> 10} KiB"
        print(f"| {size} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4))
        for n in names:
            ax.plot(list(results), [b * factor / results[b][n] / 1e9 for b in results], marker="o", label=n)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("bus bandwidth (GB/s)")
        ax.set_title(f"all_reduce on {world} CPU ranks")
        ax.legend()
        ax.grid(True, alpha=0.3)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)


if __name__ == "__main__":
    main()
