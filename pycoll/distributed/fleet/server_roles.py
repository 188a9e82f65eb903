"""paddle's parameter-server role queries and entry points, as its collective mode answers them:
a collective job has no servers (``is_server()`` False, ``server_num()`` 0, no endpoints), and
``init_worker`` / ``init_server`` / ``run_server`` / ``stop_worker`` do nothing but say so, as
paddle's do in a job without servers. Scripts written for both modes then run unchanged. The
parameter-server runtime's saves, loads and table upkeep (``save_persistables``, ``load_model``,
``shrink``...) answer as paddle's: a warning in a single process, in a job of several ranks a
ValueError saying what saves there instead."""
from __future__ import annotations

from typing import Any, List, Union

import pycoll.distributed as dist
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


def _ps_runtime(name: str) -> None:
    """paddle's answer where the parameter-server runtime is not there: in a process not started
    by a launcher (paddle's "non_distributed fleet") a warning and nothing done; in a job of several
    ranks its ValueError, with what saves there instead."""
    if dist.get_world_size() <= 1:
        logger.warning("%s() function doesn't work when use non_distributed fleet.", name)
        return
    raise ValueError(f"fleet.{name}: Fleet can not find suitable runtime handler (paddle's words): it belongs to the "
                     f"parameter-server / static-graph runtime. In a collective job save with "
                     f"paddle.save(model.state_dict(), path) or dist.save_state_dict(state_dict, folder), and load "
                     f"with paddle.load / dist.load_state_dict")


def save_persistables(executor: Any, dirname: str, main_program: Any = None, mode: int = 0) -> None:
    _ps_runtime("save_persistables")


def save_inference_model(executor: Any, dirname: str, feeded_var_names: Any, target_vars: Any,
                         main_program: Any = None, export_for_deployment: bool = True, mode: int = 0) -> None:
    _ps_runtime("save_inference_model")


def save_dense_params(executor: Any, dirname: str, scope: Any, program: Any, var_names: Any = None) -> None:
    _ps_runtime("save_dense_params")


def save_cache_model(dirname: str, **configs: Any) -> None:
    _ps_runtime("save_cache_model")


def save_cache_table(table_id: int, pass_id: int, mem_cache_key_threshold: int = 4000000000) -> None:
    _ps_runtime("save_cache_table")


def save_one_table(table_id: int, path: str, mode: int) -> None:
    _ps_runtime("save_one_table")


def load_model(path: str, mode: int) -> None:
    _ps_runtime("load_model")


def load_inference_model(path: str, mode: int) -> None:
    _ps_runtime("load_inference_model")


def load_one_table(table_id: int, path: str, mode: int) -> None:
    _ps_runtime("load_one_table")


def check_save_pre_patch_done() -> None:
    _ps_runtime("check_save_pre_patch_done")


def set_date(table_id: int, day_id: str) -> None:
    _ps_runtime("set_date")


def print_table_stat(table_id: int, pass_id: int, threshold: float) -> None:
    _ps_runtime("print_table_stat")


def shrink(threshold: Any = None) -> None:
    _ps_runtime("shrink")


# the parameter-server runtime's saves, loads and table upkeep (fleet's names)
PS_RUNTIME = ("save_persistables", "save_inference_model", "save_dense_params", "save_cache_model", "save_cache_table",
              "save_one_table", "load_model", "load_inference_model", "load_one_table", "check_save_pre_patch_done",
              "set_date", "print_table_stat", "shrink")
