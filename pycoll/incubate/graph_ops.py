"""paddle.incubate's deprecated graph operator ``graph_send_recv`` (since paddle 2.4:
``pycoll.geometric.send_u_recv``, which it calls; ``pool_type`` is send_u_recv's reduce_op).
Each call warns, as paddle's does."""
from __future__ import annotations

from typing import Any, Optional

from pycoll.geometric.message_passing import send_u_recv
from pycoll.tensor import Tensor
from pycoll.utils.deprecated import deprecated


@deprecated(since="2.4.0", update_to="pycoll.geometric.send_u_recv", level=1,
            reason="graph_send_recv in pycoll.incubate will be removed in future")
def graph_send_recv(x: Tensor, src_index: Tensor, dst_index: Tensor, pool_type: str = "sum", out_size: Any = None,
                    name: Optional[str] = None) -> Tensor:
    """Rows x[src_index] gathered and reduced (sum/mean/max/min) into rows dst_index of the output."""
    if pool_type not in ("sum", "mean", "max", "min"):
        raise ValueError(f"graph_send_recv: pool_type must be 'sum', 'mean', 'max' or 'min', got {pool_type!r}")
    return send_u_recv(x, src_index, dst_index, reduce_op=pool_type, out_size=out_size)
