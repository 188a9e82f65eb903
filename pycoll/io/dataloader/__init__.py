"""paddle.io.dataloader's module paths: the same objects as ``pycoll.io``'s, where paddle's code
imports them from (``paddle.io.dataloader.collate``, ``.batch_sampler``, ``.dataset``,
``.sampler``, ``.worker``)."""
from pycoll.io.dataloader import batch_sampler, collate, dataset, sampler, worker
from pycoll.io.dataloader.batch_sampler import BatchSampler, DistributedBatchSampler
from pycoll.io.dataloader.dataset import (ChainDataset, ComposeDataset, ConcatDataset, Dataset, IterableDataset,
                                          Subset, TensorDataset, random_split)
from pycoll.io.dataloader.sampler import (RandomSampler, Sampler, SequenceSampler, SubsetRandomSampler,
                                          WeightedRandomSampler)
from pycoll.io.dataloader.worker import get_worker_info

__all__ = ["BatchSampler", "ChainDataset", "ComposeDataset", "ConcatDataset", "Dataset", "DistributedBatchSampler",
           "IterableDataset", "RandomSampler", "Sampler", "SequenceSampler", "Subset", "SubsetRandomSampler",
           "TensorDataset", "WeightedRandomSampler", "batch_sampler", "collate", "dataset", "get_worker_info",
           "random_split", "sampler", "worker"]
