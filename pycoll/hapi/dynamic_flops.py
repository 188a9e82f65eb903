"""``paddle.hapi.dynamic_flops``'s names over ``pycoll.hapi.flops``: ``flops``, ``dynamic_flops``,
paddle's counter functions under paddle's names and ``register_hooks`` (layer class -> counter)."""
from __future__ import annotations

from typing import Any, Dict, Optional

from pycoll.hapi.flops import COUNTERS as register_hooks
from pycoll.hapi.flops import CountFn, flops
from pycoll.hapi.flops import count_adaptive_avg_pool as count_adap_avgpool
from pycoll.hapi.flops import count_avg_pool as count_avgpool
from pycoll.hapi.flops import count_batch_norm as count_bn
from pycoll.hapi.flops import count_conv as count_convNd
from pycoll.hapi.flops import count_elements as count_leaky_relu
from pycoll.hapi.flops import count_linear
from pycoll.hapi.flops import count_nothing as count_zero_ops
from pycoll.nn import Layer

__all__ = ["count_adap_avgpool", "count_avgpool", "count_bn", "count_convNd", "count_leaky_relu", "count_linear",
           "count_zero_ops", "dynamic_flops", "flops", "register_hooks"]


def dynamic_flops(model: Layer, inputs: Any, custom_ops: Optional[Dict[type, CountFn]] = None,
                  print_detail: bool = False) -> int:
    """The FLOPs of ``model`` run on a tensor shaped as ``inputs`` (paddle's entry behind
    ``flops``). The built-in counters depend on shapes only; the count runs ``pycoll.flops`` on
    a random input of that shape."""
    shape = getattr(inputs, "shape", None)
    if shape is None:
        raise TypeError(f"dynamic_flops: inputs must be a tensor, got {type(inputs).__name__}")
    return flops(model, [int(s) for s in shape], custom_ops, print_detail)
