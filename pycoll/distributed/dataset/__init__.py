"""paddle's distributed datasets: ``InMemoryDataset`` (with a global shuffle across ranks) and
``QueueDataset``, reading the MultiSlot text format; ``Slot`` describes a slot."""
from pycoll.distributed.dataset.datasets import DatasetBase, InMemoryDataset, QueueDataset
from pycoll.distributed.dataset.slots import Slot

__all__ = ["DatasetBase", "InMemoryDataset", "QueueDataset", "Slot"]
