"""Lists received into (or sent from) in place, on a live job of any size: all_gather, gather,
scatter, reduce_scatter and alltoall with lists whose entries tile one buffer (the engine moves
that memory itself) and with lists that do not (gaps, wrong order, separate buffers, strided
entries, entries overlapping the sent tensor), each checked against values computed by hand;
alltoall with blocks of one shape everywhere (one small all-reduce instead of the size
exchange), blocks of several shapes, and blocks of one shape that differs between ranks
(refused on every rank, naming the peer and both blocks, as before).

Works on either backend: NumPy on cpu (blocks of 256 KiB, large enough for NumPy's in-place path),
host memory posing as CuPy on nccl with PYCOLL_TEST_HOST_CUPY=1."""
import os
import sys

sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/: host_cuda
import host_cuda  # noqa: E402

host_cuda.install_if_asked()
import numpy as np  # noqa: E402
from expect import expect  # noqa: E402

import pycoll.distributed as dist  # noqa: E402

world = dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
xp = world.array_module
K = 65536  # float32 elements per block: 256 KiB, large enough for NumPy to take the lists in place


def host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)  # CuPy's (and the stand-in's) copy to the host


def check(got, want, what):
    assert np.array_equal(host(got), np.asarray(want)), f"{what}: rank {rank} got {host(got)}, want {want}"


def block(r, salt=0):
    """Rank ``r``'s block (``salt``: which peer it is for)."""
    return np.arange(K, dtype=np.float32) + 1000 * r + 100 * salt


def buffer(rows, fill=-1.0):
    return xp.full((rows, K), fill, np.float32)


def layouts(rows):
    """name -> (entries to receive into, how to read row i back): one tiling layout, the rest not."""
    tiled = buffer(rows).reshape(-1)
    gaps = buffer(2 * rows)
    reverse = buffer(rows)
    separate = [buffer(1)[0] for _ in range(rows)]
    strided = xp.full((K, rows), -1.0, np.float32)
    return {
        "tiling one buffer": ([tiled[i * K:(i + 1) * K] for i in range(rows)], lambda i: tiled[i * K:(i + 1) * K]),
        "with gaps": ([gaps[2 * i] for i in range(rows)], lambda i: gaps[2 * i]),
        "in reverse order": ([reverse[rows - 1 - i] for i in range(rows)], lambda i: reverse[rows - 1 - i]),
        "in separate buffers": (separate, lambda i: separate[i]),
        "strided": ([strided[:, i] for i in range(rows)], lambda i: strided[:, i]),
    }


mine = xp.asarray(block(rank))
for sync in (True, False):
    for name, (entries, row) in layouts(n).items():
        dist.all_gather(entries, mine, sync_op=sync).wait()
        for i in range(n):
            check(row(i), block(i), f"all_gather into a list {name} (sync_op={sync}), entry {i}")

        entries, row = layouts(n)[name]
        dist.gather(mine, entries, dst=n - 1, sync_op=sync).wait()
        for i in range(n):
            check(row(i), block(i) if rank == n - 1 else np.full(K, -1.0), f"gather into a list {name}, entry {i}")

    # the entries hold the sent tensor: received through pycoll's buffer, not into the sent memory
    together = xp.asarray(np.stack([block(rank)] * n)).reshape(-1)
    dist.all_gather([together[i * K:(i + 1) * K] for i in range(n)], together[rank * K:(rank + 1) * K],
                    sync_op=sync).wait()
    check(together, np.concatenate([block(i) for i in range(n)]), "all_gather into entries holding the sent tensor")

    # paddle's one stacked tensor: contiguous (received into), strided, and holding the sent tensor
    stacked = buffer(n)
    dist.all_gather(stacked, mine, sync_op=sync).wait()
    check(stacked, np.stack([block(i) for i in range(n)]), "all_gather into one tensor")
    strided = xp.full((n, 2 * K), -1.0, np.float32)
    dist.all_gather(strided[:, ::2], mine, sync_op=sync).wait()
    check(strided[:, ::2], np.stack([block(i) for i in range(n)]), "all_gather into one strided tensor")
    check(strided[:, 1::2], np.full((n, K), -1.0), "all_gather into one strided tensor, between its elements")
    inplace = xp.asarray(np.stack([block(rank)] * n))
    dist.all_gather(inplace, inplace[rank], sync_op=sync).wait()
    check(inplace, np.stack([block(i) for i in range(n)]), "all_gather into one tensor holding the sent one")

