"""2 ranks on the NCCL engine (strict stand-in): new_group called by each rank with its own rank
list ([0] on rank 0, [1] on rank 1) gives each rank a group of its own, as the cpu backend does;
before, every member joined one split color and both groups were one communicator of 2 (all_reduce
gave 3 on both ranks). Then the same lists made by every rank, as documented; on nccl, lists that
overlap but differ are refused on the rank whose communicator does not match its list. argv[1]:
nccl or cpu."""
import sys

if sys.argv[1] == "nccl":
    import strict_gpu_device  # noqa: F401 - installs the stand-in first

import pycoll  # noqa: E402
import pycoll.distributed as dist  # noqa: E402

dist.init_parallel_env()
rank = dist.get_rank()
if sys.argv[1] == "nccl":
    pycoll.set_device("gpu")
own = dist.new_group([rank])
x = pycoll.to_tensor([rank + 1.0])
dist.all_reduce(x, group=own)
assert own.nranks == 1 and x.numpy().tolist() == [rank + 1.0], (own.nranks, x.numpy())

g0, g1 = dist.new_group([0]), dist.new_group([1])
mine = g0 if rank == 0 else g1
y = pycoll.to_tensor([rank + 1.0])
dist.all_reduce(y, group=mine)
both = pycoll.to_tensor([rank + 1.0])
dist.all_reduce(both)
assert y.numpy().tolist() == [rank + 1.0] and both.numpy().tolist() == [3.0], (y.numpy(), both.numpy())
if sys.argv[1] == "nccl":  # lists that overlap but differ: the rank whose group came out wrong says so
    try:
        dist.new_group([0, 1] if rank == 0 else [1])
        refused = ""
    except ValueError as exc:
        refused = str(exc)
    assert ("different rank lists" in refused) == (rank == 0), refused
other = g1 if rank == 0 else g0
try:
    dist.get_backend(other)
except RuntimeError as exc:  # paddle's type; a ValueError too, naming the group
    assert isinstance(exc, ValueError) and "is not in" in str(exc), exc
else:
    raise AssertionError("get_backend of a group without this rank must raise")
print(f"OK rank={rank} backend={dist.get_backend()}", flush=True)
