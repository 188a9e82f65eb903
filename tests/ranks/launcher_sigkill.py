"""Rank 1 is SIGKILLed (as by the out-of-memory killer) before init_parallel_env, after rank 0
has started; argv[1]: ``hold`` (rank 0 waits to be stopped) or ``finish-first`` (rank 0's
script ends at once, before rank 1 dies)."""
import os
import signal
import sys
import time

rank = int(os.environ["PADDLE_TRAINER_ID"])
print(f"started rank={rank} pid={os.getpid()}", flush=True)
if rank == 1:
    time.sleep(3)  # (the launcher's watcher sees both ranks' pids first, even on a loaded machine)
    os.kill(os.getpid(), signal.SIGKILL)
elif sys.argv[1] == "hold":
    time.sleep(30)
