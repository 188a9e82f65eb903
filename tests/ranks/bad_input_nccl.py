"""Bad input on NCCL ranks: each call raises on the calling rank, naming the argument, before
anything is sent, and the job goes on (the CPU backend's table is in test_api.py). Runs without
a GPU on tests/host_cuda.py when PYCOLL_TEST_HOST_CUPY=1."""
import os
import sys

sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/: host_cuda
import host_cuda  # noqa: E402

host_cuda.install_if_asked()  # before CuPy is imported
import cupy  # noqa: E402
import numpy as np  # noqa: E402
from expect import expect  # noqa: E402

import pycoll  # noqa: E402
import pycoll.distributed as dist  # noqa: E402

dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
assert dist.get_group(0).engine.name == "nccl"
ReduceOp = dist.ReduceOp

CASES = [
    # (description, call, exception, words in the message)
    ("a NumPy array", lambda: dist.all_reduce(np.ones(2)), TypeError,
     ["all_reduce", "tensor is a host array", "numpy.ndarray", "move it to the GPU"]),
    ("a host Tensor", lambda: dist.broadcast(pycoll.to_tensor(np.ones(2), place="cpu"), src=0), TypeError,
     ["broadcast", "host array"]),
    ("a NumPy block to scatter", lambda: dist.scatter(cupy.ones(2), [np.ones(2)] * n, src=0), TypeError,
     ["tensor_list[0]", "host array"]),
    ("NumPy gather outputs", lambda: dist.all_gather([np.ones(2)] * n, cupy.ones(2)), TypeError,
     ["tensor_list[0]", "host array"]),
    ("int16 reduction", lambda: dist.all_reduce(cupy.ones(2, cupy.int16)), TypeError,
     ["int16", "nccl backend", "reducible dtypes"]),
    ("PROD of complex", lambda: dist.all_reduce(cupy.ones(2, cupy.complex64), op=ReduceOp.PROD), TypeError,
     ["PROD", "complex64"]),
    ("AVG of ints", lambda: dist.reduce(cupy.ones(2, cupy.int32), dst=0, op=ReduceOp.AVG), TypeError,
     ["AVG", "int32"]),
    ("src out of range", lambda: dist.broadcast(cupy.ones(2), src=n), ValueError, [f"src={n}", "world"]),
    ("send to itself", lambda: dist.send(cupy.ones(2), dst=rank), ValueError, [f"dst={rank}", "itself"]),
    ("mis-shaped gather output", lambda: dist.all_gather([cupy.ones(3)] * n, cupy.ones(2)), ValueError,
     ["tensor_list[0]", "shape"]),
    ("bool object", lambda: dist.all_reduce(True), TypeError, ["tensor", "bool"]),
]

for description, call, exc_type, words in CASES:
    expect(exc_type, words, call)
    x = cupy.full(3, rank + 1.0)
    dist.all_reduce(x)  # the job goes on: nothing of the bad call was sent
    assert (cupy.asnumpy(x) == n * (n + 1) / 2).all(), (description, x)
print(f"bad input nccl OK rank={rank} cases={len(CASES)}", flush=True)
