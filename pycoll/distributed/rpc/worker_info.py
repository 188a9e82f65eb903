"""``WorkerInfo``: who a worker of the RPC job is and where its server listens."""
from __future__ import annotations

from collections import namedtuple


class WorkerInfo(namedtuple("WorkerInfo", ["name", "rank", "ip", "port"])):
    """A worker's ``name``, ``rank``, and the ``ip``:``port`` its RPC server listens at.

    Shown as paddle's C++ ``WorkerInfo`` prints: ``{name: worker0, rank: 0, ip: 127.0.0.1, port: 9002}``.
    """

    __slots__ = ()

    def __str__(self) -> str:
        return f"{{name: {self.name}, rank: {self.rank}, ip: {self.ip}, port: {self.port}}}"

    __repr__ = __str__
