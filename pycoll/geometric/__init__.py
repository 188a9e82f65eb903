"""paddle.geometric: segment reductions and message passing over graphs' edges."""
from pycoll.geometric.message_passing import send_u_recv, send_ue_recv, send_uv
from pycoll.geometric.segment import segment_max, segment_mean, segment_min, segment_sum

__all__ = ["segment_sum", "segment_mean", "segment_max", "segment_min", "send_u_recv", "send_ue_recv", "send_uv"]
