"""paddle's flex-checkpoint ShardedWeights on 2 ranks (folder argv[1]): blocks split by hand
(shard_weight, build_sharded_state_dict) and a distributed tensor saved together, then loaded
into other blocks, whole, and into placements; each value must equal the NumPy array it came
from. Then what is refused: overlapping blocks, whole shapes that differ between ranks."""
import os
import sys

import numpy as np
from expect import expect

import pycoll
import pycoll.distributed as dist
from pycoll.distributed import Replicate, Shard, ShardedWeight

folder = sys.argv[1]
dist.init_parallel_env()
rank, world = dist.get_rank(), dist.get_group(0)
W = np.arange(24, dtype=np.float32).reshape(4, 6)
B = np.linspace(-1, 1, 5)
mesh = dist.ProcessMesh([0, 1], dim_names=["x"])

rows = dist.shard_weight("w", pycoll.to_tensor(W[2 * rank:2 * rank + 2]), 0, world)
assert (rows.local_shape, rows.global_shape, rows.global_offset) == ((2, 6), (4, 6), (2 * rank, 0)), rows
replicated = dist.build_sharded_state_dict({"b": pycoll.to_tensor(B), "step": pycoll.to_tensor(np.int64(9))},
                                           prefix="opt.")
assert sorted(replicated) == ["opt.b", "opt.step"] and replicated["opt.b"].global_offset == (0,)
state = {"w": rows, **replicated, "d": dist.shard_tensor(W, mesh, [Shard(1)])}
dist.save_state_dict(state, folder)
files = sorted(os.listdir(folder))
assert files == ["0.metadata", "0_0.distcp", "1_0.distcp"], files
written = pycoll.load(os.path.join(folder, f"{rank}_0.distcp"), return_numpy=True)  # {key: this rank's block}
mine = sorted((key, block.shape) for key, block in written.items())
want = [("d", (4, 3)), ("w", (2, 6))] + ([("opt.b", (5,)), ("opt.step", ())] if rank == 0 else [])
assert mine == sorted(want), mine  # a block several ranks hold is written once, by the first

cols = ShardedWeight("w", pycoll.zeros([4, 3]), (4, 3), (4, 6), (0, 3 * rank))
d_rows = ShardedWeight("d", pycoll.zeros([1, 6]), [1, 6], [4, 6], [3 * rank, 0])  # rows 0 and 3
b = pycoll.zeros([5], dtype="float64")
dist.load_state_dict({"w": cols, "d": d_rows, "opt": {"b": b}}, folder)
np.testing.assert_array_equal(cols.local_tensor.numpy(), W[:, 3 * rank:3 * rank + 3])
np.testing.assert_array_equal(d_rows.local_tensor.numpy(), W[3 * rank:3 * rank + 1])
np.testing.assert_array_equal(b.numpy(), B)
whole, placed = pycoll.zeros([4, 6]), dist.shard_tensor(np.zeros_like(W), mesh, [Replicate()])
dist.load_state_dict({"w": whole, "d": placed}, folder)
np.testing.assert_array_equal(whole.numpy(), W)
np.testing.assert_array_equal(placed.numpy(), W)

# refused on both ranks alike, before anything is written
expect(ValueError, ["two blocks of 'x' overlap", "[3, 6]"], dist.save_state_dict,
       {"x": ShardedWeight("x", pycoll.zeros([3, 6]), (3, 6), (4, 6), (rank, 0))}, os.path.join(folder, "bad"))
expect(ValueError, ["'y'", "rank 0", "rank 1", "same whole shape and dtype"], dist.save_state_dict,
       {"y": ShardedWeight("y", pycoll.zeros([2, 6]), (2, 6), (4, 6 + rank), (2 * rank, 0))},
       os.path.join(folder, "bad"))
assert not os.path.exists(os.path.join(folder, "bad", "0.metadata"))
expect(ValueError, ["coordinator_rank=5", "world"], dist.save_state_dict, {"w": rows}, os.path.join(folder, "bad"),
       coordinator_rank=5)
expect(ValueError, ["unique_id=-1", "int >= 0"], dist.save_state_dict, {"w": rows}, os.path.join(folder, "bad"),
       unique_id=-1)
expect(ValueError, ["different unique_id", "{0: 0, 1: 1}"], dist.save_state_dict, {"w": rows},
       os.path.join(folder, "bad"), unique_id=rank)
assert not os.path.exists(os.path.join(folder, "bad", "0.metadata"))

# keys some ranks hold (a pipeline stage's layer, a sharded optimizer's piece): each saved by its holder,
# a plain tensor held by several once; the coordinator (here rank 1) writes the metadata
own = os.path.join(folder, "own")
dist.save_state_dict({f"stage{rank}": pycoll.to_tensor(W + rank), "shared": pycoll.to_tensor(B)}, own,
                     coordinator_rank=1)
back = pycoll.zeros([4, 6])
dist.load_state_dict({f"stage{1 - rank}": back}, own)
np.testing.assert_array_equal(back.numpy(), W + 1 - rank)
expect(ValueError, ["local_shape=[2, 6]", "[3, 6]"], ShardedWeight, "z", pycoll.zeros([3, 6]), (2, 6), (4, 6), (0, 0))
expect(ValueError, ["does not fit", "[4, 6]"], ShardedWeight, "z", pycoll.zeros([2, 6]), (2, 6), (4, 6), (3, 0))
expect(ValueError, ["Shard axis 2 is invalid"], dist.shard_weight, "z", pycoll.zeros([2, 6]), 2, world)
expect(NotImplementedError, ["flattened"], ShardedWeight, "z", pycoll.zeros([2]), (2,), (4,), (0,), True)
print(f"OK rank={rank}", flush=True)
