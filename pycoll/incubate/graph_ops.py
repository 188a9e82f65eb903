"""paddle.incubate's graph operators: the deprecated ``graph_send_recv``, ``graph_reindex`` and
``graph_sample_neighbors`` (since paddle 2.4: ``pycoll.geometric``'s ``send_u_recv``,
``reindex_graph`` and ``sample_neighbors``, which they call; each call warns, as paddle's does),
and ``graph_khop_sampler``, k hops of ``sample_neighbors`` renumbered into one subgraph."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import numpy as np

from pycoll.device import array_module
from pycoll.geometric.graph_inputs import id_array
from pycoll.geometric.message_passing import send_u_recv
from pycoll.geometric.reindex import last_places, relabel, reindex_graph
from pycoll.geometric.sampling import Sampled, sample_neighbors
from pycoll.tensor import Tensor, wrap
from pycoll.utils.deprecated import deprecated


@deprecated(since="2.4.0", update_to="pycoll.geometric.send_u_recv", level=1,
            reason="graph_send_recv in pycoll.incubate will be removed in future")
def graph_send_recv(x: Tensor, src_index: Tensor, dst_index: Tensor, pool_type: str = "sum", out_size: Any = None,
                    name: Optional[str] = None) -> Tensor:
    """Rows x[src_index] gathered and reduced (sum/mean/max/min) into rows dst_index of the output."""
    if pool_type not in ("sum", "mean", "max", "min"):
        raise ValueError(f"graph_send_recv: pool_type must be 'sum', 'mean', 'max' or 'min', got {pool_type!r}")
    return send_u_recv(x, src_index, dst_index, reduce_op=pool_type, out_size=out_size)


@deprecated(since="2.4.0", update_to="pycoll.geometric.reindex_graph", level=1,
            reason="pycoll.incubate.graph_reindex will be removed in future")
def graph_reindex(x: Any, neighbors: Any, count: Any, value_buffer: Any = None, index_buffer: Any = None,
                  flag_buffer_hashtable: bool = False, name: Optional[str] = None) -> Tuple[Tensor, Tensor, Tensor]:
    """``reindex_graph`` (several edge types: neighbors and count concatenated type after type)."""
    if flag_buffer_hashtable and (value_buffer is None or index_buffer is None):
        raise ValueError("graph_reindex: value_buffer and index_buffer must be given when flag_buffer_hashtable "
                         f"is True, got {type(value_buffer).__name__} and {type(index_buffer).__name__}")
    return reindex_graph(x, neighbors, count, value_buffer, index_buffer)


@deprecated(since="2.4.0", update_to="pycoll.geometric.sample_neighbors", level=1,
            reason="pycoll.incubate.graph_sample_neighbors will be removed in future")
def graph_sample_neighbors(row: Any, colptr: Any, input_nodes: Any, eids: Any = None, perm_buffer: Any = None,
                           sample_size: int = -1, return_eids: bool = False, flag_perm_buffer: bool = False,
                           name: Optional[str] = None) -> Sampled:
    """``sample_neighbors`` (paddle's older argument order)."""
    if flag_perm_buffer and perm_buffer is None:
        raise ValueError("graph_sample_neighbors: perm_buffer must be given when flag_perm_buffer is True, got None")
    return sample_neighbors(row, colptr, input_nodes, sample_size, eids, return_eids, perm_buffer)


def graph_khop_sampler(row: Any, colptr: Any, input_nodes: Any, sample_sizes: Sequence[int], sorted_eids: Any = None,
                       return_eids: bool = False, name: Optional[str] = None) -> Tuple[Tensor, ...]:
    """Hop k samples up to ``sample_sizes[k]`` neighbors of each node of its frontier (hop 0: the
    distinct input nodes; hop k + 1: the nodes hop k sampled, less hop k's frontier), and every
    sampled edge is renumbered into one subgraph as ``reindex_graph`` numbers it, the frontiers'
    nodes first. Returns (edge_src [E, 1], edge_dst [E, 1], sample_index (the subgraph's original
    ids), reindex_nodes (the input nodes' new ids)) and, with return_eids, the edges' ids from
    ``sorted_eids``. (paddle 3.3.1's CPU kernel fails past one hop unless every frontier is as
    large as the input: "Number of sample edges mismatch"; this is the computation it sets out.)"""
    fn = "graph_khop_sampler"
    if not isinstance(sample_sizes, (list, tuple)) or not sample_sizes or not all(
            isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in sample_sizes):
        raise TypeError(f"{fn}: sample_sizes must be a non-empty list or tuple of ints, got {sample_sizes!r}")
    if return_eids and sorted_eids is None:
        raise ValueError(f"{fn}: sorted_eids must be given when return_eids is True, got None")
    x = id_array(input_nodes, fn, "input_nodes")
    if x.size == 0:
        raise ValueError(f"{fn}: input_nodes must hold at least one node, got none")
    xp = array_module(x)
    distinct, first = xp.unique(x, return_index=True)
    frontier = distinct[xp.argsort(first)]
    frontiers, hops = [], []
    for size in sample_sizes:
        if frontier.size == 0:
            break
        hop = sample_neighbors(row, colptr, frontier, int(size), sorted_eids, return_eids)
        frontiers.append(frontier)
        hops.append([t._array for t in hop])
        frontier = xp.setdiff1d(hop[0]._array, frontier)
    if hops[0][0].size == 0:
        raise ValueError(f"{fn}: none of the input nodes has a neighbor to sample")
    dst_nodes = xp.concatenate(frontiers)
    src, dst, sample_index, _ = relabel(dst_nodes, *(xp.concatenate([h[i] for h in hops]) for i in (0, 1)))
    numbered, places = last_places(dst_nodes)
    out = (wrap(src.reshape(-1, 1)), wrap(dst.reshape(-1, 1)), wrap(sample_index),
           wrap(places[xp.searchsorted(numbered, x)]))
    return out + (wrap(xp.concatenate([h[2] for h in hops])),) if return_eids else out
