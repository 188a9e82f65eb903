"""The worker a user's role maker declares this process to be: paddle's
``UserDefinedRoleMaker(current_id=..., worker_endpoints=[...] or worker_num=...)`` given to
``fleet.init``. As in paddle, fleet's worker queries (``worker_index``, ``worker_num``,
``is_first_worker``, ``worker_endpoints``) and ``fleet.util``'s file sharding and
``print_on_rank`` then answer with those values; the communication still runs over the launcher's
ranks. Without such a role maker (or before ``fleet.init``) they are the launcher's rank and size."""
from __future__ import annotations

from typing import Any, List, Optional, Tuple

import pycoll.distributed as dist
from pycoll._logging import logger

_declared: Optional[Tuple[int, int, List[str]]] = None  # (index, count, endpoints)


def declare(role_maker: Any) -> None:
    """Take the worker index, count and endpoints ``role_maker`` declares, if it declares them; say
    so where they differ from the launcher's rank and size in a job of several ranks."""
    global _declared
    declared = _declared = role_maker.declared() if hasattr(role_maker, "declared") else None
    world = dist.get_world_size()
    if declared is not None and world > 1 and declared[:2] != (dist.get_rank(), world):
        logger.warning("fleet.init: the role maker declares worker %d of %d, the launcher started rank %d of %d: "
                       "fleet's worker queries and fleet.util's file shards follow the role maker (paddle's), "
                       "the collectives the launcher", declared[0], declared[1], dist.get_rank(), world)


def worker_index() -> int:
    return dist.get_rank() if _declared is None else _declared[0]


def worker_num() -> int:
    return dist.get_world_size() if _declared is None else _declared[1]


def worker_endpoints() -> Optional[List[str]]:
    """The declared endpoints, None where no role maker declared them."""
    return None if _declared is None or not _declared[2] else list(_declared[2])
