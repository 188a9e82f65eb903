"""The library logger, ``logging.getLogger("pycoll")``.

Messages go through the application's logging when it has configured any (a record reads, say,
``WARNING:pycoll:2 ranks share 2 cores...``). When it has not, pycoll's own handler writes them to
stderr as ``[rank 1] pycoll: ...`` (the rank when a launcher gave one), instead of Python's bare
last-resort line. ``PYCOLL_LOG_LEVEL`` (a level name: DEBUG, INFO, WARNING, ERROR, CRITICAL) sets
the logger's level; the default shows warnings and errors, and everything under ``PYCOLL_DEBUG=1``.
"""
import logging
import os
import sys

_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
_RANK_VARS = ("RANK", "PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK")  # read when a record is written


class _Fallback(logging.Handler):
    """stderr, with the rank, for records the application's own logging would not show."""

    def emit(self, record: logging.LogRecord) -> None:
        if logging.getLogger().handlers:  # the application configured logging: it shows them
            return
        rank = next((os.environ[v] for v in _RANK_VARS if os.environ.get(v)), None)
        prefix = f"[rank {rank}] " if rank is not None else ""
        try:
            sys.stderr.write(f"{prefix}pycoll: {self.format(record)}\n")
        except Exception:  # a closed stream must not break the library
            self.handleError(record)


def _level() -> int:
    raw = os.environ.get("PYCOLL_LOG_LEVEL")
    if not raw:  # PYCOLL_DEBUG (any value but 0) logs every collective: at DEBUG, shown
        return logging.DEBUG if os.environ.get("PYCOLL_DEBUG", "") not in ("", "0") else logging.WARNING
    name = raw.strip().upper()
    if name not in _LEVELS:
        raise ValueError(f"PYCOLL_LOG_LEVEL={raw!r}: use one of {', '.join(_LEVELS)}")
    return getattr(logging, name)


logger = logging.getLogger("pycoll")
logger.setLevel(_level())
logger.addHandler(_Fallback())
