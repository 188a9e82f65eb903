"""paddle.geometric: segment reductions and message passing over graphs' edges, neighbor sampling
and the reindexing of sampled subgraphs."""
from pycoll.geometric.message_passing import send_u_recv, send_ue_recv, send_uv
from pycoll.geometric.reindex import reindex_graph, reindex_heter_graph
from pycoll.geometric.sampling import sample_neighbors, weighted_sample_neighbors
from pycoll.geometric.segment import segment_max, segment_mean, segment_min, segment_sum

__all__ = ["segment_sum", "segment_mean", "segment_max", "segment_min", "send_u_recv", "send_ue_recv", "send_uv",
           "reindex_graph", "reindex_heter_graph", "sample_neighbors", "weighted_sample_neighbors"]
