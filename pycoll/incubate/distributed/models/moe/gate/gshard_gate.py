"""paddle's ``GShardGate``: top-2 of ``NaiveGate`` with GShard's balance loss, each expert's
capacity (``capacity[0]`` of the tokens in training, ``capacity[1]`` in eval, counted over all
ranks) and, with ``random_routing``, the second choice of a token dropped with probability
``1 - 2 * its score``."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence, Tuple

import pycoll
import pycoll.distributed as dist
import pycoll.nn.functional as F
from pycoll.device import array_module
from pycoll.incubate.distributed.models.moe import routing
from pycoll.incubate.distributed.models.moe.gate.naive_gate import NaiveGate
from pycoll.incubate.distributed.models.moe.utils import limit_by_capacity
from pycoll.tensor import Tensor, wrap


def check_capacity(capacity: Sequence[float], gate: str) -> Tuple[float, float]:
    if (not isinstance(capacity, (tuple, list)) or len(capacity) != 2
            or not all(isinstance(c, (int, float)) and not isinstance(c, bool) and c >= 0 for c in capacity)):
        raise ValueError(f"{gate}: capacity must be (training rate, eval rate), two numbers >= 0, got {capacity!r}")
    return float(capacity[0]), float(capacity[1])


def expert_counts(index: Tensor, tot_expert: int, dtype: Any) -> Tensor:
    """How many of ``index``'s entries (-1 left out) pick each expert, as ``dtype`` (the scores')."""
    return wrap(routing.number_count(index.array, tot_expert).astype(dtype))


class GShardGate(NaiveGate):
    def __init__(self, d_model: int, num_expert: int, world_size: int, topk: int = 2,
                 capacity: Sequence[float] = (1.2, 2.4), random_routing: bool = True,
                 group: Optional[dist.Group] = None):
        if topk != 2:
            raise ValueError(f"GShardGate: topk must be 2 in gshard, got {topk!r}")
        super().__init__(d_model, num_expert, world_size)
        self.capacity = check_capacity(capacity, "GShardGate")
        self.random_routing = random_routing
        self.group = group

    def forward(self, x: Tensor) -> Tuple[Tensor, Tensor]:
        topk_val, topk_idx, gate_score = super().forward(x, return_all_scores=True)
        tokens = gate_score.shape[0]
        # balance loss: each expert's share of all choices (no gradient) times its mean probability
        c_e = expert_counts(topk_idx, self.tot_expert, gate_score.array.dtype) / tokens
        m_e = pycoll.mean(F.softmax(gate_score, axis=1), axis=0)
        self.set_loss(pycoll.mean(c_e * m_e) * (self.num_expert ** 2))

        capacity = math.ceil(self.capacity[0 if self.training else 1] * x.shape[0])
        _, _, topk_idx = limit_by_capacity(topk_idx, self.num_expert, self.world_size, capacity, group=self.group)
        if self.random_routing:
            prob = pycoll.rand([tokens], dtype="float32").array
            xp = array_module(topk_idx.array)
            topk_idx = wrap(routing.random_routing(topk_idx.array, topk_val.array, xp.asarray(prob)))
        return topk_val, topk_idx
