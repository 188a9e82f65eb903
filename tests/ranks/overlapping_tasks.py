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

# calls on other tensors still run beside a task
first, second = ones(), ones()
t1 = dist.all_reduce(first, sync_op=False)
t2 = dist.all_reduce(second, sync_op=False)
t2.wait()
t1.wait()
assert (first.numpy() == n).all() and (second.numpy() == n).all()
print(f"OK rank={rank}", flush=True)
