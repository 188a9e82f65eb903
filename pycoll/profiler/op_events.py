"""The model's events while a profiler records, at no cost when none does: each operator the
program calls (Operator: ``paddle.matmul``, ``F.relu``, ``x + y``, ``x.sum()``), each layer's
forward (Forward, named by the layer's class), each backward (Backward, "Gradient Backward") with
the gradient function of every op it runs (Operator, e.g. ``LinearGradNode``), and each optimizer
step (Optimization) -- what paddle's Model and Operator summaries count.

pycoll's ops are Python functions, so recording them means wrapping them: when recording starts
the user-facing names (the functions of ``pycoll``, ``pycoll.nn.functional``, ``pycoll.linalg``,
``pycoll.fft``..., the Tensor's methods and operators, ``Layer.__call__``, the optimizers'
``step``) and the names pycoll's own modules call those functions by are replaced by timing
stand-ins, and when it stops the originals come back. An op is recorded once, as the program or
a layer called it (the outermost op of a thread; what it calls inside is its own time). A
stand-in equals, hashes and pickles as its function, but is not it: ``F.relu is relu_kept``
is False while a profiler records (paddle's ops are never swapped). The backward walk times its
nodes through ``pycoll._graph.node_timer``. As ``comm_events`` does, this module never imports
the tensor side: it finds the modules already loaded in ``sys.modules``.
"""
from __future__ import annotations

import functools
import importlib
import sys
import threading
import time
import types
from typing import Any, Callable, Dict, List, Tuple

from pycoll.profiler.recorder import RECORDER
from pycoll.profiler.states import TracerEventType

OP_NAMESPACES = ("pycoll", "pycoll.nn.functional", "pycoll.linalg", "pycoll.fft", "pycoll.signal",
                 "pycoll.sparse", "pycoll.sparse.nn.functional", "pycoll.incubate.nn.functional",
                 "pycoll.geometric", "pycoll.vision.ops")
# functions of those namespaces that are not operators (settings, state, files, modes)
NOT_OPS = ("pycoll.device", "pycoll.runtime_config", "pycoll.random", "pycoll.framework", "pycoll.serialization",
           "pycoll.paddle_files", "pycoll.hapi", "pycoll.amp", "pycoll.dtypes", "pycoll._printing",
           "pycoll.profiler", "pycoll.distributed", "pycoll.io", "pycoll.jit", "pycoll.hub", "pycoll.onnx",
           "pycoll.static", "pycoll.autograd", "pycoll._graph", "pycoll.sysconfig", "pycoll.utils")
NOT_OP_NAMES = {"in_dynamic_mode", "enable_static", "disable_static", "set_printoptions", "save", "load",
                "is_tensor", "is_grad_enabled", "set_grad_enabled", "get_default_dtype", "set_default_dtype"}
# the Tensor's operators, by paddle's op names
TENSOR_OPERATORS = {
    "__add__": "add", "__radd__": "add", "__iadd__": "add_", "__sub__": "subtract", "__rsub__": "subtract",
    "__isub__": "subtract_", "__mul__": "multiply", "__rmul__": "multiply", "__imul__": "multiply_",
    "__truediv__": "divide", "__rtruediv__": "divide", "__itruediv__": "divide_", "__floordiv__": "floor_divide",
    "__rfloordiv__": "floor_divide", "__mod__": "remainder", "__rmod__": "remainder", "__pow__": "pow",
    "__rpow__": "elementwise_pow", "__matmul__": "matmul", "__rmatmul__": "matmul", "__neg__": "scale",
    "__abs__": "abs", "__invert__": "bitwise_not", "__and__": "bitwise_and", "__or__": "bitwise_or",
    "__xor__": "bitwise_xor", "__lshift__": "bitwise_left_shift", "__rshift__": "bitwise_right_shift",
    "__eq__": "equal", "__ne__": "not_equal", "__lt__": "less_than", "__le__": "less_equal",
    "__gt__": "greater_than", "__ge__": "greater_equal", "__getitem__": "slice", "__setitem__": "set_value"}
