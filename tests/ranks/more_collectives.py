"""gather, alltoall_single, the object collectives, batch_isend_irecv, wait and the stream
variants on a live job of any size, with uneven splits and a sub-group, then their bad input:
each refused on the calling rank before anything is sent, the job going on after it.

Works on either backend: the arrays live in the group's array module (NumPy, or CuPy on nccl;
with PYCOLL_TEST_HOST_CUPY=1 the nccl engine runs on tests/host_cuda.py's host-memory CuPy)."""
import os
import sys
import warnings

sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/: host_cuda
import host_cuda  # noqa: E402

HOST = host_cuda.install_if_asked()  # its arrays are no device's: Tensors are left out there
import numpy as np  # noqa: E402
from expect import expect  # noqa: E402

import pycoll  # noqa: E402
import pycoll.distributed as dist  # noqa: E402

world = dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
xp = world.array_module


def host(a):
    return np.asarray(a.tolist())


def check(got, want, what):
    assert np.array_equal(host(got), np.asarray(want)), f"{what}: rank {rank} got {host(got)}, want {want}"


# -- gather -------------------------------------------------------------------------------------
for dst in range(n):
    for sync in (True, False):
        got = []
        task = dist.gather(xp.full((2, 3), rank, np.int32), got, dst=dst, sync_op=sync)
        task.wait()
        if rank == dst:
            assert len(got) == n and all(np.array_equal(host(g), np.full((2, 3), r)) for r, g in enumerate(got))
        else:
            assert got == []
ready = [xp.zeros(4, np.float64) for _ in range(n)]
dist.gather(xp.full(4, rank * 1.5), ready if rank == 0 else None, dst=0)
if rank == 0:
    for r, g in enumerate(ready):
        check(g, np.full(4, r * 1.5), "gather into a pre-sized list")
if not HOST:
    root = pycoll.to_tensor(n - 1)  # a rank as a 0-d integer Tensor, as paddle takes it
    sent = pycoll.full([2], float(rank))
    dist.broadcast(sent, src=root)
    assert sent.tolist() == [n - 1.0] * 2, sent
    tensors = []
    dist.gather(pycoll.full([3], float(rank)), tensors, dst=n - 1)
    if rank == n - 1:
        assert all(isinstance(t, pycoll.Tensor) and t.numpy()[0] == r for r, t in enumerate(tensors))

# -- 0-d tensors (a loss, a count) through the collectives that take lists ----------------------
# each entry must be a view the result arrives in (a NumPy scalar taken from the buffer would be
# a copy made before anything arrived), and a list of 0-d tensors must stack
scalar = lambda v: xp.asarray(v, dtype=np.float32)  # noqa: E731
values = lambda arrays: np.asarray([host(a).item() for a in arrays])  # noqa: E731
gathered = []
dist.all_gather(gathered, scalar(1.5 + rank))
check(values(gathered), [1.5 + r for r in range(n)], "all_gather of 0-d tensors")
gathered = []
dist.gather(scalar(3.0 + rank), gathered, dst=0)
if rank == 0:
    check(values(gathered), [3.0 + r for r in range(n)], "gather of 0-d tensors")
received = []
dist.alltoall(received, [scalar(10 * rank + j) for j in range(n)])
check(values(received), [10 * i + rank for i in range(n)], "alltoall of 0-d tensors")
one = scalar(0)
dist.scatter(one, [scalar(7 + j) for j in range(n)] if rank == 0 else None, src=0)
check(one, 7 + rank, "scatter of 0-d tensors")
one = scalar(0)
dist.reduce_scatter(one, [scalar(rank + j) for j in range(n)])
check(one, sum(r + rank for r in range(n)), "reduce_scatter of 0-d tensors")

# -- booleans reduce as paddle's do: SUM and MAX are "any", MIN and PROD "all" -----------------
flags = [True, False, rank == 0, False]
for op, want in ((dist.ReduceOp.SUM, [True, False, True, False]), (dist.ReduceOp.MAX, [True, False, True, False]),
                 (dist.ReduceOp.MIN, [True, False, n == 1, False]), (dist.ReduceOp.PROD, [True, False, n == 1, False])):
    b = xp.asarray(flags)
    dist.all_reduce(b, op=op)
    check(b, want, f"all_reduce of booleans, {op}")
expect(TypeError, ["AVG"], dist.all_reduce, xp.asarray(flags), op=dist.ReduceOp.AVG)

