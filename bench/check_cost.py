"""What ``PYCOLL_CHECK`` costs: pycoll's all_reduce with the check on and off, interleaved in one run.

    python -m pycoll.launch --nproc_per_node 2 bench/check_cost.py [--rounds 15]

For each size (float32, SUM, in place) rounds alternate between a block of unchecked calls and a
block of checked calls (the check turned on for each call of that block: it hashes the call's
description and all-gathers each rank's 320-byte record of it, non-blocking, waited for before a
blocking collective). The table gives
each one's median per-call time (the slowest rank's), their ratio and the time the check adds,
against the bar a check on by default would have to meet: at most 1 us, and at most 2 % from
64 KiB up.
"""
import argparse

import numpy as np
from mpi4py import MPI
from peer_report import SIZES, iterations, size_text

import pycoll.distributed as dist
from pycoll.bench.timing import median_per_call
from pycoll.distributed import check

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    dist.init_parallel_env()
    comm = MPI.COMM_WORLD.Dup()
    rows = []
    for nbytes in SIZES:
        a = np.ones(nbytes // 4, np.float32)
        iters = iterations(nbytes)

        def plain() -> None:
            dist.all_reduce(a)

        def checked() -> None:
            check.enabled = True
            dist.all_reduce(a)
            check.enabled = False

        off, on = median_per_call(comm, [plain, checked], iters, args.rounds)
        rows.append((nbytes, off, on))
    if comm.Get_rank() == 0:
        print(f"# {comm.Get_size()} ranks, {MPI.Get_library_version().splitlines()[0].strip()}, "
              f"median of {args.rounds} interleaved rounds")
        print("| size | unchecked (us) | PYCOLL_CHECK=1 (us) | ratio | added (us) | meets the bar |")
        print("|---:|---:|---:|---:|---:|:---:|")
        for nbytes, off, on in rows:
            added = (on - off) * 1e6
            bar = added <= 1.0 and (nbytes < 1 << 16 or on / off <= 1.02)
            print(f"| {size_text(nbytes)} | {off * 1e6:.2f} | {on * 1e6:.2f} | {on / off:.3f} | "
                  f"{added:+.2f} | {'yes' if bar else 'no'} |")


if __name__ == "__main__":
    main()
