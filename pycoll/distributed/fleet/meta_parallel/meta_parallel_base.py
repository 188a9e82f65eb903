"""paddle's ``fleet.meta_parallel.MetaParallelBase``: the base of what ``fleet.distributed_model``
returns (``TensorParallel``, ``PipelineParallel`` and its kinds, ``ShardingParallel``), so that a
script's ``isinstance(model, MetaParallelBase)`` holds for each, as in paddle."""
from __future__ import annotations

from typing import Any

from pycoll.nn import Layer


class MetaParallelBase(Layer):
    """``layers`` as ``_layers`` (so ``state_dict`` keys start with ``_layers.``), with the hybrid
    communicate group ``_hcg`` and the ``_strategy`` it runs by; forward runs ``layers``."""

    def __init__(self, layers: Layer, hcg: Any, strategy: Any):
        if not isinstance(layers, Layer):
            raise TypeError(f"{type(self).__name__}: layers must be a pycoll.nn.Layer, got {type(layers).__name__}")
        super().__init__(layers.full_name() + "_meta_parallel_base")
        self._layers = layers
        self._hcg = hcg
        self._strategy = strategy

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self._layers(*inputs, **kwargs)
