"""paddle's ``fleet.meta_parallel.parallel_layers`` path: the pipeline descriptions
(``pp_layers``), the model-parallel layers (``mp_layers``), the RNG tracker (``random``) and the
layer specifications (``spec_utils``), pycoll's own."""
from pycoll.distributed.fleet.meta_parallel.parallel_layers.mp_layers import (ColumnParallelLinear,
                                                                              ParallelCrossEntropy,
                                                                              RowParallelLinear,
                                                                              VocabParallelEmbedding)
from pycoll.distributed.fleet.meta_parallel.parallel_layers.pp_layers import (LayerDesc, LocalSharedLayerDesc,
                                                                              PipelineLayer, SharedLayerDesc)
from pycoll.distributed.fleet.meta_parallel.parallel_layers.random import (RNGStatesTracker, get_rng_state_tracker,
                                                                           model_parallel_random_seed)
from pycoll.distributed.fleet.meta_parallel.parallel_layers.spec_utils import (LayerSpec, build_spec_layer,
                                                                               get_spec_layer, import_spec_layer)

__all__ = ["ColumnParallelLinear", "LayerDesc", "LayerSpec", "LocalSharedLayerDesc", "ParallelCrossEntropy",
           "PipelineLayer", "RNGStatesTracker", "RowParallelLinear", "SharedLayerDesc", "VocabParallelEmbedding",
           "build_spec_layer", "get_rng_state_tracker", "get_spec_layer", "import_spec_layer",
           "model_parallel_random_seed"]
