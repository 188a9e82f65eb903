"""paddle's ``fleet.utils.hybrid_parallel_util``: ``fused_allreduce_gradients(params, hcg)``
averages ``.grad`` over hcg's data-parallel group (the world without one)."""
from pycoll.parallel.fused import fused_allreduce_gradients

__all__ = ["fused_allreduce_gradients"]
