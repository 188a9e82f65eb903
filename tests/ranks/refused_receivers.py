"""A read-only output, which only its own rank can see, refused without putting the group out of
step (3 ranks): in every case below one rank passes a read-only receive buffer and catches the
ValueError, while its peers make the call as usual. The refusing rank's array must be unchanged,
the peers' results of that call right, and the next ordinary call must give every rank the right
values (before, the refusing rank raised before the call, its peers' parts stayed queued, and that
next call handed out wrong values). Expected values are worked out by hand below. The messages are
checked last, so that a wrong value is what a failure shows first. argv[1] is the mode:

- ``blocking``: every collective with such an output, and recv and batch_isend_irecv, on the world;
- ``subgroup``: on the group [2, 1] (rank 0 outside), with a non-contiguous read-only view; rank 0
  checks that all_gather and stream.all_gather refuse it with paddle's RuntimeError;
- ``async``: sync_op=False, which raises at the call, the call started (the group keeps its task);
- ``stream``: the ``dist.stream`` variants, one tensor for a list where paddle takes that.

Every rank prints ``refused_receivers.py OK rank=N`` at the end.
"""
import sys

import numpy as np
from expect import expect

import pycoll.distributed as dist
from pycoll.distributed import stream

dist.init_parallel_env()
mode, rank = sys.argv[1], dist.get_rank()
assert dist.get_world_size() == 3
MESSAGES = []  # (the refusal's text, the call, the argument), checked at the end


def frozen(arr):
    arr.flags.writeable = False
    return arr


def eq(got, want, what):
    got = np.asarray(got)
    assert np.array_equal(got, want), f"rank {rank} {what}: got {got.tolist()}, expected {np.asarray(want).tolist()}"


def attempt(refuser, name, arg, fn, *args, **kwargs):
    """``fn(*args, **kwargs)``; on rank ``refuser`` (whose ``arg`` is read-only) it must raise a
    ValueError, kept for the end."""
    if rank != refuser:
        return fn(*args, **kwargs)
    try:
        fn(*args, **kwargs)
    except ValueError as exc:
        MESSAGES.append((str(exc), name, arg))
        return None
    raise AssertionError(f"rank {rank}: {name} into a read-only {arg} was not refused")


