"""paddle's ``fleet.meta_parallel`` (and ``fleet.layers.mpu``) module path for the model-parallel
layers, the parallel cross-entropy and the RNG tracker (the same objects as ``pycoll.parallel``'s),
plus fleet's ``model_parallel_random_seed``."""
from pycoll.distributed.fleet.fleet import model_parallel_random_seed
from pycoll.parallel import (ColumnParallelLinear, ParallelCrossEntropy, RNGStatesTracker, RowParallelLinear,
                             VocabParallelEmbedding, get_rng_state_tracker)

__all__ = ["ColumnParallelLinear", "ParallelCrossEntropy", "RNGStatesTracker", "RowParallelLinear",
           "VocabParallelEmbedding", "get_rng_state_tracker", "model_parallel_random_seed"]
