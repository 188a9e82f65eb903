"""Where the host time of one small NCCL collective goes: pycoll's call beside its CuPy parts.

    python bench/nccl_host_cost.py [--calls 200] [--blocks 25] [--json FILE] [--profile all_reduce]
    python bench/nccl_host_cost.py --stand-in     # no GPU: tests/host_cuda.py's CuPy stand-in

One rank on one GPU, float32 arrays of 2 elements (8 B), so that the device work is nil and each
time is host time: pycoll's all_reduce, broadcast and all_gather, the raw ``NcclCommunicator``
call they make, and each CuPy call pycoll's NCCL engine makes around it (the current stream, a
buffer's address, an event made and recorded, an event re-recorded, an event's query). A figure
is the median over ``--blocks`` blocks of ``--calls`` calls each; the stream is synchronized
between blocks, untimed, so that the launch queue never fills. Then cProfile's 20 costliest
functions (own time) of ``--profile``'s pycoll call. bench/RESULTS.md's GPU section measured
pycoll's all_reduce at 10-12 us a call against the raw call's 0.7 us; this says which part to
cut. With ``--stand-in`` (tests/host_cuda.py, NCCL calls dropped) the figures are the stand-in's
and only check this script.
"""
import argparse
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import time
from typing import Any, Callable, Dict

import numpy as np


def per_call_us(fn: Callable[[], Any], calls: int, blocks: int, sync: Callable[[], None]) -> float:
    """Median host microseconds a call of ``fn`` over ``blocks`` blocks of ``calls`` calls."""
    for _ in range(calls):  # warm-up
        fn()
    sync()
    times = []
    for _ in range(blocks):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls * 1e6)
        sync()
    return statistics.median(times)


def use_stand_in() -> None:
    """tests/host_cuda.py in CuPy's place, with every NCCL call taken and dropped."""
    os.environ["PYCOLL_TEST_HOST_CUPY"] = "1"
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
    import host_cuda
    host_cuda.install_if_asked()
    from pycoll.backends import cuda_api
    cuda = cuda_api.cuda()
    cuda.nccl.NcclCommunicator = lambda n, uid, r: host_cuda.Communicator(cuda, r, n, None)


def main(argv: Any = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200, help="calls a timed block (default 200)")
    parser.add_argument("--blocks", type=int, default=25, help="timed blocks (default 25)")
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument("--profile", default="all_reduce", help="the pycoll call to profile")
    parser.add_argument("--stand-in", action="store_true", help="no GPU: the CuPy stand-in")
    args = parser.parse_args(argv)
    os.environ.setdefault("PYCOLL_BACKEND", "nccl")
    if args.stand_in:
        use_stand_in()
    import cupy
    import pycoll.distributed as dist

    group = dist.init_parallel_env()
    engine = group.engine
    comm, nccl = engine.comm, cupy.cuda.nccl
    x = cupy.ones(2, np.float32)
    gathered = cupy.zeros(2 * group.nranks, np.float32)
    stream = cupy.cuda.get_current_stream()
    kept = cupy.cuda.Event(block=False, disable_timing=True)
    kept.record(stream)

    def made_and_recorded() -> Any:
        event = cupy.cuda.Event(block=False, disable_timing=True)
        event.record(stream)
        return event

    calls: Dict[str, Callable[[], Any]] = {
        "pycoll all_reduce": lambda: dist.all_reduce(x),
        "pycoll all_reduce sync_op=False + wait": lambda: dist.all_reduce(x, sync_op=False).wait(),
        "pycoll broadcast": lambda: dist.broadcast(x, src=0),
        "pycoll all_gather into one tensor": lambda: dist.all_gather(gathered, x),
        "raw NcclCommunicator.allReduce": lambda: comm.allReduce(
            x.data.ptr, x.data.ptr, 2, nccl.NCCL_FLOAT32, nccl.NCCL_SUM, stream.ptr),
        "cupy.cuda.get_current_stream()": cupy.cuda.get_current_stream,
        "x.data.ptr": lambda: x.data.ptr,
        "Event() made": lambda: cupy.cuda.Event(block=False, disable_timing=True),
        "Event() made and recorded": made_and_recorded,
        "kept Event re-recorded": lambda: kept.record(stream),
        "Event.done": lambda: kept.done,
    }
    figures = {name: per_call_us(fn, args.calls, args.blocks, stream.synchronize)
               for name, fn in calls.items()}
    print(f"host time a call, 8 B float32, 1 rank{' (stand-in)' if args.stand_in else ''}:")
    for name, us in figures.items():
        print(f"  {name:<42} {us:8.2f} us")

    profiled = calls[f"pycoll {args.profile}"]
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(args.blocks):
        for _ in range(args.calls):
            profiled()
        stream.synchronize()
    profiler.disable()
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(20)
    print(f"\ncProfile of pycoll {args.profile}, {args.blocks * args.calls} calls (own time first):")
    print(text.getvalue())
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"stand_in": args.stand_in, "per_call_us": figures}, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
