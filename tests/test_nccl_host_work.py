"""The NCCL engine's host work per call, counted on the recording CuPy stand-in (host_cuda.py).

On an H100 a new CUDA event made and recorded costs 2.7 us of host time, a kept one recorded
again 0.85 us, and a query 1.8 us, against 0.8 us for the NCCL call itself: so a warmed-up
blocking call makes no new event (its event is recorded again once its call is seen complete),
and the watched calls are pruned with a query per stream and a binary search, not a query per
call. These tests count the events made and the queries, and check that reuse never makes a
call look complete early, or incomplete for ever, to a request or to the watchdog.
"""
import math
import threading

import numpy as np
import pytest

from host_cuda import CURRENT, SIDE, Communicator, HostCuda, Stream, full, zeros
from pycoll.backends import nccl as engine
from pycoll.backends.reduce_op import ReduceOp
from pycoll.distributed import collective as dist
from pycoll.distributed.group import Group

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning:cupy._environment")


def all_reduce(backend, blocking=True, seq=0):
    arr = zeros(2, np.float32)
    return backend.all_reduce(arr, backend.plan(np.dtype(np.float32), ReduceOp.SUM), blocking, seq)


def queries(fake):
    return len(fake.log.calls("query"))


def test_a_blocking_all_reduce_makes_no_new_event_once_warmed_up(backend, fake):
    fake.done = True
    for _ in range(2 * engine.PRUNE_AT):
        all_reduce(backend)
    made = fake.events_made
    fake.clear()
    for _ in range(500):
        all_reduce(backend)
    assert fake.events_made == made
    assert len(fake.log.calls("record")) == 500  # each call still has its event behind it
    assert queries(fake) <= 500 // engine.PRUNE_AT + 1


def test_a_non_blocking_call_makes_one_new_event_its_requests(backend, fake):
    all_reduce(backend, blocking=False)  # the engine's own event that the side stream waits on
    made = fake.events_made
    requests = [all_reduce(backend, blocking=False) for _ in range(10)]
    assert fake.events_made == made + 10
    assert len({id(r._event) for r in requests}) == 10


def test_pruning_64_calls_on_one_stream_queries_one_event(backend, fake):
    fake.done = True
    for _ in range(engine.PRUNE_AT):
        all_reduce(backend)
    fake.clear()
    assert backend.stalled_call() is None
    assert queries(fake) == 1  # the newest call's: the 63 before it on the stream are complete too
    assert not backend._in_flight.calls


def test_pruning_a_stream_half_complete_is_a_binary_search(backend, fake):
    for seq in range(1, engine.PRUNE_AT + 1):
        all_reduce(backend, seq=seq)
    for call in list(backend._in_flight.calls)[:40]:  # the device has finished the first 40
        call.event.fired = True
    fake.clear()
    call = backend.stalled_call()
    assert call.seq == 41 and len(backend._in_flight.calls) == engine.PRUNE_AT - 40
    assert queries(fake) <= 1 + math.ceil(math.log2(engine.PRUNE_AT))


def test_a_device_far_behind_the_host_costs_few_queries(backend, fake):
    fake.clear()
    for _ in range(2000):  # none completes: the list grows, and pruning ever less often
        all_reduce(backend)
    assert queries(fake) < 100  # a query per call after the 64th before
    assert len(backend._in_flight.calls) == 2000
    fake.done = True
    all_reduce(backend)
    assert backend.stalled_call() is None


def test_each_stream_is_pruned_by_its_own_order(backend, fake):
    """A call on the side stream that has not completed keeps itself and every later call,
    whatever their streams; complete calls before it go, however the streams interleave."""
    for seq in range(1, 11):
        all_reduce(backend, seq=seq)
    request = all_reduce(backend, blocking=False, seq=11)
    for seq in range(12, 21):
        all_reduce(backend, seq=seq)
    for call in backend._in_flight.calls:
        call.event.fired = call.stream == CURRENT  # the current stream has finished its work
    fake.clear()
    call = backend.stalled_call()
    assert (call.seq, call.stream) == (11, SIDE)
    assert [c.seq for c in backend._in_flight.calls] == list(range(11, 21))
    assert queries(fake) <= 3
    request._event.fired = True
    assert backend.stalled_call() is None


def test_a_call_seen_complete_stays_complete_when_its_event_is_recorded_again(backend, fake):
    """The watchdog may hold a call (``stalled_call``) while the enqueuing thread sees it complete
    and records its event again for a later call: the held call must not look unfinished."""
    all_reduce(backend, seq=1)
    held = backend.stalled_call()
    held.event.fired = True
    backend._in_flight.drop_completed()  # the enqueuing thread's prune
    all_reduce(backend, seq=2)  # takes the spare event: recorded again, not fired
    assert backend._in_flight.calls[0].event is held.event and not held.event.fired
    assert held.done
    assert backend.stalled_call().seq == 2


def test_a_requests_event_is_never_recorded_for_another_call(backend, fake):
    request = all_reduce(backend, blocking=False)
    request._event.fired = True  # complete on the device; nobody has asked yet
    fake.done = True
    for _ in range(3 * engine.PRUNE_AT):  # prunes the request's call, among others
        all_reduce(backend)
    fake.done = False
    for _ in range(3 * engine.PRUNE_AT):
        all_reduce(backend)
    assert request.test() is True


