"""Messages longer than their receive buffer, without PYCOLL_CHECK (two ranks: rank 0 sends,
rank 1 receives): each receive form raises a CollectiveError naming the call, the peer and the
buffer's size; the message is consumed (the pair's next message arrives intact), MPI stays usable
(an all_reduce works) and the job exits 0 even though an error was raised (nothing marked MPI
broken). Every rank prints ``p2p_long.py OK`` at the end.

Cases, in order: a blocking recv; an irecv; a batch_isend_irecv whose other transfer (a send
back) completes; a 4 MiB message (past MPI's eager limit: the rendezvous path) into a 1 MiB
strided buffer, which stays untouched (staged receives are copied back only on success).
"""
import numpy as np

import pycoll
import pycoll.distributed as dist
from expect import expect

dist.init_parallel_env()
rank = dist.get_rank()
f32 = np.float32
BIG = 1 << 20  # float32 elements: 4 MiB


def longer(call, buffer_text):
    return [f"recv #{call} from rank 0 on world (ranks [0, 1]): a message longer than the buffer "
            f"arrived, the buffer holds {buffer_text}; send and recv must have the same size and dtype "
            f"(MPI dropped what did not fit; PYCOLL_CHECK=1 names the size sent)"]


def next_message_intact(value: float) -> None:
    """The pair's next message arrives whole: the long one was consumed."""
    if rank == 0:
        dist.send(np.full(3, value, f32), dst=1)
    else:
        got = np.zeros(3, f32)
        dist.recv(got, src=0)
        assert got.tolist() == [value] * 3, got


# a blocking recv (call #1; the next message is #2)
if rank == 0:
    dist.send(np.arange(4, dtype=f32), dst=1)
else:
    expect(pycoll.CollectiveError, longer(1, "2 (shape [2], float32)"), dist.recv, np.zeros(2, f32), 0)
next_message_intact(1.0)

# an irecv (#3), the error at wait()
if rank == 0:
    dist.isend(np.arange(6, dtype=f32), dst=1).wait()
else:
    task = dist.irecv(np.zeros((2, 2), f32), src=0)
    expect(pycoll.CollectiveError, longer(3, "4 (shape [2, 2], float32)"), task.wait)
next_message_intact(2.0)

# a batch (#5 and #6): the long receive fails, the send beside it completes
if rank == 0:
    back = np.zeros(2, f32)
    for task in dist.batch_isend_irecv([dist.P2POp(dist.isend, np.arange(5, dtype=f32), 1),
                                        dist.P2POp(dist.irecv, back, 1)]):
        task.wait()
    assert back.tolist() == [7, 7], back
else:
    tasks = dist.batch_isend_irecv([dist.P2POp(dist.irecv, np.zeros(3, f32), 0),
                                    dist.P2POp(dist.isend, np.full(2, 7, f32), 0)])
    expect(pycoll.CollectiveError, longer(5, "3 (shape [3], float32)"), tasks[0].wait)
    tasks[1].wait()
next_message_intact(3.0)

# 4 MiB into a strided 1 MiB buffer (#8), staged through a contiguous copy
if rank == 0:
    dist.send(np.ones(BIG, f32), dst=1)
else:
    strided = np.full(BIG // 2, -1, f32)[::2]
    expect(pycoll.CollectiveError, longer(8, f"{BIG // 4} (shape [{BIG // 4}], float32)"), dist.recv, strided, 0)
    assert (strided == -1).all(), "a failed receive must leave a staged buffer untouched"
next_message_intact(4.0)

total = np.array([rank + 1.0])
dist.all_reduce(total)
assert total.tolist() == [3.0], total
print(f"p2p_long.py OK rank={rank}", flush=True)
