"""paddle.geometric: segment reductions and message passing over graphs' edges, neighbor sampling
and the reindexing of sampled subgraphs (``paddle.geometric.math`` names the segment reductions)."""
import sys
from typing import Any

from pycoll._module_paths import install_paths
from pycoll.geometric.message_passing import send_u_recv, send_ue_recv, send_uv
from pycoll.geometric.reindex import reindex_graph, reindex_heter_graph
from pycoll.geometric.sampling import sample_neighbors, weighted_sample_neighbors
from pycoll.geometric.segment import segment_max, segment_mean, segment_min, segment_sum

__all__ = ["segment_sum", "segment_mean", "segment_max", "segment_min", "send_u_recv", "send_ue_recv", "send_uv",
           "reindex_graph", "reindex_heter_graph", "sample_neighbors", "weighted_sample_neighbors"]
_MATH = ("segment_sum", "segment_mean", "segment_max", "segment_min")  # paddle.geometric.math's


def _math(module: str, name: str) -> Any:
    if name in _MATH:
        return globals()[name]
    raise AttributeError(f"module {module!r} has no attribute {name!r}")


install_paths(sys.modules[__name__], ["math"], _math, "the segment reductions of pycoll.geometric")
