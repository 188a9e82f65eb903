"""paddle.distributed.rpc on 2 workers, each calling the other (every check runs on both ranks).

Rank, world size and master endpoint come from the launcher's environment (PADDLE_TRAINER_ID,
PADDLE_TRAINERS_NUM, its meeting point). Checked: two workers of one name are refused on both;
worker infos; rpc_sync / rpc_async with args and kwargs, NumPy arrays and a pycoll Tensor, each
computed on the peer (it names itself in the result); a nested call worker_r -> peer -> worker_r;
a remote exception raised again here with its type, the peer's name and the remote traceback;
an unknown worker; a timeout; shutdown, and calls after it; then a second meeting that rank 0
leaves right after init_rpc.
"""
import os
import time

import numpy as np

import pycoll
import pycoll.distributed.rpc as rpc
from pycoll._errors import CollectiveError
from pycoll.distributed.store import TCPStore


def add_on(a, b=0):
    """``(the worker that ran it, a + b)``."""
    return rpc.get_current_worker_info().name, a + b


def scale(tensor, factor):
    return tensor * factor


def fail(x):
    raise ValueError(f"bad value {x}")


def bounce(back_to, value):
    """Runs on the peer, and calls back the worker that called it."""
    return rpc.rpc_sync(back_to, add_on, args=(value,), kwargs={"b": 100})


def expect(error, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except error as exc:
        return str(exc)
    raise AssertionError(f"{fn.__name__} did not raise {error.__name__}")


def main():
    rank = int(os.environ["PADDLE_TRAINER_ID"])
    me, peer = f"worker{rank}", f"worker{1 - rank}"

    text = expect(ValueError, rpc.init_rpc, "same")
    assert "unique" in text and "'same': [0, 1]" in text, text
    rpc.init_rpc(me)

    infos = rpc.get_all_worker_infos()
    assert [(w.name, w.rank, w.ip) for w in infos] == [("worker0", 0, "127.0.0.1"), ("worker1", 1, "127.0.0.1")], infos
    assert infos[0].port != infos[1].port and all(w.port > 0 for w in infos), infos
    assert rpc.get_current_worker_info() == infos[rank] and rpc.get_worker_info(peer) == infos[1 - rank]
    assert str(infos[rank]) == f"{{name: {me}, rank: {rank}, ip: 127.0.0.1, port: {infos[rank].port}}}"

    assert rpc.rpc_sync(peer, add_on, args=(2, 3)) == (peer, 5)
    assert rpc.rpc_sync(peer, add_on, args=[1], kwargs={"b": 41}, timeout=30) == (peer, 42)
    x = np.arange(6.0).reshape(2, 3) * (rank + 1)
    where, got = rpc.rpc_async(peer, add_on, args=(x,), kwargs={"b": np.ones(3)}).wait()
    assert where == peer and got.dtype == np.float64
    np.testing.assert_array_equal(got, x + 1)
    futures = [rpc.rpc_async(peer, add_on, args=(i, 10 * rank)) for i in range(6)]
    assert [f.wait() for f in futures] == [(peer, i + 10 * rank) for i in range(6)]

    t = pycoll.to_tensor(np.random.default_rng(rank).standard_normal((3, 4)).astype(np.float32))
    out = rpc.rpc_sync(peer, scale, args=(t, 2.0))
    assert isinstance(out, pycoll.Tensor) and out.dtype == t.dtype
    np.testing.assert_array_equal(out.numpy(), t.numpy() * 2)

    assert rpc.rpc_sync(peer, bounce, args=(me, 7)) == (me, 107)

    text = expect(ValueError, rpc.rpc_sync, peer, fail, args=(3,))
    assert "bad value 3" in text and f"worker {peer!r}" in text and "Traceback" in text and "in fail" in text, text
    text = expect(ValueError, rpc.rpc_async(peer, fail, args=(4,)).wait)
    assert "bad value 4" in text and f"worker {peer!r}" in text, text
    text = expect(ValueError, rpc.rpc_sync, "worker7", add_on, args=(1,))
    assert "'worker7'" in text and "['worker0', 'worker1']" in text, text
    started = time.monotonic()
    text = expect(TimeoutError, rpc.rpc_sync, peer, time.sleep, args=(1.0,), timeout=0.2)
    assert time.monotonic() - started < 0.9 and peer in text and "sleep" in text, text

    rpc.shutdown()
    assert "shut down" in expect(RuntimeError, rpc.rpc_sync, peer, add_on, args=(1,))
    assert "shut down" in expect(RuntimeError, rpc.shutdown)
    rank_0_leaves_right_after_init_rpc(rank)


def rank_0_leaves_right_after_init_rpc(rank):
    """A second meeting that rank 0 leaves at once, without shutdown (paddle allows it: its
    init_rpc ends with a barrier). Rank 1 reads the directory slowly, so without init_rpc's
    closing barrier rank 0's store would be gone before rank 1 had read it; rank 1 must leave
    init_rpc with both workers' infos, and then a call to the gone worker 0 is a CollectiveError."""
    if rank == 1:
        real_get = TCPStore.get

        def slow_get(self, key, timeout=None):
            time.sleep(0.2)
            return real_get(self, key, timeout)

        TCPStore.get = slow_get
    rpc.init_rpc(f"again{rank}")
    assert [w.name for w in rpc.get_all_worker_infos()] == ["again0", "again1"]
    if rank == 1:
        time.sleep(0.2)  # rank 0 is gone by now
        text = expect(CollectiveError, rpc.rpc_sync, "again0", len, args=((),))
        assert "worker 'again0'" in text, text
    print(f"rpc OK rank={rank}", flush=True)
    os._exit(0)  # no shutdown


if __name__ == "__main__":
    main()
