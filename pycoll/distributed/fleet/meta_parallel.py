"""paddle's ``fleet.meta_parallel`` module path for the model-parallel layers (the same classes
as ``pycoll.distributed.ColumnParallelLinear`` ...)."""
from pycoll.parallel import ColumnParallelLinear, RowParallelLinear, VocabParallelEmbedding

__all__ = ["ColumnParallelLinear", "RowParallelLinear", "VocabParallelEmbedding"]
