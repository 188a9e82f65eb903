"""Every collective x dtype x size x root x op against NumPy, on however many ranks started it.

Every rank can compute every other rank's input (it is a function of the rank), so each
result is checked exactly against a NumPy reference. Values are small integers, so float
sums are exact whatever order the engine adds them in.
"""
import numpy as np

import pycoll.distributed as dist
from pycoll.distributed import ReduceOp

REDUCIBLE = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
             np.float32, np.float64, np.complex64, np.complex128]
MOVABLE = REDUCIBLE + [np.float16, np.bool_]
SHAPES = [(1,), (7,), (1023,), (3, 5)]
OPS = [ReduceOp.SUM, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PROD, ReduceOp.AVG]


def data(rank, shape, dtype, salt=0):
    n = int(np.prod(shape))
    values = (np.arange(n) * 7 + rank * 3 + salt) % 3 + 1
    if dtype is np.bool_:
        values = values % 2 == 0
    return values.astype(dtype).reshape(shape)


def valid(dtype, op):
    kind = np.dtype(dtype).kind
    if op in (ReduceOp.MAX, ReduceOp.MIN) and kind == "c":
        return False
    return not (op == ReduceOp.AVG and kind not in "fc")


def reference(arrays, op, dtype):
    stack = np.stack(arrays)
    if op == ReduceOp.SUM:
        return np.add.reduce(stack, axis=0, dtype=dtype)
    if op == ReduceOp.PROD:
        return np.multiply.reduce(stack, axis=0, dtype=dtype)
    if op == ReduceOp.MAX:
        return stack.max(axis=0)
    if op == ReduceOp.MIN:
        return stack.min(axis=0)
    return np.divide(np.add.reduce(stack, axis=0, dtype=dtype), len(arrays)).astype(dtype)


def check(got, want, case):
    assert got.dtype == want.dtype and got.shape == want.shape, (case, got.dtype, got.shape, want.shape)
    assert np.array_equal(got, want), f"{case}: got {got.ravel()[:8]} want {want.ravel()[:8]}"


def main():
    dist.init_parallel_env()
    rank, n = dist.get_rank(), dist.get_world_size()
    checks = 0
    for dtype in REDUCIBLE:
        for shape in SHAPES:
            inputs = [data(r, shape, dtype) for r in range(n)]
            for op in OPS:
                if not valid(dtype, op):
                    continue
                want = reference(inputs, op, dtype)
                case = f"{np.dtype(dtype)} {shape} op={op}"
                x = inputs[rank].copy()
                dist.all_reduce(x, op=op)
                check(x, want, "all_reduce " + case)
                x = inputs[rank].copy()
                dist.all_reduce(x, op=op, sync_op=False).wait()
                check(x, want, "all_reduce async " + case)
                # a strided view: staged through a contiguous copy and written back
                big = np.zeros(shape[:-1] + (2 * shape[-1],), dtype)
                view = big[..., ::2]
                view[...] = inputs[rank]
                dist.all_reduce(view, op=op)
                check(view, want, "all_reduce strided " + case)
                assert not big[..., 1::2].any(), "strided all_reduce wrote outside the view"
                for root in range(n):
                    x = inputs[rank].copy()
                    dist.reduce(x, dst=root, op=op)
                    check(x, want if rank == root else inputs[rank], f"reduce root={root} " + case)
                blocks = [data(rank, shape, dtype, salt=j) for j in range(n)]
                out = np.empty(shape, dtype)
                dist.reduce_scatter(out, blocks, op=op)
                want_rs = reference([data(r, shape, dtype, salt=rank) for r in range(n)], op, dtype)
                check(out, want_rs, "reduce_scatter " + case)
                checks += 5 + n
    for dtype in MOVABLE:
        for shape in SHAPES:
            case = f"{np.dtype(dtype)} {shape}"
            for root in range(n):
                x = data(rank, shape, dtype) if rank == root else np.zeros(shape, dtype)
                dist.broadcast(x, src=root)
                check(x, data(root, shape, dtype), f"broadcast src={root} " + case)
                out = np.zeros(shape, dtype)
                parts = [data(root, shape, dtype, salt=j) for j in range(n)] if rank == root else None
                dist.scatter(out, parts, src=root)
                check(out, data(root, shape, dtype, salt=rank), f"scatter src={root} " + case)
            gathered = []
            dist.all_gather(gathered, data(rank, shape, dtype))
            assert len(gathered) == n
            for r, g in enumerate(gathered):
                check(g, data(r, shape, dtype), f"all_gather into [] entry {r} " + case)
            preset = [np.zeros(shape, dtype) for _ in range(n)]
            dist.all_gather(preset, data(rank, shape, dtype), sync_op=False).wait()
            for r, g in enumerate(preset):
                check(g, data(r, shape, dtype), f"all_gather in place entry {r} " + case)
            out_list = []
            dist.alltoall(out_list, [data(rank, shape, dtype, salt=j) for j in range(n)])
            for r, g in enumerate(out_list):
                check(g, data(r, shape, dtype, salt=rank), f"alltoall entry {r} " + case)
            right, left = (rank + 1) % n, (rank - 1) % n
            if n > 1:
                inbox = np.zeros(shape, dtype)
                task = dist.irecv(inbox, src=left)
                dist.send(data(rank, shape, dtype), dst=right)
                task.wait()
                check(inbox, data(left, shape, dtype), "send/recv ring " + case)
            checks += 2 * n + 2 * n + n + 1
    # zero-size arrays are a no-op for every collective
    empty = np.zeros((0,), np.float32)
    dist.all_reduce(empty)
    dist.broadcast(empty, src=n - 1)
    dist.reduce(empty, dst=0)
    zeros = []
    dist.all_gather(zeros, empty)
    assert len(zeros) == n and all(z.shape == (0,) for z in zeros)
    dist.barrier()
    print(f"collectives OK rank={rank} world={n} checks={checks}", flush=True)


if __name__ == "__main__":
    main()