# -- MAX and MIN of floats as NCCL's fmax/fmin: a NaN loses to a number, whichever rank holds it,
# and stays where every rank holds one (MPI's own MAX kept or dropped it by the reduction's order)
for dtype in (np.float32, np.float64, np.float16):
    for op, pick in ((dist.ReduceOp.MAX, max), (dist.ReduceOp.MIN, min)):
        for sync in (True, False):
            mine = [np.nan if r == rank else float(r) for r in range(n)] + [np.nan, float(rank)]  # place r: r or NaN
            v = xp.asarray(mine, dtype=dtype)
            dist.all_reduce(v, op=op, sync_op=sync).wait()
            want = [float(r) if n > 1 else np.nan for r in range(n)] + [np.nan, float(pick(range(n)))]
            got = host(v.astype(np.float64))
            assert np.array_equal(got, np.asarray(want), equal_nan=True), (dtype, op, sync, rank, got, want)

# -- 16-bit floats (the MPI engine reduces them as float32, NCCL natively) ---------------------
halves = [np.float16]
try:
    import ml_dtypes
    halves.append(ml_dtypes.bfloat16)
except ImportError:  # the test extra brings ml_dtypes; without it bfloat16 has no NumPy dtype
    pass
for half in halves:
    for op, want in ((dist.ReduceOp.SUM, sum(range(1, n + 1))), (dist.ReduceOp.AVG, (n + 1) / 2),
                     (dist.ReduceOp.MAX, n)):
        for sync in (True, False):
            h = xp.full(3, rank + 1, dtype=half)
            dist.all_reduce(h, op=op, sync_op=sync).wait()
            assert h.dtype == np.dtype(half), h.dtype
            what = f"all_reduce of {np.dtype(half).name}, {op}, sync={sync}"
            if op == dist.ReduceOp.AVG and world.backend_name == "nccl":
                # NCCL's average scales each rank's part by 1/n in the dtype, then sums (as torch's
                # and paddle's): 1/3 is inexact in 16 bits, so the mean may be off by an ulp
                ulp = (2.0 ** -10 if half is np.float16 else 2.0 ** -7) * want  # the epsilon of half
                assert np.all(np.abs(host(h.astype(np.float32)) - want) <= ulp), (what, h)
            else:
                check(h.astype(np.float32), [want] * 3, what)
    h = xp.full(2, 60000, dtype=half)  # the sum overflows float16's 65504: inf, and no NumPy warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dist.all_reduce(h)
    with np.errstate(over="ignore"):
        want = float(np.float32(60000.0 * n).astype(half))  # inf for float16, rounded for bfloat16
    check(h.astype(np.float32), [want] * 2, f"overflowing all_reduce of {np.dtype(half).name}")
    h = xp.full(2, rank + 1, dtype=half)
    dist.reduce(h, dst=0)
    check(h.astype(np.float32), [sum(range(1, n + 1)) if rank == 0 else rank + 1] * 2, f"reduce of {half}")
    h = xp.zeros(2, dtype=half)
    dist.reduce_scatter(h, [xp.full(2, rank + j, dtype=half) for j in range(n)])
    check(h.astype(np.float32), [sum(r + rank for r in range(n))] * 2, f"reduce_scatter of {half}")

# -- alltoall with a shape of its own per peer ---------------------------------------------------
# rank r sends rank j a (j + 1, r + 1) block of 10r + j; an empty list gets the senders' shapes
outs = []
dist.alltoall(outs, [xp.full((j + 1, rank + 1), 10 * rank + j, np.int32) for j in range(n)])
for i, got in enumerate(outs):
    check(got, np.full((rank + 1, i + 1), 10 * i + rank), f"alltoall per-peer block from rank {i}")
if n == 2:  # paddle 3.3.1's docstring example, pre-allocated outputs of different shapes
    if rank == 0:
        data = [xp.asarray(np.array([[1, 2, 3], [4, 5, 6]])), xp.asarray(np.array([7]))]
        ready = [xp.empty((2, 3), np.int64), xp.empty((3, 2), np.int64)]
    else:
        data = [xp.asarray(np.array([[8, 9], [10, 11], [12, 13]])), xp.asarray(np.array([[14, 15, 16, 17]]))]
        ready = [xp.empty((1,), np.int64), xp.empty((1, 4), np.int64)]
    dist.alltoall(ready, data)
    want = ([[[1, 2, 3], [4, 5, 6]], [[8, 9], [10, 11], [12, 13]]] if rank == 0
            else [[7], [[14, 15, 16, 17]]])
    assert [host(r).tolist() for r in ready] == want, [host(r).tolist() for r in ready]

