"""send_object_list / recv_object_list between two ranks (by global rank and by group rank), and
their bad input refused on the calling rank before anything is sent."""
import pycoll.distributed as dist
from expect import expect

dist.init_parallel_env()
rank = dist.get_rank()
pair = dist.new_group([0, 1])
objects = ["hello", {"key": 100}, [1, 2, 3], b"\x00" * 70000, None]
if rank == 0:
    dist.send_object_list(objects, dst=1)
    dist.send_object_list([("by", "group", "rank")], dst_in_group=1, group=pair)
    expect(ValueError, ["give one of dst and dst_in_group"], dist.send_object_list, [1], 1, None, 1)
    expect(TypeError, ["object_list must be a non-empty list"], dist.send_object_list, [], 1)
    expect(TypeError, ["object_list[0]", "cannot be pickled"], dist.send_object_list, [lambda: 0], 1)
elif rank == 1:
    got = [None] * len(objects)
    dist.recv_object_list(got, src=0)
    assert got == objects, got
    one = [None]
    dist.recv_object_list(one, src_in_group=0, group=pair)
    assert one == [("by", "group", "rank")], one
    expect(ValueError, ["src_in_group=5 is not a rank of"], dist.recv_object_list, [None], None, pair, 5)
print(f"object p2p OK rank={rank}", flush=True)
