"""paddle.geometric's neighbor sampling over a graph in CSC form (``row``, ``colptr``):
``sample_neighbors`` (uniform) and ``weighted_sample_neighbors`` (by edge weight), both without
replacement.

For each input node, the candidate edges are ``colptr[v]:colptr[v + 1]``. A node with at most
``sample_size`` of them (or any node, with ``sample_size=-1``) gives all its neighbors in CSC order,
as paddle's kernels do; otherwise each candidate edge draws a key and the ``sample_size`` smallest
keys win: a uniform key for the uniform sampler, an exponential race ``E / weight`` for the weighted
one (Efraimidis-Spirakis: the winners are a weighted draw without replacement; an edge of weight 0
only fills places no weighted edge is left for, as paddle's). The keys are drawn from pycoll's
generator on the host (`pycoll.random`) and moved to the graph's place; the rest is array work of
the graph's module (NumPy or CuPy).
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Tuple, Union

import numpy as np

from pycoll._fp_quiet import quiet as fp_quiet
from pycoll._tensor_ops import as_tensor
from pycoll.device import array_module, to_module
from pycoll.dtypes import is_floating
from pycoll.geometric.graph_inputs import check_in_range, id_array
from pycoll.random import get_rng
from pycoll.tensor import Tensor, wrap

Sampled = Union[Tuple[Tensor, Tensor], Tuple[Tensor, Tensor, Tensor]]
# Draws one key per candidate edge (positions into row) of the nodes that must choose: smaller wins.
KeyDraw = Callable[[Any], Any]


def _csc(row: Any, colptr: Any, input_nodes: Any, sample_size: Any, fn: str) -> Tuple[Any, Any, Any]:
    """row, colptr and input_nodes as checked 1-D arrays."""
    if isinstance(sample_size, bool) or not isinstance(sample_size, (int, np.integer)) or sample_size < -1:
        raise ValueError(f"{fn}: sample_size must be an int >= 0, or -1 for every neighbor, got {sample_size!r}")
    row = id_array(row, fn, "row")
    colptr = id_array(colptr, fn, "colptr", like=row)
    nodes = id_array(input_nodes, fn, "input_nodes", like=row)
    if colptr.size == 0:
        raise ValueError(f"{fn}: colptr must have num_nodes + 1 >= 1 entries, got 0")
    if int(colptr[0]) < 0 or int(colptr[-1]) > row.size:
        raise ValueError(f"{fn}: colptr must run from >= 0 to <= len(row) = {row.size}, "
                         f"got {int(colptr[0])} to {int(colptr[-1])}")
    falls = array_module(colptr).flatnonzero(colptr[1:] < colptr[:-1])
    if falls.size:
        i = int(falls[0])
        raise ValueError(f"{fn}: colptr must be non-decreasing, got colptr[{i}] = {int(colptr[i])} > "
                         f"colptr[{i + 1}] = {int(colptr[i + 1])}")
    check_in_range(nodes, colptr.size - 1, fn, "input_nodes")
    return row, colptr, nodes


def _eids(eids: Any, return_eids: bool, row: Any, fn: str) -> Optional[Any]:
    """The edge ids to gather (None unless return_eids), one per entry of row."""
    if not return_eids:
        return None
    if eids is None:
        raise ValueError(f"{fn}: eids must be given when return_eids is True, got None")
    eids = id_array(eids, fn, "eids", like=row)
    if eids.size != row.size:
        raise ValueError(f"{fn}: eids must have one entry per edge ({row.size}), got {eids.size}")
    return eids


def _choose(colptr: Any, nodes: Any, sample_size: int, draw: KeyDraw) -> Tuple[Any, Any]:
    """(positions into row of the chosen edges, node by node; how many each node got). A node
    that takes all its edges keeps them in CSC order; one that chooses keeps its ``take``
    smallest keys, in key order: only its edges draw keys and are sorted (by node, then key)."""
    xp = array_module(colptr)
    starts = colptr[nodes]
    degrees = colptr[nodes + 1] - starts
    take = degrees if sample_size < 0 else xp.minimum(degrees, sample_size)
    segment = xp.repeat(xp.arange(nodes.size), degrees)  # each candidate edge's node
    local = xp.arange(segment.size) - (xp.cumsum(degrees) - degrees)[segment]  # its place among them
    edges = starts[segment] + local
    out_first = xp.cumsum(take) - take  # where each node's picks begin in the output
    out = xp.empty(int(take.sum()), dtype=edges.dtype)
    keeps_all = (take == degrees)[segment]
    out[out_first[segment[keeps_all]] + local[keeps_all]] = edges[keeps_all]
    choosing = xp.flatnonzero(~keeps_all)
    if choosing.size:
        keys = draw(edges[choosing])
        with fp_quiet():  # a key of inf (weight 0) goes after every finite one of its node
            squashed = xp.where(xp.isinf(keys), 1.0, keys / (1.0 + keys))  # [0, 1): one node's span
        node = segment[choosing]
        order = xp.argsort(2.0 * node + squashed, kind="stable")  # by node, then key (ties: CSC order)
        node = node[order]
        rank = xp.arange(order.size) - xp.searchsorted(node, node, side="left")
        kept = rank < take[node]
        out[out_first[node[kept]] + rank[kept]] = edges[choosing[order[kept]]]
    return out, take


def _sample(row: Any, colptr: Any, nodes: Any, sample_size: int, eids: Optional[Any], draw: KeyDraw) -> Sampled:
    chosen, counts = _choose(colptr, nodes, int(sample_size), draw)
    out = (wrap(row[chosen]), wrap(counts.astype(np.int32)))
    return out if eids is None else out + (wrap(eids[chosen]),)


def _host_keys(host_draw: Callable[[np.random.Generator, int], np.ndarray], like: Any) -> Any:
    """``host_draw(generator, like.size)`` from pycoll's generator, in `like`'s module."""
    return to_module(host_draw(get_rng(), int(like.size)), array_module(like))


def sample_neighbors(row: Any, colptr: Any, input_nodes: Any, sample_size: int = -1, eids: Any = None,
                     return_eids: bool = False, perm_buffer: Any = None, name: Optional[str] = None) -> Sampled:
    """Up to `sample_size` neighbors of each input node, uniformly without replacement (all of
    them, in CSC order, where a node has no more, or with -1). Returns (out_neighbors, out_count)
    and, with return_eids, out_eids (``eids`` of the sampled edges); out_count is int32.
    `perm_buffer` only speeds paddle's GPU kernel up: the draw does not depend on it."""
    fn = "sample_neighbors"
    row, colptr, nodes = _csc(row, colptr, input_nodes, sample_size, fn)
    eids = _eids(eids, return_eids, row, fn)
    return _sample(row, colptr, nodes, sample_size, eids, lambda edges: _host_keys(lambda g, n: g.random(n), edges))


