"""What each framework's rank script of a two-framework benchmark measures the same way:
peak memory and a step timed between barriers (the barrier is the framework's own)."""
import resource
import time
from typing import Callable


def peak_mib() -> float:
    """This process's peak resident memory so far (``ru_maxrss``), MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def timed(step: Callable[[], object], barrier: Callable[[], object]) -> float:
    """Seconds ``step()`` took on this rank, every rank starting and ending together."""
    barrier()
    start = time.perf_counter()
    step()
    took = time.perf_counter() - start
    barrier()
    return took
