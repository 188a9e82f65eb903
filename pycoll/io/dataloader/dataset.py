"""paddle.io.dataloader.dataset: the datasets and ``random_split``."""
from pycoll.io.dataset import (ChainDataset, ComposeDataset, ConcatDataset, Dataset, IterableDataset, Subset,
                               TensorDataset, random_split)

__all__ = ["ChainDataset", "ComposeDataset", "ConcatDataset", "Dataset", "IterableDataset", "Subset",
           "TensorDataset", "random_split"]
