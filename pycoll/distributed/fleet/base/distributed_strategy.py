"""paddle's ``fleet.base.distributed_strategy`` path: ``DistributedStrategy``, pycoll's own
(``fleet.strategy``)."""
from pycoll.distributed.fleet.strategy import DistributedStrategy

__all__ = ["DistributedStrategy"]
