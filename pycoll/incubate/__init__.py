"""``paddle.incubate``'s pieces that scripts still use: the functional autograd (`autograd`), the
segment reductions (``pycoll.geometric``'s), the fused softmax helpers, ``identity_loss``, the graph
sampling and reindexing ops (`graph_ops`), the ``LookAhead`` optimizer wrapper, ``ModelAverage`` and the
fused ops and layers LLM code imports (`nn`, `nn.functional`) and ``jit.inference`` (eager, without gradients)."""
from typing import List

from pycoll.incubate import autograd
from pycoll.geometric.segment import segment_max, segment_mean, segment_min, segment_sum
from pycoll.incubate.fused_ops import identity_loss, softmax_mask_fuse, softmax_mask_fuse_upper_triangle
from pycoll.incubate.lookahead import LookAhead
from pycoll.incubate.model_average import ModelAverage
from pycoll.incubate import jit, nn, optimizer
from pycoll.incubate.graph_ops import (graph_khop_sampler, graph_reindex, graph_sample_neighbors,
                                       graph_send_recv)

__all__ = ["autograd", "segment_sum", "segment_mean", "segment_max", "segment_min", "softmax_mask_fuse",
           "softmax_mask_fuse_upper_triangle", "identity_loss", "LookAhead",
           "ModelAverage", "jit", "nn", "optimizer", "graph_send_recv", "graph_khop_sampler",
           "graph_sample_neighbors", "graph_reindex"]


def __getattr__(name: str):
    """``distributed`` (paddle's ``incubate.distributed.models.moe``) is distributed-side: imported
    on first use, never with this tensor-side package."""
    if name == "distributed":
        import pycoll.incubate.distributed as distributed
        return distributed
    raise AttributeError(f"module 'pycoll.incubate' has no attribute {name!r}")


def __dir__() -> List[str]:  # the names __getattr__ serves too
    return sorted(set(globals()) | set(__all__) | {"distributed"})
