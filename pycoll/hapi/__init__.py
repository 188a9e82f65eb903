"""paddle's high-level API (paddle.hapi): ``Model`` (fit / evaluate / predict / save / load),
``summary``, ``flops`` and the ``callbacks``. It sits on the parallel layer: under the launcher a Model
trains through ``pycoll.DataParallel`` on each rank's share of the data."""
import sys

from pycoll import hub
from pycoll.hapi import callbacks, dynamic_flops, logger, progressbar, static_flops  # paddle's submodules
from pycoll.hapi.flops import flops
from pycoll.hapi.model import Model
from pycoll.hapi.model_summary import summary

__all__ = ["Model", "callbacks", "dynamic_flops", "flops", "logger", "progressbar", "static_flops", "summary"]

sys.modules[__name__ + ".hub"] = hub  # paddle.hapi.hub is paddle.hub

