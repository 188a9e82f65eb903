"""A call of broadcast_object_list / scatter_object_list / all_gather_object refused on one rank
only (a tuple where a list goes, an out-of-range src) must be refused on every rank before
anything is sent: the refusing rank raises its own error, the others an error naming it, ranks
given different src, different object collectives or (broadcast) lists of other lengths all raise;
objects sent to this rank itself are refused naming the call; the next calls then get their own
objects (they took the refused call's: stale objects, silently). Two ranks."""
import pycoll.distributed as dist

dist.init_parallel_env()
rank = dist.get_rank()


def refused(call, words):
    try:
        call()
    except (TypeError, ValueError) as exc:
        assert words in str(exc), exc
    else:
        raise AssertionError(f"rank {rank}: the call went through: {words}")


bad_list = (lambda: dist.broadcast_object_list(("mine",) if rank == 1 else ["mine"], src=0))
refused(bad_list, "object_list must be a list" if rank == 1 else "rank(s) [1] of world (ranks [0, 1]) refused")
bad_src = (lambda: dist.broadcast_object_list(["x"], src=5 if rank == 0 else 0))
refused(bad_src, "src=5 is not a rank" if rank == 0 else "rank(s) [0] of world (ranks [0, 1]) refused")
two_roots = (lambda: dist.broadcast_object_list([rank], src=rank))
refused(two_roots, "gave different src [0, 1]")
out = []
bad_out = (lambda: dist.scatter_object_list(() if rank == 1 else out, ["a", "b"], src=0))
refused(bad_out, "out_object_list must be a list" if rank == 1 else "rank(s) [1] of world (ranks [0, 1]) refused")
gathered = []
bad_gather = (lambda: dist.all_gather_object(() if rank == 1 else gathered, rank))
refused(bad_gather, "object_list must be a list" if rank == 1 else "rank 1 refused its part")
assert gathered == [], gathered
# ranks in different object collectives are told so by name (they met in all_gather, named so)
different = (lambda: dist.all_gather_object([], rank) if rank == 0 else dist.broadcast_object_list([None], src=0))
refused(different, "are in different collectives (rank 0: all_gather_object; rank 1: broadcast_object_list)")
refused(lambda: dist.broadcast_object_list([1, 2] if rank == 0 else [None], src=0), "gave object lists of [2, 1] entries")
refused(lambda: dist.send_object_list([1]) if rank == 0 else dist.recv_object_list([None], src=1),
        "not given (paddle's default: rank 0) is this rank itself" if rank == 0 else "src=1 is this rank itself")
for step in range(2):
    objects = [f"step{step}"] if rank == 0 else [None]
    dist.broadcast_object_list(objects, src=0)
    assert objects == [f"step{step}"], (step, objects)
    got = []
    dist.scatter_object_list(got, [f"s{step}r0", f"s{step}r1"] if rank == 0 else None, src=0)
    assert got == [f"s{step}r{rank}"], (step, got)
print(f"OK rank={rank}", flush=True)
