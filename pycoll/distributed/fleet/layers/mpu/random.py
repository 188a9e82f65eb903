"""paddle's ``fleet.layers.mpu.random`` path: the model-parallel RNG tracker and fleet's seeding,
pycoll's own, and ``dropout`` with paddle's ``rng_name``."""
from typing import Optional, Sequence, Union

import pycoll.nn.functional as F
from pycoll.distributed.fleet.meta_parallel import RNGStatesTracker, get_rng_state_tracker, model_parallel_random_seed
from pycoll.tensor import Tensor

__all__ = ["RNGStatesTracker", "dropout", "get_rng_state_tracker", "model_parallel_random_seed"]


def dropout(x: Tensor, p: float = 0.5, axis: Union[int, Sequence[int], None] = None, rng_name: Optional[str] = None,
            training: bool = True, mode: str = "upscale_in_train", name: Optional[str] = None) -> Tensor:
    """paddle's model-parallel dropout: ``pycoll.nn.functional.dropout``. With ``rng_name`` the
    mask comes, as in paddle's dygraph, from the generator in use — the tracker's state when
    called under ``get_rng_state_tracker().rng_state(rng_name)`` — and paddle's checks apply:
    ``p`` a number, ``p == 0`` returns ``x`` itself, and ``axis`` must be None."""
    if rng_name is None:
        return F.dropout(x, p, axis, training, mode=mode, name=name)
    if isinstance(p, bool) or not isinstance(p, (int, float)):
        raise TypeError(f"dropout: p must be a number (int or float), got {type(p).__name__}")
    if p == 0:
        return x
    if axis is not None:
        raise ValueError(f"dropout: axis={axis!r} with rng_name={rng_name!r}; a named random generator drops "
                         f"elements one by one, so axis must be None (as paddle's)")
    return F.dropout(x, p, None, training, mode=mode, name=name)
