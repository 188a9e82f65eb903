"""``pycoll-bench``: nccl-tests-style bandwidth and latency runs of pycoll's collectives.

    pycoll-bench all_reduce            # or: python -m pycoll.bench all_reduce

Modules: ``cli`` (flags, starting the ranks), ``config`` (what a run is), ``ops`` (layouts,
bus-bandwidth factors, expected results), ``calls`` (each collective through pycoll and through
the raw engine), ``runner`` (timing and checking on the ranks), ``report`` (table, JSON, CSV),
``meta`` (versions and devices), ``plot`` (matplotlib figures).
"""
