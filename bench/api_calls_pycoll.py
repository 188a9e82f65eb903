"""pycoll's side of bench/api_calls_vs_paddle.py, on the ranks of ``pycoll.launch``: median per-call
times of all_gather_object (a 1 KiB dict), gather (1 MiB of float32 to rank 0), reduce (1 MiB
and 4 MiB of float32 to rank 1), and alltoall_single (16 MiB) beside raw mpi4py ``Alltoallv``
on the same buffers, interleaved.
Rank 0 prints ``name=microseconds`` lines.
"""
import argparse

import numpy as np
from mpi4py import MPI

import pycoll.distributed as dist
from pycoll.bench.timing import median_per_call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    dist.init_parallel_env()
    comm = MPI.COMM_WORLD.Dup()
    rank, n = comm.Get_rank(), comm.Get_size()
    obj = {"rank": rank, "text": "x" * 1000}
    chunk = np.full(1 << 18, rank, np.float32)  # 1 MiB
    send = np.full(1 << 22, rank, np.float32)  # 16 MiB, split evenly
    recv = np.empty_like(send)
    part = send.nbytes // n
    counts, displs = [part] * n, [i * part for i in range(n)]

    def gather_objects() -> None:
        dist.all_gather_object([], obj)

    def gather_chunk() -> None:
        dist.gather(chunk, [] if rank == 0 else None, dst=0)

    reduced = {size: np.ones(size // 4, np.float32) for size in (1 << 20, 4 << 20)}

    def pycoll_alltoallv() -> None:
        dist.alltoall_single(recv, send)

    def raw_alltoallv() -> None:
        comm.Alltoallv([send, (counts, displs), MPI.BYTE], [recv, (counts, displs), MPI.BYTE])

    times = {
        "all_gather_object": median_per_call(comm, [gather_objects], 200, args.rounds)[0],
        "gather": median_per_call(comm, [gather_chunk], 50, args.rounds)[0],
        "reduce_1MiB": median_per_call(comm, [lambda: dist.reduce(reduced[1 << 20], dst=1)], 20, args.rounds)[0],
        "reduce_4MiB": median_per_call(comm, [lambda: dist.reduce(reduced[4 << 20], dst=1)], 10, args.rounds)[0],
    }
    ours, raw = median_per_call(comm, [pycoll_alltoallv, raw_alltoallv], 10, args.rounds)
    times.update(alltoall_single=ours, mpi4py_Alltoallv=raw)
    if rank == 0:
        for name, seconds in times.items():
            print(f"{name}={seconds * 1e6:.2f}", flush=True)


if __name__ == "__main__":
    main()