def blocking():
    # all_reduce: rank 1's tensor is read-only; 1 + 2 + 3 on the others
    x = np.full(3, rank + 1.0)
    attempt(1, "all_reduce", "tensor", dist.all_reduce, frozen(x) if rank == 1 else x)
    eq(x, np.full(3, 2.0 if rank == 1 else 6.0), "all_reduce")
    y = np.full(3, 10.0 * (rank + 1))
    dist.all_reduce(y)
    eq(y, np.full(3, 60.0), "the next all_reduce")

    # reduce to rank 2, whose tensor is read-only; the others' are unchanged
    x = np.full(2, 100.0 * (rank + 1))
    attempt(2, "reduce", "tensor", dist.reduce, frozen(x) if rank == 2 else x, dst=2)
    eq(x, np.full(2, 100.0 * (rank + 1)), "reduce")
    y = np.full(2, rank + 1.0)
    dist.reduce(y, dst=2)
    eq(y, np.full(2, 6.0 if rank == 2 else rank + 1.0), "the next reduce")

    # broadcast from rank 0 into rank 1's read-only tensor
    x = np.full(2, rank + 5.0)
    attempt(1, "broadcast", "tensor", dist.broadcast, frozen(x) if rank == 1 else x, src=0)
    eq(x, np.full(2, 6.0 if rank == 1 else 5.0), "broadcast")
    y = np.full(2, rank + 10.0)
    dist.broadcast(y, src=0)
    eq(y, np.full(2, 10.0), "the next broadcast")

    # all_gather into a list whose entry 1 is read-only on rank 2
    x = np.array([rank + 1.0, -(rank + 1.0)])
    whole = np.array([[1.0, -1.0], [2.0, -2.0], [3.0, -3.0]])
    outs = [np.zeros(2) for _ in range(3)]
    if rank == 2:
        frozen(outs[1])
    attempt(2, "all_gather", "tensor_list[1]", dist.all_gather, outs, x)
    eq(np.stack(outs), np.zeros((3, 2)) if rank == 2 else whole, "all_gather")
    got = []
    dist.all_gather(got, 10 * x)
    eq(np.stack(got), 10 * whole, "the next all_gather")

    # all_gather into one read-only tensor (paddle's stacked form) on rank 0
    out = np.zeros((3, 2))
    attempt(0, "all_gather", "tensor_list[0]", dist.all_gather, frozen(out) if rank == 0 else out, x)
    eq(out, np.zeros((3, 2)) if rank == 0 else whole, "all_gather into one tensor")
    out = np.zeros((3, 2))
    dist.all_gather(out, 3 * x)
    eq(out, 3 * whole, "the next all_gather into one tensor")

    # gather to rank 1, whose list has a read-only entry 2
    x = np.full(2, 3.0 * rank)
    outs = [np.zeros(2) for _ in range(3)] if rank == 1 else None
    if rank == 1:
        frozen(outs[2])
    attempt(1, "gather", "gather_list[2]", dist.gather, x, outs, dst=1)
    if rank == 1:
        eq(np.stack(outs), np.zeros((3, 2)), "gather")
    got = []
    dist.gather(x + 1, got, dst=1)
    if rank == 1:
        eq(np.stack(got), [[1.0, 1.0], [4.0, 4.0], [7.0, 7.0]], "the next gather")

    # scatter from rank 0 into rank 2's read-only tensor
    out = np.zeros(2)
    blocks = [np.full(2, 7.0 + i) for i in range(3)] if rank == 0 else None
    attempt(2, "scatter", "tensor", dist.scatter, frozen(out) if rank == 2 else out, blocks, src=0)
    eq(out, np.zeros(2) if rank == 2 else np.full(2, 7.0 + rank), "scatter")
    out = np.zeros(2)
    dist.scatter(out, [np.full(2, 20.0 + i) for i in range(3)] if rank == 0 else None, src=0)
    eq(out, np.full(2, 20.0 + rank), "the next scatter")

    # reduce_scatter into rank 0's read-only tensor: rank i gets sum_r (r + 1)(i + 1) = 6(i + 1)
    out = np.zeros(2)
    parts = [np.full(2, (rank + 1.0) * (i + 1)) for i in range(3)]
    attempt(0, "reduce_scatter", "tensor", dist.reduce_scatter, frozen(out) if rank == 0 else out, parts)
    eq(out, np.zeros(2) if rank == 0 else np.full(2, 6.0 * (rank + 1)), "reduce_scatter")
    out = np.zeros(2)
    dist.reduce_scatter(out, [np.full(2, 10.0 * (rank + 1) + i) for i in range(3)])
    eq(out, np.full(2, 60.0 + 3 * rank), "the next reduce_scatter")  # sum_r 10(r + 1) + i

    # alltoall: block j of rank r is 10r + j; rank 1's out_tensor_list[0] is read-only
    ins = [np.full(2, 10.0 * rank + j) for j in range(3)]
    outs = [np.zeros(2) for _ in range(3)]
    if rank == 1:
        frozen(outs[0])
    attempt(1, "alltoall", "out_tensor_list[0]", dist.alltoall, outs, ins)
    came = np.array([np.full(2, 10.0 * r + rank) for r in range(3)])
    eq(np.stack(outs), np.zeros((3, 2)) if rank == 1 else came, "alltoall")
    outs = []
    dist.alltoall(outs, [a + 100 for a in ins])
    eq(np.stack(outs), came + 100, "the next alltoall")

    # alltoall_single: element j of rank r is 10r + j; rank 2's out_tensor is read-only
    out = np.zeros(3)
    attempt(2, "alltoall_single", "out_tensor", dist.alltoall_single, frozen(out) if rank == 2 else out,
            np.arange(3.0) + 10 * rank)
    eq(out, np.zeros(3) if rank == 2 else 10.0 * np.arange(3) + rank, "alltoall_single")
    out = np.zeros(3)
    dist.alltoall_single(out, np.arange(3.0) + 10 * rank + 100)
    eq(out, 10.0 * np.arange(3) + rank + 100, "the next alltoall_single")

    # recv: rank 0 sends twice to rank 1, whose first tensor is read-only
    if rank == 0:
        dist.send(np.full(2, 42.0), dst=1)
        dist.send(np.full(2, 43.0), dst=1)
    elif rank == 1:
        x = frozen(np.zeros(2))
        attempt(1, "recv", "tensor", dist.recv, x, src=0)
        eq(x, np.zeros(2), "recv")
        y = np.zeros(2)
        dist.recv(y, src=0)
        eq(y, np.full(2, 43.0), "the next recv")

    # batch_isend_irecv around the ring; rank 2's receive is read-only
    def ring(value, buf):
        return dist.batch_isend_irecv([dist.P2POp(dist.isend, np.full(2, rank + value), (rank + 1) % 3),
                                       dist.P2POp(dist.irecv, buf, (rank - 1) % 3)])

    buf = np.zeros(2)
    tasks = attempt(2, "batch_isend_irecv", "p2p_op_list[1].tensor", ring, 50.0, frozen(buf) if rank == 2 else buf)
    for task in tasks or ():
        task.wait()
    eq(buf, np.zeros(2) if rank == 2 else np.full(2, (rank - 1) % 3 + 50.0), "batch_isend_irecv")
    buf = np.zeros(2)
    for task in ring(60.0, buf):
        task.wait()
    eq(buf, np.full(2, (rank - 1) % 3 + 60.0), "the next batch_isend_irecv")


