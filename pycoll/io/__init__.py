"""Data loading (paddle.io): datasets, batch samplers (one for each rank's share of a dataset)
and the DataLoader."""
from pycoll.io.collate import default_collate_fn
from pycoll.io.dataloader import DataLoader
from pycoll.io.dataset import Dataset, IterableDataset, TensorDataset
from pycoll.io.sampler import BatchSampler, DistributedBatchSampler

__all__ = ["BatchSampler", "DataLoader", "Dataset", "DistributedBatchSampler", "IterableDataset",
           "TensorDataset", "default_collate_fn"]
