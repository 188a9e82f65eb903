"""shutdown_process_group / restart_process_group on 2 ranks: a shut-down group refuses its calls
naming itself, the world and other groups go on, and a restarted group gives right values."""
import numpy as np
from expect import expect

import pycoll.distributed as dist


def main():
    dist.init_parallel_env()
    rank = dist.get_rank()
    pair, other = dist.new_group([0, 1]), dist.new_group([1, 0])
    x = np.full(3, rank + 1.0)
    task = dist.all_reduce(x, group=pair, sync_op=False)  # in flight: the shutdown waits for it
    dist.shutdown_process_group(pair)
    assert task.is_completed() and x.tolist() == [3.0] * 3, x
    assert pair.shut_down and pair.process_group is None and not other.shut_down
    for call, args in ((dist.all_reduce, (x,)), (dist.broadcast, (x, 0)), (dist.barrier, ()),
                       (dist.all_gather_object, ([], rank)), (dist.send if rank == 0 else dist.recv, (x, 1 - rank))):
        expect(ValueError, [call.__name__, "group 1 (ranks [0, 1]", "shut down", "restart_process_group"],
               call, *args, group=pair)
    dist.shutdown_process_group(pair)  # a second time: nothing more to release
    expect(ValueError, ["shutdown_process_group", "world"], dist.shutdown_process_group, dist.get_group(0))
    expect(TypeError, ["restart_process_group", "Group", "str"], dist.restart_process_group, "pair")

    y = np.array([rank + 1.0])
    dist.all_reduce(y)  # the world and the other group are untouched
    dist.all_reduce(y, group=other, op=dist.ReduceOp.MAX)
    assert y.tolist() == [3.0], y

    dist.restart_process_group(pair)
    assert not pair.shut_down and pair.backend == "GLOO"
    z = np.arange(4.0) * (rank + 1)
    dist.all_reduce(z, group=pair)
    assert z.tolist() == [0.0, 3.0, 6.0, 9.0], z
    got = []
    dist.all_gather(got, np.array([rank * 10]), group=pair)
    assert [int(g[0]) for g in got] == [0, 10], got

    # None: every group but the world, then all of them back, in the order they were made
    dist.shutdown_process_group()
    assert pair.shut_down and other.shut_down and not dist.get_group(0).shut_down
    expect(ValueError, ["shut down"], dist.all_reduce, z, group=other)
    dist.barrier()
    dist.restart_process_group()
    w, v = np.array([float(rank)]), np.full(2, rank + 5.0)
    dist.all_reduce(w, group=other)
    dist.broadcast(v, src=1, group=pair)
    assert w.tolist() == [1.0] and v.tolist() == [6.0, 6.0], (w, v)

    dist.destroy_process_group(pair)  # a destroyed group is not brought back
    dist.shutdown_process_group(pair)
    dist.restart_process_group(pair)
    assert pair.process_group is None and not pair.shut_down
    print(f"OK rank={rank}", flush=True)


if __name__ == "__main__":
    main()
