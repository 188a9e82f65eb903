"""A worker whose script ends without rpc.shutdown: its peer's shutdown fails within seconds,
naming it, instead of waiting out PYCOLL_TIMEOUT (set to 120 s by the test). Rank 1 leaves;
rank 0 calls shutdown after it has gone."""
import os
import time

import pycoll.distributed.rpc as rpc
from pycoll._errors import CollectiveError

rank = int(os.environ["PADDLE_TRAINER_ID"])
rpc.init_rpc(f"w{rank}")
if rank == 0:
    time.sleep(0.5)
    started = time.monotonic()
    try:
        rpc.shutdown()
    except CollectiveError as exc:
        waited = time.monotonic() - started
        text = str(exc)
        assert "rpc.shutdown: the worker(s) [('w1', 1)] (name, rank) exited before reaching it" in text, text
        assert waited < 10, waited
        print(f"rpc OK rank={rank}", flush=True)
    else:
        raise AssertionError("shutdown returned although worker w1 had left without it")
else:
    print(f"rpc OK rank={rank}", flush=True)
