"""paddle's ``fleet.utils.log_util`` level functions, acting on pycoll's logger
(``logging.getLogger("pycoll")``, which ``PYCOLL_LOG_LEVEL`` also sets)."""
from __future__ import annotations

import logging
from typing import Union

from pycoll._logging import logger


def set_log_level(level: Union[str, int]) -> None:
    """Set the level: a name ("DEBUG", any case) or a number (10)."""
    if isinstance(level, bool) or not isinstance(level, (str, int)):
        raise TypeError(f"set_log_level: level must be a str or an int, got {level!r}")
    try:
        logger.setLevel(level.upper() if isinstance(level, str) else level)
    except ValueError:
        raise ValueError(f"set_log_level: level={level!r} is not a level; use DEBUG, INFO, WARNING, ERROR, "
                         f"CRITICAL or a number") from None


def get_log_level_code() -> int:
    return logger.getEffectiveLevel()


def get_log_level_name() -> str:
    return logging.getLevelName(get_log_level_code())
