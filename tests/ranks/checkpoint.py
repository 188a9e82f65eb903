"""Distributed checkpoints on 2 or 4 ranks (folder argv[1]): a state dict of split, replicated,
partial and plain tensors (nested) saved, then loaded into other placements, another mesh and as
plain tensors, and merged whole; each value must equal the whole NumPy array it came from. Then
what is refused: a key the checkpoint lacks, a shape that differs, an unknown unique_id."""
import os
import sys

import numpy as np

import pycoll
import pycoll.distributed as dist
from pycoll.distributed import Partial, Replicate, Shard

from expect import expect

folder = sys.argv[1]
dist.init_parallel_env()
n, rank = dist.get_world_size(), dist.get_rank()
W = np.arange(40, dtype=np.float32).reshape(5, 8)  # 5 rows: uneven over 2 and 4 ranks
B = np.linspace(-1, 1, 6).astype(np.float64)
flat = dist.ProcessMesh(list(range(n)), dim_names=["x"])
square = dist.ProcessMesh(np.arange(n).reshape(2, n // 2).tolist(), dim_names=["a", "b"])

state = {"w": dist.shard_tensor(W, flat, [Shard(0)]),
         "opt": {"b": dist.shard_tensor(B, flat, [Replicate()]), "step": pycoll.to_tensor(np.int64(7))},
         "p": dist.shard_tensor(W, flat, [Partial()]) * 1}  # a Partial value: its whole is W
dist.save_state_dict(state, folder)
dist.save_state_dict(state, folder)  # a second checkpoint in the same folder: unique_id 1
ids = sorted(name for name in os.listdir(folder) if name.endswith(".metadata"))
assert ids == ["0.metadata", "1.metadata"], ids


def check(t, whole, what):
    got = t.numpy()
    np.testing.assert_array_equal(got, whole, err_msg=what)
    assert got.dtype == np.asarray(whole).dtype, (what, got.dtype)


for placements, mesh in (([Shard(1)], flat), ([Replicate()], flat), ([Shard(0), Shard(1)], square),
                         ([Shard(1), Replicate()], square)):
    target = {"w": dist.shard_tensor(np.zeros_like(W), mesh, placements),
              "opt": {"b": dist.shard_tensor(np.zeros_like(B), mesh, [Shard(0)] + [Replicate()] * (mesh.ndim - 1)),
                      "step": pycoll.to_tensor(np.int64(0))},
              "p": dist.shard_tensor(np.zeros_like(W), mesh, placements)}
    dist.load_state_dict(target, folder)
    where = f"loaded into {placements} on {mesh.shape}"
    check(target["w"], W, where)
    check(target["opt"]["b"], B, where)
    check(target["opt"]["step"], np.int64(7), where)
    check(target["p"], W, where)

plain = {"w": pycoll.zeros([5, 8])}
dist.load_state_dict(plain, folder, unique_id=0)
check(plain["w"], W, "loaded into a plain tensor")
merged = dist.load_merged_state_dict(folder)
assert sorted(merged) == ["opt.b", "opt.step", "p", "w"], sorted(merged)
check(merged["w"], W, "merged")
assert sorted(dist.load_merged_state_dict(folder, prefix="opt.")) == ["b", "step"]

# Layer.set_state_dict from a layer placed otherwise: each parameter resharded to its own placements
source, target = pycoll.nn.Linear(5, 8), pycoll.nn.Linear(5, 8)
source.weight.set_value(W)
source.weight = dist.shard_tensor(source.weight, flat, [Shard(1)])
target.weight = dist.shard_tensor(target.weight, flat, [Shard(0)])
missing, unexpected = target.set_state_dict(source.state_dict())
assert (missing, unexpected) == ([], []), (missing, unexpected)
check(target.weight, W, "set_state_dict from Shard(1) into Shard(0)")
check(target.bias, source.bias.numpy(), "set_state_dict of a plain bias")

expect(ValueError, ["has no ['v']"], dist.load_state_dict, {"v": pycoll.zeros([2])}, folder)
expect(ValueError, ["'w' has shape [5, 9]", "[5, 8] in the checkpoint"], dist.load_state_dict,
       {"w": pycoll.zeros([5, 9])}, folder)
expect(ValueError, ["unique_id=5", "[0, 1]"], dist.load_state_dict, plain, folder, unique_id=5)
expect(FileNotFoundError, ["no checkpoint"], dist.load_merged_state_dict, os.path.join(folder, "none"))
print(f"OK rank={rank}", flush=True)
