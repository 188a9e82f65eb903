"""Collectives whose ranks give different tensors (an uneven last shard, float32 against float64)
or different ops are refused on every rank before anything is sent, naming each rank's, and the
job goes on: MPI completed them, each rank receiving some rank's data and whatever followed it in
memory (an all_gather of 3 and 2 elements gave rank 0 [[0, 1, 2], [10, 11, 1.4e-45]], exit 0).
Compared on every call on MPI (agreement.due; on NCCL on a group's first 8 collectives and each
power of two). Two ranks;
argv[1] "world", "group" (a new group of both), "kinds" (rank 0 in all_reduce, rank 1 in
broadcast: told so), "task": a non-blocking all_gather of uneven sizes, whose task ends the job, or
"late_task": a non-blocking all_reduce of different sizes off the schedule, which the next comparison
(the next blocking call) finds in the group's digest of the calls made without one: it ends the job."""
import sys

import numpy as np

import pycoll
import pycoll.distributed as dist

dist.init_parallel_env()
rank = dist.get_rank()
if sys.argv[1:] == ["task"]:  # started, it cannot be taken back: its task ends the job
    dist.all_gather([], pycoll.to_tensor(np.ones(3 - rank, np.float32)), sync_op=False).wait()
    raise SystemExit(f"rank {rank}: a non-blocking all_gather of uneven sizes was not stopped")
if sys.argv[1:] == ["late_task"]:  # off the schedule it runs uncompared: the next comparison ends the job
    for _ in range(20):
        dist.all_reduce(pycoll.ones([4]), sync_op=False).wait()
    dist.all_reduce(pycoll.ones([4 + rank]), sync_op=False).wait()  # the 21st: rank 1's 5th element is garbage
    dist.all_reduce(pycoll.ones([2]))  # compared: its words carry the digest of calls 17 to 21
    raise SystemExit(f"rank {rank}: a non-blocking all_reduce of different sizes was not stopped")
if sys.argv[1:] == ["kinds"]:  # ranks in different collectives are told so, not of their tensors
    x = pycoll.ones([1])
    try:
        dist.all_reduce(x) if rank == 0 else dist.broadcast(x, src=0)
    except ValueError as exc:
        fn = "all_reduce" if rank == 0 else "broadcast"
        assert str(exc) == (f"pycoll.distributed.{fn}: the ranks of world (ranks [0, 1]) are in different collectives "
                            f"(rank 0: all_reduce; rank 1: broadcast); every rank must make the same calls in the "
                            f"same order; nothing was sent"), exc
    else:
        raise AssertionError(f"rank {rank}: all_reduce against broadcast went through")
    dist.all_reduce(x)
    assert x.numpy().tolist() == [2.0], x
    print(f"tensor agreement OK rank={rank}", flush=True)
    raise SystemExit(0)
group = dist.new_group([0, 1]) if sys.argv[1:] == ["group"] else None
where = "group 1 (ranks [0, 1])" if group is not None else "world (ranks [0, 1])"


def refused(fn, tensors, call):
    """``call(t)`` of rank's tensor ``t`` raises every rank's ValueError; ``tensors`` names them."""
    x = pycoll.to_tensor(np.arange(3 - rank, dtype=np.float32))
    before = x.numpy().copy()
    try:
        call(x)
    except ValueError as exc:
        want = (f"pycoll.distributed.{fn}: the ranks of {where} gave different tensors ({tensors}); every rank must "
                f"give the same dtype and number of elements")
        assert str(exc).startswith(want) and str(exc).endswith("; nothing was sent"), exc
    else:
        raise AssertionError(f"rank {rank}: {fn} of {tensors} went through")
    assert x.numpy().tolist() == before.tolist(), (fn, x)  # nothing was sent


# the group's collectives #1 to #8, all compared
uneven = "rank 0: float32 of 3 elements; rank 1: float32 of 2 elements"
refused("all_gather", uneven, lambda x: dist.all_gather([], x, group=group))
refused("gather", uneven, lambda x: dist.gather(x, [] if rank == 0 else None, dst=0, group=group))
refused("broadcast", uneven, lambda x: dist.broadcast(x, src=0, group=group))
refused("all_reduce", "rank 0: float32 of 3 elements, op=ReduceOp.SUM; rank 1: float32 of 2 elements, op=ReduceOp.SUM",
        lambda x: dist.all_reduce(x, group=group))
refused("all_reduce", "rank 0: float32 of 3 elements, op=ReduceOp.SUM; rank 1: float64 of 3 elements, op=ReduceOp.SUM",
        lambda x: dist.all_reduce(pycoll.ones([3], "float32" if rank == 0 else "float64"), group=group))
refused("all_reduce", "rank 0: float32 of 3 elements, op=ReduceOp.SUM; rank 1: float32 of 3 elements, op=ReduceOp.MAX",
        lambda x: dist.all_reduce(pycoll.ones([3]), op=dist.ReduceOp.MAX if rank else dist.ReduceOp.SUM, group=group))
refused("reduce_scatter", "rank 0: float32 of 2 elements, op=ReduceOp.SUM; rank 1: float32 of 1 element, op=ReduceOp.SUM",
        lambda x: dist.reduce_scatter(pycoll.zeros([2 - rank]), [pycoll.ones([2 - rank])] * 2, group=group))
# an uneven split's last shard, as evaluation code meets it: 37 rows over 2 ranks
rows = pycoll.to_tensor(np.arange(rank, 37, 2, dtype=np.int64))
try:
    dist.all_gather(gathered := [], rows, group=group)
except ValueError as exc:
    assert "rank 0: int64 of 19 elements; rank 1: int64 of 18 elements" in str(exc), exc
else:
    raise AssertionError(f"rank {rank}: an all_gather of 19 and 18 rows went through: {gathered}")
# the group is in step: the job goes on, and agreeing calls are untouched
x = pycoll.to_tensor(np.arange(4.0) + rank)
dist.all_reduce(x, group=group)
assert x.numpy().tolist() == [1.0, 3.0, 5.0, 7.0], x
parts = []
dist.all_gather(parts, pycoll.full([2], float(rank)), group=group)
assert [p.numpy().tolist() for p in parts] == [[0.0, 0.0], [1.0, 1.0]], parts
# an evaluation after training, a SUM against a MAX in the 34th step: MPI compares every call
for _ in range(20):
    dist.all_reduce(pycoll.ones([2]), group=group)
assert (group if group is not None else dist.get_group()).collectives_made == 30
refused("all_gather", uneven, lambda x: dist.all_gather([], x, group=group))  # the 31st
refused("gather", uneven, lambda x: dist.gather(x, [] if rank == 0 else None, dst=0, group=group))
refused("broadcast", uneven, lambda x: dist.broadcast(x, src=0, group=group))
refused("all_reduce", "rank 0: float32 of 3 elements, op=ReduceOp.SUM; rank 1: float32 of 3 elements, op=ReduceOp.MAX",
        lambda x: dist.all_reduce(pycoll.ones([3]), op=dist.ReduceOp.MAX if rank else dist.ReduceOp.SUM, group=group))
refused("reduce_scatter", "rank 0: float32 of 2 elements, op=ReduceOp.SUM; rank 1: float32 of 1 element, op=ReduceOp.SUM",
        lambda x: dist.reduce_scatter(pycoll.zeros([2 - rank]), [pycoll.ones([2 - rank])] * 2, group=group))
print(f"tensor agreement OK rank={rank}", flush=True)
