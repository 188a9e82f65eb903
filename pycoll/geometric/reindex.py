"""paddle.geometric's ``reindex_graph`` and ``reindex_heter_graph``: the edges a sampler returned
(neighbors of the input nodes ``x``, ``count[i]`` of them for the i-th) renumbered into a compact
subgraph whose nodes are ``x`` first, then every neighbor not in ``x`` in order of first appearance.

As paddle's kernel: ``count`` may hold one block of ``len(x)`` counts per edge type (the heter form
concatenates them), block k's i-th count belonging to ``x[i]``; a value that appears twice in ``x``
is numbered by its last place there. Everything is array work of x's module (NumPy or CuPy).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import numpy as np

from pycoll._tensor_ops import as_tensor
from pycoll.device import array_module, to_module
from pycoll.geometric.graph_inputs import id_array
from pycoll.tensor import Tensor, wrap


def _counts(count: Any, nodes: int, edges: int, xp: Any, fn: str) -> Any:
    """count as a 1-D integer array of `xp` of k * nodes entries (k >= 1) that sum to `edges`."""
    a = to_module(as_tensor(count)._array, xp)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{fn}: count must be an integer (int32) tensor, got dtype {a.dtype}")
    a = a.reshape(-1)
    if a.size == 0 or a.size % nodes:
        raise ValueError(f"{fn}: count must hold len(x) = {nodes} counts per edge type, got {a.size}")
    if int(a.min()) < 0:
        raise ValueError(f"{fn}: count must be >= 0, got {int(a.min())}")
    if int(a.sum()) != edges:
        raise ValueError(f"{fn}: count must add up to the {edges} neighbors given, got {int(a.sum())}")
    return a


def last_places(x: Any) -> Tuple[Any, Any]:
    """(x's distinct values, sorted; the last position of each in x), in x's dtype."""
    distinct, last_from_end = array_module(x).unique(x[::-1], return_index=True)
    return distinct, (x.size - 1 - last_from_end).astype(x.dtype)


def relabel(x: Any, neighbors: Any, count: Any) -> Tuple[Any, Any, Any, Any]:
    """(reindex_src, reindex_dst, out_nodes, the new number of each entry of x) for checked arrays:
    through a table of every id where the ids are few enough for one (no sort), else by sorting."""
    xp = array_module(x)
    top = 1 + max(int(x.max()), int(neighbors.max()) if neighbors.size else 0)
    block = xp.repeat(xp.arange(count.size), count)  # each neighbor's block of count
    if xp is np and top <= max(_TABLE_IDS, 8 * (x.size + neighbors.size)):
        return _relabel_by_table(x, neighbors, block, top)
    n = x.size
    distinct, x_index = last_places(x)
    at = xp.minimum(xp.searchsorted(distinct, neighbors), distinct.size - 1)
    in_x = distinct[at] == neighbors
    fresh = neighbors[~in_x]
    values, first, inverse = xp.unique(fresh, return_index=True, return_inverse=True)
    by_appearance = xp.argsort(first)
    rank = xp.empty_like(by_appearance)
    rank[by_appearance] = xp.arange(by_appearance.size)
    src = xp.empty_like(neighbors)
    src[in_x] = x_index[at[in_x]]
    src[~in_x] = (n + rank[inverse.reshape(-1)]).astype(x.dtype)
    x_new = x_index[xp.searchsorted(distinct, x)]
    dst = x_new[block % n]
    out_nodes = xp.concatenate([x, values[by_appearance]])
    return src, dst, out_nodes, x_new


_TABLE_IDS = 1 << 22  # ids below this are numbered through a table of them all (32 MB at most)


def _relabel_by_table(x: np.ndarray, neighbors: np.ndarray, block: np.ndarray,
                      top: int) -> Tuple[Any, Any, Any, Any]:
    """``relabel`` of NumPy arrays through a table of the ids below ``top``: x's numbered by
    their last place, the new neighbors by their first appearance (``ufunc.at``, whose repeated
    indices are defined, where a plain assignment's are not)."""
    n = x.size
    number = np.full(top, -1, dtype=np.int64)
    np.maximum.at(number, x, np.arange(n))
    fresh = neighbors[number[neighbors] < 0]
    first = np.full(top, fresh.size, dtype=np.int64)
    np.minimum.at(first, fresh, np.arange(fresh.size))
    new_nodes = fresh[first[fresh] == np.arange(fresh.size)]  # each once, in order of appearance
    number[new_nodes] = np.arange(n, n + new_nodes.size)
    x_new = number[x].astype(x.dtype)
    return number[neighbors].astype(x.dtype), x_new[block % n], np.concatenate([x, new_nodes]), x_new


def _checked(x: Any, neighbors: Any, count: Any, fn: str) -> Tuple[Any, Any, Any]:
    x = id_array(x, fn, "x")
    if x.size == 0:
        raise ValueError(f"{fn}: x must hold at least one node, got none")
    neighbors = id_array(neighbors, fn, "neighbors", like=x)
    return x, neighbors, _counts(count, x.size, neighbors.size, array_module(x), fn)


def reindex_graph(x: Any, neighbors: Any, count: Any, value_buffer: Any = None, index_buffer: Any = None,
                  name: Optional[str] = None) -> Tuple[Tensor, Tensor, Tensor]:
    """(reindex_src, reindex_dst, out_nodes): edge (neighbors[j] -> its input node) renumbered,
    and the original ids of the renumbered nodes (x first). `value_buffer`/`index_buffer` are
    paddle's GPU hash-table scratch space: they speed its kernel up and change nothing here."""
    src, dst, out_nodes, _ = relabel(*_checked(x, neighbors, count, "reindex_graph"))
    return wrap(src), wrap(dst), wrap(out_nodes)


def reindex_heter_graph(x: Any, neighbors: Sequence[Any], count: Sequence[Any], value_buffer: Any = None,
                        index_buffer: Any = None, name: Optional[str] = None) -> Tuple[Tensor, Tensor, Tensor]:
    """`reindex_graph` over several edge types at once: neighbors[k] and count[k] are edge type
    k's; the edges come out type after type, numbered in one subgraph."""
    fn = "reindex_heter_graph"
    for arg, value in (("neighbors", neighbors), ("count", count)):
        if not isinstance(value, (list, tuple)) or not value:
            raise TypeError(f"{fn}: {arg} must be a non-empty list or tuple of tensors, got {type(value).__name__}")
    if len(neighbors) != len(count):
        raise ValueError(f"{fn}: neighbors and count must have one entry per edge type each, got "
                         f"{len(neighbors)} and {len(count)}")
    x = id_array(x, fn, "x")
    xp = array_module(x)
    parts = [id_array(part, fn, f"neighbors[{k}]", like=x) for k, part in enumerate(neighbors)]
    counts = [to_module(as_tensor(part)._array, xp).reshape(-1) for part in count]
    if any(c.size != x.size for c in counts):
        raise ValueError(f"{fn}: each count must hold len(x) = {x.size} counts, got {[int(c.size) for c in counts]}")
    merged = xp.concatenate(counts)
    src, dst, out_nodes, _ = relabel(*_checked(x, xp.concatenate(parts), merged, fn))
    return wrap(src), wrap(dst), wrap(out_nodes)
