"""paddle's Tensor methods that convert between dense and sparse storage: ``to_sparse_coo``,
``to_sparse_csr`` and ``to_dense`` (differentiable, see `pycoll.sparse.convert`), and a COO
tensor's ``coalesce()`` (`pycoll.sparse.coalesce`). A sparse tensor's other methods
(``indices()``, ``values()``, ``crows()``, ``cols()``, ``nnz()``, ``is_sparse_coo()``...) are
`pycoll.sparse.tensor.SparseTensor`'s."""
from __future__ import annotations

from pycoll.sparse import convert
from pycoll.sparse.tensor import SparseTensor
from pycoll.tensor import Tensor


def to_sparse_coo(x: Tensor, sparse_dim: int) -> SparseTensor:
    """x as a COO tensor over its first `sparse_dim` dims (a COO x itself, a CSR x converted)."""
    return convert.dense_to_coo(x, sparse_dim)


def to_sparse_csr(x: Tensor) -> SparseTensor:
    """x (2-D or 3-D) as a CSR tensor (a CSR x itself)."""
    return convert.to_csr(x)


def to_dense(x: Tensor) -> Tensor:
    """The dense tensor of a sparse x; a dense x itself."""
    return convert.to_dense(x)


Tensor.to_sparse_coo, Tensor.to_sparse_csr, Tensor.to_dense = to_sparse_coo, to_sparse_csr, to_dense
SparseTensor.coalesce = convert.coalesce
