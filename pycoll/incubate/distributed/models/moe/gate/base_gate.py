"""paddle's ``BaseGate``: a gate layer over ``num_expert`` experts on each of ``world_size`` ranks,
keeping the balance loss of its last forward."""
from __future__ import annotations

from typing import Any, Optional

from pycoll.nn import Layer


def _count(value: Any, name: str, gate: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{gate}: {name} must be an int >= 1, got {value!r}")
    return value


class BaseGate(Layer):
    def __init__(self, num_expert: int, world_size: int):
        super().__init__()
        self.world_size = _count(world_size, "world_size", type(self).__name__)
        self.num_expert = _count(num_expert, "num_expert", type(self).__name__)
        self.tot_expert = world_size * num_expert
        self.loss: Optional[Any] = None

    def forward(self, x: Any) -> Any:
        raise NotImplementedError("Please implement the forward function.")

    def set_loss(self, loss: Any) -> None:
        self.loss = loss

    def get_loss(self, clear: bool = True) -> Optional[Any]:
        """The balance loss of the last forward (None if none since the last clearing get)."""
        loss = self.loss
        if clear:
            self.loss = None
        return loss
