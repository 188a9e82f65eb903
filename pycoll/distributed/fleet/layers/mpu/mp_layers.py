"""paddle's ``fleet.layers.mpu.mp_layers`` path: the model-parallel layers, pycoll's own."""
from pycoll.parallel import ColumnParallelLinear, ParallelCrossEntropy, RowParallelLinear, VocabParallelEmbedding

__all__ = ["ColumnParallelLinear", "ParallelCrossEntropy", "RowParallelLinear", "VocabParallelEmbedding"]
