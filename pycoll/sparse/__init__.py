"""paddle.sparse: sparse COO and CSR tensors (`pycoll.sparse.tensor.SparseTensor`) and their ops.

Every op computes on the stored values with pycoll's differentiable dense ops, so gradients
follow paddle's: a sparse input's gradient is sparse, of its own pattern."""
from pycoll.sparse import nn
from pycoll.sparse.binary import add, divide, is_same_shape, mask_as, multiply, subtract
from pycoll.sparse.convert import coalesce
from pycoll.sparse.creation import sparse_coo_tensor, sparse_csr_tensor
from pycoll.sparse.lowrank import pca_lowrank
from pycoll.sparse.matmul import addmm, masked_matmul, matmul, mv
from pycoll.sparse.shape import reshape, slice, sum, transpose
from pycoll.sparse.tensor import SparseTensor
from pycoll.sparse.unary import (abs, asin, asinh, atan, atanh, cast, deg2rad, expm1, isnan, log1p, neg, pow,
                                 rad2deg, sin, sinh, sqrt, square, tan, tanh)

__all__ = ["sparse_coo_tensor", "sparse_csr_tensor", "sin", "tan", "asin", "atan", "sinh", "tanh", "asinh", "atanh",
           "sqrt", "square", "log1p", "abs", "pow", "cast", "neg", "deg2rad", "rad2deg", "expm1", "mv", "matmul",
           "masked_matmul", "addmm", "add", "subtract", "transpose", "sum", "multiply", "divide", "coalesce",
           "is_same_shape", "reshape", "isnan", "slice", "mask_as", "pca_lowrank", "SparseTensor", "nn"]
