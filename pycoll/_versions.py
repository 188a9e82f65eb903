"""In-place writes and the memory a backward holds: paddle's and torch's version check.

A backward function reads the arrays its op kept (inputs, outputs, or views of them). Memory
written in place after the op ran (an in-place op under no_grad, ``x[i] = v``, ``set_value``, an
optimizer step: each tells `memory_written`) would give a gradient from values the forward never
used. Nodes and writes are stamped from one clock (`CLOCK`); before running a node made before
the latest write, the walk (`pycoll._graph`) calls `check`, which looks at the arrays the node's
function holds (its closure, lists there and closures it holds; a PyLayer's saved tensors) and
raises, naming the op, if one was written since. An in-place op on a tensor in the graph gives it
new memory instead (see `pycoll.inplace_ops`), which leaves what a backward holds as it was and
needs no error. Nothing of this runs on the way of a training step that writes nothing between
forward and backward. Writes are remembered by array id (and the id of the array's memory
owner): an array a backward holds stays alive, so its id cannot be reused meanwhile.
"""
from __future__ import annotations

import itertools
import sys
from typing import Any, Dict, List

import numpy as np

CLOCK = itertools.count()  # orders nodes and in-place writes
_written: Dict[int, int] = {}  # id of an array written in place (or of its memory's owner) -> when
last_write = -1
_WRITTEN_KEPT = 1 << 16  # ids remembered at most; forgetting can only miss a late write, never invent one


def memory_written(array: Any) -> None:
    """Note that `array`'s values (and so its memory owner's) were just written in place."""
    global last_write
    if len(_written) >= _WRITTEN_KEPT:
        _written.clear()
    last_write = now = next(CLOCK)
    _written[id(array)] = now
    if array.base is not None:
        _written[id(array.base)] = now


def _held_arrays(fn: Any, depth: int = 0) -> List[Any]:
    """The NumPy/CuPy arrays in `fn`'s closure, in lists and tuples there (einsum's operands), and
    in the closures of functions it holds (a record hook's wrapper holds the op's backward)."""
    cupy = sys.modules.get("cupy")
    types = np.ndarray if cupy is None else (np.ndarray, cupy.ndarray)
    found = []
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            v = cell.cell_contents
        except ValueError:  # a closure variable not assigned yet
            continue
        if isinstance(v, types):
            found.append(v)
        elif isinstance(v, (list, tuple)):
            found.extend(item for item in v if isinstance(item, types))
        elif depth < 2 and getattr(v, "__closure__", None):
            found.extend(_held_arrays(v, depth + 1))
    return found


def check(node: Any) -> None:
    """Raise if memory `node`'s backward holds was written in place after the op ran."""
    if node.saved is not None:
        for t, array in node.saved:
            if t.array is not array:
                _refuse(node, array, "was given new values by an in-place op")
        held = [array for _, array in node.saved]
    else:
        held = _held_arrays(node.fn)
    for array in held:
        when = _written.get(id(array), -1)
        if when < node.seq and array.base is not None:
            when = _written.get(id(array.base), -1)
        if when > node.seq:
            _refuse(node, array, "was written in place")


def _refuse(node: Any, array: Any, what: str) -> None:
    fn = node.fn
    op = getattr(fn, "__qualname__", "").split(".<locals>")[0] or "an op"
    if op == "PyLayer.apply":
        op = "the PyLayer"
    raise RuntimeError(
        f"backward of {op}: a tensor (shape {list(array.shape)}, {array.dtype}) that {op} used in "
        f"the forward pass {what} afterwards, so its gradient would come from values the forward "
        f"never saw. An in-place change (add_, x[i] = v, set_value, optimizer.step(), ...) happened "
        f"between this forward and its backward: run the forward again after the change, call "
        f"backward before it, or change a copy (x = x + y rather than x.add_(y))")
