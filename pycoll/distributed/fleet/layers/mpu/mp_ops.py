"""paddle's ``fleet.layers.mpu.mp_ops`` path (also reached as ``paddle.distributed.collective``'s
``_c_identity`` / ``_c_concat``, which PaddleNLP's ``parallel_matmul`` calls): the autograd
collectives of tensor parallelism and ``split``, pycoll's own from ``pycoll.parallel``, and
``_c_lookup_table``, the lookup of one rank's rows of a vocabulary-split embedding."""
from typing import Optional

from pycoll.parallel import split
from pycoll.parallel.mp_layers import rows_held
from pycoll.parallel.mp_ops import _c_concat, _c_identity, _c_softmax_with_cross_entropy, _c_split, _mp_allreduce
from pycoll.tensor import Tensor

__all__ = ["_c_concat", "_c_identity", "_c_lookup_table", "_c_softmax_with_cross_entropy", "_c_split",
           "_mp_allreduce", "split"]


def _c_lookup_table(table: Tensor, index: Tensor, start_index: int = 0, vocab_size: int = -1,
                    name: Optional[str] = None) -> Tensor:
    """paddle's ``c_embedding``: ``table`` holds the rows ``start_index`` .. ``start_index +
    table.shape[0] - 1`` of a vocabulary; each id in ``index`` within them gets its row, any
    other id a row of zeros (the model-parallel all-reduce then sums the ranks' lookups). The
    gradient reaches only the rows looked up. ``vocab_size`` (the whole vocabulary) is not
    needed to look up, as in paddle's kernel."""
    if not isinstance(index, Tensor):
        raise TypeError(f"_c_lookup_table: index must be a Tensor of integer ids, got {type(index).__name__}")
    ids = index.array
    if ids.dtype.kind not in "iu":
        raise TypeError(f"_c_lookup_table: index must hold integer ids, got dtype {ids.dtype}")
    if isinstance(start_index, bool) or not isinstance(start_index, int):
        raise TypeError(f"_c_lookup_table: start_index must be an int, got {start_index!r}")
    return rows_held(table, ids, start_index)
