"""send_object_list / recv_object_list between two ranks (by global rank, by group rank and by
paddle's default, rank 0), and
their bad input refused on the calling rank before anything is sent. A receiver whose list is too
short refuses the objects but takes the whole message, so the next receive from that rank gets
what was sent next. An object one rank cannot pickle makes every rank's all_gather_object raise,
and the job goes on."""
import numpy as np

import pycoll.distributed as dist
from expect import expect

dist.init_parallel_env()
rank = dist.get_rank()
pair = dist.new_group([0, 1])
objects = ["hello", {"key": 100}, [1, 2, 3], b"\x00" * 70000, None]
if rank == 0:
    dist.send_object_list(objects, dst=1)
    dist.send_object_list([("by", "group", "rank")], dst_in_group=1, group=pair)
    expect(ValueError, ["give one of dst and dst_in_group, not both"], dist.send_object_list, [1], 1, None, 1)
    expect(ValueError, ["object_list is []"], dist.send_object_list, [], 1)  # paddle's type
    expect(ValueError, ["object_list is None"], dist.send_object_list, None, 1)
    expect(TypeError, ["object_list must be a non-empty list"], dist.send_object_list, (1,), 1)
    expect(TypeError, ["object_list[0]", "cannot be pickled"], dist.send_object_list, [lambda: 0], 1)
elif rank == 1:
    got = [None] * len(objects)
    dist.recv_object_list(got, src=0)
    assert got == objects, got
    one = [None]
    dist.recv_object_list(one, src_in_group=0, group=pair)
    assert one == [("by", "group", "rank")], one
    expect(ValueError, ["src_in_group=5 is not a rank of"], dist.recv_object_list, [None], None, pair, 5)
    for empty in (None, []):  # paddle's ValueError: "object_list cannot be None or empty"
        expect(ValueError, [f"object_list is {empty!r}"], dist.recv_object_list, empty, 0)
    expect(TypeError, ["object_list must be a non-empty list"], dist.recv_object_list, (None,), 0)
# neither dst nor src: rank 0, paddle's default
if rank == 1:
    dist.send_object_list(["to rank 0"])
elif rank == 0:
    first = [None]
    dist.recv_object_list(first, src=1)
    assert first == ["to rank 0"], first
if rank == 0:
    dist.send_object_list(["from rank 0"], dst=1)
elif rank == 1:
    first = [None]
    dist.recv_object_list(first)
    assert first == ["from rank 0"], first
if rank == 0:
    dist.send_object_list([1, 2], dst=1)
    dist.send(np.array([5, 6], np.int64), dst=1)
elif rank == 1:
    expect(ValueError, ["rank 0 sends 2 objects but object_list has 1 entries"], dist.recv_object_list, [None], 0)
    after = np.zeros(2, np.int64)
    dist.recv(after, src=0)
    assert after.tolist() == [5, 6], after
if rank == 0:
    expect(TypeError, ["obj holds an object", "cannot be pickled"], dist.all_gather_object, [], lambda: 0)
else:
    expect(TypeError, ["rank 0 refused its part", "cannot be pickled"], dist.all_gather_object, [], rank)
gathered = []
dist.all_gather_object(gathered, {"rank": rank})
assert gathered == [{"rank": r} for r in range(dist.get_world_size())], gathered
print(f"object p2p OK rank={rank}", flush=True)
