"""Calls on a tensor that a non-blocking call still reads or writes run after it, in call order,
as paddle's and torch's process groups run them (before, MPI ran them side by side and their
data mixed: two sync_op=False all_reduces of ones on 2 ranks gave 3, not 4, and ten gave
numbers that differed between the ranks). Every rank prints "OK rank=". argv[1]: cpu; nccl
(the NCCL engine on the strict CuPy stand-in: there the wait is the task's join_stream; the
stand-in moves the bytes when a call is made, so it checks that path, not the order a GPU's side
stream would break); or gpu (a real GPU: the side stream's order, tests/test_gpu.py).
"""
import sys

if sys.argv[1] == "nccl":
    import strict_gpu_device  # noqa: F401 - installs the stand-in first

import pycoll  # noqa: E402
import pycoll.distributed as dist  # noqa: E402

dist.init_parallel_env()
if sys.argv[1] in ("nccl", "gpu"):
    pycoll.set_device("gpu")
rank, n = dist.get_rank(), dist.get_world_size()
BIG = 1 << 18  # 1 MiB of float32: MPI's rendezvous, where a call really runs beside another


def ones(size=BIG):
    return pycoll.ones([size])


y = ones()
tasks = [dist.all_reduce(y, sync_op=False) for _ in range(10)]
for task in tasks:
    task.wait()
assert (y.numpy() == n ** 10).all(), y.numpy()[:4]

y = ones()
task = dist.all_reduce(y, sync_op=False)
dist.all_reduce(y)  # a blocking call after a task on the same tensor
task.wait()
assert (y.numpy() == n * n).all(), y.numpy()[:4]

z = pycoll.full([BIG], float(rank + 1))
task = dist.all_reduce(z, sync_op=False)
dist.broadcast(z, src=0)
task.wait()
assert (z.numpy() == n * (n + 1) / 2).all(), z.numpy()[:4]

c = pycoll.full([4], float(rank + 1))
t1 = dist.all_reduce(c, sync_op=False)
gathered = []
t2 = dist.all_gather(gathered, c, sync_op=False)  # reads what the all_reduce writes
t1.wait()
t2.wait()
assert all((g.numpy() == n * (n + 1) / 2).all() for g in gathered), [g.numpy() for g in gathered]

# a receive, then a collective on its buffer
b = pycoll.full([BIG], float(rank))
sent = dist.isend(pycoll.full([BIG], 5.0), dst=(rank + 1) % n)
got = dist.irecv(b, src=(rank - 1) % n)
task = dist.all_reduce(b, sync_op=False)
for t in (sent, got, task):
    t.wait()
assert (b.numpy() == 5.0 * n).all(), b.numpy()[:4]

# one tensor sent to every peer at once: sends only read it, they need not wait for each other
x = pycoll.full([BIG], float(rank))
sends = [dist.isend(x, dst=peer) for peer in range(n) if peer != rank]
received = {peer: pycoll.zeros([BIG]) for peer in range(n) if peer != rank}
recvs = [dist.irecv(buf, src=peer) for peer, buf in received.items()]
for t in sends + recvs:
    t.wait()
assert all((buf.numpy() == peer).all() for peer, buf in received.items())

# the caller's tensors decide, before anything is staged: outputs filled at completion (lists),
# inputs packed at the call (lists), strided views copied through scratch
outs = [pycoll.zeros([4]) for _ in range(n)]
task = dist.all_gather(outs, pycoll.full([4], float(rank + 1)), sync_op=False)
dist.all_reduce(outs[0])  # waits for the gather's copy into outs[0]
task.wait()
assert (outs[0].numpy() == n).all(), outs[0].numpy()
parts = [pycoll.full([4], float(rank + 1)) for _ in range(n)]
task = dist.all_reduce(parts[1], sync_op=False)
mine = pycoll.zeros([4])
dist.scatter(mine, parts if rank == 0 else None, src=0)  # packs parts[1] after the reduce
task.wait()
want = n * (n + 1) / 2 if rank == 1 else 1.0
assert (mine.numpy() == want).all(), (mine.numpy(), want)
grid = pycoll.ones([4, 4])
task = dist.all_reduce(grid, sync_op=False)
dist.all_reduce(grid[:, ::2])  # a strided view of it: staged, after the task
task.wait()
assert (grid.numpy()[:, ::2] == n * n).all() and (grid.numpy()[:, 1::2] == n).all(), grid.numpy()

# reading what a task only reads needs no wait (with a large message, waiting deadlocked: rank 0
# waited for its send before the gather its peer makes before receiving). MPI only: NCCL runs a
# communicator's send and collective in issue order, so there the pattern itself deadlocks
x = pycoll.full([BIG], float(rank))
if sys.argv[1] != "cpu":
    everyone = [x * 0 + r for r in range(n)]
elif rank == 0:
    sent = dist.isend(x, dst=1)
    everyone = []
    dist.all_gather(everyone, x)
    sent.wait()
elif rank == 1:
    everyone = []
    dist.all_gather(everyone, x)
    got = pycoll.zeros([BIG])
    dist.recv(got, src=0)
    assert (got.numpy() == 0).all()
else:
    everyone = []
    dist.all_gather(everyone, x)
assert [float(part.numpy()[0]) for part in everyone] == [float(r) for r in range(n)]

# a dropped task is complete once a later blocking collective on its group returns (paddle's
# groups run their calls in order: a Paddle user reads the tensor then)
for dtype in ("float32", "bfloat16", "int64"):
    dropped = pycoll.ones([BIG], dtype=dtype)
    dist.all_reduce(dropped, sync_op=False)
    dist.all_reduce(pycoll.ones([4]))
    assert (dropped.astype("float32").numpy() == n).all(), (dtype, dropped.numpy()[[0, -1]])
dropped = ones()
dist.all_reduce(dropped, sync_op=False)
dist.all_reduce(pycoll.ones([4]), sync_op=False).wait()  # a later task's wait: the earlier are done too
assert (dropped.numpy() == n).all(), dropped.numpy()[[0, -1]]

if sys.argv[1] == "cpu":  # (NCCL runs a rank's send before its receive: there the pattern deadlocks)
    # a halo exchange through two columns of one tensor: their bounds meet, their elements don't,
    # so the receive does not wait for the send (which waits for the peer's receive)
    halo = pycoll.zeros([BIG, 2])
    halo[:, 1] = pycoll.full([BIG], float(rank + 1))
    sent = dist.isend(halo[:, 1], dst=(rank + 1) % n)
    got = dist.irecv(halo[:, 0], src=(rank - 1) % n)
    sent.wait()
    got.wait()
    assert (halo.numpy()[:, 0] == (rank - 1) % n + 1).all(), halo.numpy()[:2]

# calls on other tensors still run beside a task
first, second = ones(), ones()
t1 = dist.all_reduce(first, sync_op=False)
t2 = dist.all_reduce(second, sync_op=False)
t2.wait()
t1.wait()
assert (first.numpy() == n).all() and (second.numpy() == n).all()
print(f"OK rank={rank}", flush=True)
