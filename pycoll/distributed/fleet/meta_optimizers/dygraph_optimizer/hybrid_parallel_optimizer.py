"""paddle's ``fleet.meta_optimizers.dygraph_optimizer.hybrid_parallel_optimizer`` path:
``HybridParallelOptimizer``, pycoll's own (``fleet.meta_optimizers.hybrid_parallel_optimizer``).
paddle's ``HybridParallelClipGrad`` class is not here: pycoll's hybrid clip completes the
optimizer's own ``grad_clip`` norms (``fleet.hybrid_clip``) instead of wrapping it."""
from pycoll.distributed.fleet.meta_optimizers.hybrid_parallel_optimizer import HybridParallelOptimizer

__all__ = ["HybridParallelOptimizer"]
