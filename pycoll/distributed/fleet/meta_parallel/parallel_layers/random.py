"""paddle's ``fleet.meta_parallel.parallel_layers.random`` path: the objects of
``fleet.layers.mpu.random`` (the model-parallel RNG tracker, fleet's
``model_parallel_random_seed`` and ``dropout`` with ``rng_name``), not copies."""
from pycoll.distributed.fleet.layers.mpu.random import (RNGStatesTracker, dropout, get_rng_state_tracker,
                                                        model_parallel_random_seed)

__all__ = ["RNGStatesTracker", "dropout", "get_rng_state_tracker", "model_parallel_random_seed"]
