"""paddle's mode queries (``paddle.framework.in_pir_mode`` ...) answered for pycoll, which always runs
eagerly (paddle's dynamic mode), plus the static-graph-only checks that paddle skips in that mode."""
from __future__ import annotations

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
    """Whether programs run on paddle's PIR executor: False, pycoll has none. (paddle reads the
    environment variable ``FLAGS_enable_pir_in_executor``, unset by default: False there too.)"""
    return False


def use_pir_api() -> bool:
    """Whether paddle's PIR API is in use: True, paddle 3.3.1's default (paddle reads
    ``FLAGS_enable_pir_api`` from the environment at import; pycoll has no PIR to switch off)."""
    return True


def check_shape(shape: Any, op_name: str, expected_shape_type: Any = (list, tuple),
                expected_element_type: Any = (int,),
                expected_tensor_dtype: Any = ("int32", "int64")) -> None:
    """paddle's static-graph check of a ``shape`` argument; in dynamic mode paddle skips it (the op
    itself checks), and so does pycoll."""


def disable_signal_handler() -> None:
    """paddle's switch that removes the signal handlers its C++ runtime installs (so that another
    framework's may run); pycoll installs none, so there is nothing to remove."""