# -- alltoall_single ---------------------------------------------------------------------------------
data = xp.asarray(np.arange(n * 2, dtype=np.int64)) + rank * 100
out = xp.empty(n * 2, np.int64)
dist.alltoall_single(out, data)
check(out, [r * 100 + 2 * rank + k for r in range(n) for k in range(2)], "alltoall_single, even")
# uneven: rank i sends j + 1 rows of width 3 to rank j, so receives rank + 1 rows from each
sends = [j + 1 for j in range(n)]
recvs = [rank + 1] * n
send = xp.asarray(np.concatenate([np.full((j + 1, 3), 10 * rank + j) for j in range(n)]).astype(np.float32))
recv = xp.zeros((sum(recvs), 3), np.float32)
task = dist.alltoall_single(recv, send, sends, recvs, sync_op=False)
task.wait()
check(recv, np.concatenate([np.full((rank + 1, 3), 10 * i + rank) for i in range(n)]), "alltoall_single, uneven")
# zero rows for rank 0's own part, and nothing at all from some ranks
zero_send = [0 if j == rank else 1 for j in range(n)]
zero_recv = [0 if i == rank else 1 for i in range(n)]
z_out = xp.full(n - 1, -1, np.int32)
dist.alltoall_single(z_out, xp.full(n - 1, rank, np.int32), zero_send, zero_recv)
check(z_out, [i for i in range(n) if i != rank], "alltoall_single with empty parts")
# rank 0 expects 1 row from itself and 3 from rank 1, where every rank sends 2 to each: refused on
# every rank (the pairs that disagree name the counts), and the job goes on
uneven = [1, 3] + [2] * (n - 2)
if rank == 0:
    words = ["out_split_sizes[0]=1 but rank 0 sends 2 rows", "out_split_sizes[1]=3 but rank 1 sends 2 rows",
             "in_split_sizes[0]=2 but rank 0 expects 1 rows"]
elif rank == 1:
    words = ["in_split_sizes[0]=2 but rank 0 expects 3 rows"]
else:
    words = ["rank(s) [0, 1] refused their parts"]
expect(ValueError, words, dist.alltoall_single, xp.zeros(2 * n), xp.ones(2 * n), [2] * n,
       uneven if rank == 0 else [2] * n)
dist.alltoall_single(out, data)
check(out, [r * 100 + 2 * rank + k for r in range(n) for k in range(2)], "alltoall_single after a refusal")
pair_out = xp.zeros(data.shape, data.dtype)
dist.alltoall(pair_out, data)  # paddle's alltoall(out_tensor, in_tensor): alltoall_single's exchange
check(pair_out, [r * 100 + 2 * rank + k for r in range(n) for k in range(2)], "alltoall of a tensor pair")

# -- object collectives --------------------------------------------------------------------------------
objects = []
mine = {"rank": rank, "payload": list(range(rank * 50)), "text": "é" * rank}
dist.all_gather_object(objects, mine)
assert objects == [{"rank": r, "payload": list(range(r * 50)), "text": "é" * r} for r in range(n)]
for src in range(n):
    box = [None, None, None] if rank != src else [{"from": src}, b"\x00" * (1 << 20), (1, "two", 3.0)]
    dist.broadcast_object_list(box, src=src)
    assert box == [{"from": src}, b"\x00" * (1 << 20), (1, "two", 3.0)], box[0]
short = ["stale"] if rank != 0 else [1, 2, 3]  # every rank's list as long as the source's (paddle's, torch's)
expect(ValueError, ["gave object lists of", "as long as the source's (rank 0: 3)", "nothing was sent"],
       dist.broadcast_object_list, short, src=0)
assert short == (["stale"] if rank != 0 else [1, 2, 3])
for src in range(n):
    got = ["stale", "entries"]
    dist.scatter_object_list(got, [{"to": i, "pad": "x" * (i * 1000)} for i in range(n)] if rank == src else None,
                             src=src)
    assert got == [{"to": rank, "pad": "x" * (rank * 1000)}], got

# -- batch_isend_irecv: a ring, every rank sending before it receives -----------------------------------
right, left = (rank + 1) % n, (rank - 1) % n
out_r, in_l = xp.full(5, rank, np.float32), xp.zeros(5, np.float32)
tasks = dist.batch_isend_irecv([dist.P2POp(dist.isend, out_r, right), dist.P2POp(dist.irecv, in_l, left)])
assert len(tasks) == 2
for t in tasks:
    t.wait()
