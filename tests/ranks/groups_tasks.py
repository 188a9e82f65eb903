"""Sub-groups, async tasks and bad arguments on a live job (3 or more ranks)."""
import numpy as np
from expect import expect

import pycoll.distributed as dist
from pycoll import CollectiveError  # noqa: F401  (the public error type must import)


def main():
    world = dist.init_parallel_env()
    assert dist.init_parallel_env() is world and dist.is_initialized()
    rank, n = dist.get_rank(), dist.get_world_size()
    assert n >= 3
    env = dist.ParallelEnv()
    assert (env.rank, env.world_size, env.nranks) == (rank, n, n)
    assert len(env.trainer_endpoints) == n and env.current_endpoint == env.trainer_endpoints[rank]

    # a sub-group of the first and last rank; ranks are given unsorted and sorted by new_group
    edge = dist.new_group([n - 1, 0])
    assert edge.ranks == [0, n - 1] and edge.nranks == 2
    if rank in (0, n - 1):
        assert dist.get_rank(edge) == (0 if rank == 0 else 1) and dist.get_world_size(edge) == 2
        x = np.full(4, rank + 1.0)
        dist.all_reduce(x, group=edge)
        assert np.array_equal(x, np.full(4, 1.0 + n)), x
        y = np.full(3, float(rank))
        dist.broadcast(y, src=n - 1, group=edge)  # src is a global rank
        assert np.array_equal(y, np.full(3, n - 1.0)), y
        got = []
        dist.all_gather(got, np.array([rank]), group=edge)
        assert [int(g[0]) for g in got] == [0, n - 1]
        expect(ValueError, ["src=1", "not a rank of group"], dist.broadcast, y, src=1, group=edge) if n > 2 else None
    else:
        assert dist.get_rank(edge) == -1 and dist.get_world_size(edge) == -1 and not edge.is_member()

    # paddle's rule: every rank may call a group's collectives; outside it they return at once
    member = rank in (0, n - 1)
    x = np.full(2, float(rank))
    task = dist.all_reduce(x, group=edge, sync_op=False)
    task.wait()
    assert task.is_completed() and x.tolist() == ([n - 1.0] * 2 if member else [float(rank)] * 2), x
    got, objects, out = [], [], [None]
    if member:
        dist.all_gather(got, x, group=edge)
        dist.all_gather_object(objects, rank, group=edge)
    else:  # paddle's all_gather and all_gather_object refuse a rank outside the group
        for fn, args in ((dist.all_gather, (got, x)), (dist.all_gather_object, (objects, rank))):
            expect(RuntimeError, [f"{fn.__name__}: rank {rank} is not a member of group"], fn, *args, group=edge)
    dist.scatter_object_list(out, [10, 11] if rank == 0 else None, src=0, group=edge)
    dist.alltoall_single(np.zeros(2), np.arange(2.0), group=edge)
    dist.stream.reduce_scatter(np.zeros(1), np.ones(2), group=edge)
    dist.barrier(group=edge)
    assert (len(got), objects) == ((2, [0, n - 1]) if member else (0, [])), (got, objects)
    assert out == ([10] if rank == 0 else [11] if member else [None]), out

    # the world still works for everyone, and a second group over all ranks agrees with it
    everyone = dist.new_group(list(reversed(range(n))))
    x = np.array([float(rank)])
    dist.all_reduce(x, group=everyone, op=dist.ReduceOp.MAX)
    assert x[0] == n - 1

    # on the cpu backend a sub-group's members may create it by themselves (paddle's allow it)
    if rank in (0, n - 1):
        pair = dist.new_group([0, n - 1])
        y = np.array([float(rank)])
        dist.all_reduce(y, group=pair)
        assert y[0] == n - 1, y
    z = np.ones(1)
    dist.all_reduce(z)
    assert z[0] == n, z

    expect(ValueError, ["ranks contains", str(n)], dist.new_group, [0, n])
    expect(ValueError, ["duplicates"], dist.new_group, [0, 0])
    dist.destroy_process_group(everyone)
    expect(ValueError, ["destroyed"], dist.all_reduce, np.ones(1), group=everyone)

    # several tasks in flight at once, completed in any order
    a, b, c = np.full(5, rank, np.int64), np.full(2, rank, np.float64), np.zeros(3, np.int32)
    if rank == 1:
        c[:] = 9
    tasks = [dist.all_reduce(a, sync_op=False), dist.broadcast(c, src=1, sync_op=False),
             dist.all_reduce(b, op=dist.ReduceOp.MIN, sync_op=False)]
    tasks[2].wait()
    while not tasks[0].is_completed():
        pass
    tasks[1].wait()
    assert all(t.is_completed() for t in tasks)
    assert (a == n * (n - 1) // 2).all() and (b == 0).all() and (c == 9).all(), (a, b, c)
    assert dist.all_reduce(np.ones(1)).wait() is True

    # bad input raises on the calling rank only, before anything is sent; the job goes on
    expect(TypeError, ["all_reduce", "tensor", "list"], dist.all_reduce, [1, 2])
    expect(TypeError, ["datetime64", "reducible dtypes"], dist.all_reduce, np.zeros(3, "datetime64[D]"))
    expect(TypeError, ["AVG", "int32"], dist.all_reduce, np.ones(3, np.int32), op=dist.ReduceOp.AVG)
    expect(TypeError, ["MAX", "complex"], dist.all_reduce, np.ones(3, np.complex64), op=dist.ReduceOp.MAX)
    expect(ValueError, ["op=", "ReduceOp"], dist.all_reduce, np.ones(3), op="sum")
    frozen = np.ones(3)
    frozen.flags.writeable = False
    expect(ValueError, ["read-only"], dist.all_reduce, frozen)
    expect(ValueError, ["src=", str(n)], dist.broadcast, np.ones(3), src=n)
    expect(TypeError, ["dst"], dist.reduce, np.ones(3), dst=1.5)
    expect(ValueError, ["tensor_list", "entries"], dist.all_gather, [np.ones(2)] * (n + 1), np.ones(2))
    expect(ValueError, ["tensor_list[1]", "shape"], dist.all_gather,
           [np.ones(2), np.ones(3)] + [np.ones(2)] * (n - 2), np.ones(2))
    # every rank sends rank 1 four values where rank 1 has room for two: refused on both sides
    expect(ValueError, ["in_tensor_list[1] is 32 bytes (f8[4]) but rank 1 expects 16 bytes (f8[2])",
                        "nothing was sent"] + (["out_tensor_list[0] holds 16 bytes (f8[2]) but rank 0 sends "
                                                "32 bytes (f8[4])"] if rank == 1 else []),
           dist.alltoall, [np.zeros(2) for _ in range(n)], [np.ones(2), np.ones(4)] + [np.ones(2)] * (n - 2))
    expect(ValueError, ["dst", "itself"], dist.send, np.ones(2), dst=rank)
    expect(TypeError, ["object"], dist.broadcast, np.array([None, 1]), src=0)
    # a check only the source can make: every rank hears its verdict and raises, nobody waits
    expect(ValueError, ["tensor_list is None", "source rank"], dist.scatter, np.ones(2), None, src=0)
    wrong = [np.ones(2)] * (n + 1) if rank == n - 1 else None
    expect(ValueError, ["tensor_list has", "entries"] + ([] if rank == n - 1 else [f"refused on rank {n - 1}"]),
           dist.scatter, np.ones(2), wrong, src=n - 1)
    expect(ValueError, ["gather_list has 1 entries"], dist.gather, np.ones(2), [np.ones(2)], dst=1)
    z = np.array([rank + 1.0])
    dist.all_reduce(z)
    assert z[0] == n * (n + 1) / 2

    dist.barrier()
    dist.destroy_process_group()
    assert not dist.is_initialized()
    expect(ValueError, ["not initialized", "init_parallel_env"], dist.all_reduce, np.ones(1))
    dist.init_parallel_env()
    z = np.ones(1)
    dist.all_reduce(z)
    assert z[0] == n
    print(f"groups_tasks OK rank={rank}", flush=True)


if __name__ == "__main__":
    main()
