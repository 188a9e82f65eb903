"""Rank 1 fails in the way argv[1] names ("raise", "exit", "kill" (SIGKILL), "segv" (a segmentation
fault in ``crash``), "os_exit" = ``os._exit(0)``,
"os_exit3" = ``os._exit(3)``; "hang": it sleeps for two minutes; "ok": it does not fail) while
the others wait in an all_reduce. Every rank first prints
its process id, so that tests can check none is left behind.

Works on either backend: the tensor lives on the rank's device."""
import ctypes
import os
import signal
import sys
import time

import pycoll
import pycoll.distributed as dist


def crash():
    ctypes.string_at(0)


dist.init_parallel_env()
mode = sys.argv[1]
print(f"failing.py started rank={dist.get_rank()} pid={os.getpid()}", flush=True)
if dist.get_rank() == 1 and mode != "ok":
    time.sleep(120 if mode == "hang" else 0.5)
    if mode == "raise":
        raise KeyError("planted failure")
    if mode == "exit":
        sys.exit(3)
    if mode == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "segv":
        crash()
    if mode.startswith("os_exit"):
        os._exit(int(mode[7:] or 0))
x = pycoll.ones([4])
dist.all_reduce(x)
print(f"failing.py OK rank={dist.get_rank()} sum={x.numpy()[0]:g} argv={sys.argv[1:]} "
      f"cuda_visible={os.environ.get('CUDA_VISIBLE_DEVICES')}", flush=True)
