"""Arrays of other frameworks in every kind of collective, moved in place: objects that show
their memory only through DLPack (as torch and JAX tensors do) or only through the array
interface (``__array_interface__`` on the host, ``__cuda_array_interface__`` on a GPU, as numba's
device arrays do); then what is refused, by name, with the job going on.

Runs on either backend: the memory behind the objects lives in the group's array module."""
import numpy as np

from expect import expect

import pycoll.distributed as dist

world = dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
xp = world.array_module
INTERFACE = "__array_interface__" if xp is np else "__cuda_array_interface__"


class DLPackOnly:
    """A framework's tensor as DLPack shows it."""

    def __init__(self, memory):
        self.memory = memory

    def __dlpack__(self, **kwargs):
        return self.memory.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.memory.__dlpack_device__()


class InterfaceOnly:
    """A framework's tensor as the array interface shows it."""

    def __init__(self, memory):
        self.memory = memory
        setattr(self, INTERFACE, getattr(memory, INTERFACE))


def host(a):
    return np.asarray(a.tolist())


def check(got, want, what):
    assert np.array_equal(host(got), np.asarray(want)), f"{what}: rank {rank} got {host(got)}, want {want}"


for kind in (DLPackOnly, InterfaceOnly):
    name = kind.__name__
    mine = xp.full(3, float(rank + 1))
    dist.all_reduce(kind(mine))
    check(mine, [n * (n + 1) / 2] * 3, f"all_reduce of {name}")

    grid = xp.zeros((4, 2))  # a strided column: staged, then copied back into the column alone
    if rank == 0:
        grid[:, 0] = xp.arange(4.0)
    dist.broadcast(kind(grid[:, 0]), src=0)
    check(grid, [[float(i), 0.0] for i in range(4)], f"broadcast into a column of {name}")

    outs = [xp.zeros(2, np.int32) for _ in range(n)]
    dist.all_gather([kind(o) for o in outs], kind(xp.full(2, rank, np.int32)))
    check(xp.stack(outs), [[r, r] for r in range(n)], f"all_gather into a list of {name}")
    fresh = []
    dist.all_gather(fresh, kind(xp.full(2, rank, np.int32)))
    assert all(type(f) is xp.ndarray for f in fresh), f"{name}: a fresh list holds {xp.__name__} arrays"
    check(xp.stack(fresh), [[r, r] for r in range(n)], f"all_gather into a fresh list from {name}")

    sent = xp.arange(n, dtype=np.int64) + 10 * rank
    got = xp.zeros(n, np.int64)
    dist.alltoall_single(kind(got), kind(sent))
    check(got, [10 * r + rank for r in range(n)], f"alltoall_single of {name}")

    if n > 1:
        box = xp.zeros(2)
        if rank == 0:
            dist.send(kind(xp.full(2, 5.0)), dst=1)
        elif rank == 1:
            dist.recv(kind(box), src=0)
            check(box, [5.0, 5.0], f"recv into {name}")

# -- refusals, each on the calling rank, naming the argument ----------------------------------
frozen = np.ones(2)
frozen.flags.writeable = False
if xp is np:  # a read-only export (a JAX array) can be sent but not received into
    expect(ValueError, ["all_reduce", "tensor is read-only"], dist.all_reduce, DLPackOnly(frozen))


class NeedsDetach(DLPackOnly):
    def __dlpack__(self, **kwargs):
        raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")


class Elsewhere(DLPackOnly):
    def __dlpack_device__(self):
        return (1, 0) if xp is not np else (2, 0)


expect(TypeError, ["broadcast", "tensor (__main__.NeedsDetach) cannot be shared", "detach()"],
       dist.broadcast, NeedsDetach(xp.ones(2)), src=0)
where = "a GPU array" if xp is np else "a host array"
expect(TypeError, ["all_reduce", f"tensor is {where}", "Elsewhere"], dist.all_reduce, Elsewhere(xp.ones(2)))
expect(TypeError, ["alltoall_single", "in_tensor must be", "__dlpack__", "object"],
       dist.alltoall_single, xp.zeros(n), object())
z = xp.ones(1)
dist.all_reduce(DLPackOnly(z))
check(z, [float(n)], "after the refusals")
print(f"foreign arrays OK rank={rank} world={n}", flush=True)