TENSOR_NOT_OPS = {"backward", "numpy", "item", "tolist", "clear_grad", "clear_gradient", "register_hook",
                  "seed_grad", "finish_grad"}

_inside = threading.local()  # .event: an operator, backward or optimizer step of this thread runs
_patched: List[Tuple[Any, str, Any]] = []  # (owner, name, original) to put back


class _Recorded:
    """``fn`` recorded as a ``kind`` event ``name`` when no operator, backward or optimizer step
    of the thread is running: what it calls is its own time (a backward's nodes excepted: the
    walk times them). It stands in ``fn``'s place as ``fn`` would: bound as a method, equal to
    and hashed as ``fn`` (a dict keyed by the function finds it), pickled as ``fn`` (by its
    name), an instance of fn's class for ``isinstance``, its name, signature and docstring
    ``fn``'s. One kept past the recording (a layer made meanwhile holds F.relu's) goes on
    calling ``fn`` and recording nothing."""

    def __init__(self, kind: TracerEventType, name: str, fn: Callable) -> None:
        functools.update_wrapper(self, fn)
        self._fn, self._kind, self._name = fn, kind, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not RECORDER.on or getattr(_inside, "event", False):
            return self._fn(*args, **kwargs)
        _inside.event = True
        start, period = time.perf_counter_ns(), RECORDER.period
        try:
            return self._fn(*args, **kwargs)
        finally:
            _inside.event = False
            if RECORDER.on and RECORDER.period == period:
                RECORDER.add(self._name, self._kind, start, time.perf_counter_ns())

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        return self if obj is None else types.MethodType(self, obj)

    def __eq__(self, other: Any) -> bool:
        return self._fn == (other._fn if isinstance(other, _Recorded) else other)

    def __hash__(self) -> int:
        return hash(self._fn)

    def __repr__(self) -> str:
        return repr(self._fn)

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # isinstance(stand_in, FunctionType) and inspect.isfunction answer as for fn
        return type(self._fn)

    def __reduce__(self) -> Tuple[Callable, Tuple[str, str]]:
        return original, (self._fn.__module__, self._fn.__qualname__)


def original(module: str, qualname: str) -> Callable:
    """The function ``module.qualname`` (what a recorded function pickles as), not its recording
    stand-in should a profiler record where it is unpickled."""
    found: Any = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found._fn if isinstance(found, _Recorded) else found


