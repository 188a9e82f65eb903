"""pycoll-bench with a planted wrong result (test-only): after every pycoll all_reduce, the first
output element of rank 0 (of every rank with BENCH_CORRUPT_ALL=1) is off by one. The check (-c 1)
must count it and the run must fail.

    python -m pycoll.launch --nproc_per_node 2 tests/ranks/bench_corrupt.py all_reduce [flags]
"""
import os
import sys

from pycoll.bench import cli
from pycoll.bench.collectives import OPS

all_reduce = OPS["all_reduce"]
every_rank = os.environ.get("BENCH_CORRUPT_ALL") == "1"
honest = all_reduce.through_pycoll


def corrupted(ctx, b, inplace):
    run = honest(ctx, b, inplace)
    out = all_reduce.output(b, ctx, inplace, raw=False)

    def corrupt_after_run():
        run()
        if (ctx.rank == 0 or every_rank) and out.size:
            out[0] += 1

    return corrupt_after_run


all_reduce.through_pycoll = corrupted
sys.exit(cli.main(sys.argv[1:]))
