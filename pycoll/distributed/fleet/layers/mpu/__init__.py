"""paddle's ``fleet.layers.mpu``: the model-parallel layers, cross-entropy and RNG tracker
(``fleet.meta_parallel``'s)."""
from pycoll.distributed.fleet.meta_parallel import (ColumnParallelLinear, ParallelCrossEntropy, RNGStatesTracker,
                                                    RowParallelLinear, VocabParallelEmbedding,
                                                    get_rng_state_tracker, model_parallel_random_seed)

__all__ = ["ColumnParallelLinear", "ParallelCrossEntropy", "RNGStatesTracker", "RowParallelLinear",
           "VocabParallelEmbedding", "get_rng_state_tracker", "model_parallel_random_seed"]
