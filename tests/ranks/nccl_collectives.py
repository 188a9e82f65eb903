"""Every collective x dtype x size x root x op on CuPy arrays over NCCL, checked against NumPy.

Two modes:
- no argument, under ``python -m pycoll.launch`` with ``PYCOLL_BACKEND=nccl``: the public
  collectives (``pycoll.distributed``) on CuPy arrays, stream ordering, async tasks, AVG;
- ``backend``, started torchrun-style (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``,
  ``MASTER_PORT``, no MPI): the rendezvous through the TCP store and ``NCCLBackend``'s own API.

Several ranks share one GPU: each gets its own ``NCCL_HOSTID`` (set below, before NCCL starts),
so NCCL treats them as separate hosts and uses its socket transport on ``NCCL_SOCKET_IFNAME=lo``.
With ``PYCOLL_TEST_HOST_CUPY=1`` the public-API mode runs without a GPU on ``tests/host_cuda.py``
(host memory, NCCL calls carried out over MPI), leaving out what needs real streams.
The value checks are shared with the cpu worker (collective_checks.py).
"""
import os
import sys

os.environ["NCCL_HOSTID"] = "pycoll-rank-" + (os.environ.get("PMI_RANK") or os.environ.get("RANK", "0"))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/: host_cuda

import host_cuda  # noqa: E402

HOST = host_cuda.install_if_asked()
import cupy  # noqa: E402
import numpy as np  # noqa: E402

from collective_checks import Checks  # noqa: E402

import pycoll.distributed as dist  # noqa: E402
from pycoll.backends.reduce_op import ReduceOp  # noqa: E402

try:
    import ml_dtypes

    cupy.asarray(np.ones(2, ml_dtypes.bfloat16)).sum()
    BF16 = [ml_dtypes.bfloat16]
except Exception:  # no ml_dtypes, or a CuPy without bfloat16 arrays
    BF16 = []

REDUCIBLE = [np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64, np.float16, np.float32,
             np.float64, np.complex64, np.complex128] + BF16
MOVABLE = REDUCIBLE + [np.int16, np.uint16, np.bool_]
RTOL = {"float16": 1e-2, "bfloat16": 3e-2, "float32": 1e-5, "complex64": 1e-5,
        "float64": 1e-12, "complex128": 1e-12}

LATE_FILL = r"""
extern "C" __global__ void late_fill(float* x, int n, float value, long long spin) {
    long long start = clock64();
    while (clock64() - start < spin) { }
    for (int i = threadIdx.x; i < n; i += blockDim.x) x[i] = value;
}
"""
SPIN = 400_000_000  # clock cycles: a couple of hundred milliseconds


def late_fill(x, value):
    """Queue on the current stream a kernel that waits, then fills ``x`` (float32) with ``value``."""
    kernel = cupy.RawKernel(LATE_FILL, "late_fill")
    kernel((1,), (256,), (x, np.int32(x.size), np.float32(value), np.int64(SPIN)))


def stream_ordering(rank, n):
    """A kernel queued before a collective is seen by it; work queued after sees its result;
    a blocking collective returns while the stream is still busy (the host is not held)."""
    want = float(sum(range(1, n + 1)))
    for stream in (cupy.cuda.get_current_stream(), cupy.cuda.Stream(non_blocking=True)):
        with stream:
            x = cupy.zeros(4096, np.float32)
            late_fill(x, rank + 1)
            dist.all_reduce(x)
            assert not stream.done, "all_reduce(sync_op=True) waited on the host for the stream"
            y = x * 2  # queued after the collective
            stream.synchronize()
            assert (cupy.asnumpy(x) == want).all() and (cupy.asnumpy(y) == 2 * want).all(), (stream, x[:4])

            x = cupy.zeros(4096, np.float32)
            late_fill(x, rank + 1)
            task = dist.all_reduce(x, sync_op=False)
            task.wait()
            y = x + 1
            cupy.cuda.get_current_stream().synchronize()
            assert (cupy.asnumpy(y) == want + 1).all(), "async all_reduce / wait lost the order"

            x = cupy.zeros(4096, np.float32)
            late_fill(x, rank + 1)
            task = dist.all_reduce(x, op=ReduceOp.AVG, sync_op=False)
            while not task.is_completed():
                pass
            assert np.allclose(cupy.asnumpy(x), want / n), "is_completed() before the result was in"
    return 6