check(in_l, np.full(5, left), "batch_isend_irecv ring")
# one batch on two groups (paddle's; torch refuses it): each group's messages pair up on their own;
# an op given without a group is the world's; a rank outside an op's group gets a completed task
ring = dist.new_group(list(range(n)))
in_ring, in_world = xp.zeros(5, np.float32), xp.zeros(5, np.float32)
ops = [dist.P2POp(dist.isend, out_r, right, ring), dist.P2POp(dist.isend, out_r * 2, right),
       dist.P2POp(dist.irecv, in_ring, left, ring), dist.P2POp(dist.irecv, in_world, left)]
assert ops[1].group is world  # paddle's P2POp: None is the world
for t in dist.batch_isend_irecv(ops):
    t.wait()
check(in_ring, np.full(5, left), "batch_isend_irecv on two groups (the group's message)")
check(in_world, np.full(5, left * 2), "batch_isend_irecv on two groups (the world's message)")
odd = dist.new_group([r for r in range(n) if r % 2])
if rank % 2 == 0:
    assert all(t.is_completed() for t in dist.batch_isend_irecv([dist.P2POp(dist.isend, out_r, 1, odd)]))
x = xp.full(3, float(rank))
t = dist.all_reduce(x, sync_op=False)
dist.wait(x)  # the group's work is done after it
check(x, np.full(3, float(sum(range(n)))), "wait")

# -- the stream variants ------------------------------------------------------------------------------------
s = dist.stream
y = xp.full(2, 1.0)
s.all_reduce(y, use_calc_stream=True).wait()
check(y, np.full(2, float(n)), "stream.all_reduce")
together = xp.zeros((n * 2, 2), np.float32)
s.all_gather(together, xp.full((2, 2), rank, np.float32))
check(together, np.repeat(np.arange(n, dtype=np.float32), 2)[:, None] * np.ones((1, 2)), "stream.all_gather into one tensor")
part = xp.zeros(3, np.float32)
s.scatter(part, xp.asarray(np.arange(3 * n, dtype=np.float32)) if rank == 0 else None, src=0)
check(part, np.arange(3, dtype=np.float32) + 3 * rank, "stream.scatter from one tensor")
mine = xp.zeros(2, np.float32)
s.reduce_scatter(mine, xp.ones(2 * n, np.float32))
check(mine, np.full(2, float(n)), "stream.reduce_scatter from one tensor")
# paddle's [nranks, *shape] layouts of the one tensor (only the element count must match)
stacked = xp.zeros((n, 1, 2), np.float32)
s.all_gather(stacked, xp.asarray(np.array([[rank, 1.0]], np.float32)))
check(stacked, np.stack([[[r, 1.0]] for r in range(n)]), "stream.all_gather into [nranks, 1, 2]")
row = xp.zeros(2, np.float32)
s.scatter(row, xp.asarray(np.arange(2 * n, dtype=np.float32).reshape(n, 2)) if rank == 0 else None, src=0)
check(row, [2.0 * rank, 2.0 * rank + 1], "stream.scatter from [nranks, 2]")
s.reduce_scatter(row, xp.ones((n, 2), np.float32))
check(row, np.full(2, float(n)), "stream.reduce_scatter from [nranks, 2]")
a2a = xp.empty(n, np.int64)
s.alltoall(a2a, xp.asarray(np.arange(n, dtype=np.int64)) + 10 * rank)
check(a2a, [10 * i + rank for i in range(n)], "stream.alltoall of one tensor")
back = xp.empty(2 * n, np.int64)
s.alltoall_single(back, xp.full(2 * n, rank, np.int64), [2] * n, [2] * n)
check(back, np.repeat(np.arange(n), 2), "stream.alltoall_single")

# -- a sub-group of the first and last rank ---------------------------------------------------------------------
edge = dist.new_group([0, n - 1])
if rank in (0, n - 1):
    got = []
    dist.all_gather_object(got, rank, group=edge)
    assert got == [0, n - 1], got
    o = xp.empty(2, np.int32)
    dist.alltoall_single(o, xp.full(2, rank, np.int32), group=edge)
    check(o, [0, n - 1], "alltoall_single on a sub-group")
    g = []
    dist.gather(xp.full(1, rank), g, dst=n - 1, group=edge)
    if rank == n - 1:
        assert [int(host(v)[0]) for v in g] == [0, n - 1]

# -- bad input: refused here, before anything is sent --------------------------------------------------------------
expect(ValueError, ["in_split_sizes=", "adds up to 5", "has 4 rows"], dist.alltoall_single,
       xp.empty(4), xp.empty(4), [5] + [0] * (n - 1), None)
expect(ValueError, ["in_split_sizes=", "one count >= 0 per rank"], dist.alltoall_single, xp.empty(4),
       xp.empty(4), [4])
