"""pycoll beside its GPU peers: all_reduce, all_gather and broadcast on the same ranks, in one run.

The peers: the raw NcclCommunicator, cupyx.distributed, torch.distributed (NCCL) and NVIDIA's
nccl4py.

    python -m pycoll.launch --nproc_per_node 2 bench/gpu_peers.py [--plot bench/gpu_peers.png]
    ... bench/gpu_peers.py --ops all_reduce,broadcast --sizes 8,1K,1M,256M --max-iters 100
    python bench/gpu_peers.py --dry-run [flags]     # what a run would do; needs no GPU

One rank per GPU is the real measurement. Several ranks may share ONE GPU (a test machine):
pycoll then gives each rank its own NCCL_HOSTID, so that NCCL connects them as separate hosts
through its socket transport; tell NCCL to use the loopback interface for it:

    NCCL_SOCKET_IFNAME=lo python -m pycoll.launch --nproc_per_node 2 bench/gpu_peers.py

Every op is float32. The default sizes are 8 B to 128 MiB by factors of 4, then 256 MiB; a size
is the op's whole buffer, as in nccl-tests: for all_gather the output, each rank sending 1/n of
it (at least one element). all_reduce (SUM) and broadcast (root 0) run in place, all_gather out
of place (pycoll's into a list of views of one output buffer, as its API takes it). For each op
and size, every contender is first checked once (each rank's input is rank + 1 everywhere), then
its buffers are zeroed (so that repeated sums stay finite) and rounds alternate among the
contenders, the order flipping every round. A round times a block of calls on each contender
(about 256 MiB of calls, at least 3, at most --max-iters); the block ends when the contender's
stream has finished (the calls only queue work on it), and its time is the slowest rank's. Each
op's table gives each contender's median time per call, its bus bandwidth (nccl-tests' factor:
all_reduce 2(n-1)/n, all_gather (n-1)/n, broadcast 1) and its time relative to pycoll.

pycoll, the raw communicator, cupyx and nccl4py run on CuPy's current stream; torch on its own
current stream. The raw calls are made on the very communicator pycoll's world group owns
(``backend.comm``), so the pycoll / raw ratio is pycoll's Python overhead. cupyx, torch and
nccl4py each build their own NCCL communicator (torch with the libnccl it ships). torch (a CUDA
build) and nccl4py are optional: where one cannot be set up, one line says why and its columns
are left out.
"""
import argparse
import os
import socket
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
from mpi4py import MPI
from peer_report import plot_ops, size_text, table

import pycoll.distributed as dist
from pycoll.bench.config import parse_size
from pycoll.bench.timing import median_per_call

OPS = ("all_reduce", "all_gather", "broadcast")
FORMS = {"all_reduce": "float32 SUM, in place", "all_gather": "float32, out of place",
         "broadcast": "float32 from rank 0, in place"}
SIZES = [8 << 2 * k for k in range(13)] + [256 << 20]  # 8 B .. 128 MiB by x4, then 256 MiB
BLOCK_BYTES = 256 << 20  # a timed block moves about this much: 3 to --max-iters calls
MAX_ITERS = 1000
ROOT = 0
Run = Callable[[], None]
Bind = Callable[[Any, Any], Run]  # (send, recv) -> one call of an op on those buffers


class Contender:
    """One library's way to run the ops: ``arrays`` makes, fills, reads and waits for its
    float32 GPU arrays (:class:`CupyArrays`), ``binds[op](send, recv)`` returns one call of
    ``op`` on those buffers (``send is recv`` for an op run in place)."""

    def __init__(self, name: str, arrays: Any, binds: Dict[str, Bind]):
        self.name, self.arrays, self.binds = name, arrays, binds


class CupyArrays:
    def __init__(self) -> None:
        import cupy

        self.cupy = cupy

    def zeros(self, n: int) -> Any:
        return self.cupy.zeros(n, np.float32)

    def fill(self, arr: Any, value: float) -> None:
        arr.fill(value)

    def to_host(self, arr: Any) -> np.ndarray:
        return self.cupy.asnumpy(arr)

    def sync(self) -> None:
        self.cupy.cuda.get_current_stream().synchronize()

    def stream(self) -> int:
        return self.cupy.cuda.get_current_stream().ptr


