"""The model's events while a profiler records, at no cost when none does: each operator the
program calls (Operator: ``paddle.matmul``, ``F.relu``, ``x + y``, ``x.sum()``), each layer's
forward (Forward, named by the layer's class), each backward (Backward, "Gradient Backward") with
the gradient function of every op it runs (Operator, e.g. ``LinearGradNode``), and each optimizer
step (Optimization) -- what paddle's Model and Operator summaries count.

pycoll's ops are Python functions, so recording them means wrapping them: when recording starts
the user-facing names (the functions of ``pycoll``, ``pycoll.nn.functional``, ``pycoll.linalg``,
``pycoll.fft``..., the Tensor's methods and operators, ``Layer.__call__``, the optimizers'
``step``) are replaced by timing wrappers, and when it stops the originals come back. The code
inside pycoll calls its functions directly, so an op is recorded once, as the user called it (the
outermost op of a thread; what it calls inside is its own time). The backward walk times its
nodes through ``pycoll._graph.node_timer``. As ``comm_events`` does, this module never imports
the tensor side: it finds the modules already loaded in ``sys.modules``.
"""
from __future__ import annotations

import functools
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


def _outermost(kind: TracerEventType, name: str, fn: Callable) -> Callable:
    """``fn`` recorded as a ``kind`` event ``name`` when no operator, backward or optimizer step
    of the thread is running: what it calls is its own time (a backward's nodes excepted: the
    walk times them)."""
    @functools.wraps(fn)
    def recorded(*args: Any, **kwargs: Any) -> Any:
        if not RECORDER.on or getattr(_inside, "event", False):
            return fn(*args, **kwargs)
        _inside.event = True
        start, period = time.perf_counter_ns(), RECORDER.period
        try:
            return fn(*args, **kwargs)
        finally:
            _inside.event = False
            if RECORDER.on and RECORDER.period == period:
                RECORDER.add(name, kind, start, time.perf_counter_ns())
    return recorded


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
    original = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
    _patched.append((owner, name, original))
    setattr(owner, name, wrapper)


def _is_op(fn: Any) -> bool:
    module = getattr(fn, "__module__", None) or ""
    return (isinstance(fn, types.FunctionType) and module.startswith("pycoll")
            and not module.startswith(NOT_OPS) and fn.__name__ not in NOT_OP_NAMES)


def _wrap_namespaces(modules: Dict[str, Any]) -> None:
    wrapped: Dict[int, Callable] = {}  # one wrapper per function, whichever names it has
    for module_name in OP_NAMESPACES:
        module = modules.get(module_name)
        if module is None:
            continue
        public = getattr(module, "__all__", None)  # (a module's own imports are not its API)
        for name, fn in list(vars(module).items()):
            if name.startswith("_") or not _is_op(fn) or (public is not None and name not in public):
                continue
            if id(fn) not in wrapped:
                wrapped[id(fn)] = (_outermost(TracerEventType.Backward, "Gradient Backward", fn)
                                   if name == "grad" else _outermost(TracerEventType.Operator, name, fn))
            _replace(module, name, wrapped[id(fn)])


def _wrap_tensor(tensor_class: type) -> None:
    for name, fn in list(vars(tensor_class).items()):
        if not isinstance(fn, types.FunctionType):
            continue
        if name in TENSOR_OPERATORS:
            _replace(tensor_class, name, _outermost(TracerEventType.Operator, TENSOR_OPERATORS[name], fn))
        elif name == "backward":
            _replace(tensor_class, name, _outermost(TracerEventType.Backward, "Gradient Backward", fn))
        elif not name.startswith("_") and name not in TENSOR_NOT_OPS:
            _replace(tensor_class, name, _outermost(TracerEventType.Operator, name, fn))


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
    _wrap_namespaces(modules)
    tensor = modules.get("pycoll.tensor")
    if tensor is not None:
        _wrap_tensor(tensor.Tensor)
    autograd = modules.get("pycoll.autograd")
    if autograd is not None:
        _replace(autograd, "backward",
                 _outermost(TracerEventType.Backward, "Gradient Backward", autograd.backward))
    layer = modules.get("pycoll.nn.layer")
    if layer is not None:
        _replace(layer.Layer, "__call__", _forward(layer.Layer.__dict__["__call__"]))
    optimizer = modules.get("pycoll.optimizer.optimizer")
    if optimizer is not None:
        for cls in _subclasses(optimizer.Optimizer):
            if isinstance(cls.__dict__.get("step"), types.FunctionType):
                _replace(cls, "step", _outermost(TracerEventType.Optimization, "Optimization",
                                                 cls.__dict__["step"]))
    graph = modules.get("pycoll._graph")
    if graph is not None:
        graph.node_timer = _time_node


def detach() -> None:
    """Put every wrapped name back."""
    while _patched:
        owner, name, original = _patched.pop()
        setattr(owner, name, original)
    graph = sys.modules.get("pycoll._graph")
    if graph is not None:
        graph.node_timer = None