expect(ValueError, ["do not split evenly"], dist.alltoall_single, xp.empty(n * 2 + 1), xp.empty(n * 2 + 1))
expect(ValueError, ["irecv: src is None"], dist.irecv, xp.empty(2))
expect(ValueError, ["pycoll.distributed.isend: dst=", "not a rank of"], dist.isend, xp.empty(2), n + 3)
expect(ValueError, ["pycoll.distributed.irecv: src=", "not a rank of"], dist.irecv, xp.empty(2), n + 3)
expect(TypeError, ["all_gather: tensor_list is an empty tuple; give a list"], dist.all_gather, (), xp.empty(2))
expect(TypeError, ["get_rank: group must be a Group", "got str"], dist.get_rank, "x")
expect(TypeError, ["all_gather: tensor_list must be a list (empty, or one tensor per rank) or one tensor",
                   "got NoneType"], dist.all_gather, None, xp.empty(2))
expect(ValueError, ["tensor_list is one tensor of shape [5, 3]", f"stacked on axis 0 (shape [{n}, 2, 3])",
                    f"or concatenated (shape [{2 * n}, 3])"], dist.all_gather, xp.empty((5, 3)), xp.empty((2, 3)))
expect(ValueError, ["tensor_list is one tensor of dtype int64", "tensor's dtype, float32"], dist.all_gather,
       xp.empty(2 * n, np.int64), xp.empty(2, np.float32))
expect(TypeError, ["broadcast: src=1.5", "a rank must be an integer"], dist.broadcast, xp.empty(2), 1.5)
expect(TypeError, ["get_world_size: group must be a Group"], dist.get_world_size, 3)
expect(TypeError, ["out_tensor", "in_tensor's dtype"], dist.alltoall_single, xp.empty(n, np.int32),
       xp.empty(n, np.float32))
expect(ValueError, ["P2POp", "op=", "isend or", "irecv"], dist.P2POp, dist.send, xp.ones(1), 0)
expect(ValueError, ["p2p_op_list[1].peer=", "not a rank of world"], dist.batch_isend_irecv,
       [dist.P2POp(dist.isend, xp.ones(1), right), dist.P2POp(dist.irecv, xp.ones(1), n + 5)])
expect(ValueError, ["p2p_op_list sends to this rank itself 1 time(s)", "needs its send and its receive"],
       dist.batch_isend_irecv,
       [dist.P2POp("isend", xp.ones(1), rank)])
expect(ValueError, ["non-empty list of P2POp"], dist.batch_isend_irecv, [])
expect(TypeError, ["obj", "function", "cannot be pickled"], dist.all_gather_object, [], lambda: 1)
expect(TypeError, ["object_list", "must be a list"], dist.all_gather_object, (), 1)
# checks only the root can make: every rank calls, hears the root's verdict and raises alike
heard = [] if rank == 0 else ["refused on rank 0"]
expect(ValueError, ["in_object_list on the source rank 0", f"one object per rank ({n})"] + heard,
       dist.scatter_object_list, [], [1] if rank == 0 else None, src=0)
expect(TypeError, ["in_object_list[0]", "cannot be pickled"] + heard, dist.scatter_object_list, [],
       [lambda: 1] * n if rank == 0 else None, src=0)
expect(TypeError, ["object_list[1]", "cannot be pickled"] + heard, dist.broadcast_object_list,
       [1, lambda: 1] if rank == 0 else [None, None], src=0)
expect(ValueError, ["gather_list has 1 entries", f"empty or {n}"] + heard, dist.gather, xp.ones(2),
       [xp.ones(2)] if rank == 0 else None, dst=0)
expect(ValueError, ["gather_list[0] has shape", "dtype"] + heard, dist.gather, xp.ones(2),
       [xp.ones(3)] * n if rank == 0 else None, dst=0)
expect(ValueError, ["gather_list is None on the destination rank 0"] + heard, dist.gather, xp.ones(2), None,
       dst=0)
expect(ValueError, ["stream.all_reduce", "use_calc_stream=True needs sync_op=True"], s.all_reduce,
       xp.ones(1), sync_op=False, use_calc_stream=True)
expect(ValueError, ["stream.all_gather", "splits evenly"], s.all_gather, xp.zeros(n * 2 + 1), xp.ones(2))
# the job goes on: every rank still agrees
z = xp.full(1, 1.0)
dist.all_reduce(z)
check(z, [float(n)], "after the refusals")
print(f"more collectives OK rank={rank} world={n}", flush=True)
