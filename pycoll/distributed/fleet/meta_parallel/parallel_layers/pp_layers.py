"""paddle's ``fleet.meta_parallel.parallel_layers.pp_layers`` path: ``PipelineLayer``,
``LayerDesc`` and ``SharedLayerDesc``, pycoll's own (``fleet.meta_parallel.pp_layers``)."""
from pycoll.distributed.fleet.meta_parallel.pp_layers import LayerDesc, PipelineLayer, SharedLayerDesc

__all__ = ["LayerDesc", "PipelineLayer", "SharedLayerDesc"]
