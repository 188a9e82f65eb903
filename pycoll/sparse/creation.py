"""`sparse_coo_tensor` and `sparse_csr_tensor`, paddle 3.3.1's signatures and checks.

With ``stop_gradient=False`` and values given as a Tensor that takes a gradient, the result is
made from those values in the graph, so their ``.grad`` receives its gradient (paddle's); values
that take none make the result a leaf of its own, whose ``.grad`` is sparse.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from pycoll._tensor_ops import op_output
from pycoll.dtypes import DTypeLike, convert_dtype
from pycoll.math_ops import cast
from pycoll.device import array_module
from pycoll.sparse.convert import coalesce, coo_to_csr, csr_rows, csr_to_coo
from pycoll.sparse.tensor import SparseTensor, new_coo, new_csr
from pycoll.tensor import Tensor, to_tensor, wrap
from pycoll.tensor_data import array_from


def _index_array(data: Any, place: Any, fn: str, arg: str) -> Any:
    a = array_from(data._array if isinstance(data, Tensor) else data, None, place)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{fn}: the dtype of {arg} must be 'int8', 'int16', 'int32' or 'int64', got {a.dtype}")
    return a


def _values_tensor(values: Any, dtype: DTypeLike, place: Any, stop_gradient: bool) -> Tensor:
    """The values as a Tensor in the graph the result should join (see the module docstring)."""
    if isinstance(values, SparseTensor):
        raise TypeError("values must be dense (a Tensor, an array or a list), got a sparse tensor")
    dt = convert_dtype(dtype)
    if isinstance(values, Tensor):
        v = values if dt is None or values.dtype == dt else cast(values, dt)
        if stop_gradient:
            return wrap(v._array)
        if not v.stop_gradient:
            return op_output(v._array, lambda g: (g,), v)  # a node: the values' gradient is theirs
        v = wrap(v._array)
    else:
        v = to_tensor(values, dt, place)
    v.stop_gradient = bool(stop_gradient)
    return v


def sparse_coo_tensor(indices: Any, values: Any, shape: Optional[Sequence[int]] = None, dtype: DTypeLike = None,
                      place: Any = None, stop_gradient: bool = True) -> SparseTensor:
    """A COO tensor whose entry ``indices[:, k]`` holds ``values[k]``; `shape` defaults to the
    smallest one holding every index (each sparse dim's largest index + 1, then values' dims)."""
    idx = _index_array(indices, place, "sparse_coo_tensor", "indices")
    if idx.ndim != 2:
        raise ValueError(f"sparse_coo_tensor: indices must be 2-D [sparse_dim, nnz], got shape {list(idx.shape)}")
    v = _values_tensor(values, dtype, place, stop_gradient)
    nnz = idx.shape[1]
    if v.ndim == 0 or v.shape[0] != nnz:
        raise ValueError(f"sparse_coo_tensor: the indices and values must have same number of non-zero, but get "
                         f"{nnz} and {v.shape[0] if v.ndim else 'a 0-D value'}")
    if nnz and int(idx.min()) < 0:
        raise ValueError(f"sparse_coo_tensor: indices must be >= 0, got {int(idx.min())}")
    dense = list(v.shape[1:])
    min_shape = ([int(m) + 1 for m in idx.max(axis=1)] if nnz else [0] * idx.shape[0]) + dense
    if shape is None:
        shape = min_shape
    else:
        shape = [int(s) for s in shape]
        if len(shape) != idx.shape[0] + len(dense):
            raise ValueError(f"sparse_coo_tensor: the number of dimensions(len(shape) must be sparse_dim"
                             f"({idx.shape[0]}) + dense_dim({len(dense)}), but get {len(shape)}")
        if any(s < m for s, m in zip(shape, min_shape)):
            raise ValueError(f"sparse_coo_tensor: the minimum shape required is {min_shape}, but get {shape}")
        if shape[idx.shape[0]:] != dense:
            raise ValueError(f"sparse_coo_tensor: each value has shape {dense} (values {list(v.shape)}), so shape's "
                             f"last {len(dense)} dims must be {dense}, got shape {shape}")
    return new_coo(idx, v, tuple(shape))


def sparse_csr_tensor(crows: Any, cols: Any, values: Any, shape: Optional[Sequence[int]] = None,
                      dtype: DTypeLike = None, place: Any = None, stop_gradient: bool = True) -> SparseTensor:
    """A CSR tensor (2-D, or 3-D: batches of matrices whose crows follow one another, each from 0)."""
    cr = _index_array(crows, place, "sparse_csr_tensor", "crows")
    co = _index_array(cols, place, "sparse_csr_tensor", "cols")
    v = _values_tensor(values, dtype, place, stop_gradient)
    if cr.ndim != 1 or co.ndim != 1 or v.ndim != 1:
        raise ValueError(f"sparse_csr_tensor: crows, cols and values must be 1-D, got shapes {list(cr.shape)}, "
                         f"{list(co.shape)} and {list(v.shape)}")
    if shape is None:
        batches = int((cr[:-1] > cr[1:]).sum()) + 1
        if cr.shape[0] % batches:
            raise ValueError(f"sparse_csr_tensor: the calculated original matrix batch size is {batches}, but it "
                             f"cannot correctly split the row data")
        rows = cr.shape[0] // batches - 1
        ncols = int(co.max()) + 1 if co.size else 0
        shape = [rows, ncols] if batches == 1 else [batches, rows, ncols]
    shape = [int(s) for s in shape]
    if len(shape) not in (2, 3):
        raise ValueError(f"sparse_csr_tensor: SparseCsrTensor only support 2-D or 3-D matrix, but get shape {shape}")
    batches = 1 if len(shape) == 2 else shape[0]
    if cr.shape[0] != batches * (shape[-2] + 1):
        raise ValueError(f"sparse_csr_tensor: crows must hold batches * (rows + 1) = {batches * (shape[-2] + 1)} "
                         f"entries for shape {shape}, got {cr.shape[0]}")
    if co.shape[0] != v.shape[0]:
        raise ValueError(f"sparse_csr_tensor: cols and values must have the same length, got {co.shape[0]} and "
                         f"{v.shape[0]}")
    _check_rows(cr.reshape(batches, shape[-2] + 1), co, shape[-1])
    t = new_csr(cr, co, v, tuple(shape))
    position = csr_rows(t) * shape[-1] + co  # each entry's (row over all batches, column)
    if int(array_module(position).unique(position).shape[0]) == position.shape[0]:
        return t
    # a column given twice in a row: its values add up (as to_dense adds them), once, here, so
    # that every later op sees one value per position (sin of a sum, not a sum of sines)
    coo = csr_to_coo(t)
    return coo_to_csr(coalesce(new_coo(coo._indices, coo.values(), coo._dense_shape)))


def _check_rows(crows: Any, cols: Any, ncols: int) -> None:
    """Each matrix's crows ([batches, rows + 1]) begin at 0 and never decrease, their ends add up
    to the number of values, and every column lies in the matrix: ValueError naming which not."""
    fn = "sparse_csr_tensor"
    if bool((crows[:, 0] != 0).any()):
        raise ValueError(f"{fn}: each matrix's crows must begin with 0, got {crows[:, 0].tolist()}")
    if bool((crows[:, 1:] < crows[:, :-1]).any()):
        raise ValueError(f"{fn}: crows must not decrease within a matrix, got {crows.tolist()}")
    if int(crows[:, -1].sum()) != cols.shape[0]:
        raise ValueError(f"{fn}: the last crows of the matrices ({crows[:, -1].tolist()}) must add up to the "
                         f"number of values, {cols.shape[0]}")
    if cols.shape[0] and (int(cols.min()) < 0 or int(cols.max()) >= ncols):
        raise ValueError(f"{fn}: cols must lie in [0, {ncols}) (the matrices' columns), got values in "
                         f"[{int(cols.min())}, {int(cols.max())}]")
