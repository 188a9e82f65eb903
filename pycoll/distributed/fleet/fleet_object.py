"""paddle's ``Fleet`` class, of which ``fleet.fleet`` is the instance: the fleet functions as its
methods (``fleet.fleet.init is fleet.init``). pycoll keeps one job's state in the collective-mode
module, so every instance acts on the same job."""
from __future__ import annotations

from typing import Any, Optional

from pycoll.distributed.fleet import collective_mode, server_roles, workers
from pycoll.distributed.fleet.collective_perf import collective_perf
from pycoll.distributed.fleet.strategy import DistributedStrategy


class Fleet:
    """paddle's ``Fleet`` in collective mode."""

    init = staticmethod(collective_mode.init)
    get_hybrid_communicate_group = staticmethod(collective_mode.get_hybrid_communicate_group)
    get_hybrid_parallel_topology = staticmethod(collective_mode.get_hybrid_parallel_topology)
    is_first_worker = staticmethod(workers.is_first_worker)
    worker_index = staticmethod(workers.worker_index)
    worker_num = staticmethod(workers.worker_num)
    node_num = staticmethod(workers.node_num)
    local_rank = staticmethod(workers.local_rank)
    local_device_ids = staticmethod(workers.local_device_ids)
    world_device_ids = staticmethod(workers.world_device_ids)
    is_worker = staticmethod(workers.is_worker)
    worker_endpoints = staticmethod(workers.worker_endpoints)
    barrier_worker = staticmethod(workers.barrier_worker)
    all_reduce = staticmethod(workers.all_reduce)
    collective_perf = staticmethod(collective_perf)
    is_server = staticmethod(server_roles.is_server)
    server_num = staticmethod(server_roles.server_num)
    server_index = staticmethod(server_roles.server_index)
    server_endpoints = staticmethod(server_roles.server_endpoints)
    init_worker = staticmethod(server_roles.init_worker)
    init_server = staticmethod(server_roles.init_server)
    run_server = staticmethod(server_roles.run_server)
    stop_worker = staticmethod(server_roles.stop_worker)

    def __init__(self) -> None:
        self.user_defined_optimizer: Any = None

    def distributed_optimizer(self, optimizer: Any, strategy: Optional[DistributedStrategy] = None) -> "Fleet":
        """As paddle's ``Fleet.distributed_optimizer``: keeps ``optimizer`` (as
        ``fleet.distributed_optimizer`` makes it) and returns this Fleet, whose ``minimize(loss)``
        then steps it."""
        self.user_defined_optimizer = collective_mode.distributed_optimizer(optimizer, strategy)
        return self

    def minimize(self, loss: Any, startup_program: Any = None, parameter_list: Any = None,
                 no_grad_set: Any = None) -> Any:
        """The kept optimizer's ``minimize(loss)`` (paddle's dygraph ``Fleet.minimize``):
        ``([], [(param, grad), ...])``."""
        if self.user_defined_optimizer is None:
            raise RuntimeError("Fleet.minimize: call fleet.fleet.distributed_optimizer(optimizer) first")
        return self.user_defined_optimizer.minimize(loss, startup_program, parameter_list, no_grad_set)


for _name in server_roles.PS_RUNTIME:  # the parameter-server runtime's calls, as paddle's Fleet has them
    setattr(Fleet, _name, staticmethod(getattr(server_roles, _name)))
del _name