def weighted_sample_neighbors(row: Any, colptr: Any, edge_weight: Any, input_nodes: Any, sample_size: int = -1,
                              eids: Any = None, return_eids: bool = False, name: Optional[str] = None) -> Sampled:
    """As `sample_neighbors`, each edge's chance of being drawn proportional to its weight
    (``edge_weight``, one float >= 0 per edge, in CSC order)."""
    fn = "weighted_sample_neighbors"
    row, colptr, nodes = _csc(row, colptr, input_nodes, sample_size, fn)
    weight = as_tensor(edge_weight)._array
    if not is_floating(weight.dtype):
        raise TypeError(f"weighted_sample_neighbors: edge_weight must be a float tensor, got dtype {weight.dtype}")
    if weight.ndim == 2 and weight.shape[1] == 1:
        weight = weight[:, 0]
    if weight.ndim != 1 or weight.size != row.size:
        raise ValueError(f"weighted_sample_neighbors: edge_weight must have shape [{row.size}] or [{row.size}, 1] "
                         f"(one weight per edge), got {list(as_tensor(edge_weight).shape)}")
    if weight.size and not bool((weight >= 0).all()):
        raise ValueError("weighted_sample_neighbors: edge_weight must be >= 0 (and not NaN) everywhere, got "
                         f"{float(weight[~(weight >= 0)][0])}")
    eids = _eids(eids, return_eids, row, fn)
    xp = array_module(row)
    weight = to_module(weight, xp).astype(np.float64)

    def race(edges: Any) -> Any:
        with fp_quiet():  # weight 0: an infinite key, drawn last
            return _host_keys(lambda g, n: g.standard_exponential(n), edges) / weight[edges]
    return _sample(row, colptr, nodes, sample_size, eids, race)
