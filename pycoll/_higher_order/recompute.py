"""`recomputed`: the rule of an op that is not written out, from its forward recomputed with ops
that have rules and differentiated by a walk of its own."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from pycoll._higher_order.saved import Saved
from pycoll._higher_order.walk import differentiable_grads
from pycoll.tensor import Tensor


def recomputed(s: Saved, g: Tensor, forward: Callable[..., Tensor], values: Sequence[Any]) -> tuple:
    """The gradients of a node whose op is not written out as a rule: `forward` (the op computed
    again with Tensor ops that have rules) applied to the node's inputs, holding `values`, and
    differentiated by a walk of its own with `g` as the seed (None stays None). Every input goes in
    bound to the graph, asked for or not: the gradients asked for depend on the others' values, and a
    later derivative must reach them (the weight through a gradient penalty's input gradient)."""
    ins = [None if v is None else s.operand(i, v) for i, v in enumerate(values)]
    asked = [i for i in range(len(values)) if s.wants(i)]
    found = differentiable_grads([forward(*ins)], [g], [ins[i] for i in asked])
    got = {i: found.get(k) for k, i in enumerate(asked)}
    return tuple(got.get(i) for i in range(len(values)))