def subgroup():
    pair = dist.new_group([2, 1])  # rank 0 is outside it
    if rank == 0:
        # paddle 3.3.1 raises RuntimeError("The group should not be None and all ranks which invoke
        # this operation should be the member of this group.") here (measured on its CPU build)
        words = ["all_gather", "rank 0 is not a member of group 1 (ranks [1, 2])",
                 "all ranks which invoke this operation should be members of the group"]
        got = []
        expect(RuntimeError, words, dist.all_gather, got, np.ones(2), group=pair)
        expect(RuntimeError, words, stream.all_gather, got, np.ones(2), group=pair)
        assert got == [], got
        x = np.ones(2)
        dist.all_reduce(x, group=pair)  # the other collectives still return at once there
        eq(x, np.ones(2), "all_reduce outside the group")
    else:
        # the probe's reduce: rank 2 (the destination) read-only
        x = np.full(2, 100.0 * rank)
        attempt(2, "reduce", "tensor", dist.reduce, frozen(x) if rank == 2 else x, dst=2, group=pair)
        eq(x, np.full(2, 100.0 * rank), "reduce on the pair")
        y = np.full(2, float(rank))
        dist.reduce(y, dst=2, group=pair)
        eq(y, np.full(2, 3.0 if rank == 2 else 1.0), "the next reduce on the pair")

        # broadcast from rank 2 into rank 1's read-only tensor
        x = np.full(2, 100.0 * rank)
        attempt(1, "broadcast", "tensor", dist.broadcast, frozen(x) if rank == 1 else x, src=2, group=pair)
        eq(x, np.full(2, 100.0 * rank), "broadcast on the pair")
        y = np.full(2, float(rank))
        dist.broadcast(y, src=2, group=pair)
        eq(y, np.full(2, 2.0), "the next broadcast on the pair")

        # all_reduce into a read-only, non-contiguous view on rank 1 (in place: its values count)
        base = np.arange(6.0) * rank
        x = base[::2]
        attempt(1, "all_reduce", "tensor", dist.all_reduce, frozen(x) if rank == 1 else x, group=pair)
        want = np.arange(6.0) * rank
        if rank == 2:
            want[::2] = np.arange(0.0, 6.0, 2) * (1 + 2)
        eq(base, want, "all_reduce on the pair")
        y = np.full(2, rank * 7.0)
        dist.all_reduce(y, group=pair)
        eq(y, np.full(2, 21.0), "the next all_reduce on the pair")
    x = np.full(2, rank + 1.0)
    dist.all_reduce(x)  # the world is in step too
    eq(x, np.full(2, 6.0), "the world's all_reduce")


def nonblocking():
    world = dist.get_group(0)
    # all_reduce: rank 0's tensor is read-only; it raises at the call, the call started
    x = np.full(4, rank + 1.0)
    task = attempt(0, "all_reduce", "tensor", dist.all_reduce, frozen(x) if rank == 0 else x, sync_op=False)
    if rank == 0:  # the group keeps the started call (and its scratch buffer) until it completes
        assert len(world.pending) == 1 and "all_reduce #" in repr(world.pending[0]), world.pending
    else:
        task.wait()
    eq(x, np.full(4, 1.0 if rank == 0 else 6.0), "all_reduce(sync_op=False)")
    y = np.full(4, rank + 10.0)
    dist.all_reduce(y, sync_op=False).wait()
    eq(y, np.full(4, 33.0), "the next all_reduce(sync_op=False)")

    # reduce to rank 1, whose tensor is read-only
    x = np.full(2, rank + 1.0)
    task = attempt(1, "reduce", "tensor", dist.reduce, frozen(x) if rank == 1 else x, dst=1, sync_op=False)
    if task is not None:
        task.wait()
    eq(x, np.full(2, rank + 1.0), "reduce(sync_op=False)")
    y = np.full(2, rank + 20.0)
    dist.reduce(y, dst=1, sync_op=False).wait()
    eq(y, np.full(2, 63.0 if rank == 1 else rank + 20.0), "the next reduce(sync_op=False)")

    # irecv into rank 0's read-only tensor from rank 2
    if rank == 2:
        dist.isend(np.full(2, 8.0), dst=0).wait()
        dist.isend(np.full(2, 9.0), dst=0).wait()
    elif rank == 0:
        x = frozen(np.zeros(2))
        attempt(0, "irecv", "tensor", dist.irecv, x, src=2)  # named as itself
        y = np.zeros(2)
        dist.irecv(y, src=2).wait()
        eq(y, np.full(2, 9.0), "the next irecv")
        eq(x, np.zeros(2), "irecv")
    dist.barrier()  # waits for the tasks the group kept
    assert not world.pending, world.pending


