"""paddle's ``fleet.collective_perf``: time one collective on the group a fleet job uses it on,
size by size, and warn where an iteration takes longer than the caller's threshold.

paddle 3.3.1 documents the test but its body is commented out (it returns having run nothing);
pycoll runs what the docstring describes, on the groups paddle's implementation chose: the
data-parallel group (else the sharding group) for allreduce, reduce and broadcast, the
model-parallel group for allgather and reduce_scatter. A group of one rank is skipped with
paddle's warning. Each size is a float32 tensor of ``nbytes // 4`` elements; the time is the
mean of ``round`` calls after 10 warm-up all-reduces, the device synchronized around them.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Dict, Mapping, Optional

import numpy as np

import pycoll
import pycoll.distributed as dist
from pycoll._logging import logger
from pycoll.distributed.fleet.collective_mode import hybrid_communicate_group_for

_DEFAULT_SIZES = [1 << k for k in range(20, 31)]  # 1 MiB to 1 GiB, doubling (paddle's default sweep)
_WARMUP = 10


def _reduce_scatter(x: Any, group: dist.Group) -> None:
    out = pycoll.empty([x.shape[0] // group.nranks], x.dtype)
    dist.reduce_scatter(out, x, group=group)


# comm_type: (the name paddle's log lines give it, the group it runs on, one call)
_TESTS: Dict[str, tuple] = {
    "allreduce": ("AllReduce", "data", lambda x, g: dist.all_reduce(x, group=g)),
    "reduce": ("Reduce", "data", lambda x, g: dist.reduce(x, dst=min(g.ranks), group=g)),
    "broadcast": ("Broadcast", "data", lambda x, g: dist.broadcast(x, src=min(g.ranks), group=g)),
    "allgather": ("Allgather", "model", lambda x, g: dist.all_gather([], x, group=g)),
    "reduce_scatter": ("ReduceScatter", "model", _reduce_scatter),
}


def _group_for(kind: str) -> Optional[dist.Group]:
    hcg = hybrid_communicate_group_for("collective_perf")
    if kind == "model":
        return hcg.get_model_parallel_group()
    for group in (hcg.get_data_parallel_group(), hcg.get_sharding_parallel_group()):
        if group.nranks > 1:
            return group
    return None


def _seconds_per_call(call: Callable[[Any, dist.Group], None], x: Any, group: dist.Group, rounds: int) -> float:
    dist.barrier(group=group)
    pycoll.device.synchronize()
    start = time.perf_counter()
    for _ in range(rounds):
        call(x, group)
    pycoll.device.synchronize()
    return (time.perf_counter() - start) / rounds


def collective_perf(comm_type: str, round: int = 50, size_and_time: Optional[Mapping[int, float]] = None
                    ) -> Dict[int, float]:
    """Time ``comm_type`` ("allreduce", "broadcast", "reduce", "allgather" or "reduce_scatter")
    over ``round`` calls for each message size (bytes) of ``size_and_time``, warning when the
    mean exceeds that size's threshold (seconds); empty or None: 1 MiB to 1 GiB, no threshold.
    Every rank of the job calls it, after ``fleet.init(is_collective=True)``. Logs
    ``[AllReduceTest] nbytes N B test result: T s/iter`` at INFO (``fleet.set_log_level("INFO")``
    shows them) and returns ``{nbytes: seconds per call}`` (empty where the group has one rank)."""
    if comm_type not in _TESTS:
        raise ValueError(f"fleet.collective_perf: comm_type={comm_type!r}; use one of {', '.join(_TESTS)}")
    if isinstance(round, bool) or not isinstance(round, (int, np.integer)) or round < 1:
        raise ValueError(f"fleet.collective_perf: round must be a positive int, got {round!r}")
    if size_and_time is not None and not isinstance(size_and_time, Mapping):
        raise TypeError(f"fleet.collective_perf: size_and_time must be a dict of bytes -> seconds, "
                        f"got {type(size_and_time).__name__}")
    sizes = dict(size_and_time) if size_and_time else dict.fromkeys(_DEFAULT_SIZES)
    for nbytes, threshold in sizes.items():
        if isinstance(nbytes, bool) or not isinstance(nbytes, (int, np.integer)) or nbytes < 4:
            raise ValueError(f"fleet.collective_perf: size_and_time has the size {nbytes!r}; sizes are "
                             f"bytes, at least 4 (one float32)")
        if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))):
            raise TypeError(f"fleet.collective_perf: size_and_time[{nbytes}] = {threshold!r}; thresholds are "
                            f"seconds (a number)")
    name, kind, call = _TESTS[comm_type]
    group = _group_for(kind)
    if group is None or group.nranks <= 1:
        logger.warning(f"{comm_type}_perf is invalid, group invalid!")  # paddle's words
        return {}
    results: Dict[int, float] = {}
    for nbytes, threshold in sizes.items():
        count = nbytes // 4
        if comm_type == "reduce_scatter":
            count = max(count - count % group.nranks, group.nranks)
        x = pycoll.zeros([count], "float32")
        _seconds_per_call(_TESTS["allreduce"][2], x, group, _WARMUP)
        results[nbytes] = seconds = _seconds_per_call(call, x, group, round)
        logger.info(f"[{name}Test] nbytes {nbytes}B test result: {seconds} s/iter")
        if threshold is not None and seconds > threshold:
            logger.warning(f"[Perf Warning] {name} Test Timeout! {seconds} > {threshold}")
    return results
