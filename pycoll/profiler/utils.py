"""``paddle.profiler.utils``'s names that scripts import: ``RecordEvent``,
``load_profiler_result``, ``in_profiler_mode`` and ``job_schedule_profiler_range``."""
from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Iterator

from pycoll.profiler.recorder import RecordEvent, in_profiler_mode
from pycoll.profiler.result import load_profiler_result

__all__ = ["RecordEvent", "in_profiler_mode", "job_schedule_profiler_range", "load_profiler_result"]


@contextmanager
def job_schedule_profiler_range(iter_id: int, start: int, end: int, exit_after_prof: bool = True) -> Iterator[bool]:
    """Yields whether step ``iter_id`` lies in [start, end); after step ``end - 1`` the process
    exits (``sys.exit()``) when ``exit_after_prof``, as paddle's does. An empty range yields False."""
    if start >= end:
        yield False
        return
    try:
        yield start <= iter_id < end
    finally:
        if iter_id == end - 1 and exit_after_prof:
            sys.exit()
