"""paddle's parameter-server role queries and entry points, as its collective mode answers them:
a collective job has no servers (``is_server()`` False, ``server_num()`` 0, no endpoints), and
``init_worker`` / ``init_server`` / ``run_server`` / ``stop_worker`` do nothing but say so, as
paddle's do in a job without servers. Scripts written for both modes then run unchanged."""
from __future__ import annotations

from typing import Any, List, Union

from pycoll._logging import logger


def is_server() -> bool:
    return False


def server_num() -> int:
    return 0


def server_index() -> int:
    return 0


def server_endpoints(to_string: bool = False) -> Union[List[str], str]:
    return "" if to_string else []


def _no_servers(name: str) -> None:
    logger.warning("fleet.%s() does nothing in a collective job: it has no parameter servers", name)


def init_worker(scopes: Any = None) -> None:
    _no_servers("init_worker")


def init_server(*args: Any, **kwargs: Any) -> None:
    _no_servers("init_server")


def run_server() -> None:
    _no_servers("run_server")


def stop_worker() -> None:
    _no_servers("stop_worker")
