"""paddle's ``MoELayer``: a mixture of experts spread over the ranks of ``moe_group``.

Each rank holds ``len(experts)`` experts; with ``W`` ranks there are ``W * len(experts)`` of
them, expert ``e`` of rank ``w`` being global expert ``w * len(experts) + e``. A forward, on
every rank of the group at once:

1. the gate picks, for each of this rank's tokens, ``top_k`` global experts and their weights
   (a choice of -1 is dropped: over capacity, or by GShard's random policy);
2. the chosen token copies are sorted by global expert and counted (``count_by_gate``), the
   counts are exchanged, and ``global_scatter`` sends each copy to the rank of its expert;
3. each rank runs its experts on what arrived for them (from every rank, expert by expert);
4. ``global_gather`` sends the results back, each copy to its token's place (dropped choices
   give zeros), and each token's copies are summed, weighted by the gate's values.

Every step is made of differentiable pieces (``index_select``, ``global_scatter``/
``global_gather``, ``scatter``, ``bmm``), so the gradients of the input, the gate and the experts
flow back the same way. With ``mp_group`` of ``n`` ranks, each model-parallel rank routes
``1/n`` of the tokens and the outputs are all-gathered (sequence parallelism's ``ScatterOp``/
``GatherOp``). Unlike paddle's, the caller's input keeps its shape (paddle reshapes it in place).
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Union

import pycoll
import pycoll.distributed as dist
from pycoll.distributed.fleet.recompute import recompute_hybrid
from pycoll.distributed.fleet.utils.sequence_parallel_utils import GatherOp, ScatterOp
from pycoll.distributed.utils.moe_utils import global_gather, global_scatter
from pycoll.incubate.distributed.models.moe.gate import BaseGate, GShardGate, NaiveGate, SwitchGate
from pycoll.incubate.distributed.models.moe.utils import count_by_gate
from pycoll.nn import Layer
from pycoll.tensor import Tensor

__all__ = ["MoELayer"]

_GATES = {"naive": NaiveGate, None: NaiveGate, "gshard": GShardGate, "switch": SwitchGate}


def _run_experts(x: Tensor, counts: List[int], experts: Any) -> Tensor:
    """``experts[e]`` on the next ``counts[e]`` rows of ``x``, for each ``e`` in turn."""
    if x.shape[0] == 0:
        return x
    outs, start = [], 0
    for expert, count in zip(experts, counts):
        if count > 0:
            outs.append(expert(x[start:start + count]))
            start += count
    return pycoll.concat(outs, axis=0)


class MoELayer(Layer):
    """``d_model``: the width of a token; ``experts``: this rank's experts (a LayerList, each
    ``[tokens, d_model] -> [tokens, d_model]``); ``gate``: a ``NaiveGate`` (or subclass) or a
    dict ``{"type": "naive"|"gshard"|"switch", "top_k": k}`` (default gshard, top 2);
    ``moe_group``: the ranks the experts are spread over (None: this rank alone);
    ``mp_group``: model-parallel ranks that share the tokens; ``recompute_interval`` > 0 runs the
    experts under ``recompute_hybrid(recompute_ctx, ...)``."""

    def __init__(self, d_model: int, experts: Any, gate: Union[None, Dict[str, Any], BaseGate] = None,
                 moe_group: Optional[dist.Group] = None, mp_group: Optional[dist.Group] = None,
                 recompute_interval: int = 0, recompute_ctx: Optional[Dict[str, Any]] = None):
        super().__init__()
        if isinstance(d_model, bool) or not isinstance(d_model, int) or d_model < 1:
            raise ValueError(f"MoELayer: d_model must be an int >= 1, got {d_model!r}")
        if experts is None or not hasattr(experts, "__len__") or len(experts) == 0:
            raise ValueError(f"MoELayer: experts must be a non-empty LayerList of this rank's experts, got {experts!r}")
        for name, group in (("moe_group", moe_group), ("mp_group", mp_group)):
            if group is not None and not isinstance(group, dist.Group):
                raise TypeError(f"MoELayer: {name} must be a Group or None, got {type(group).__name__}")
        if recompute_interval > 0 and recompute_ctx is None:
            raise ValueError(f"MoELayer: recompute_interval={recompute_interval} needs a recompute_ctx dict")
        self.group = moe_group
        self.world_size = moe_group.nranks if moe_group is not None else 1
        self.num_expert = len(experts)
        self.experts = experts
        self.mp_group = mp_group
        self.d_model = d_model
        self.recompute_interval = recompute_interval
        self.recompute_ctx = recompute_ctx
        self.gate = self._make_gate({} if gate is None else gate)
        self.top_k = self.gate.top_k

    def _make_gate(self, gate: Union[Dict[str, Any], BaseGate]) -> BaseGate:
        if isinstance(gate, NaiveGate):
            return gate
        if isinstance(gate, BaseGate):
            raise TypeError(f"MoELayer: unimplemented gate type {type(gate).__name__}; give a NaiveGate, "
                            f"GShardGate or SwitchGate")
        if not isinstance(gate, dict):
            raise TypeError(f"MoELayer: gate must be a dict or a moe gate, got {type(gate).__name__}")
        kind = gate.get("type", "gshard")
        if kind not in _GATES:
            raise ValueError(f"MoELayer: gate type must be 'naive', 'gshard' or 'switch', got {kind!r}")
        options = {"group": self.group} if kind in ("gshard", "switch") else {}
        return _GATES[kind](self.d_model, num_expert=self.num_expert, world_size=self.world_size,
                            topk=gate.get("top_k", 2), **options)

    def forward(self, inp: Tensor) -> Tensor:
        if not isinstance(inp, Tensor) or inp.ndim != 3 or inp.shape[2] != self.d_model:
            raise ValueError(f"MoELayer: the input must be a [batch, seq, d_model={self.d_model}] Tensor, got "
                             f"{list(inp.shape) if isinstance(inp, Tensor) else type(inp).__name__}")
        origin_shape = list(inp.shape)
        x = inp.reshape([-1, self.d_model])
        mp_size = self.mp_group.nranks if self.mp_group is not None else 1
        if mp_size > 1:
            x = ScatterOp.apply(x, self.mp_group)
        value, gate = self.gate(x)
        topk = gate.shape[1] if gate.ndim == 2 else 1

        pos, local_count, global_count = count_by_gate(gate, self.num_expert, self.world_size, group=self.group)
        # what arrives per local expert, summed over the sending ranks (a few ints, read on the host)
        arriving = global_count.numpy().reshape(self.world_size, self.num_expert).sum(axis=0).tolist()
        copies = pycoll.index_select(x, pos // topk, axis=0)  # one row per valid choice, by global expert
        if self.world_size > 1:
            copies = global_scatter(copies, local_count, global_count, group=self.group)

        if self.recompute_interval <= 0 or copies.shape[0] == 0:
            y = _run_experts(copies, arriving, self.experts)
        else:
            y = recompute_hybrid(self.recompute_ctx, _run_experts, copies, arriving, self.experts)

        if self.world_size > 1:
            y = global_gather(y, local_count, global_count, group=self.group)
        slots = pycoll.zeros([x.shape[0] * topk, self.d_model], dtype=y.dtype)
        # dropped choices stay zeros; with none kept y is empty but still joins the graph, so this
        # rank's backward makes the exchanges the other ranks make
        y = pycoll.scatter(slots, pos, y, overwrite=True)
        out = pycoll.bmm(value.reshape([-1, 1, topk]), y.reshape([-1, topk, self.d_model]))
        out = out.reshape([-1, self.d_model])
        if mp_size > 1:
            out = GatherOp.apply(out, self.mp_group)
        return out.reshape(origin_shape)
