"""Rank 1 posts an irecv too small for what rank 0 sends and drops the task; then both ranks call
all_reduce three times, catching errors (a training loop that goes on). argv[1] "off": the job must
end at rank 1's first all_reduce (checked by the test); "on" (PYCOLL_CHECK=1): rank 1 raises the
irecv's error, rank 0 a CollectiveError naming it, and the next two sums are right; "p2p": three
send/recv pairs instead, each receiving its own message (the error waits for a collective; at exit
a warning says it). Two ranks."""
import sys
import time

import numpy as np

import pycoll
import pycoll.distributed as dist

dist.init_parallel_env()
rank = dist.get_rank()
if rank == 0:
    dist.send(np.arange(4, dtype=np.float32), dst=1)
else:
    dist.irecv(np.zeros(2, np.float32), src=0)  # dropped; fails: the message is longer
    time.sleep(0.5)
if sys.argv[1] == "p2p":
    for step in range(3):
        got = np.zeros(1, np.float32)
        dist.send(np.full(1, 100.0 * step, np.float32), dst=1) if rank == 0 else dist.recv(got, src=0)
        assert rank == 0 or got[0] == 100.0 * step, (step, got)
    print(f"OK rank={rank}", flush=True)
    sys.exit(0)
sums = []
for step in range(3):
    y = np.full(2, 100.0 * step + rank, np.float32)
    try:
        dist.all_reduce(y)
        sums.append(float(y[0]))
    except pycoll.CollectiveError as exc:
        sums.append(None)
        text = str(exc)
        if rank == 1:  # (under the check, the descriptor names the sizes)
            assert "recv #1 from rank 0" in text and ("longer than the buffer" in text or "float32[2]" in text), text
        else:
            assert "rank 1: all_reduce #1 refused (CollectiveError: " in text and "recv #1 from rank 0" in text, text
assert sys.argv[1] == "on" and sums == [None, 201.0, 401.0], sums
print(f"OK rank={rank}", flush=True)