def test_a_request_sees_its_call_complete_only_once_it_is(backend, fake):
    fake.done = True
    for _ in range(2 * engine.PRUNE_AT):  # spare events at hand
        all_reduce(backend)
    fake.done = False
    request = all_reduce(backend, blocking=False)
    for _ in range(2 * engine.PRUNE_AT):
        all_reduce(backend)
    assert request.test() is False
    request._event.fired = True
    assert request.test() is True


def test_recording_an_event_again_resets_it_as_cuda_does():
    cuda = HostCuda()
    event = cuda.record(cuda.current_stream())
    event.fired = True
    assert event.done
    again = cuda.record(Stream(cuda, SIDE), event)
    assert again is event and not event.done and event.stream == SIDE
    assert cuda.events_made == 1


@pytest.mark.timeout(60)
def test_the_watchdog_thread_pruning_meanwhile_loses_no_call(backend, fake):
    """The watchdog's ``stalled_call`` prunes from its own thread while calls are enqueued."""
    fake.done = True
    stop = threading.Event()
    errors = []

    def watchdog():
        try:
            while not stop.is_set():
                backend.stalled_call()
        except Exception as exc:  # pragma: no cover - the failure this test looks for
            errors.append(exc)

    thread = threading.Thread(target=watchdog)
    thread.start()
    try:
        for seq in range(1, 20001):
            all_reduce(backend, seq=seq)
    finally:
        stop.set()
        thread.join()
    assert not errors
    # the thread's last prune may have run before the last calls were added: one more here
    assert backend.stalled_call() is None and not backend._in_flight.calls
    fake.done = False
    all_reduce(backend, seq=20001)
    assert [c.seq for c in backend._in_flight.calls] == [20001]
    assert backend.stalled_call().seq == 20001


# -- scatter and alltoall: blocks sent from where they are ------------------------------------------
def address(a):
    return a.__array_interface__["data"][0]


def data_sends(fake):
    """The addresses of the last group's sends (before it: the exchange of the ranks' block sizes)."""
    return [c[1] for c in fake.log.calls("send")[-2:]]


@pytest.fixture
def pair(backend):
    """The world of 2 ranks, this one rank 0, over the recording NCCL engine."""
    return Group(0, [0, 1], 0, backend, 10.0)


def test_scatter_sends_each_block_from_its_own_memory(pair, fake):
    out = zeros(4, np.float32)
    blocks = [full(4, 1.0, np.float32), full(4, 2.0, np.float32)]  # two allocations: they tile nothing
    dist.scatter(out, blocks, src=0, group=pair)
    assert [c[1] for c in fake.log.calls("send")] == [address(b) for b in blocks]
    assert fake.log.calls("recv")[0][1] == address(out)


def test_a_scatter_block_overlapping_the_output_is_sent_from_a_copy(pair, fake):
    out = full(4, 1.0, np.float32)
    other = full(4, 2.0, np.float32)
    dist.scatter(out, [out, other], src=0, group=pair)
    sent = [c[1] for c in fake.log.calls("send")]
    assert sent[0] != address(out) and sent[1] == address(other)


def test_a_group_of_one_scatters_and_gathers_without_telling_itself_its_verdict(fake):
    alone = Group(0, [0], 0, engine.NCCLBackend(Communicator(fake, rank=0, size=1), timeout=10.0), 10.0)
    out = zeros(4, np.float32)
    fake.clear()
    dist.scatter(out, [full(4, 1.0, np.float32)], src=0, group=alone)
    dist.gather(out, [zeros(4, np.float32)], dst=0, group=alone)
    assert not fake.log.calls("broadcast")  # the verdicts' broadcasts (and the host's wait for them)
    with pytest.raises(ValueError, match="scatter: tensor_list is None on the source rank"):
        dist.scatter(out, None, src=0, group=alone)
    assert not fake.log.calls("broadcast")


def test_alltoall_sends_separate_blocks_from_their_own_memory(pair, fake):
    sends = [full(4, 1.0, np.float32), full(4, 2.0, np.float32)]
    received = []
    dist.alltoall(received, sends, group=pair)
    assert data_sends(fake) == [address(a) for a in sends]


def test_alltoall_in_place_sends_from_one_copy_or_copies_of_the_overlapping_blocks(pair, fake):
    whole = full(8, 1.0, np.float32)
    tiling = [whole[:4], whole[4:]]
    dist.alltoall(tiling, tiling, group=pair)
    sent = data_sends(fake)
    assert sent[1] - sent[0] == 16 and not address(whole) <= sent[0] < address(whole) + 32
    assert [c[1] for c in fake.log.calls("recv")[-2:]] == [address(whole), address(whole) + 16]
    fake.clear()
    apart = [full(4, 1.0, np.float32), full(4, 2.0, np.float32)]  # received into pycoll's buffer
    dist.alltoall(apart, apart, group=pair)
    assert data_sends(fake) == [address(a) for a in apart]
