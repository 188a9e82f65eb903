"""paddle's ``fleet.layers.mpu.random`` path: the model-parallel RNG tracker and fleet's seeding,
pycoll's own."""
from pycoll.distributed.fleet.meta_parallel import RNGStatesTracker, get_rng_state_tracker, model_parallel_random_seed

__all__ = ["RNGStatesTracker", "get_rng_state_tracker", "model_parallel_random_seed"]
