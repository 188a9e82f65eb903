"""paddle.io.dataloader.batch_sampler: the batch samplers."""
from pycoll.io.sampler import BatchSampler, DistributedBatchSampler

__all__ = ["BatchSampler", "DistributedBatchSampler"]
