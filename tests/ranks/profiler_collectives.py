"""pycoll.profiler records pycoll's collective calls as Communication events (2 ranks).

Each rank profiles four steps of one all_reduce and one broadcast inside a RecordEvent: the
trace must hold one Communication span per call, named after it, inside its step, and the
collectives must still give the right values. After the profiler stops, the watchdog is back to
its plain class (no cost when nothing records), and calls made then are not recorded."""
import json
import os
import sys

import numpy as np

import pycoll.distributed as dist
import pycoll.profiler as profiler
from pycoll.distributed.watchdog import Watchdog, watchdog

out_dir = sys.argv[1]
dist.init_parallel_env()
rank, world = dist.get_rank(), dist.get_world_size()
with profiler.Profiler(on_trace_ready=profiler.export_chrome_tracing(out_dir, f"rank{rank}")) as prof:
    for step in range(4):
        with profiler.RecordEvent("comm_block"):
            x = np.full(8, rank + step, np.float64)
            dist.all_reduce(x)
            assert np.all(x == sum(r + step for r in range(world))), x
            dist.broadcast(x, src=0)
        prof.step()
assert type(watchdog) is Watchdog, type(watchdog)
dist.all_reduce(np.ones(4))  # not profiled: nothing records it, nothing breaks
(trace,) = [f for f in os.listdir(out_dir) if f.startswith(f"rank{rank}_")]
with open(os.path.join(out_dir, trace)) as f:
    events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
comm = [e for e in events if e["cat"] == "Communication"]
names = sorted(e["name"].split("[")[0] for e in comm)
assert names == ["all_reduce"] * 4 + ["broadcast"] * 4, names
blocks = [e for e in events if e["cat"] == "PythonUserDefined"]
assert len(blocks) == 4
for e in comm:  # each call lies inside one of the user's spans
    assert any(b["ts"] <= e["ts"] and e["ts"] + e["dur"] <= b["ts"] + b["dur"] + 1 for b in blocks), e
result = profiler.load_profiler_result(os.path.join(out_dir, trace))
assert sum(e.type == profiler.TracerEventType.Communication for e in result.get_data()) == 8
print(f"OK rank={rank}: profiled {len(comm)} collective calls")
