"""paddle's ``paddle.framework.random``: the generator's seed and state (``pycoll.seed``, ...)."""
from pycoll import get_cuda_rng_state, get_rng_state, seed, set_cuda_rng_state, set_rng_state

__all__ = ["get_cuda_rng_state", "get_rng_state", "seed", "set_cuda_rng_state", "set_rng_state"]
