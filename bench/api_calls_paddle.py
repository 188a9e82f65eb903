"""Paddle's side of bench/api_calls_vs_paddle.py, on the ranks of ``python -m
paddle.distributed.launch`` (Paddle's CPU build, gloo): median per-call times of all_gather_object
(a 1 KiB dict), gather (1 MiB of float32 to rank 0) and reduce (1 MiB and 4 MiB of float32 to
rank 1), each the slowest rank's median over rounds of back-to-back calls after a barrier. Rank 0 prints ``name=microseconds`` lines.
"""
import argparse
import statistics
import time

import paddle
import paddle.distributed as dist


def per_call(run, calls: int, rounds: int) -> float:
    """The slowest rank's median over ``rounds`` blocks of ``calls`` calls (a block first to warm up)."""
    blocks = []
    for _ in range(rounds + 1):
        dist.barrier()
        start = time.perf_counter()
        for _ in range(calls):
            run()
        blocks.append((time.perf_counter() - start) / calls)
    mine = paddle.to_tensor([statistics.median(blocks[1:])], dtype="float64")
    dist.all_reduce(mine, op=dist.ReduceOp.MAX)
    return float(mine.numpy()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    dist.init_parallel_env()
    rank = dist.get_rank()
    obj = {"rank": rank, "text": "x" * 1000}
    chunk = paddle.full([1 << 18], float(rank), dtype="float32")
    times = {
        "all_gather_object": per_call(lambda: dist.all_gather_object([], obj), 200, args.rounds),
        "gather": per_call(lambda: dist.gather(chunk, [] if rank == 0 else None, dst=0), 50, args.rounds),
    }
    for size, calls in ((1 << 20, 20), (4 << 20, 10)):
        x = paddle.ones([size // 4], dtype="float32")
        times[f"reduce_{size >> 20}MiB"] = per_call(lambda: dist.reduce(x, dst=1), calls, args.rounds)
    if rank == 0:
        for name, seconds in times.items():
            print(f"{name}={seconds * 1e6:.2f}", flush=True)


if __name__ == "__main__":
    main()
