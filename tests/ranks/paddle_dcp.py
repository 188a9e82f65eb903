"""Checkpoints paddle 3.3.1 wrote on 2 ranks (tests/data/paddle_dcp, argv[1]) loaded on 2 ranks into
other placements and other ShardedWeight blocks than paddle saved: every rank's piece must equal
its slice of the whole value paddle saved (values.npz), bit for bit. Then the state loaded into
paddle's own layout is saved again by pycoll into folder argv[2] (which the test compares with
paddle's metadata)."""
import os
import sys

import numpy as np

import pycoll
import pycoll.distributed as dist
from pycoll.distributed import Replicate, Shard, ShardedWeight
from pycoll.distributed.checkpoint.layout import bounds_of

data, out = sys.argv[1], sys.argv[2]
dist.init_parallel_env()
rank = dist.get_rank()
mesh = dist.ProcessMesh([0, 1], dim_names=["x"])
whole = dict(np.load(os.path.join(data, "values.npz")))
whole["bf"] = whole["bf"].view(pycoll.bfloat16)  # stored as its bit patterns
dtypes = {key: value.dtype for key, value in whole.items()}


def zeros(key):
    return np.zeros(whole[key].shape, dtypes[key])


def check(tensor, key, where):
    """This rank's piece of ``tensor`` against the same block of paddle's whole value."""
    piece = tensor.local_tensor if isinstance(tensor, ShardedWeight) else tensor
    bounds = tensor.bounds() if isinstance(tensor, ShardedWeight) else bounds_of(tensor)
    want = whole[key][tuple(slice(lo, hi) for lo, hi in bounds)]
    got = np.asarray(piece._array)
    assert got.dtype == want.dtype and got.shape == want.shape, (key, where, got.dtype, got.shape)
    assert got.tobytes() == want.tobytes(), (key, where, got, want)


# placements/: w was saved Shard(0) (3 + 2 rows), i Shard(1) (2 + 1 columns), b Replicate, the rest plain
other = {"w": dist.shard_tensor(zeros("w"), mesh, [Shard(1)]),
         "i": dist.shard_tensor(zeros("i"), mesh, [Shard(0)]),
         "b": dist.shard_tensor(zeros("b"), mesh, [Shard(0)]),
         "h": dist.shard_tensor(zeros("h"), mesh, [Shard(1)]),
         "bf": dist.shard_tensor(zeros("bf"), mesh, [Shard(0)]),
         "step": pycoll.to_tensor(np.int64(0)),
         "opt": {key[4:]: pycoll.to_tensor(zeros(key)) for key in whole if key.startswith("opt.")},
         "model": {"weight": dist.shard_tensor(zeros("model.weight"), mesh, [Shard(0)]),
                   "bias": dist.shard_tensor(zeros("model.bias"), mesh, [Replicate()])}}
dist.load_state_dict(other, os.path.join(data, "placements"))
for key, value in other.items():
    for name, tensor in (value.items() if isinstance(value, dict) else [("", value)]):
        check(tensor, f"{key}.{name}" if name else key, "placements into others")

# sharded/: s saved as rows 0-2 and 3, c as columns 0-1 and 2-4, r whole: loaded as other blocks
s_cols = ShardedWeight("s", pycoll.zeros([4, 2 - rank], "float64"), (4, 2 - rank), (4, 3), (0, 2 * rank))
c_rows = ShardedWeight("c", pycoll.zeros([1, 5], "int32"), (1, 5), (2, 5), (rank, 0))
r_half = ShardedWeight("r", pycoll.zeros([3]), (3,), (6,), (3 * rank,))
c_placed = dist.shard_tensor(zeros("c"), mesh, [Shard(1)])
dist.load_state_dict({"s": s_cols, "c": c_rows, "r": r_half}, os.path.join(data, "sharded"))
dist.load_state_dict({"c": c_placed}, os.path.join(data, "sharded"))
for tensor, key in ((s_cols, "s"), (c_rows, "c"), (r_half, "r"), (c_placed, "c")):
    check(tensor, key, "sharded into other blocks")

# replicas/ (save_replicas=True: b listed twice): w into Replicate, b into Shard(0)
rep = {"w": dist.shard_tensor(zeros("w"), mesh, [Replicate()]), "b": dist.shard_tensor(zeros("b"), mesh, [Shard(0)])}
dist.load_state_dict(rep, os.path.join(data, "replicas"))
check(rep["w"], "w", "replicas")
check(rep["b"], "b", "replicas")

# paddle's own layout, loaded and saved again by pycoll
same = {"w": dist.shard_tensor(zeros("w"), mesh, [Shard(0)]),
        "b": dist.shard_tensor(zeros("b"), mesh, [Replicate()]),
        "h": pycoll.to_tensor(zeros("h")),
        "i": dist.shard_tensor(zeros("i"), mesh, [Shard(1)]),
        "bf": pycoll.to_tensor(zeros("bf")),
        "step": pycoll.to_tensor(np.int64(0)),
        "opt": {key[4:]: pycoll.to_tensor(zeros(key)) for key in whole if key.startswith("opt.")},
        "model": {"weight": pycoll.to_tensor(zeros("model.weight")), "bias": pycoll.to_tensor(zeros("model.bias"))}}
dist.load_state_dict(same, os.path.join(data, "placements"))
check(same["w"], "w", "paddle's layout")
check(same["i"], "i", "paddle's layout")
dist.save_state_dict(same, out)
print(f"OK rank={rank}", flush=True)
