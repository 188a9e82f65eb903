"""``pycoll.profiler``: paddle.profiler's API over host-side timing.

``Profiler`` (scheduler, ``step``/``step_info``, ``summary``, ``export``), ``make_scheduler``,
``RecordEvent``, ``export_chrome_tracing`` and ``load_profiler_result`` work as paddle's, on
the spans pycoll records on the host: each step, the user's ``RecordEvent`` spans, pycoll's
collective calls and the model's operators, layers, backwards and optimizer steps. GPU kernel
timing is out of scope (see ``pycoll.profiler.profiler``); ``export_protobuf`` is refused
(pycoll does not depend on protobuf).
"""
from pycoll.profiler import utils
from pycoll.profiler.profiler import Profiler, export_chrome_tracing, export_protobuf
from pycoll.profiler.recorder import RecordEvent
from pycoll.profiler.result import load_profiler_result
from pycoll.profiler.states import (ProfilerState, ProfilerTarget, SortedKeys, SummaryView, TracerEventType,
                                    make_scheduler)

__all__ = ["ProfilerState", "ProfilerTarget", "make_scheduler", "export_chrome_tracing", "export_protobuf",
           "Profiler", "RecordEvent", "load_profiler_result", "SortedKeys", "SummaryView"]
__all__ += ["TracerEventType", "utils"]  # paddle exposes these too, outside its __all__
