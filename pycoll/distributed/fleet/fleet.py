"""fleet's collective mode: ``init`` (the groups of a dp × mp job), the worker queries, and
``distributed_model`` / ``distributed_optimizer`` built from the parallel layer's pieces."""
from __future__ import annotations

from typing import Any, Optional

import pycoll.distributed as dist
from pycoll.distributed.fleet.strategy import DistributedStrategy
from pycoll.distributed.fleet.topology import HybridCommunicateGroup
from pycoll.parallel import DataParallel
from pycoll.parallel.mp_ops import set_model_parallel_group

_state: dict = {}  # "strategy", "hcg" once init ran


class UserDefinedRoleMaker:
    """paddle's role maker for collective mode: ``is_collective=True``; the ranks come from the launcher."""

    def __init__(self, is_collective: bool = True, **kwargs: Any):
        self.is_collective = is_collective


class PaddleCloudRoleMaker(UserDefinedRoleMaker):
    """paddle's role maker that reads the launcher's environment (pycoll's always does)."""


def init(role_maker: Any = None, is_collective: bool = False,
         strategy: Optional[DistributedStrategy] = None) -> None:
    """Start collective mode: the parallel environment, then the dp × mp groups the strategy's
    ``hybrid_configs`` ask for (their product must be the world size; dp fills what is left
    when only mp is given, as paddle does)."""
    collective = is_collective or bool(getattr(role_maker, "is_collective", False))
    if not collective:
        raise ValueError("fleet.init: pycoll runs fleet's collective mode only (no parameter servers); "
                         "call fleet.init(is_collective=True)")
    strategy = strategy if strategy is not None else DistributedStrategy()
    if not isinstance(strategy, DistributedStrategy):
        raise TypeError(f"fleet.init: strategy must be a DistributedStrategy, got {type(strategy).__name__}")
    dist.init_parallel_env()
    world = dist.get_world_size()
    degrees = strategy.degrees()
    for name in ("pp_degree", "sharding_degree", "sep_degree"):
        if degrees[name] != 1:
            raise ValueError(f"fleet.init: hybrid_configs {name}={degrees[name]}: pycoll has no "
                             f"{name[:-7]} parallelism yet; use dp_degree and mp_degree")
    mp = degrees["mp_degree"]
    dp = degrees["dp_degree"] if degrees["dp_degree"] != 1 or world % mp else world // mp
    if dp * mp != world:
        raise ValueError(f"fleet.init: hybrid_configs dp_degree={dp} x mp_degree={mp} = {dp * mp}, but "
                         f"the job has {world} ranks; their product must be the world size")
    hcg = HybridCommunicateGroup(dp, mp)
    set_model_parallel_group(hcg.get_model_parallel_group() if mp > 1 else None)
    _state.update(strategy=strategy, hcg=hcg)


def _started(fn: str) -> dict:
    if not _state:
        raise RuntimeError(f"fleet.{fn}: call fleet.init(is_collective=True) first")
    return _state


def worker_index() -> int:
    return dist.get_rank()


def worker_num() -> int:
    return dist.get_world_size()


def is_first_worker() -> bool:
    return dist.get_rank() == 0


def local_rank() -> int:
    return dist.ParallelEnv().local_rank


def barrier_worker() -> None:
    dist.barrier()


def get_hybrid_communicate_group() -> HybridCommunicateGroup:
    return _started("get_hybrid_communicate_group")["hcg"]


def distributed_model(model: Any) -> Any:
    """``model`` under DataParallel over the data-parallel group (buckets of the strategy's
    ``fuse_grad_size_in_MB``); as it is when there is no data parallelism. Its model-parallel
    layers already use the model-parallel group (fleet.init made it their default)."""
    state = _started("distributed_model")
    hcg, strategy = state["hcg"], state["strategy"]
    if hcg.get_data_parallel_world_size() == 1:
        return model
    return DataParallel(model, comm_buffer_size=strategy.fuse_grad_size_in_MB,
                        find_unused_parameters=strategy.find_unused_parameters,
                        group=hcg.get_data_parallel_group())


def distributed_optimizer(optimizer: Any, strategy: Optional[DistributedStrategy] = None) -> Any:
    """``optimizer`` as it is: DataParallel has averaged the gradients it steps with. Gradient
    merge and sharding are refused, naming the field, until pycoll has them."""
    strategy = strategy if strategy is not None else _started("distributed_optimizer")["strategy"]
    for field in ("gradient_merge", "sharding"):
        if getattr(strategy, field):
            raise ValueError(f"fleet.distributed_optimizer: strategy.{field}=True is not supported by "
                             f"pycoll yet" + (" (accumulate with DataParallel.no_sync())"
                                              if field == "gradient_merge" else ""))
    return optimizer
