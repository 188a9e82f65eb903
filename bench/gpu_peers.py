"""pycoll's all_reduce beside its GPU peers on the same ranks, in one run: the raw NcclCommunicator,
cupyx.distributed and torch.distributed (NCCL).

    python -m pycoll.launch --nproc_per_node 2 bench/gpu_peers.py [--plot bench/gpu_peers.png]

One rank per GPU is the real measurement. Several ranks may share ONE GPU (a test machine):
pycoll then gives each rank its own NCCL_HOSTID, so that NCCL connects them as separate hosts
through its socket transport; tell NCCL to use the loopback interface for it:

    NCCL_SOCKET_IFNAME=lo python -m pycoll.launch --nproc_per_node 2 bench/gpu_peers.py

The sizes are 8 B to 128 MiB by factors of 4, then 256 MiB (float32, SUM, in place). For each size,
every contender is first checked once (each rank contributes rank + 1 everywhere), then the
arrays are zeroed (so that repeated sums stay finite) and rounds alternate among the
contenders, the order flipping every round. A round times a block of calls on each contender;
the block ends when the contender's stream has finished (the calls only queue work on it), and
its time is the slowest rank's. The table gives each contender's median time per call, its bus
bandwidth (nccl-tests' all_reduce factor 2(n-1)/n) and its time relative to pycoll.

pycoll, the raw communicator and cupyx run on CuPy's current stream; torch on its own current
stream. The raw call is the very communicator pycoll's world group owns (``backend.comm``), so
the pycoll / raw ratio is pycoll's Python overhead. cupyx and torch each build their own NCCL
communicator (torch with the libnccl it ships). torch is optional (a CUDA build is needed);
without it the column is left out.
"""
import argparse
import os
import socket

import cupy
import numpy as np
from cupy.cuda import nccl
from mpi4py import MPI
from peer_report import plot, table

import pycoll.distributed as dist
from pycoll.bench.timing import median_per_call

SIZES = [8 << 2 * k for k in range(13)] + [256 << 20]  # 8 B .. 128 MiB by x4, then 256 MiB


def free_port(comm):
    """A TCP port free on rank 0's host, the same on every rank."""
    port = None
    if comm.Get_rank() == 0:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
    return comm.bcast(port, root=0)


def cupy_sync():
    cupy.cuda.get_current_stream().synchronize()


class Contender:
    """One way to all_reduce a float32 array in place: ``make(nbytes)`` allocates its buffer
    and returns ``(call, fill, is_all)``; ``sync`` waits for the stream its calls queue on."""

    def __init__(self, name, make, sync):
        self.name, self.make, self.sync = name, make, sync


def pycoll_contender():
    def make(nbytes):
        arr = cupy.zeros(nbytes // 4, np.float32)
        return (lambda: dist.all_reduce(arr)), arr.fill, lambda v: bool((arr == v).all())
    return Contender("pycoll", make, cupy_sync)


def raw_contender(comm):
    """``comm``: pycoll's world NcclCommunicator, called as pycoll's engine calls it."""
    def make(nbytes):
        arr = cupy.zeros(nbytes // 4, np.float32)
        ptr, count = arr.data.ptr, arr.size
        stream = cupy.cuda.get_current_stream().ptr

        def call():
            comm.allReduce(ptr, ptr, count, nccl.NCCL_FLOAT32, nccl.NCCL_SUM, stream)
        return call, arr.fill, lambda v: bool((arr == v).all())
    return Contender("raw nccl", make, cupy_sync)


def cupyx_contender(rank, world):
    import cupyx.distributed

    comm = cupyx.distributed.init_process_group(world, rank, backend="nccl", use_mpi=True)

    def make(nbytes):
        arr = cupy.zeros(nbytes // 4, np.float32)
        call = lambda: comm.all_reduce(arr, arr, "sum")  # noqa: E731
        return call, arr.fill, lambda v: bool((arr == v).all())
    return Contender("cupyx", make, cupy_sync)


def torch_contender(rank, world, device, port):
    """torch.distributed over NCCL on this rank's GPU, or None without a CUDA torch."""
    try:
        import torch
        import torch.distributed as tdist
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    torch.cuda.set_device(device)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(port))
    tdist.init_process_group("nccl", rank=rank, world_size=world)

    def make(nbytes):
        t = torch.zeros(nbytes // 4, dtype=torch.float32, device=f"cuda:{device}")
        return (lambda: tdist.all_reduce(t)), t.fill_, lambda v: bool((t == v).all().item())
    return Contender("torch", make, lambda: torch.cuda.current_stream().synchronize())


def check(contender, call, fill, is_all, rank, world):
    """Run ``call`` once on rank + 1 everywhere; RuntimeError unless every rank has the sum."""
    fill(rank + 1)
    call()
    contender.sync()
    if not is_all(world * (world + 1) / 2):
        raise RuntimeError(f"{contender.name}: all_reduce gave a wrong result on rank {rank}")
    fill(0)
    contender.sync()


def measure(comm, contenders, nbytes, rounds, rank, world):
    """Median seconds per call of each contender for ``nbytes``, the slowest rank's (a first
    round warms up)."""
    calls = []
    for c in contenders:
        call, fill, is_all = c.make(nbytes)
        check(c, call, fill, is_all, rank, world)
        calls.append(call)
    iters = max(3, min(1000, (256 << 20) // nbytes))
    times = median_per_call(comm, calls, iters, rounds, syncs=[c.sync for c in contenders])
    return {c.name: t for c, t in zip(contenders, times)}


def describe(world, rounds, torch_on):
    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    v = nccl.get_version()
    line = (f"# all_reduce float32 SUM in place, {world} ranks on {name}; NCCL "
            f"{v // 10000}.{v // 100 % 100}.{v % 100} (CuPy {cupy.__version__})")
    if torch_on:
        import torch

        theirs = ".".join(map(str, torch.cuda.nccl.version()))
        line += f", torch {torch.__version__} (its NCCL {theirs})"
    return line + f"; median of {rounds} interleaved rounds"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--plot", help="write a PNG of bus bandwidth against size")
    args = parser.parse_args()
    world_group = dist.init_parallel_env(backend="nccl")
    if world_group.backend.name != "nccl":
        raise SystemExit("gpu_peers.py: no usable GPU here (pycoll fell back to its cpu backend)")
    comm = MPI.COMM_WORLD.Dup()
    rank, world = comm.Get_rank(), comm.Get_size()
    port = free_port(comm)  # before any contender starts: nothing else has taken it yet
    contenders = [pycoll_contender(), raw_contender(world_group.backend.comm),
                  cupyx_contender(rank, world)]
    torch_peer = torch_contender(rank, world, world_group.backend.device, port)
    if torch_peer is not None:
        contenders.append(torch_peer)
    results = {n: measure(comm, contenders, n, args.rounds, rank, world) for n in SIZES}
    if rank == 0:
        print(describe(world, args.rounds, torch_peer is not None))
        print("\n".join(table(results, world)))
        if args.plot:
            plot(results, world, f"all_reduce on {world} GPU ranks", args.plot)


if __name__ == "__main__":
    main()
