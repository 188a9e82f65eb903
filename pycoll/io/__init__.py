"""Data loading helpers for data-parallel training."""
from pycoll.io.sampler import DistributedBatchSampler

__all__ = ["DistributedBatchSampler"]
