"""Ranks that wrap different models get a clear error on every rank at wrap time."""
import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn

dist.init_parallel_env()
width = 8 if dist.get_rank() == 0 else 9
model = nn.Sequential(nn.Linear(4, width), nn.Linear(width, 2))
try:
    pycoll.DataParallel(model)
except ValueError as exc:
    assert "different models" in str(exc) and "0.weight" in str(exc), exc
    print(f"dp_mismatch OK rank={dist.get_rank()}: {exc}", flush=True)
