"""paddle's ``SwitchGate``: the top-1 of softmax scores, jittered in training by adding uniform
noise from ``[1 - switch_eps, 1 + switch_eps]`` to the scores first (paddle adds it), with each
expert's capacity as ``GShardGate``'s and Switch's balance loss over the choices kept."""
from __future__ import annotations

import math
from typing import Optional, Sequence, Tuple

import pycoll
import pycoll.distributed as dist
import pycoll.nn.functional as F
from pycoll.incubate.distributed.models.moe.gate.gshard_gate import check_capacity, expert_counts
from pycoll.incubate.distributed.models.moe.gate.naive_gate import NaiveGate
from pycoll.incubate.distributed.models.moe.utils import limit_by_capacity
from pycoll.tensor import Tensor


class SwitchGate(NaiveGate):
    def __init__(self, d_model: int, num_expert: int, world_size: int, topk: int = 1, switch_eps: float = 0.1,
                 capacity: Sequence[float] = (1.2, 2.4), group: Optional[dist.Group] = None):
        if topk != 1:
            raise ValueError(f"SwitchGate: topk must be 1 in switch, got {topk!r}")
        super().__init__(d_model, num_expert, world_size, topk=1)
        self.switch_eps = float(switch_eps)
        self.capacity = check_capacity(capacity, "SwitchGate")
        self.group = group

    def forward(self, inp: Tensor) -> Tuple[Tensor, Tensor]:
        score = self.gate(inp)
        if self.training:
            noise = pycoll.rand(score.shape, dtype=score.dtype)
            score = score + (noise * 2 * self.switch_eps + 1.0 - self.switch_eps)
        score = F.softmax(score, axis=-1)
        top1_score, top1_idx = pycoll.topk(score, k=1, axis=-1, largest=True)

        capacity = math.ceil(self.capacity[0 if self.training else 1] * inp.shape[0])
        _, _, top1_idx = limit_by_capacity(top1_idx, self.num_expert, self.world_size, capacity, group=self.group)
        kept = int((top1_idx.array > -1).sum())
        fraction_expert = expert_counts(top1_idx, self.tot_expert, score.array.dtype) / kept
        prob_expert = score.sum(axis=0) / kept
        self.set_loss((fraction_expert * prob_expert).sum() * self.tot_expert)
        return top1_score, top1_idx
