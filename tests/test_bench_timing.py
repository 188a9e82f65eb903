"""The one timing loop of pycoll-bench and the peer benchmarks (pycoll/bench/timing.py), against a
communicator stand-in: interleaved blocks, warm-up and rounds, nccl-tests' -a combining."""
import numpy as np
import pytest
from mpi4py import MPI

from pycoll.bench import timing

class TwoRanks:
    """A communicator stand-in: this rank and rank 0, whose values are ``other``; counts
    barriers."""

    def __init__(self, other=()):
        self.other = np.array(other, dtype=np.float64)
        self.barriers = 0

    def Get_size(self):
        return 2

    def Barrier(self):
        self.barriers += 1

    def Bcast(self, buf, root):
        buf[...] = self.other

    def Allreduce(self, send, recv, op):
        combine = np.add if op == MPI.SUM else np.minimum if op == MPI.MIN else np.maximum
        recv[...] = combine(send, self.other)


def test_blocks_interleave_in_flipping_order_each_drained_at_both_ends():
    log = []
    runs = [lambda: log.append("a"), lambda: log.append("b")]
    syncs = [lambda: log.append("|a"), lambda: log.append("|b")]
    comm = TwoRanks()
    seconds = timing.interleaved_blocks(comm, runs, [1, 2, 0], syncs)
    assert "".join(log) == "|aa|a|bb|b" "|bbb|b|aaa|a" "|a|a|b|b"
    assert comm.barriers == 6 and [len(s) for s in seconds] == [3, 3]


def test_time_calls_warms_up_then_spreads_the_calls_over_the_rounds():
    made = []
    comm = TwoRanks()
    per_call = timing.time_calls(comm, [lambda: made.append(1)], iters=7, warmup=2, rounds=3)
    assert len(made) == 2 + 7 and comm.barriers == 1 + 3 and len(per_call) == 1
    timing.time_calls(comm, [lambda: None], iters=2, warmup=0, rounds=5)
    assert comm.barriers == 4 + 1 + 2  # no more rounds than calls


@pytest.mark.parametrize("how, combined", [
    (timing.RANK0, [3.0, 5.0]), (timing.AVERAGE, [2.0, 6.0]), (timing.MINIMUM, [1.0, 5.0]),
    (timing.MAXIMUM, [3.0, 7.0])])
def test_ranks_times_combine_as_nccl_tests_a_flag(how, combined):
    assert timing.combine(TwoRanks([3.0, 5.0]), [1.0, 7.0], how) == combined


def test_peer_medians_skip_the_warm_up_round_and_take_the_slowest_rank(monkeypatch):
    counts = []
    monkeypatch.setattr(timing, "interleaved_blocks", lambda comm, runs, calls, syncs:
                        counts.append(calls) or [[9.0, 4.0, 8.0, 6.0]])
    comm = TwoRanks([5.0, 1.0, 9.0])  # the other rank's timed blocks
    # the slowest rank's blocks are 5, 8, 9 (the warm-up's 9 left out): median 8, over 2 calls
    assert timing.median_per_call(comm, [None], iters=2, rounds=3, warmup=1) == [4.0]
    assert counts == [[1, 2, 2, 2]]
