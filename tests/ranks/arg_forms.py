"""Paddle's argument forms on 3 ranks: NumPy integers as ranks and ops, Group.get_group_rank(rank=),
Task.wait(timedelta), init_parallel_env(nccl_config=), all_gather_object outside its group.

Every expected value below was measured on Paddle 3.3.1 (CPU build, gloo, 3 ranks) with the same
calls (paddle's script: the same lines with paddle for pycoll), except where a comment says
otherwise."""
import datetime
import time

import numpy as np
from expect import expect

import pycoll.distributed as dist


def main():
    world = dist.init_parallel_env(nccl_config=None)  # paddle 3.3.1's one parameter
    rank = dist.get_rank()
    assert world.ranks == [0, 1, 2]

    # ranks as NumPy integers (paddle 3.3.1: new_group gives ranks [1, 2], every src below works)
    assert dist.new_group(list(np.arange(1, 3))).ranks == [1, 2]
    g = dist.new_group([1, 2])
    # paddle 3.3.1: -1 on the rank outside the group, else the rank in the group
    assert g.get_group_rank(rank=1) == (-1 if rank == 0 else 0)
    assert g.get_group_rank(np.int64(2)) == (-1 if rank == 0 else 1)
    if rank != 0:  # paddle 3.3.1 on a member: "ValueError: 0 is not in list"; on rank 0, -1
        expect(ValueError, ["0 is not in list"], g.get_group_rank, 0)
    else:
        assert g.get_group_rank(0) == -1
    if rank in (1, 2):
        x = np.array([float(rank)])
        dist.broadcast(x, src=np.int64(2), group=g)
        assert x.tolist() == [2.0], x
        objs = ["from2"] if rank == 2 else [None]
        dist.broadcast_object_list(objs, src=np.int64(2), group=g)
        assert objs == ["from2"], objs
        # ops as NumPy integers, on ranks holding 2.0 and 3.0: paddle 3.3.1 gives SUM 5, MAX 3,
        # MIN 2, PROD 6, and "ValueError: Unknown reduce_op type" for 7 and 9
        for op, want in ((np.int64(0), 5.0), (np.int64(1), 3.0), (np.int32(2), 2.0), (np.int8(3), 6.0),
                         (np.uint16(4), 2.5)):  # AVG: paddle's gloo build has none; (2 + 3) / 2 by hand
            y = np.array([rank + 1.0])
            dist.all_reduce(y, op=op, group=g)
            assert y.tolist() == [want], (op, y)
        for op in (7, np.int64(9)):
            expect(ValueError, ["all_reduce", f"op={op!r}", "not a ReduceOp"], dist.all_reduce,
                   np.ones(1), op=op, group=g)
        # paddle 3.3.1 takes True and 1.0 as MAX; pycoll refuses them (not integers naming an op)
        expect(ValueError, ["op=True is a bool"], dist.all_reduce, np.ones(1), op=True, group=g)
        expect(ValueError, ["op=1.0", "not a ReduceOp"], dist.all_reduce, np.ones(1), op=1.0, group=g)
        expect(TypeError, ["broadcast_object_list", "src=True", "bool"], dist.broadcast_object_list,
               [None], src=True, group=g)
        # paddle 3.3.1 hangs in scatter_object_list on a sub-group (gloo); by hand: block i to group rank i
        out = []
        dist.scatter_object_list(out, ["to1", "to2"] if rank == 2 else None, src=np.int64(2), group=g)
        assert out == [f"to{rank}"], out
        gathered = []
        dist.all_gather_object(gathered, 10 * rank, group=g)
        assert gathered == [10, 20], gathered
    else:
        # paddle 3.3.1: "RuntimeError: The group should not be None and all ranks which invoke
        # this operation should be the member of this group."
        expect(RuntimeError, ["all_gather_object", "rank 0 is not a member of group", "should be members"],
               dist.all_gather_object, [], rank, group=g)

    out = []
    dist.scatter_object_list(out, ["a", "b", "c"] if rank == 1 else None, src=np.int64(1))
    assert out == [["a", "b", "c"][rank]], out
    objs = [f"from{rank}"]
    dist.broadcast_object_list(objs, src=np.int64(2))
    assert objs == ["from2"], objs

    # Task.wait takes paddle's datetime.timedelta: paddle 3.3.1 gives (True, [1.0, 1.0])
    z = np.zeros(2, np.float32)
    if rank == 0:
        task = dist.irecv(z, src=1)
        assert (task.wait(datetime.timedelta(seconds=30)), z.tolist()) == (True, [1.0, 1.0]), z
    elif rank == 1:
        time.sleep(0.2)  # rank 0 waits in wait() meanwhile
        dist.send(np.ones(2, np.float32), dst=0)
    dist.barrier()
    print(f"OK rank={rank}", flush=True)


if __name__ == "__main__":
    main()
