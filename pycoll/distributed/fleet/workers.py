"""fleet's worker queries in collective mode (every rank of the job is a worker): where this
rank stands, the node and device layout the launcher described, and the helpers across workers
(``all_reduce``, ``barrier_worker``)."""
from __future__ import annotations

import os
from typing import Any, List, Optional, Union

import pycoll.distributed as dist
from pycoll.distributed.fleet import declared_role
from pycoll.distributed.fleet.util import util


def worker_index() -> int:
    return declared_role.worker_index()


def worker_num() -> int:
    return declared_role.worker_num()


def is_first_worker() -> bool:
    return declared_role.worker_index() == 0


def is_worker() -> bool:
    """True: in collective mode every rank is a worker."""
    return True


def worker_endpoints(to_string: bool = False) -> Union[List[str], str]:
    """The workers' endpoints (a role maker's, else ``PADDLE_TRAINER_ENDPOINTS``), as a list or
    joined by commas."""
    endpoints = declared_role.worker_endpoints() or dist.ParallelEnv().trainer_endpoints
    return ",".join(endpoints) if to_string else endpoints


def node_num() -> int:
    """How many machines the workers run on: the distinct hosts of their endpoints (paddle's
    count), 1 when the launcher gave none."""
    return len({endpoint.rsplit(":", 1)[0] for endpoint in dist.ParallelEnv().trainer_endpoints}) or 1


def local_rank() -> str:
    """This rank's index on its machine, as paddle gives it: a string (its
    ``PADDLE_RANK_IN_NODE``)."""
    return str(dist.ParallelEnv().local_rank)


def local_device_ids() -> Optional[str]:
    """paddle's ``PADDLE_LOCAL_DEVICE_IDS`` (its legacy launcher's device list of this machine,
    "0,1"), None when unset, as paddle's current launcher and pycoll's leave it."""
    return os.environ.get("PADDLE_LOCAL_DEVICE_IDS")


def world_device_ids() -> Optional[str]:
    """paddle's ``PADDLE_WORLD_DEVICE_IDS`` (every machine's device list), None when unset."""
    return os.environ.get("PADDLE_WORLD_DEVICE_IDS")


def barrier_worker() -> None:
    dist.barrier()


def all_reduce(input: Any, mode: str = "sum") -> Any:  # noqa: A002 - paddle's name
    """``input`` (a number, list or array) reduced over the workers with ``mode`` 'sum', 'mean' or
    'max', as a new NumPy array (paddle's ``fleet.all_reduce``)."""
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"fleet.all_reduce: mode={mode!r}; use 'sum', 'mean' or 'max'")
    total = util.all_reduce(input, "max" if mode == "max" else "sum")
    return total / dist.get_world_size() if mode == "mean" else total
