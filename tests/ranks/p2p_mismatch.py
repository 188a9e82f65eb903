"""Point-to-point calls whose two sides differ (argv[1] names the case; two ranks, rank 0 sends,
rank 1 receives): the receiving rank must raise a CollectiveError naming the call, the peer and
both sides, the next message between the pair must arrive intact, and a following all_reduce
must still work (the job exits 0: the error did not leave the process to abort).

recv_bigger, isend_irecv_bigger, batch_bigger: a message shorter than the receive buffer,
caught without PYCOLL_CHECK (MPI's status count). dtype_same_bytes: a message of another dtype
and the buffer's byte size, caught without PYCOLL_CHECK (the message's tag names its dtype).
empty_send: an empty send is a message (of 0 bytes) on MPI, so a receive of 3 elements meeting it
fails there, and the pair's next message is not shifted into it. dtype_check (under PYCOLL_CHECK=1): another
dtype, blocking and non-blocking, and a message longer than the buffer, each reported as the
mismatch of both sides. matching (under PYCOLL_CHECK=1): correct exchanges of every form pass
with their values.
"""
import sys

import numpy as np

import pycoll
import pycoll.distributed as dist
from expect import expect

dist.init_parallel_env()
rank = dist.get_rank()
case = sys.argv[1]
f32, i32 = np.float32, np.int32
SHORT = ["from rank 0 on world (ranks [0, 1]): 4 elements arrived, the buffer holds 6 (shape [6], float32); "
         "send and recv must have the same size and dtype"]


def next_message_intact() -> None:
    """The pair's next message arrives whole: the mismatched one was taken entirely."""
    if rank == 0:
        dist.send(np.arange(3, dtype=f32) + 10, dst=1)
    else:
        got = np.zeros(3, f32)
        dist.recv(got, src=0)
        assert got.tolist() == [10, 11, 12], got


if case == "recv_bigger":
    if rank == 0:
        dist.send(np.arange(4, dtype=f32), dst=1)
    else:
        buf = np.full(6, -1, f32)
        expect(pycoll.CollectiveError, ["recv #1 " + SHORT[0]], dist.recv, buf, 0)
elif case == "isend_irecv_bigger":
    if rank == 0:
        dist.isend(np.arange(4, dtype=f32), dst=1).wait()
    else:
        task = dist.irecv(np.zeros(6, f32), src=0)
        expect(pycoll.CollectiveError, SHORT, task.wait)
elif case == "batch_bigger":
    if rank == 0:
        back = np.zeros(2, f32)
        tasks = dist.batch_isend_irecv([dist.P2POp(dist.isend, np.arange(4, dtype=f32), 1),
                                        dist.P2POp(dist.irecv, back, 1)])
        for task in tasks:
            task.wait()
        assert back.tolist() == [7, 7], back
    else:
        tasks = dist.batch_isend_irecv([dist.P2POp(dist.irecv, np.zeros(6, f32), 0),
                                        dist.P2POp(dist.isend, np.full(2, 7, f32), 0)])
        expect(pycoll.CollectiveError, SHORT, tasks[0].wait)
        tasks[1].wait()
elif case == "dtype_same_bytes":
    if rank == 0:
        dist.send(np.arange(4, dtype=f32), dst=1)
        dist.isend(np.arange(2, dtype=np.float64), dst=1).wait()
        tasks = dist.batch_isend_irecv([dist.P2POp(dist.isend, np.ones(3, bool), 1)])
        tasks[0].wait()
        dist.send(np.arange(3, dtype=np.int64), dst=1)  # then a matching pair: it arrives whole
        dist.send(np.arange(4, dtype=np.int64), dst=1)  # another dtype and longer than the buffer
    else:
        expect(pycoll.CollectiveError, ["recv #1 from rank 0 on world (ranks [0, 1]): 4 elements of float32 arrived, "
                                        "the buffer holds 4 (shape [4], int32); send and recv must have the same "
                                        "size and dtype (the buffer holds the bytes that came, not values)"],
               dist.recv, np.zeros(4, i32), 0)
        task = dist.irecv(np.zeros(4, f32), src=0)
        expect(pycoll.CollectiveError, ["2 elements of float64 arrived, the buffer holds 4 (shape [4], float32)"],
               task.wait)
        tasks = dist.batch_isend_irecv([dist.P2POp(dist.irecv, np.zeros(3, np.uint8), 0)])
        expect(pycoll.CollectiveError, ["3 elements of bool arrived, the buffer holds 3 (shape [3], uint8)"],
               tasks[0].wait)
        got = np.zeros(3, np.int64)
        dist.recv(got, src=0)
        assert got.tolist() == [0, 1, 2], got
        expect(pycoll.CollectiveError, ["an int64 message longer than the buffer arrived, the buffer holds 2 "
                                        "(shape [2], float32)"], dist.recv, np.zeros(2, f32), 0)
