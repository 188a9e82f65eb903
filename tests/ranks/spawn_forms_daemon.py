"""spawn(daemon=True) and no join: the parent's exit stops the ranks, without a word."""
import time

import pycoll.distributed as dist


def job():
    time.sleep(60)


if __name__ == "__main__":
    context = dist.spawn(job, nprocs=2, join=False, daemon=True)
    print("pids", *[p.pid for p in context.processes], flush=True)
    print("parent leaves", flush=True)
