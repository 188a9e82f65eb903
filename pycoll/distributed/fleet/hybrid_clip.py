"""A clip's norms in a hybrid job (paddle's ``HybridParallelClipGrad``): the sums of squares of
split weights' gradients completed over the model-parallel group (``clip_norms.completing``) and,
for a global-norm clip in a pipeline, the whole model's sum added up over the stages, a shared
weight counted on its first stage only (``is_firstly_shared``, set by ``PipelineLayer``)."""
from __future__ import annotations

from typing import Any, Callable, List, Optional

import numpy as np

import pycoll.distributed as dist
from pycoll.nn.clip import ClipGradByGlobalNorm
from pycoll.parallel.clip_norms import completing

NormSums = Callable[[List[Any]], Optional[Callable[[np.ndarray], np.ndarray]]]


def hybrid_norm_sums(hcg: Any, grad_clip: Any, params: List[Any]) -> Optional[NormSums]:
    """The ``norm_sums`` hook for an optimizer of ``params`` clipping with ``grad_clip`` in
    ``hcg``'s job, or None where each rank's own sums are already the whole ones. Every stage
    then adds up its sums at each step, so each must step some trainable parameter."""
    mp = hcg.get_model_parallel_group() if hcg.get_model_parallel_world_size() > 1 else None
    by_piece = completing(lambda p: [mp] if getattr(p, "is_distributed", False) else []) if mp else None
    if hcg.get_pipe_parallel_world_size() == 1 or not isinstance(grad_clip, ClipGradByGlobalNorm):
        return by_piece  # a per-gradient norm never spans stages
    if not any(not p.stop_gradient for p in params):
        raise ValueError(f"fleet.distributed_optimizer: pipeline stage {hcg.get_stage_id()} has no trainable "
                         f"parameters, but grad_clip=ClipGradByGlobalNorm sums every stage's gradients; give "
                         f"each stage a layer with parameters (seg_method) or clip otherwise")
    pipe = hcg.get_pipe_parallel_group()

    def for_params(params: List[Any]) -> Callable[[np.ndarray], np.ndarray]:
        complete = by_piece(params) if by_piece is not None else None
        counted = np.array([1.0 if getattr(p, "is_firstly_shared", True) else 0.0 for p in params])

        def sum_across(sums: np.ndarray) -> np.ndarray:
            rows = (complete(sums) if complete is not None else np.array(sums, dtype=np.float64)) * counted
            total = pipe.array_module.asarray([rows.sum()], dtype=np.float64)
            dist.all_reduce(total, group=pipe)
            # a global-norm clip reads only the sum: the other stages' share goes on the first row
            rows[0] += float(total[0]) - rows.sum()
            return rows
        return sum_across
    return for_params
