"""What a rule sees of one node (`Saved`), the rule registry and the helpers rules share."""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np

from pycoll._graph import Node
from pycoll.device import is_array
from pycoll.dtypes import is_floating
from pycoll.math_ops import cast, sum as sum_
from pycoll.shape_ops import reshape
from pycoll.tensor import Tensor, wrap

# a rule maps (what the node kept, the gradient of its output(s) as Tensors) to one Tensor or
# None per input edge of the node
Rule = Callable[["Saved", Any], tuple]
RULES: Dict[str, Rule] = {}


def rule(*qualnames: str) -> Callable[[Rule], Rule]:
    """Register the decorated rule for the backward functions of these qualified names (what
    ``fn.__qualname__`` says, e.g. ``"multiply.<locals>.backward"``)."""
    def register(fn: Rule) -> Rule:
        for name in qualnames:
            RULES[name] = fn
        return fn
    return register


def op_name(fn: Callable) -> str:
    """The op a backward function belongs to, for messages: ``"tanh"`` for
    ``"tanh.<locals>.<lambda>"``; for a wrapper of the op's own ``backward`` (the linalg
    decompositions' ``outputs``), that backward's op."""
    code = getattr(fn, "__code__", None)
    if code is not None and "backward" in code.co_freevars and fn.__closure__:
        try:
            fn = fn.__closure__[code.co_freevars.index("backward")].cell_contents
        except ValueError:  # an empty cell
            pass
    return getattr(fn, "__qualname__", repr(fn)).split(".<locals>")[0]


class Saved:
    """One node as its rule sees it: the variables its backward function closes over (``s["a"]``),
    which inputs want a gradient (`wants`), and the kept arrays brought back into the graph
    (`operand`, `output`) so that a gradient built from them reaches the node's inputs."""

    def __init__(self, node: Node, wanted: Tuple[bool, ...], fn: Callable):
        self.node = node
        self.wanted = wanted
        self.fn = fn  # the op's backward function (node.fn, or what hooks on its outputs wrap)
        self._env = {}
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                self._env[name] = cell.cell_contents
            except ValueError:  # a variable the op never set on this path
                pass

    def __getitem__(self, name: str) -> Any:
        try:
            return self._env[name]
        except KeyError:
            raise RuntimeError(f"the create_graph rule for {op_name(self.fn)} reads {name!r}, which "
                               f"its backward no longer keeps; update pycoll._higher_order") from None

    def attached(self, name: str) -> Any:
        """What the op attached to its backward function for create_graph (an attribute `name`)."""
        try:
            return getattr(self.fn, name)
        except AttributeError:
            raise RuntimeError(f"the create_graph rule for {op_name(self.fn)} reads the attribute "
                               f"{name!r}, which its backward no longer has; update pycoll._higher_order") from None

    def __contains__(self, name: str) -> bool:
        return name in self._env

    def wants(self, i: int) -> bool:
        """Whether input `i` takes a gradient in this walk (it leads to an input asked for)."""
        return self.wanted[i]

    def operand(self, i: int, value: Any) -> Any:
        """Input `i`, as the graph's Tensor: a leaf itself (cast to `value`'s dtype where the op
        promoted it; its own values), else an alias holding `value` of the node that made it, or a
        constant for an input that takes no gradient. Numbers stay numbers. A rule that passes
        values standing in for the input's (a shifted input, see rules_recomputed) must give the
        same gradients with the leaf's own."""
        if not is_array(value):
            return value
        e = self.node.inputs[i]
        if e is None:
            return wrap(value)
        if e.__class__ is not tuple:
            if e._array.dtype == value.dtype:
                return e
            return cast(e, value.dtype)
        return alias(value, e[0], e[1])

    def output(self, value: Any, index: int = 0) -> Tensor:
        """The node's output `index`, holding `value`, as the graph's Tensor."""
        return alias(value, self.node, index)


def alias(value: Any, node: Node, index: int) -> Tensor:
    """A Tensor over `value` that the graph takes for output `index` of `node`."""
    t = wrap(value)
    t.stop_gradient = False
    t.grad_node = node
    t.output_index = index
    return t


def const(value: Any) -> Tensor:
    """A Tensor over array `value` that takes no gradient (a mask, a sign)."""
    return wrap(value)


def slope_of(s: "Saved", i: int, slope: Any) -> Tensor:
    """The array ``slope`` of a piecewise-linear op (relu, leaky_relu, abs), held as depending on
    input ``i`` with a zero derivative: a later grad reaches that input and finds zeros, as
    paddle's and torch's do, instead of finding it unused. (``where`` of an all-false mask: its
    value is ``slope``'s whatever the input holds, inf and NaN included.)"""
    from pycoll.search_ops import where  # (search_ops imports the ops these rules differentiate)

    e = s.node.inputs[i]
    if e is None or (e.__class__ is not tuple and e.stop_gradient):
        return const(slope)
    xp = s["xp"] if "xp" in s else np
    stand_in = e if e.__class__ is not tuple else alias(xp.zeros_like(slope), *e)
    held = where(const(xp.zeros(slope.shape, dtype=bool)), stand_in, const(slope))
    return held if held._array.dtype == slope.dtype else cast(held, slope.dtype)


def fit(g: Tensor, meta: Optional[Tuple[tuple, Any]]) -> Tensor:
    """`g` summed back to an operand's shape and cast to its dtype (meta: `math_ops.grad_meta`),
    as `math_ops.grad_for` does on arrays."""
    shape, dtype = meta
    if tuple(g.shape) != tuple(shape):
        lead = g.ndim - len(shape)
        axes = list(range(lead)) + [lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1]
        g = reshape(sum_(g, axis=axes), list(shape)) if axes else reshape(g, list(shape))
    if g._array.dtype != dtype and is_floating(dtype):
        g = cast(g, dtype)
    return g

