"""paddle's ``fleet.layers.mpu``: the model-parallel layers, cross-entropy and RNG tracker
(``fleet.meta_parallel``'s), with paddle's submodules ``mp_layers``, ``mp_ops`` and ``random`` (whose
``dropout`` it also names, as paddle's)."""
from pycoll.distributed.fleet.meta_parallel import (ColumnParallelLinear, ParallelCrossEntropy, RNGStatesTracker,
                                                    RowParallelLinear, VocabParallelEmbedding,
                                                    get_rng_state_tracker, model_parallel_random_seed)
from pycoll.distributed.fleet.layers.mpu import mp_layers, mp_ops, random
from pycoll.distributed.fleet.layers.mpu.random import dropout

__all__ = ["ColumnParallelLinear", "ParallelCrossEntropy", "RNGStatesTracker", "RowParallelLinear",
           "VocabParallelEmbedding", "dropout", "get_rng_state_tracker", "mp_layers", "mp_ops", "model_parallel_random_seed",
           "random"]
