"""The seed's spawn usage: a plain `python spawn_main.py MODE`, ``func`` living in __main__."""
import sys

import numpy as np

import pycoll.distributed as dist


def train(scale, fail):
    dist.init_parallel_env()
    if fail and dist.get_rank() == 1:
        raise ValueError("planted failure in a spawned rank")
    x = np.full(3, scale * (dist.get_rank() + 1))
    dist.all_reduce(x)
    print(f"spawned OK rank={dist.get_rank()} sum={x[0]:g}", flush=True)


if __name__ == "__main__":
    fail = sys.argv[1] == "fail"
    try:
        dist.spawn(train, args=(2.0, fail), nprocs=2)
    except dist.SpawnError as exc:
        print(f"parent caught SpawnError rank={exc.rank} exitcode={exc.exitcode}\n{exc}", flush=True)
        sys.exit(9)
    print("parent done", flush=True)
