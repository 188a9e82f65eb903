"""``pycoll-bench``: nccl-tests-style bandwidth and latency runs of pycoll's collectives.

    pycoll-bench all_reduce            # or: python -m pycoll.bench all_reduce

Modules: ``cli`` (flags, starting the ranks), ``config`` (what a run is), ``collectives``
(one module per collective: its layout, busbw factor, expected result and its calls through
pycoll, raw MPI and raw NCCL; the package finds them), ``ops`` (what every collective
shares: layouts, buffers, inputs, the ``Op`` base), ``calls`` (what the call factories share),
``timing`` (the timing loop, also used by the peer benchmarks in ``bench/``), ``runner``
(timing and checking on the ranks), ``report`` (table, JSON, CSV, progress), ``meta``
(versions and devices), ``plot`` (matplotlib figures).
"""
