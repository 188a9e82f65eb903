"""paddle's ``fleet.meta_parallel.parallel_layers.pp_layers`` path: ``PipelineLayer``,
``LayerDesc``, ``SharedLayerDesc`` and ``LocalSharedLayerDesc``, pycoll's own
(``fleet.meta_parallel.pp_layers`` and ``layer_descs``)."""
from pycoll.distributed.fleet.meta_parallel.layer_descs import LayerDesc, LocalSharedLayerDesc, SharedLayerDesc
from pycoll.distributed.fleet.meta_parallel.pp_layers import PipelineLayer

__all__ = ["LayerDesc", "LocalSharedLayerDesc", "PipelineLayer", "SharedLayerDesc"]
