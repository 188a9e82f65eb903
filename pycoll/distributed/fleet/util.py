"""paddle's ``fleet.util``: the helpers a fleet script calls across the workers (every rank of
the job, in collective mode): ``all_reduce`` / ``all_gather`` of numbers or arrays, ``barrier``,
``get_file_shard`` and ``print_on_rank``."""
from __future__ import annotations

from typing import Any, List

import numpy as np

import pycoll.distributed as dist
from pycoll.distributed.fleet import declared_role

_MODES = {"sum": dist.ReduceOp.SUM, "min": dist.ReduceOp.MIN, "max": dist.ReduceOp.MAX}


def _workers(comm_world: str, fn: str) -> None:
    """'worker', or 'all' (workers and servers: the workers alone, in collective mode)."""
    if comm_world not in ("worker", "all"):
        raise ValueError(f"fleet.util.{fn}: comm_world={comm_world!r}; collective mode has workers only "
                         f"(no servers): use 'worker' or 'all'")
    dist.init_parallel_env()


class UtilBase:
    """``fleet.util``'s methods (paddle's names and defaults)."""

    def all_reduce(self, input: Any, mode: str = "sum", comm_world: str = "worker") -> np.ndarray:  # noqa: A002
        """``input`` (a number, list or array) reduced over the workers, as a new NumPy array."""
        _workers(comm_world, "all_reduce")
        if mode not in _MODES:
            raise ValueError(f"fleet.util.all_reduce: mode={mode!r}; use 'sum', 'min' or 'max'")
        values = np.array(input)
        dist.all_reduce(values, op=_MODES[mode])
        return values

    def barrier(self, comm_world: str = "worker") -> None:
        _workers(comm_world, "barrier")
        dist.barrier()

    def all_gather(self, input: Any, comm_world: str = "worker") -> List[Any]:  # noqa: A002
        """Every worker's ``input``, in rank order."""
        _workers(comm_world, "all_gather")
        gathered: List[Any] = []
        dist.all_gather_object(gathered, input)
        return gathered

    def get_file_shard(self, files: List[str]) -> List[str]:
        """This worker's block of ``files``: consecutive blocks, the first ``len % workers``
        workers one file more (paddle's rule: [a, b, c, d, e] over 2 gives [a, b, c] and [d, e])."""
        if not isinstance(files, list):
            raise TypeError(f"fleet.util.get_file_shard: files must be a list of file names, got "
                            f"{type(files).__name__}")
        rank, workers = declared_role.worker_index(), declared_role.worker_num()
        size, extra = divmod(len(files), workers)
        begin = rank * size + min(rank, extra)
        return files[begin:begin + size + (1 if rank < extra else 0)]

    def print_on_rank(self, message: str, rank_id: int) -> None:
        """Print ``message`` on worker ``rank_id`` only (what the user asked to see, not a log)."""
        if declared_role.worker_index() == rank_id:
            print(message, flush=True)


util = UtilBase()
