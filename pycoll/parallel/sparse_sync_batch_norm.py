"""paddle.sparse.nn.SyncBatchNorm: the synchronised batch norm (`pycoll.parallel.sync_batch_norm`)
over a COO tensor's values [nnz, C], so the statistics are those of the stored entries of every
rank of the group (pycoll.sparse.nn reaches it lazily: the tensor side never imports this layer)."""
from __future__ import annotations

from pycoll.nn._norm_functional import normalize_batch
from pycoll.nn.layer import Layer
from pycoll.parallel.sync_batch_norm import SyncBatchNorm as DenseSyncBatchNorm
from pycoll.sparse.nn.layers import BatchNorm
from pycoll.sparse.tensor import SparseTensor, sparse_arg, with_values


class SyncBatchNorm(DenseSyncBatchNorm):
    """Sparse SyncBatchNorm: x is a COO [N, (D,) H, W, C] whose one dense dim holds the channels
    (``data_format`` is kept for paddle's signature; the channels are the values' last dim)."""

    def forward(self, x: SparseTensor) -> SparseTensor:
        x = sparse_arg(x, "SyncBatchNorm", fmt="coo")
        if x.dense_dim() != 1:
            raise ValueError(f"SyncBatchNorm: x must have its channels as its one dense dim, got dense_dim "
                             f"{x.dense_dim()}")
        out = normalize_batch(x.values(), self._mean, self._variance, self.weight, self.bias, self.training,
                              self._momentum, self._epsilon, 1, self._all_reduce() if self.training else None)
        return with_values(x, out)

    @classmethod
    def convert_sync_batchnorm(cls, layer: Layer) -> Layer:
        """`layer` with every pycoll.sparse.nn.BatchNorm in it (itself included) replaced by a
        sparse SyncBatchNorm that keeps its parameters and running statistics; dense batch norms
        are left to pycoll.nn.SyncBatchNorm's conversion."""
        if isinstance(layer, BatchNorm):
            return super().convert_sync_batchnorm(layer)
        for name, sub in list(layer.named_children()):
            layer.add_sublayer(name, cls.convert_sync_batchnorm(sub))
        return layer
