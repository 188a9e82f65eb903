"""Data parallelism: the DataParallel wrapper, its gradient reducer and fused gradient averaging."""
from pycoll.parallel.data_parallel import DataParallel
from pycoll.parallel.fused import fused_allreduce_gradients

__all__ = ["DataParallel", "fused_allreduce_gradients"]
