"""Data loading (paddle.io): datasets, index and batch samplers (one for each rank's share of a
dataset) and the DataLoader."""
from pycoll.io import dataloader, reader  # paddle.io.dataloader and paddle.io.reader, as modules
from pycoll.io.collate import default_collate_fn
from pycoll.io.reader import DataLoader
from pycoll.io.workers import WorkerInfo, get_worker_info
from pycoll.io.dataset import (ChainDataset, ComposeDataset, ConcatDataset, Dataset, IterableDataset, Subset,
                               TensorDataset, random_split)
from pycoll.io.sampler import BatchSampler, DistributedBatchSampler
from pycoll.io.samplers import (RandomSampler, Sampler, SequenceSampler, SubsetRandomSampler,
                                WeightedRandomSampler)

__all__ = ["BatchSampler", "ChainDataset", "ComposeDataset", "ConcatDataset", "DataLoader", "Dataset",
           "DistributedBatchSampler", "IterableDataset", "RandomSampler", "Sampler", "SequenceSampler",
           "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler", "WorkerInfo",
           "dataloader", "default_collate_fn", "get_worker_info", "random_split", "reader"]