def public_api():
    dist.init_parallel_env()
    rank, n = dist.get_rank(), dist.get_world_size()
    assert n > 1
    checks = Checks(cupy, rank, n, avg_rtol=RTOL, complex_prod=False)
    count = checks.reductions(REDUCIBLE) + checks.movement(MOVABLE) + (0 if HOST else stream_ordering(rank, n))
    # a sub-group (a split communicator) of the first and last rank
    edge = dist.new_group([0, n - 1])
    if rank in (0, n - 1):
        x = cupy.full(3, rank + 1.0)
        dist.all_reduce(x, group=edge)
        checks.check(x, np.full(3, float(n + 1)), "all_reduce on a sub-group")
    empty = cupy.zeros((0,), np.float32)
    dist.all_reduce(empty)
    dist.broadcast(empty, src=n - 1)
    dist.barrier()
    print(f"nccl collectives OK rank={rank} world={n} checks={count} bf16={bool(BF16)}", flush=True)


def backend_api():
    """The store rendezvous and ``NCCLBackend`` used directly (no MPI in this job)."""
    from pycoll.distributed import rendezvous

    assert not rendezvous.under_mpi()
    backend, rank, n = rendezvous.make_nccl_world(120.0)
    check = Checks(cupy, rank, n).check
    assert (backend.name, backend.rank, backend.size) == ("nccl", rank, n)
    f32 = np.dtype(np.float32)
    total = float(sum(range(1, n + 1)))

    x = cupy.full(5, rank + 1.0, np.float32)
    assert backend.all_reduce(x, backend.plan(f32, ReduceOp.SUM), True) is None
    check(x, np.full(5, total, np.float32), "backend all_reduce")

    y = cupy.full(5, rank + 1.0, np.float32)
    request = backend.all_reduce(y, backend.plan(f32, ReduceOp.AVG), False)
    while not request.test():
        pass
    assert np.allclose(cupy.asnumpy(y), total / n)

    z = cupy.full(3, float(rank), np.float32)
    request = backend.broadcast(z, n - 1, False)
    request.join_stream()
    check(z, np.full(3, n - 1.0, np.float32), "backend broadcast joined")

    # a ring of held-back receives, then an exchange of two async transfers waited on in turn
    right, left = (rank + 1) % n, (rank - 1) % n
    inbox = cupy.zeros(4, np.int64)
    request = backend.recv(inbox, left, 0, False)
    backend.send(cupy.full(4, rank, np.int64), right, 0, True)
    request.join_stream()
    check(inbox, np.full(4, left, np.int64), "backend ring")
    mailbox = cupy.zeros(2, np.int32)
    sent = backend.send(cupy.full(2, rank, np.int32), right, 0, False)
    got = backend.recv(mailbox, left, 0, False)
    while not (sent.test() and got.test()):
        pass
    check(mailbox, np.full(2, left, np.int32), "backend isend/irecv")

    out = cupy.empty((n, 2), np.float64)
    backend.all_gather(out, cupy.full(2, float(rank)), True)
    check(out, np.repeat(np.arange(n, dtype=np.float64), 2).reshape(n, 2), "backend all_gather")
    blocks = cupy.arange(n, dtype=np.int32) + 10 * rank
    back = cupy.empty(n, np.int32)
    backend.alltoall(back, blocks, True)
    check(back, np.array([10 * r + rank for r in range(n)], np.int32), "backend alltoall")

    member = rank != 1
    sub = backend.split(member, n - rank, backend.timeout)  # reversed order: the last member becomes rank 0
    if member:
        members = [r for r in range(n) if r != 1]
        assert (sub.size, sub.rank) == (len(members), sorted(members, reverse=True).index(rank))
        w = cupy.ones(3, np.float32)
        sub.all_reduce(w, sub.plan(f32, ReduceOp.SUM), True)
        check(w, np.full(3, float(len(members)), np.float32), "split all_reduce")
        sub.free()
    else:
        assert sub is None
    backend.barrier(True)
    request = backend.barrier(False)
    while not request.test():
        pass
    backend.free()
    print(f"nccl backend OK rank={rank} world={n}", flush=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["backend"]:
        backend_api()
    else:
        public_api()
