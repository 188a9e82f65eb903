"""paddle.sparse: sparse COO and CSR tensors (`pycoll.sparse.tensor.SparseTensor`) and their ops.

Every op computes on the stored values with pycoll's differentiable dense ops, so gradients
follow paddle's: a sparse input's gradient is sparse, of its own pattern."""
from pycoll.sparse.convert import coalesce
from pycoll.sparse.creation import sparse_coo_tensor, sparse_csr_tensor
from pycoll.sparse.tensor import SparseTensor
from pycoll.sparse.unary import (abs, asin, asinh, atan, atanh, cast, deg2rad, expm1, isnan, log1p, neg, pow,
                                 rad2deg, sin, sinh, sqrt, square, tan, tanh)

__all__ = ["sparse_coo_tensor", "sparse_csr_tensor", "sin", "tan", "asin", "atan", "sinh", "tanh", "asinh", "atanh",
           "sqrt", "square", "log1p", "abs", "pow", "cast", "neg", "deg2rad", "rad2deg", "expm1", "coalesce", "isnan",
           "SparseTensor"]
