"""Data and model parallelism: the DataParallel wrapper, its gradient reducer, fused gradient
averaging, and the model-parallel layers and ``split``. Paddle reaches the last three as
``paddle.distributed.<name>``; ``pycoll.distributed`` forwards those names here on first use."""
from pycoll.parallel.data_parallel import DataParallel, sync_params_buffers
from pycoll.parallel.fused import fused_allreduce_gradients
from pycoll.parallel.mp_layers import (ColumnParallelLinear, ParallelCrossEntropy, RowParallelLinear,
                                      VocabParallelEmbedding)
from pycoll.parallel.mp_random import RNGStatesTracker, get_rng_state_tracker
from pycoll.parallel.mp_split import split, split_layers

__all__ = ["DataParallel", "fused_allreduce_gradients", "ColumnParallelLinear", "RowParallelLinear",
           "VocabParallelEmbedding", "ParallelCrossEntropy", "RNGStatesTracker", "get_rng_state_tracker", "split",
           "split_layers", "sync_params_buffers"]
