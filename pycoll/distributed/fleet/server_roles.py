"""paddle's parameter-server role queries and entry points, as its collective mode answers them:
a collective job has no servers (``is_server()`` False, ``server_num()`` 0, no endpoints), and
``init_worker`` / ``init_server`` / ``run_server`` / ``stop_worker`` do nothing but say so, as
paddle's do in a job without servers. Scripts written for both modes then run unchanged. The
parameter-server runtime's saves and loads (``save_persistables``, ``load_model``...) raise
paddle's ValueError of a collective dygraph job, saying what saves there instead."""
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


def _no_runtime(name: str) -> None:
    raise ValueError(f"fleet.{name}: Fleet can not find suitable runtime handler (paddle's words): it belongs to the "
                     f"parameter-server / static-graph runtime. In a collective job save with "
                     f"paddle.save(model.state_dict(), path) or dist.save_state_dict(state_dict, folder), and load "
                     f"with paddle.load / dist.load_state_dict")


def save_persistables(executor: Any, dirname: str, main_program: Any = None, mode: int = 0) -> None:
    _no_runtime("save_persistables")


def save_inference_model(executor: Any, dirname: str, feeded_var_names: Any, target_vars: Any,
                         main_program: Any = None, export_for_deployment: bool = True, mode: int = 0) -> None:
    _no_runtime("save_inference_model")


def load_model(path: str, mode: int) -> None:
    _no_runtime("load_model")


def load_inference_model(path: str, mode: int) -> None:
    _no_runtime("load_inference_model")
