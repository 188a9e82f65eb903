"""Rank 1 fails before init_parallel_env (the job of two launchers, one rank each, stops);
rank 0 says hello and waits to be stopped."""
import os
import time

rank = int(os.environ["PADDLE_TRAINER_ID"])
print(f"hello from rank {rank} log_dir={os.environ.get('PADDLE_LOG_DIR')}", flush=True)
if rank == 1:
    raise RuntimeError("planted on rank 1")
time.sleep(30)
