"""paddle's ``fleet.meta_parallel``: the pipeline (``LayerDesc``, ``SharedLayerDesc``,
``PipelineLayer``, ``PipelineParallel``, ``NoPipelineParallel`` (pp_degree 1) and the interleaved ``PipelineParallelWithInterleave`` /
``PipelineParallelWithInterleaveFthenB``), ``TensorParallel`` and ``ShardingParallel`` (fleet's
model-parallel and sharding wrappers), all ``MetaParallelBase``s,
and under the same path (as ``fleet.layers.mpu``) the model-parallel layers, the parallel
cross-entropy and the RNG tracker (the same objects as ``pycoll.parallel``'s), plus fleet's
``model_parallel_random_seed``."""
from pycoll.distributed.fleet.meta_parallel.pipeline_interleave import (PipelineParallelWithInterleave,
                                                                        PipelineParallelWithInterleaveFthenB)
from pycoll.distributed.fleet.meta_parallel.meta_parallel_base import MetaParallelBase
from pycoll.distributed.fleet.meta_parallel.pipeline_parallel import NoPipelineParallel, PipelineParallel
from pycoll.distributed.fleet.meta_parallel.pp_layers import LayerDesc, PipelineLayer, SharedLayerDesc
from pycoll.distributed.fleet.meta_parallel.sharding_parallel import ShardingParallel
from pycoll.distributed.fleet.meta_parallel.tensor_parallel import TensorParallel
from pycoll.distributed.fleet.collective_mode import model_parallel_random_seed  # after the pipeline: it uses it
from pycoll.parallel import (ColumnParallelLinear, ParallelCrossEntropy, RNGStatesTracker, RowParallelLinear,
                             VocabParallelEmbedding, get_rng_state_tracker)

__all__ = ["ColumnParallelLinear", "LayerDesc", "MetaParallelBase", "NoPipelineParallel", "ParallelCrossEntropy",
           "PipelineLayer",
           "PipelineParallel", "PipelineParallelWithInterleave", "PipelineParallelWithInterleaveFthenB",
           "RNGStatesTracker", "RowParallelLinear", "ShardingParallel", "SharedLayerDesc", "TensorParallel",
           "VocabParallelEmbedding", "get_rng_state_tracker", "model_parallel_random_seed"]