class TorchArrays:
    def __init__(self, torch: Any, device: int):
        self.torch, self.device = torch, f"cuda:{device}"

    def zeros(self, n: int) -> Any:
        return self.torch.zeros(n, dtype=self.torch.float32, device=self.device)

    def fill(self, arr: Any, value: float) -> None:
        arr.fill_(value)

    def to_host(self, arr: Any) -> np.ndarray:
        return arr.cpu().numpy()

    def sync(self) -> None:
        self.torch.cuda.current_stream().synchronize()


# -- what each op is ----------------------------------------------------------------------

def counts(op: str, nbytes: int, world: int) -> Tuple[int, int]:
    """Elements of the send and receive buffers of ``op`` for a size of ``nbytes``."""
    total = nbytes // 4
    if op == "all_gather":
        block = max(1, total // world)
        return block, block * world
    return total, total


def expected(op: str, count: int, world: int) -> np.ndarray:
    """Every rank's result of ``op`` on ``count`` elements when rank r's input is r + 1."""
    if op == "all_gather":
        return np.repeat(np.arange(1, world + 1, dtype=np.float32), count // world)
    value = world * (world + 1) / 2 if op == "all_reduce" else ROOT + 1
    return np.full(count, value, np.float32)


def iterations(nbytes: int, max_iters: int) -> int:
    """Calls per timed block for a size of ``nbytes``."""
    return min(max_iters, max(3, BLOCK_BYTES // max(nbytes, 1)))


def prepare(c: Contender, op: str, nbytes: int, rank: int, world: int) -> Run:
    """``c``'s call of ``op`` on fresh buffers of ``nbytes``, checked once, then zeroed;
    RuntimeError when the check finds a wrong result."""
    send_n, recv_n = counts(op, nbytes, world)
    recv = c.arrays.zeros(recv_n)
    send = c.arrays.zeros(send_n) if op == "all_gather" else recv
    call = c.binds[op](send, recv)
    c.arrays.fill(send, rank + 1)
    call()
    c.arrays.sync()
    if not np.array_equal(c.arrays.to_host(recv), expected(op, recv_n, world)):
        raise RuntimeError(f"{c.name}: {op} of {size_text(nbytes)} gave a wrong result on "
                           f"rank {rank}")
    c.arrays.fill(send, 0)
    if recv is not send:
        c.arrays.fill(recv, 0)
    c.arrays.sync()
    return call


def measure(comm: Any, contenders: Sequence[Contender], ops: Sequence[str],
            sizes: Sequence[int], rounds: int, max_iters: int,
            rank: int, world: int,
            log: Optional[Callable[[str], None]] = None) -> Dict[str, Dict[int, Dict[str, float]]]:
    """``{op: {size in bytes: {contender: median seconds per call}}}``, the slowest rank's;
    a size is the op's receive buffer (:func:`counts`). ``log`` is given a line after each size
    (a run stopped by a time limit then shows how far it got, and at what pace)."""
    results: Dict[str, Dict[int, Dict[str, float]]] = {}
    for op in ops:
        results[op] = {}
        for nbytes in sizes:
            started = time.perf_counter()
            calls = [prepare(c, op, nbytes, rank, world) for c in contenders]
            size = counts(op, nbytes, world)[1] * 4
            times = median_per_call(comm, calls, iterations(size, max_iters), rounds,
                                    syncs=[c.arrays.sync for c in contenders])
            results[op][size] = {c.name: t for c, t in zip(contenders, times)}
            if log is not None:
                log(f"# {op} {size_text(size)}: measured in {time.perf_counter() - started:.1f} s")
    return results


def report(results: Dict[str, Dict[int, Dict[str, float]]], world: int) -> List[str]:
    """One markdown table per op, each under a line saying how the op ran."""
    lines: List[str] = []
    for op, by_size in results.items():
        lines += [f"# {op}: {FORMS[op]}", *table(by_size, world, op), ""]
    return lines


# -- the contenders (each made on every rank; CuPy, torch and nccl4py imported here) ---------

def pycoll_contender(world: int) -> Contender:
    def all_gather(send: Any, recv: Any) -> Run:
        outs = [recv[i * send.size:(i + 1) * send.size] for i in range(world)]
        return lambda: dist.all_gather(outs, send)
    return Contender("pycoll", CupyArrays(), {
        "all_reduce": lambda send, recv: lambda: dist.all_reduce(recv),
        "all_gather": all_gather,
        "broadcast": lambda send, recv: lambda: dist.broadcast(recv, ROOT)})


def raw_contender(comm: Any) -> Contender:
    """``comm``: pycoll's world NcclCommunicator, called as pycoll's engine calls it."""
    from cupy.cuda import nccl

    arrays, f32 = CupyArrays(), nccl.NCCL_FLOAT32

    def all_reduce(send: Any, recv: Any) -> Run:
        ptr, n, stream = recv.data.ptr, recv.size, arrays.stream()
        return lambda: comm.allReduce(ptr, ptr, n, f32, nccl.NCCL_SUM, stream)

    def all_gather(send: Any, recv: Any) -> Run:
        src, dst, n, stream = send.data.ptr, recv.data.ptr, send.size, arrays.stream()
        return lambda: comm.allGather(src, dst, n, f32, stream)

    def broadcast(send: Any, recv: Any) -> Run:
        ptr, n, stream = recv.data.ptr, recv.size, arrays.stream()
        return lambda: comm.broadcast(ptr, ptr, n, f32, ROOT, stream)
    return Contender("raw nccl", arrays, {"all_reduce": all_reduce, "all_gather": all_gather,
                                          "broadcast": broadcast})


def cupyx_contender(rank: int, world: int) -> Contender:
    import cupyx.distributed

    comm = cupyx.distributed.init_process_group(world, rank, backend="nccl", use_mpi=True)
    return Contender("cupyx", CupyArrays(), {
        "all_reduce": lambda send, recv: lambda: comm.all_reduce(recv, recv, "sum"),
        "all_gather": lambda send, recv: lambda: comm.all_gather(send, recv, send.size),
        "broadcast": lambda send, recv: lambda: comm.broadcast(recv, ROOT)})


def torch_contender(rank: int, world: int, device: int, port: int) -> Contender:
    """torch.distributed over NCCL on this rank's GPU; RuntimeError without a CUDA torch."""
    import torch
    import torch.distributed as tdist

    if not torch.cuda.is_available():
        raise RuntimeError("this torch has no CUDA")
    torch.cuda.set_device(device)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(port))
    tdist.init_process_group("nccl", rank=rank, world_size=world)
    return Contender("torch", TorchArrays(torch, device), {
        "all_reduce": lambda send, recv: lambda: tdist.all_reduce(recv),
        "all_gather": lambda send, recv: lambda: tdist.all_gather_into_tensor(recv, send),
        "broadcast": lambda send, recv: lambda: tdist.broadcast(recv, ROOT)})


def nccl4py_contender(comm: Any, rank: int, world: int) -> Contender:
    """NVIDIA's nccl4py (``nccl.core``) on CuPy arrays, its communicator made from a unique id
    that rank 0 broadcasts over ``comm``. Its first releases name the calls ``all_reduce`` and
    ``all_gather``, later ones ``allreduce`` and ``allgather``."""
    import nccl.core as nccl4py

    uid = comm.bcast(nccl4py.get_unique_id() if rank == 0 else None, root=0)
    nccl_comm = nccl4py.Communicator.init(nranks=world, rank=rank, unique_id=uid)
    def named(*names: str) -> Callable[..., None]:
        return next(getattr(nccl_comm, n) for n in names if hasattr(nccl_comm, n))
    all_reduce, all_gather = named("allreduce", "all_reduce"), named("allgather", "all_gather")
    arrays = CupyArrays()

    def bind(call: Callable[..., None], *args: Any) -> Run:
        stream = arrays.stream()
        return lambda: call(*args, stream=stream)
    return Contender("nccl4py", arrays, {
        "all_reduce": lambda send, recv: bind(all_reduce, recv, recv, nccl4py.SUM),
        "all_gather": lambda send, recv: bind(all_gather, send, recv),
        "broadcast": lambda send, recv: bind(nccl_comm.broadcast, recv, recv, ROOT)})


def optional(name: str, make: Callable[[], Contender],
             comm: Any) -> Tuple[Optional[Contender], str]:
    """``make()``'s contender, or None and the line saying why ``name`` is skipped; the ranks
    agree (a contender one rank could not set up is skipped on all)."""
    try:
        made, why = make(), ""
    except Exception as exc:  # ImportError, no CUDA build, a version without a call: skipped
        made, why = None, f"{type(exc).__name__}: {exc}"
    reasons = [r for r in comm.allgather(why) if r]
    if reasons:
        return None, f"# {name}: skipped ({reasons[0]})"
    return made, ""


def free_port(comm: Any) -> int:
    """A TCP port free on rank 0's host, the same on every rank."""
    port = None
    if comm.Get_rank() == 0:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
    return comm.bcast(port, root=0)


def describe(world: int, rounds: int, torch_on: bool) -> str:
    import cupy
    from cupy.cuda import nccl

    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    v = nccl.get_version()
    line = (f"# {world} ranks on {name}; NCCL {v // 10000}.{v // 100 % 100}.{v % 100} "
            f"(CuPy {cupy.__version__})")
    if torch_on:
        import torch

        theirs = ".".join(map(str, torch.cuda.nccl.version()))
        line += f", torch {torch.__version__} (its NCCL {theirs})"
    return line + f"; median of {rounds} interleaved rounds"


# -- the command line -----------------------------------------------------------------------

def _count(low: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is too small: it must be at least {low}")
        return value
    return parse


def _ops(text: str) -> List[str]:
    names = [n.strip() for n in text.split(",")]
    unknown = [n for n in names if n not in OPS]
    if unknown or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"{text!r}: give some of {','.join(OPS)}, each once")
    return names


def _sizes(text: str) -> List[int]:
    try:
        sizes = [parse_size(part) for part in text.split(",")]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if min(sizes) < 4:
        raise argparse.ArgumentTypeError(f"{text!r}: every size must hold a float32 (4 bytes)")
    return sizes


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=_ops, default=list(OPS),
                        help=f"comma-separated collectives (default {','.join(OPS)})")
    parser.add_argument("--sizes", type=_sizes, default=SIZES,
                        help="comma-separated sizes in bytes, K/M/G allowed, e.g. 8,1K,1M,256M "
                             "(default 8 B to 128 MiB by x4, then 256 MiB)")
    parser.add_argument("--max-iters", type=_count(1), default=MAX_ITERS,
                        help=f"at most this many calls per timed block (default {MAX_ITERS})")
    parser.add_argument("--rounds", type=_count(1), default=7,
                        help="timed rounds per op and size, after a warm-up one (default 7)")
    parser.add_argument("--plot", help="write a PNG of bus bandwidth against size, one panel "
                                       "per op")
    parser.add_argument("--dry-run", action="store_true",
                        help="print what would run, and run nothing (needs no GPU)")
    return parser.parse_args(argv)


def plan(args: argparse.Namespace) -> List[str]:
    """What a run of ``args`` would do: the ops, and each size's calls per block."""
    blocks = args.rounds + 1  # a warm-up round, then the timed ones
    lines = [f"# gpu_peers: {', '.join(args.ops)}; contenders pycoll, raw nccl, cupyx, torch "
             f"and nccl4py (where they can be set up); {blocks} blocks per contender and size"]
    for nbytes in args.sizes:
        lines.append(f"#   {size_text(nbytes)}: {iterations(nbytes, args.max_iters)} calls "
                     f"per block")
    return lines


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    if args.dry_run:
        print("\n".join(plan(args)))
        return 0
    world_group = dist.init_parallel_env(backend="nccl")
    if world_group.backend_name != "nccl":
        raise SystemExit("gpu_peers.py: no usable GPU here (pycoll fell back to its cpu backend)")
    comm = MPI.COMM_WORLD.Dup()
    rank, world = comm.Get_rank(), comm.Get_size()
    port = free_port(comm)  # before any contender starts: nothing else has taken it yet
    contenders = [pycoll_contender(world), raw_contender(world_group.engine.comm),
                  cupyx_contender(rank, world)]
    device = world_group.engine.device
    skipped = []
    for name, make in (("torch", lambda: torch_contender(rank, world, device, port)),
                       ("nccl4py", lambda: nccl4py_contender(comm, rank, world))):
        made, why = optional(name, make, comm)
        contenders += [made] if made else []
        skipped += [why] if why else []
    if rank == 0:
        torch_on = any(c.name == "torch" for c in contenders)
        print("\n".join([describe(world, args.rounds, torch_on), *skipped]), flush=True)
    progress = (lambda line: print(line, file=sys.stderr, flush=True)) if rank == 0 else None
    results = {}
    for op in args.ops:  # each op's table as soon as it is measured
        results.update(measure(comm, contenders, [op], args.sizes, args.rounds, args.max_iters,
                               rank, world, progress))
        if rank == 0:
            print("\n".join(report({op: results[op]}, world)), flush=True)
    if rank == 0 and args.plot:
        plot_ops(results, world, f"pycoll and its peers on {world} GPU ranks", args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
