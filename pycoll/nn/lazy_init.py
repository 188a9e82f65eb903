"""paddle's ``LazyGuard``: layers built inside it get Parameters whose initializer has not run.

Each such Parameter keeps its initializer (``set_init_func``) and runs it at ``param.initialize()``,
drawing from pycoll's generator then, as paddle's does; loading a state dict into it first
(``set_state_dict``) works too. Until either, the Parameter holds zeros (``numpy.zeros``, whose
pages the OS commits only when written; paddle's holds no memory) and a Layer holding it refuses
to run its forward, as paddle's refuses to compute. ``initialize()`` and ``set_init_func()`` are attached to ``Parameter`` here
(paddle's ``EagerParamBase`` methods).
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from pycoll.nn import initializer
from pycoll.nn.parameter import Parameter

__all__ = ["LazyGuard"]


class LazyInitError(RuntimeError, AssertionError):
    """``initialize()`` on a Parameter with no pending initializer (paddle asserts there)."""


class LazyGuard:
    """``with pycoll.LazyGuard(): net = MyNet()``: the Parameters created inside are initialised
    later, by ``param.initialize()`` (or loaded by ``net.set_state_dict``). Nesting is allowed;
    leaving any guard ends lazy mode, as paddle's single switch does."""

    def __enter__(self) -> None:
        initializer.lazy_init_enabled = True

    def __exit__(self, *exc: Any) -> None:
        initializer.lazy_init_enabled = False


def set_init_func(self: Parameter, obj: Optional[Callable[[Parameter], Any]]) -> None:
    """Keep ``obj`` to initialise this Parameter at ``initialize()`` (paddle's EagerParamBase)."""
    self._init_func = obj


def initialize(self: Parameter) -> None:
    """Run the initializer kept when this Parameter was created under ``LazyGuard``, once."""
    init = getattr(self, "_init_func", None)
    if init is None:
        raise LazyInitError(f"initialize: parameter {self.name} has no pending initializer (it was not "
                            f"created under LazyGuard, or initialize() ran already)")
    init(self)
    self._init_func = None
    initializer.lazy_pending.pop(id(self), None)


Parameter.set_init_func = set_init_func
Parameter.initialize = initialize
