"""paddle's ``fleet.meta_parallel.parallel_layers`` path: the pipeline descriptions
(``pp_layers``) and the model-parallel layers and RNG tracker, pycoll's own."""
from pycoll.distributed.fleet.meta_parallel import (ColumnParallelLinear, LayerDesc, ParallelCrossEntropy,
                                                    PipelineLayer, RNGStatesTracker, RowParallelLinear,
                                                    SharedLayerDesc, VocabParallelEmbedding, get_rng_state_tracker,
                                                    model_parallel_random_seed)
from pycoll.distributed.fleet.meta_parallel.parallel_layers import pp_layers

__all__ = ["ColumnParallelLinear", "LayerDesc", "ParallelCrossEntropy", "PipelineLayer", "RNGStatesTracker",
           "RowParallelLinear", "SharedLayerDesc", "VocabParallelEmbedding", "get_rng_state_tracker",
           "model_parallel_random_seed", "pp_layers"]
