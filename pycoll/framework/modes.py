"""paddle's mode queries (``paddle.framework.in_pir_mode`` ...) answered for pycoll, which always runs
eagerly (paddle's dynamic mode), plus the static-graph-only checks that paddle skips in that mode."""
from __future__ import annotations

import os
from typing import Any

__all__ = ["in_pir_mode", "in_dynamic_or_pir_mode", "in_pir_executor_mode", "use_pir_api", "check_shape",
           "disable_signal_handler"]


def in_pir_mode() -> bool:
    """Whether a static PIR program is being built: never (False, paddle's answer in dynamic mode)."""
    return False


def in_dynamic_or_pir_mode() -> bool:
    """Dynamic mode or PIR: always True here."""
    return True


def in_pir_executor_mode() -> bool:
    """paddle's: whether the environment variable ``FLAGS_enable_pir_in_executor`` is 'true' or '1'."""
    return str(os.environ.get("FLAGS_enable_pir_in_executor")).lower() in ("true", "1")


# paddle reads FLAGS_enable_pir_api from the environment once, at import (set_flags later changes
# what get_flags reports, not use_pir_api)
_USE_PIR_API = os.environ.get("FLAGS_enable_pir_api", "true").strip().lower() not in ("0", "false", "f", "no", "n")


def use_pir_api() -> bool:
    """Whether paddle's PIR API is switched on: the environment's ``FLAGS_enable_pir_api`` at import
    (True unless it says false or 0), as paddle reads it."""
    return _USE_PIR_API


def check_shape(shape: Any, op_name: str, expected_shape_type: Any = (list, tuple),
                expected_element_type: Any = (int,),
                expected_tensor_dtype: Any = ("int32", "int64")) -> None:
    """paddle's static-graph check of a ``shape`` argument; in dynamic mode paddle skips it (the op
    itself checks), and so does pycoll."""


def disable_signal_handler() -> None:
    """paddle's switch that removes the signal handlers its C++ runtime installs (so that another
    framework's may run); pycoll installs none, so there is nothing to remove."""