elif case == "empty_send":
    if rank == 0:
        dist.send(np.zeros(0, f32), dst=1)  # met by a receive of 3: its error, not the next message's data
        dist.send(np.zeros(0, f32), dst=1)  # and by an empty receive: nothing, fine
    else:
        expect(pycoll.CollectiveError, ["recv #1 from rank 0 on world (ranks [0, 1]): 0 elements arrived, the "
                                        "buffer holds 3 (shape [3], float32)"], dist.recv, np.full(3, -1, f32), 0)
        dist.recv(np.zeros(0, f32), src=0)
elif case == "dtype_check":
    if rank == 0:
        dist.send(np.arange(4, dtype=f32), dst=1)  # call #1
        dist.isend(np.arange(4, dtype=f32), dst=1).wait()  # #2
        dist.send(np.arange(8, dtype=f32), dst=1)  # #3: longer than the buffer
    else:
        buf = np.zeros(4, i32)
        expect(pycoll.CollectiveError, ["PYCOLL_CHECK: recv #1 from rank 0 on world",
                                        "send #1 on rank 0: float32[4]; recv #1 on rank 1: int32[4]",
                                        "taken into scratch"], dist.recv, buf, 0)
        assert buf.tolist() == [0, 0, 0, 0], f"the data went to scratch, not the buffer: {buf}"
        task = dist.irecv(np.zeros(4, i32), src=0)
        expect(pycoll.CollectiveError, ["send #2 on rank 0: float32[4]; recv #2 on rank 1: int32[4]"], task.wait)
        task = dist.irecv(np.zeros(4, f32), src=0)  # MPI truncates it: reported as the mismatch
        expect(pycoll.CollectiveError, ["send #3 on rank 0: float32[8]; recv #3 on rank 1: float32[4]"], task.wait)
elif case == "matching":
    if rank == 0:
        dist.send(np.arange(6, dtype=f32).reshape(2, 3), dst=1)  # the receiver's shape may differ
        dist.isend(np.arange(4, dtype=np.float64), dst=1).wait()
        dist.send(np.zeros(0, i32), dst=1)  # empty: nothing to move, the descriptor still goes
        got = np.zeros(3, i32)
        tasks = dist.batch_isend_irecv([dist.P2POp("irecv", got, 1), dist.P2POp("isend", np.ones(5, f32) * 3, 1)])
        for task in tasks:
            task.wait()
        assert got.tolist() == [4, 5, 6], got
    else:
        flat = np.zeros(6, f32)
        dist.recv(flat, src=0)
        assert flat.tolist() == [0, 1, 2, 3, 4, 5], flat
        strided = np.zeros(8, np.float64)[::2]  # staged through a copy and written back
        dist.irecv(strided, src=0).wait()
        assert strided.tolist() == [0, 1, 2, 3], strided
        dist.recv(np.zeros(0, i32), src=0)
        five = np.zeros(5, f32)
        tasks = dist.batch_isend_irecv([dist.P2POp("isend", np.array([4, 5, 6], i32), 0), dist.P2POp("irecv", five, 0)])
        for task in tasks:
            task.wait()
        assert five.tolist() == [3] * 5, five
else:
    raise SystemExit(f"unknown case {case!r}")

next_message_intact()
total = np.array([rank + 1.0])
dist.all_reduce(total)
assert total.tolist() == [3.0], total
print(f"{case} OK rank={rank}", flush=True)
