"""fleet.util on a live job: get_file_shard's blocks (paddle's rule), all_reduce by each mode,
all_gather, barrier and print_on_rank; comm_world other than 'worker' or 'all' refused by name; the
parameter-server runtime's calls refused; a UserDefinedRoleMaker's declared worker followed."""
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
assert fleet.util.all_reduce(1, comm_world="all").tolist() == n  # 'all': the workers, in collective mode
expect(ValueError, ["fleet.load_model", "can not find suitable runtime handler", "dist.save_state_dict"],
       fleet.load_model, "path", 0)  # the parameter-server runtime, in a job of several ranks: paddle's error
# a role maker that declares every rank worker 0 of 2 (paddle's get_file_shard example): the worker
# queries and the file shards follow it, the collectives the launcher
fleet.init(fleet.UserDefinedRoleMaker(is_collective=True, current_id=0, worker_endpoints=["h:6003", "h:6004"]))
assert fleet.util.get_file_shard(["file1", "file2", "file3"]) == ["file1", "file2"]
assert (fleet.worker_index(), fleet.worker_num(), fleet.is_first_worker()) == (0, 2, True)
assert fleet.worker_endpoints() == ["h:6003", "h:6004"] and fleet.util.all_reduce(1).tolist() == n
fleet.util.print_on_rank("declared worker 0", 0)
expect(ValueError, ["mode='avg'"], fleet.util.all_reduce, 1, "avg")
expect(TypeError, ["files must be a list"], fleet.util.get_file_shard, ("a",))
print(f"OK rank={rank}", flush=True)
