"""paddle's ``NaiveGate``: a linear score over all ``world_size * num_expert`` experts and its
top-``topk``. As paddle's, the values returned are the raw scores (no softmax): ``MoELayer``
weighs the experts' outputs by them."""
from __future__ import annotations

from typing import Tuple, Union

import pycoll
from pycoll.incubate.distributed.models.moe.gate.base_gate import BaseGate, _count
from pycoll.nn import Linear
from pycoll.tensor import Tensor


class NaiveGate(BaseGate):
    def __init__(self, d_model: int, num_expert: int, world_size: int, topk: int = 2):
        super().__init__(num_expert, world_size)
        self.gate = Linear(_count(d_model, "d_model", type(self).__name__), self.tot_expert)
        self.gate.weight.name = "gate_" + self.gate.weight.name
        self.gate.bias.name = "gate_" + self.gate.bias.name
        self.top_k = _count(topk, "topk", type(self).__name__)
        if topk > self.tot_expert:
            raise ValueError(f"{type(self).__name__}: topk={topk} is more than the {self.tot_expert} experts")

    def forward(self, inp: Tensor, return_all_scores: bool = False
                ) -> Union[Tuple[Tensor, Tensor], Tuple[Tensor, Tensor, Tensor]]:
        """``(top-k scores, their expert indices)`` per token, best first (and all scores)."""
        gate = self.gate(inp)
        value, index = pycoll.topk(gate, k=self.top_k, axis=-1, largest=True, sorted=True)
        return (value, index, gate) if return_all_scores else (value, index)