def streams():
    # stream.all_reduce on the calculation stream into rank 2's read-only tensor
    x = np.full(2, rank + 1.0)
    attempt(2, "all_reduce", "tensor", stream.all_reduce, frozen(x) if rank == 2 else x, use_calc_stream=True)
    eq(x, np.full(2, 3.0 if rank == 2 else 6.0), "stream.all_reduce")
    y = np.full(2, rank + 2.0)
    stream.all_reduce(y, use_calc_stream=True)
    eq(y, np.full(2, 9.0), "the next stream.all_reduce")

    # stream.reduce_scatter from one tensor of three parts into rank 1's read-only tensor
    out = np.zeros(2)
    attempt(1, "reduce_scatter", "tensor", stream.reduce_scatter, frozen(out) if rank == 1 else out,
            np.arange(6.0) + rank)
    eq(out, np.zeros(2) if rank == 1 else 3 * np.arange(2.0 * rank, 2.0 * rank + 2) + 3, "stream.reduce_scatter")
    out = np.zeros(2)
    stream.reduce_scatter(out, np.arange(6.0) * (rank + 1))
    eq(out, 6 * np.arange(2.0 * rank, 2.0 * rank + 2), "the next stream.reduce_scatter")

    # stream.all_gather into rank 0's read-only tensor
    out = np.zeros((3, 2))
    attempt(0, "all_gather", "tensor_list[0]", stream.all_gather, frozen(out) if rank == 0 else out,
            np.full(2, rank * 2.0))
    eq(out, np.zeros((3, 2)) if rank == 0 else [[0, 0], [2, 2], [4, 4]], "stream.all_gather")
    out = np.zeros((3, 2))
    stream.all_gather(out, np.full(2, rank * 5.0))
    eq(out, [[0, 0], [5, 5], [10, 10]], "the next stream.all_gather")

    # stream.scatter of one tensor from rank 1 into rank 0's read-only tensor
    out = np.zeros(2)
    attempt(0, "scatter", "tensor", stream.scatter, frozen(out) if rank == 0 else out,
            np.arange(6.0) if rank == 1 else None, src=1)
    eq(out, np.zeros(2) if rank == 0 else np.arange(2.0 * rank, 2.0 * rank + 2), "stream.scatter")
    out = np.zeros(2)
    stream.scatter(out, np.arange(6.0) + 1 if rank == 1 else None, src=1)
    eq(out, np.arange(2.0 * rank, 2.0 * rank + 2) + 1, "the next stream.scatter")
    # a one-tensor source that does not split over the ranks: the source alone sees it, and every
    # rank raises its refusal (the others waited in the scatter, until the job was stopped)
    try:
        stream.scatter(out, np.arange(5.0) if rank == 1 else None, src=1)
        raise AssertionError(f"rank {rank}: stream.scatter of 5 rows over 3 ranks was not refused")
    except ValueError as exc:
        assert "stream.scatter: tensor_or_tensor_list has shape [5]; as one tensor it needs a dim 0 that splits " \
               "evenly" in str(exc), exc
        assert rank == 1 or "(refused on rank 1, which alone could check it; nothing was sent)" in str(exc), exc
    eq(out, np.arange(2.0 * rank, 2.0 * rank + 2) + 1, "stream.scatter after a refusal")

    # stream.alltoall of one tensor each (alltoall_single) into rank 1's read-only tensor
    out = np.zeros(3)
    attempt(1, "alltoall_single", "out_tensor", stream.alltoall, frozen(out) if rank == 1 else out,
            np.arange(3.0) + 10 * rank)
    eq(out, np.zeros(3) if rank == 1 else 10.0 * np.arange(3) + rank, "stream.alltoall")
    out = np.zeros(3)
    stream.alltoall(out, np.arange(3.0) + 10 * rank + 1)
    eq(out, 10.0 * np.arange(3) + rank + 1, "the next stream.alltoall")

    # stream.recv into rank 0's read-only tensor from rank 2
    if rank == 2:
        stream.send(np.full(2, 4.0), dst=0)
        stream.send(np.full(2, 5.0), dst=0)
    elif rank == 0:
        x = frozen(np.zeros(2))
        attempt(0, "recv", "tensor", stream.recv, x, src=2)
        y = np.zeros(2)
        stream.recv(y, src=2)
        eq(y, np.full(2, 5.0), "the next stream.recv")


{"blocking": blocking, "subgroup": subgroup, "async": nonblocking, "streams": streams}[mode]()
for text, name, arg in MESSAGES:
    assert text == (f"pycoll.distributed.{name}: {arg} is read-only but receives a result; this rank takes "
                    f"part in the call with a scratch buffer, so that the group stays in step, and {arg} is "
                    f"left unchanged; pass a writeable array"), text
dist.barrier()
print(f"refused_receivers.py OK rank={rank} refusals={len(MESSAGES)}", flush=True)
