"""paddle's ``fleet.meta_parallel.parallel_layers.random`` path: the model-parallel RNG tracker
(pycoll's own, ``pycoll.parallel``) and fleet's ``model_parallel_random_seed``."""
from pycoll.distributed.fleet.collective_mode import model_parallel_random_seed
from pycoll.parallel import RNGStatesTracker, get_rng_state_tracker

__all__ = ["RNGStatesTracker", "get_rng_state_tracker", "model_parallel_random_seed"]
