"""The one-way time of a small ``send``/``recv`` between two ranks, pycoll beside raw mpi4py on a
duplicate of the same world (each receive naming its tag, as a plain MPI program would).

    python -m pycoll.launch --nproc_per_node 2 bench/p2p_pingpong.py [--bytes 8] [--rounds 5] [--trips 5000]

Each round times ``--trips`` round trips (rank 0 sends then receives, rank 1 the reverse); rank 0
prints the best round's time per message, in microseconds, for both.
"""
from __future__ import annotations

import argparse
import time
from typing import Callable

import numpy as np
from mpi4py import MPI

import pycoll.distributed as dist


def best_one_way(trip: Callable[[], None], rounds: int, trips: int) -> float:
    """The best over ``rounds`` of the time of ``trips`` calls of ``trip``, per message (µs)."""
    best = float("inf")
    for _ in range(rounds):
        dist.barrier()
        start = time.perf_counter()
        for _ in range(trips):
            trip()
        best = min(best, (time.perf_counter() - start) / trips / 2 * 1e6)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bytes", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--trips", type=int, default=5000)
    args = parser.parse_args()
    dist.init_parallel_env()
    rank, peer = dist.get_rank(), 1 - dist.get_rank()
    buf = np.zeros(max(args.bytes // 4, 1), np.float32)
    comm = MPI.COMM_WORLD.Dup()

    def pycoll_trip() -> None:
        if rank == 0:
            dist.send(buf, peer)
            dist.recv(buf, peer)
        else:
            dist.recv(buf, peer)
            dist.send(buf, peer)

    def raw_trip() -> None:
        if rank == 0:
            comm.Send([buf, MPI.BYTE], peer, 7)
            comm.Recv([buf, MPI.BYTE], peer, 7)
        else:
            comm.Recv([buf, MPI.BYTE], peer, 7)
            comm.Send([buf, MPI.BYTE], peer, 7)

    ours, raw = best_one_way(pycoll_trip, args.rounds, args.trips), best_one_way(raw_trip, args.rounds, args.trips)
    if rank == 0:
        print(f"{buf.nbytes} B one way: pycoll {ours:.2f} us, mpi4py {raw:.2f} us ({ours / raw:.2f}x)", flush=True)


if __name__ == "__main__":
    main()
