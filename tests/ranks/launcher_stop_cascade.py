"""Rank 1 fails (SystemExit(5)) once the others are ready: rank 0's SIGTERM handler writes
DIR/saved.0 and exits with status 3 (DIR is argv[1]); rank 2 has no handler; rank 1's own
handler would write DIR/saved.1. Paddle's launcher blames rank 1 alone and never signals it."""
import os
import signal
import sys
import time

import pycoll.distributed as dist

folder = sys.argv[1]
dist.init_parallel_env()
rank = dist.get_rank()


def on_term(signum, frame):
    open(os.path.join(folder, f"saved.{rank}"), "w").close()
    sys.exit(3 if rank == 0 else 4)


if rank != 2:
    signal.signal(signal.SIGTERM, on_term)
if rank != 1:
    open(os.path.join(folder, f"ready.{rank}"), "w").close()
    time.sleep(60)
while not all(os.path.exists(os.path.join(folder, f"ready.{peer}")) for peer in (0, 2)):
    time.sleep(0.05)
raise SystemExit(5)
