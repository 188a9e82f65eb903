"""The value checks the CPU and GPU collective workers share: every collective x dtype x shape x
root x op, on arrays of the engine's module (NumPy or CuPy), against NumPy.

Every rank can compute every other rank's input (it is a function of the rank), so each result
is checked against a NumPy reference. Values are small integers, so sums and products are exact
in every dtype whatever order the engine adds them in; averages are exact on the cpu backend and
compared with a dtype-sized tolerance on NCCL (which pre-scales each rank's values).
"""
import numpy as np

import pycoll.distributed as dist
from pycoll.distributed import ReduceOp

SHAPES = [(1,), (7,), (1023,), (3, 5)]
OPS = [ReduceOp.SUM, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PROD, ReduceOp.AVG]


def data(rank, shape, dtype, salt=0):
    n = int(np.prod(shape))
    values = (np.arange(n) * 7 + rank * 3 + salt) % 3 + 1
    if dtype is np.bool_:
        values = values % 2 == 0
    return values.astype(dtype).reshape(shape)


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


class Checks:
    """The checks on ``n`` ranks (this one ``rank``) with arrays of module ``xp``.

    ``avg_rtol``: dtype name -> tolerance for averages (None: exact); ``complex_prod``: whether
    the engine multiplies complex numbers (MPI does; NCCL would multiply their parts).
    """

    def __init__(self, xp, rank, n, avg_rtol=None, complex_prod=True):
        self.xp, self.rank, self.n = xp, rank, n
        self.to_host = getattr(xp, "asnumpy", np.asarray)
        self.avg_rtol, self.complex_prod = avg_rtol, complex_prod

    def valid(self, dtype, op):
        kind, name = np.dtype(dtype).kind, np.dtype(dtype).name
        if kind == "c" and op in (ReduceOp.MAX, ReduceOp.MIN):
            return False
        if kind == "c" and op == ReduceOp.PROD:
            return self.complex_prod
        return op != ReduceOp.AVG or kind in "fc" or name == "bfloat16"

    def on_device(self, values):
        return self.xp.asarray(values).copy()

    def check(self, got, want, case, rtol=0.0):
        """``got`` (read after its collective's work) equals ``want`` (NumPy), within ``rtol``."""
        host = self.to_host(got)
        assert host.dtype == want.dtype and host.shape == want.shape, (case, host.dtype, host.shape, want.shape)
        if rtol:
            wide = np.complex128 if want.dtype.kind == "c" else np.float64
            ok = np.allclose(host.astype(wide), want.astype(wide), rtol=rtol, atol=0)
        else:
            ok = np.array_equal(host, want)
        assert ok, f"{case}: got {host.ravel()[:8]} want {want.ravel()[:8]}"

    def reductions(self, dtypes, shapes=SHAPES):
        xp, rank, n = self.xp, self.rank, self.n
        checks = 0
        for dtype in dtypes:
            for shape in shapes:
                inputs = [data(r, shape, dtype) for r in range(n)]
                for op in OPS:
                    if not self.valid(dtype, op):
                        continue
                    want = reference(inputs, op, dtype)
                    rtol = self.avg_rtol[np.dtype(dtype).name] if op == ReduceOp.AVG and self.avg_rtol else 0.0
                    case = f"{np.dtype(dtype)} {shape} op={op}"
                    x = self.on_device(inputs[rank])
                    dist.all_reduce(x, op=op)
                    self.check(x, want, "all_reduce " + case, rtol)
                    x = self.on_device(inputs[rank])
                    dist.all_reduce(x, op=op, sync_op=False).wait()
                    self.check(x, want, "all_reduce async " + case, rtol)
                    # a strided view: staged through a contiguous copy and written back
                    big = xp.zeros(shape[:-1] + (2 * shape[-1],), dtype)
                    view = big[..., ::2]
                    view[...] = self.on_device(inputs[rank])
                    dist.all_reduce(view, op=op)
                    self.check(view, want, "all_reduce strided " + case, rtol)
                    assert not any(self.to_host(big[..., 1::2]).tobytes()), "strided all_reduce wrote outside the view"
                    for root in range(n):
                        for sync_op in (True, False):
                            x = self.on_device(inputs[rank])
                            dist.reduce(x, dst=root, op=op, sync_op=sync_op).wait()
                            what = f"reduce root={root} sync_op={sync_op} "
                            if rank == root:
                                self.check(x, want, what + case, rtol)
                            else:
                                self.check(x, inputs[rank], what + "(untouched) " + case)
                    blocks = [self.on_device(data(rank, shape, dtype, salt=j)) for j in range(n)]
                    out = xp.empty(shape, dtype)
                    dist.reduce_scatter(out, blocks, op=op)
                    want_rs = reference([data(r, shape, dtype, salt=rank) for r in range(n)], op, dtype)
                    self.check(out, want_rs, "reduce_scatter " + case, rtol)
                    checks += 5 + 2 * n
        return checks

    def movement(self, dtypes):
        xp, rank, n = self.xp, self.rank, self.n
        checks = 0
        for dtype in dtypes:
            for shape in SHAPES:
                case = f"{np.dtype(dtype)} {shape}"
                for root in range(n):
                    x = self.on_device(data(rank, shape, dtype)) if rank == root else xp.zeros(shape, dtype)
                    dist.broadcast(x, src=root)
                    self.check(x, data(root, shape, dtype), f"broadcast src={root} " + case)
                    out = xp.zeros(shape, dtype)
                    parts = ([self.on_device(data(root, shape, dtype, salt=j)) for j in range(n)]
                             if rank == root else None)
                    dist.scatter(out, parts, src=root)
                    self.check(out, data(root, shape, dtype, salt=rank), f"scatter src={root} " + case)
                gathered = []
                dist.all_gather(gathered, self.on_device(data(rank, shape, dtype)))
                assert len(gathered) == n
                for r, g in enumerate(gathered):
                    assert isinstance(g, xp.ndarray), type(g)
                    self.check(g, data(r, shape, dtype), f"all_gather into [] entry {r} " + case)
                preset = [xp.zeros(shape, dtype) for _ in range(n)]
                dist.all_gather(preset, self.on_device(data(rank, shape, dtype)), sync_op=False).wait()
                for r, g in enumerate(preset):
                    self.check(g, data(r, shape, dtype), f"all_gather in place entry {r} " + case)
                out_list = []
                dist.alltoall(out_list, [self.on_device(data(rank, shape, dtype, salt=j)) for j in range(n)])
                for r, g in enumerate(out_list):
                    self.check(g, data(r, shape, dtype, salt=rank), f"alltoall entry {r} " + case)
                checks += 5 * n  # broadcast and scatter per root, two all_gathers and alltoall per rank
                if n > 1:
                    right, left = (rank + 1) % n, (rank - 1) % n
                    inbox = xp.zeros(shape, dtype)
                    task = dist.irecv(inbox, src=left)
                    dist.send(self.on_device(data(rank, shape, dtype)), dst=right)
                    task.wait()
                    self.check(inbox, data(left, shape, dtype), "send/recv ring " + case)
                    checks += 1
        return checks
