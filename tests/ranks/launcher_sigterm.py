"""Rank 1 fails once rank 0 has a SIGTERM handler (a checkpoint on exit, writing DIR/saved.0;
DIR is argv[1]): the launcher's ranks are stopped with SIGTERM first, as paddle's are."""
import os
import signal
import sys
import time

folder, rank = sys.argv[1], int(os.environ["PADDLE_TRAINER_ID"])


def on_term(signum, frame):
    with open(os.path.join(folder, f"saved.{rank}"), "w") as f:
        f.write(f"checkpoint at signal {signum}")
    sys.exit(0)


if rank == 0:
    signal.signal(signal.SIGTERM, on_term)
    open(os.path.join(folder, "ready.0"), "w").close()
    time.sleep(60)
while not os.path.exists(os.path.join(folder, "ready.0")):
    time.sleep(0.05)
raise RuntimeError("planted on rank 1")
