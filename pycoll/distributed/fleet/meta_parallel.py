"""paddle's ``fleet.meta_parallel`` (and ``fleet.layers.mpu``) module path for the model-parallel
layers, the parallel cross-entropy and the RNG tracker (the same objects as ``pycoll.parallel``'s),
plus ``model_parallel_random_seed``, which reads fleet's hybrid groups."""
from typing import Optional

import numpy as np

import pycoll
from pycoll.parallel import (ColumnParallelLinear, ParallelCrossEntropy, RNGStatesTracker, RowParallelLinear,
                             VocabParallelEmbedding, get_rng_state_tracker)
from pycoll.parallel.mp_random import MODEL_PARALLEL_RNG

__all__ = ["ColumnParallelLinear", "ParallelCrossEntropy", "RNGStatesTracker", "RowParallelLinear",
           "VocabParallelEmbedding", "get_rng_state_tracker", "model_parallel_random_seed"]


def model_parallel_random_seed(seed: Optional[int] = None) -> None:
    """Seed the ranks as paddle does after ``fleet.init``: the global generator with ``seed``
    (alike on every rank, so replicated draws agree) and the tracker's ``model_parallel_rng``
    state with ``seed + 1 + mp_rank * pp_size + pp_rank`` (different across the model-parallel
    group). Without ``seed``, a random one (which ranks then do not share)."""
    from pycoll.distributed.fleet.fleet import get_hybrid_communicate_group

    hcg = get_hybrid_communicate_group()
    global_seed = seed if seed else int(np.random.randint(0, 10000))
    pp_size, pp_rank = hcg.get_pipe_parallel_world_size(), hcg.get_stage_id()
    local_seed = global_seed + 1 + hcg.get_model_parallel_rank() * pp_size + pp_rank
    tracker = get_rng_state_tracker()
    tracker.reset()
    tracker.add(MODEL_PARALLEL_RNG, local_seed)
    pycoll.seed(global_seed)
