"""PYCOLL_CHECK=1 on the NCCL engine, over the strict CuPy stand-in ('GPU' tensors): blocking and
non-blocking calls that agree run; a dtype that differs raises on both ranks, naming both calls; a
call refused on rank 0 raises its ValueError there and, on rank 1, a CollectiveError naming the
refusal; the job goes on in step. Two ranks."""
import strict_gpu_device  # noqa: F401 - the stand-in in CuPy's place, before pycoll

import pycoll  # noqa: E402
import pycoll.distributed as dist  # noqa: E402

dist.init_parallel_env()
rank = dist.get_rank()
assert dist.get_backend() == "NCCL", dist.get_backend()
pycoll.set_device("gpu")
x = pycoll.full([4], 1.0)
dist.all_reduce(x)
dist.all_reduce(x, sync_op=False).wait()
assert x.numpy().tolist() == [4.0] * 4, x
try:
    dist.all_reduce(pycoll.full([4], 1.0, dtype="float32" if rank == 0 else "int32"))
except pycoll.CollectiveError as exc:
    assert "called different collectives" in str(exc) and "int32[4]" in str(exc) and "float32[4]" in str(exc), exc
else:
    raise AssertionError("a dtype that differs went unnoticed")
try:
    dist.all_reduce(pycoll.full([4], 1.0), op="sum" if rank == 0 else dist.ReduceOp.SUM)
except ValueError as exc:
    assert rank == 0, exc
except pycoll.CollectiveError as exc:
    assert rank == 1 and "rank 0: all_reduce #4 refused (ValueError: " in str(exc), exc
else:
    raise AssertionError("a refused call went unnoticed")
y = pycoll.full([2], float(rank))
dist.all_reduce(y)
assert y.numpy().tolist() == [1.0, 1.0], y
print(f"OK rank={rank}", flush=True)