# -- sent from lists: scatter and reduce_scatter ------------------------------------------------
for name, (entries, row) in layouts(n).items():
    for i in range(n):
        row(i)[...] = xp.asarray(block(rank, salt=i))
    out = buffer(1)[0]
    dist.scatter(out, entries if rank == 0 else None, src=0)
    check(out, block(0, salt=rank), f"scatter from a list {name}")
    dist.reduce_scatter(out, entries)
    check(out, sum(block(r, salt=rank) for r in range(n)), f"reduce_scatter of a list {name}")

# in place: the rank's own block of the list receives (NCCL runs it so; MPI through a copy)
for name, (entries, row) in layouts(n).items():
    for i in range(n):
        row(i)[...] = xp.asarray(block(rank, salt=i))
    dist.reduce_scatter(entries[rank], entries)
    check(row(rank), sum(block(r, salt=rank) for r in range(n)), f"reduce_scatter in place, a list {name}")

# -- alltoall -------------------------------------------------------------------------------------
for sync in (True, False):
    for out_name, (outs, out_row) in layouts(n).items():
        for in_name, (ins, in_row) in layouts(n).items():
            for j in range(n):
                in_row(j)[...] = xp.asarray(block(rank, salt=j))
            dist.alltoall(outs, ins, sync_op=sync).wait()
            for i in range(n):
                check(out_row(i), block(i, salt=rank), f"alltoall from a list {in_name} into one {out_name}, entry {i}")
            outs, out_row = layouts(n)[out_name]
    received = []
    dist.alltoall(received, [xp.asarray(block(rank, salt=j)) for j in range(n)], sync_op=sync).wait()
    for i in range(n):
        check(received[i], block(i, salt=rank), f"alltoall into an empty list, entry {i}")
    # in place: one list for both, its entries tiling one buffer
    both = xp.asarray(np.concatenate([block(rank, salt=j) for j in range(n)]))
    entries = [both[j * K:(j + 1) * K] for j in range(n)]
    dist.alltoall(entries, entries, sync_op=sync).wait()
    check(both, np.concatenate([block(i, salt=rank) for i in range(n)]), "alltoall in place")

# blocks of several shapes: the sizes are exchanged, as before
shaped = [xp.full((j + 1, rank + 1), 10 * rank + j, np.int32) for j in range(n)]
received = []
dist.alltoall(received, shaped)
for i in range(n):
    check(received[i], np.full((rank + 1, i + 1), 10 * i + rank), f"alltoall per-peer block from rank {i}")

# one shape per rank, but not the same on every rank: refused on every rank, nothing sent
size = 2 + rank
outs = [xp.zeros(2, np.float32) for _ in range(n)]
if n > 1:
    expect(ValueError, ["alltoall", "out_tensor_list[1] holds 8 bytes", "but rank 1 sends 12 bytes", "nothing was sent"],
           dist.alltoall, outs, [xp.ones(size, np.float32) for _ in range(n)])
    check(outs[0], np.zeros(2), "a refused alltoall's output")

# a block of too many dimensions to describe is refused on the calling rank (here every rank)
deep = xp.zeros((1,) * 17, np.float32)
expect(ValueError, ["alltoall", "in_tensor_list[0] has 17 dimensions", "at most 16"], dist.alltoall, [], [deep] * n)
expect(ValueError, ["alltoall", f"out_tensor_list[{n - 1}] has 17 dimensions"], dist.alltoall,
       [xp.zeros(1, np.float32)] * (n - 1) + [deep], [xp.zeros(1, np.float32)] * n)

# alltoall_single, even (one row count everywhere) and uneven
got = xp.zeros((n, 3), np.int64)
dist.alltoall_single(got, xp.asarray(np.array([[10 * rank + j] * 3 for j in range(n)], np.int64)))
check(got, np.array([[10 * i + rank] * 3 for i in range(n)]), "alltoall_single, even")
counts = [1 + (rank + j) % 2 for j in range(n)]
sent = xp.asarray(np.concatenate([np.full(c, 10 * rank + j) for j, c in enumerate(counts)]).astype(np.int64))
expected = [1 + (i + rank) % 2 for i in range(n)]
got = xp.zeros(sum(expected), np.int64)
dist.alltoall_single(got, sent, counts, expected)
check(got, np.concatenate([np.full(c, 10 * i + rank) for i, c in enumerate(expected)]), "alltoall_single, uneven")

dist.barrier()
print(f"zero_copy_lists.py OK rank={rank}")
