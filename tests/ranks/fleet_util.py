"""fleet.util on a live job: get_file_shard's blocks (paddle's rule), all_reduce by each mode,
all_gather, barrier and print_on_rank; comm_world other than 'worker' refused by name."""
import numpy as np

import pycoll.distributed as dist
import pycoll.distributed.fleet as fleet

from expect import expect

fleet.init(is_collective=True)
rank, n = dist.get_rank(), dist.get_world_size()
files = ["a", "b", "c", "d", "e"]
shards = fleet.util.all_gather(fleet.util.get_file_shard(files))
assert sum(shards, []) == files and [len(s) for s in shards] == [len(files) // n + (r < len(files) % n)
                                                                  for r in range(n)], shards
assert fleet.util.all_reduce([1.0, rank], mode="sum").tolist() == [float(n), sum(range(n))]
assert fleet.util.all_reduce(np.array([rank, -rank]), mode="max").tolist() == [n - 1, 0]
assert fleet.util.all_reduce(rank, mode="min").tolist() == 0
fleet.util.barrier()
fleet.util.print_on_rank(f"printed by rank {rank}", n - 1)
expect(ValueError, ["comm_world='server'", "workers only"], fleet.util.barrier, "server")
expect(ValueError, ["mode='avg'"], fleet.util.all_reduce, 1, "avg")
expect(TypeError, ["files must be a list"], fleet.util.get_file_shard, ("a",))
print(f"OK rank={rank}", flush=True)