def _forward(call: Callable) -> Callable:
    """``Layer.__call__`` recorded as a Forward event named by the layer's class (every layer,
    nested ones too, as paddle's)."""
    @functools.wraps(call)
    def recorded(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not RECORDER.on:
            return call(self, *args, **kwargs)
        start, period = time.perf_counter_ns(), RECORDER.period
        try:
            return call(self, *args, **kwargs)
        finally:
            if RECORDER.on and RECORDER.period == period:
                RECORDER.add(type(self).__name__, TracerEventType.Forward, start, time.perf_counter_ns())
    return recorded


def grad_node_name(fn: Any) -> str:
    """A backward function's event name from the op that made it: ``linear.<locals>.backward``
    -> ``LinearGradNode`` (paddle's naming)."""
    op = getattr(fn, "__qualname__", "").split(".<locals>")[0].split(".")[-1].strip("_") or "Op"
    return "".join(part[:1].upper() + part[1:] for part in op.split("_")) + "GradNode"


def _time_node(fn: Any, start: int) -> None:
    """``pycoll._graph.node_timer``: a backward node's run, from ``start`` to now."""
    end = time.perf_counter_ns()
    if RECORDER.on:
        RECORDER.add(grad_node_name(fn), TracerEventType.Operator, start, end)


def _replace(owner: Any, name: str, wrapper: Callable) -> None:
    kept = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
    _patched.append((owner, name, kept))
    setattr(owner, name, wrapper)


def _is_op(fn: Any) -> bool:
    module = getattr(fn, "__module__", None) or ""
    return (isinstance(fn, types.FunctionType) and module.startswith("pycoll")
            and not module.startswith(NOT_OPS) and fn.__name__ not in NOT_OP_NAMES)


def _wrap_namespaces(modules: Dict[str, Any]) -> Dict[int, _Recorded]:
    """The operators of the namespaces wrapped there; each one's wrapper by the id of its function."""
    wrapped: Dict[int, _Recorded] = {}  # one wrapper per function, whichever names it has
    for module_name in OP_NAMESPACES:
        module = modules.get(module_name)
        if module is None:
            continue
        public = getattr(module, "__all__", None)  # (a module's own imports are not its API)
        for name, fn in list(vars(module).items()):
            if name.startswith("_") or not _is_op(fn) or (public is not None and name not in public):
                continue
            if id(fn) not in wrapped:
                wrapped[id(fn)] = (_Recorded(TracerEventType.Backward, "Gradient Backward", fn)
                                   if name == "grad" else _Recorded(TracerEventType.Operator, name, fn))
            _replace(module, name, wrapped[id(fn)])
    return wrapped


def _wrap_inner_names(modules: Dict[str, Any], wrapped: Dict[int, _Recorded], layer_class: Any) -> None:
    """The same operators where pycoll's own modules and layers call them by name (a layer's
    forward calling ``matmul`` as its module imported it): recorded when a layer calls them, and
    within another operator only its time."""
    for module_name, module in list(modules.items()):
        if not module_name.startswith("pycoll.") or module_name in OP_NAMESPACES or module is None \
                or module_name.startswith("pycoll.profiler"):
            continue
        for name, value in list(vars(module).items()):
            stand_in = wrapped.get(id(value))
            if stand_in is not None and stand_in.__wrapped__ is value:
                _replace(module, name, stand_in)
    for cls in _subclasses(layer_class) if layer_class is not None else ():
        for name, value in list(vars(cls).items()):  # (a layer class holding its op: MaxPool2D's _pool)
            stand_in = wrapped.get(id(value.__func__)) if isinstance(value, staticmethod) else None
            if stand_in is not None and stand_in.__wrapped__ is value.__func__:
                _replace(cls, name, staticmethod(stand_in))


def _wrap_tensor(tensor_class: type) -> None:
    for name, fn in list(vars(tensor_class).items()):
        if not isinstance(fn, types.FunctionType):
            continue
        if name in TENSOR_OPERATORS:
            _replace(tensor_class, name, _Recorded(TracerEventType.Operator, TENSOR_OPERATORS[name], fn))
        elif name == "backward":
            _replace(tensor_class, name, _Recorded(TracerEventType.Backward, "Gradient Backward", fn))
        elif not name.startswith("_") and name not in TENSOR_NOT_OPS:
            _replace(tensor_class, name, _Recorded(TracerEventType.Operator, name, fn))


def _subclasses(base: type) -> List[type]:
    found, todo = [], [base]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def attach() -> None:
    """Record the model's events from now on (the modules loaded so far)."""
    if _patched:
        return
    modules = sys.modules
    layer = modules.get("pycoll.nn.layer")
    _wrap_inner_names(modules, _wrap_namespaces(modules), None if layer is None else layer.Layer)
    tensor = modules.get("pycoll.tensor")
    if tensor is not None:
        _wrap_tensor(tensor.Tensor)
    autograd = modules.get("pycoll.autograd")
    if autograd is not None:
        _replace(autograd, "backward",
                 _Recorded(TracerEventType.Backward, "Gradient Backward", autograd.backward))
    if layer is not None:
        _replace(layer.Layer, "__call__", _forward(layer.Layer.__dict__["__call__"]))
    optimizer = modules.get("pycoll.optimizer.optimizer")
    if optimizer is not None:
        for cls in _subclasses(optimizer.Optimizer):
            if isinstance(cls.__dict__.get("step"), types.FunctionType):
                _replace(cls, "step", _Recorded(TracerEventType.Optimization, "Optimization",
                                                 cls.__dict__["step"]))
    graph = modules.get("pycoll._graph")
    if graph is not None:
        graph.node_timer = _time_node


def detach() -> None:
    """Put every wrapped name back."""
    while _patched:
        owner, name, kept = _patched.pop()
        setattr(owner, name, kept)
    graph = sys.modules.get("pycoll._graph")
    if graph is not None:
        graph.node_timer = None
