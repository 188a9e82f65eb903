"""Every collective x dtype x size x root x op on NumPy arrays (the cpu backend), against NumPy,
on however many ranks started it; then zero-size arrays. The checks are in collective_checks."""
import numpy as np
from collective_checks import Checks

import pycoll.distributed as dist

REDUCIBLE = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
             np.float32, np.float64, np.complex64, np.complex128]
MOVABLE = REDUCIBLE + [np.float16, np.bool_]


def main():
    dist.init_parallel_env()
    rank, n = dist.get_rank(), dist.get_world_size()
    checks = Checks(np, rank, n)
    count = checks.reductions(REDUCIBLE) + checks.movement(MOVABLE)
    # reductions of 256 KiB and more (the sizes where MPICH's own reduce was slowest)
    count += checks.reductions([np.float32, np.int64, np.bool_], shapes=[(512, 513)])
    # zero-size arrays are a no-op for every collective
    empty = np.zeros((0,), np.float32)
    dist.all_reduce(empty)
    dist.broadcast(empty, src=n - 1)
    dist.reduce(empty, dst=0)
    zeros = []
    dist.all_gather(zeros, empty)
    assert len(zeros) == n and all(z.shape == (0,) for z in zeros)
    dist.barrier()
    print(f"collectives OK rank={rank} world={n} checks={count}", flush=True)


if __name__ == "__main__":
    main()
