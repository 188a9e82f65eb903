"""paddle's distributed datasets: ``InMemoryDataset`` (with a global shuffle across ranks) and
``QueueDataset``, reading the MultiSlot text format; ``Slot`` describes a slot."""
from pycoll.distributed.dataset.datasets import InMemoryDataset, QueueDataset
from pycoll.distributed.dataset.slots import Slot

__all__ = ["InMemoryDataset", "QueueDataset", "Slot"]
