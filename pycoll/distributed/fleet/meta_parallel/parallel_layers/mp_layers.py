"""paddle's ``fleet.meta_parallel.parallel_layers.mp_layers`` path: the model-parallel layers,
pycoll's own (``pycoll.parallel``)."""
from pycoll.parallel import ColumnParallelLinear, ParallelCrossEntropy, RowParallelLinear, VocabParallelEmbedding

__all__ = ["ColumnParallelLinear", "ParallelCrossEntropy", "RowParallelLinear", "VocabParallelEmbedding"]
