"""pycoll's all_reduce beside its CPU peers on the same ranks, in one run: raw mpi4py and torch's gloo.

    python -m pycoll.launch --nproc_per_node 2 bench/cpu_peers.py [--plot bench/cpu_peers.png]

For each size (float32), rounds alternate among the contenders; each round times a block of
calls, a block's time being the slowest rank's. The table gives each contender's median time per
call, its bus bandwidth (nccl-tests' all_reduce factor 2(n-1)/n) and its time relative to
pycoll. torch is optional (`pip install torch`); without it the gloo column is left out.
"""
import argparse
import os

import numpy as np
from mpi4py import MPI
from peer_report import plot, table

import pycoll.distributed as dist
from pycoll.bench.timing import median_per_call

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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--plot", help="write a PNG of bus bandwidth against size")
    args = parser.parse_args()
    dist.init_parallel_env()
    raw = MPI.COMM_WORLD.Dup()
    rank, world = raw.Get_rank(), raw.Get_size()
    gloo = gloo_allreduce(rank, world)
    results = {}
    for nbytes in SIZES:
        arrays = {name: np.ones(nbytes // 4, np.float32) for name in ("pycoll", "mpi4py", "gloo")}
        calls = {"pycoll": lambda a=arrays["pycoll"]: dist.all_reduce(a),
                 "mpi4py": lambda a=arrays["mpi4py"]: raw.Allreduce(MPI.IN_PLACE, a)}
        if gloo is not None:
            calls["gloo"] = gloo(arrays["gloo"])
        iters = max(3, min(1000, (8 << 20) // nbytes * 10))
        times = median_per_call(raw, list(calls.values()), iters, args.rounds)  # + a warm-up round
        results[nbytes] = dict(zip(calls, times))
    if rank != 0:
        return
    print(f"# all_reduce float32, {world} ranks, {MPI.Get_library_version().splitlines()[0].split(':')[0]} "
          f"{MPI.Get_version()}, median of {args.rounds} interleaved rounds")
    print("\n".join(table(results, world)))
    if args.plot:
        plot(results, world, f"all_reduce on {world} CPU ranks", args.plot)


if __name__ == "__main__":
    main()
