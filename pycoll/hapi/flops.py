"""``pycoll.flops`` (paddle.flops): run a network once, in eval mode and without gradients, on a
random input of the given size and count the floating-point operations of its leaf layers by
paddle's rules (a multiply-add is one operation):

- ConvND / ConvNDTranspose: output elements × (input channels / groups × kernel elements + bias);
- Linear: output elements × input features; LeakyReLU: input elements;
- BatchNorm2D and BatchNorm: 2 × input elements; AvgPoolND: output elements;
- AdaptiveAvgPoolND: output elements × (input size // output size, multiplied over the spatial
  axes, + 1);
- ReLU, ReLU6, Dropout: 0; any other layer 0 too, with a line saying so, unless ``custom_ops``
  maps its class to a function ``fn(layer, inputs, output)`` that adds to ``layer.total_ops``.

Prints the totals (and with ``print_detail`` paddle's per-layer table) and returns the total.
While counting, each leaf layer holds ``total_ops`` / ``total_params`` as paddle's do, so custom
functions written for paddle work; they are removed afterwards, whatever happens.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Dict, List, Optional

from pycoll.autograd import no_grad
from pycoll.creation import randn, zeros
from pycoll.nn import (AdaptiveAvgPool1D, AdaptiveAvgPool2D, AdaptiveAvgPool3D, AvgPool1D, AvgPool2D,
                       AvgPool3D, BatchNorm, BatchNorm2D, Conv1D, Conv1DTranspose, Conv2D,
                       Conv2DTranspose, Conv3D, Conv3DTranspose, Dropout, Layer, LeakyReLU, Linear,
                       ReLU, ReLU6)

CountFn = Callable[[Layer, tuple, Any], None]


def _numel(shape: Any) -> int:
    return math.prod(int(s) for s in shape)


def _first_output(output: Any) -> Any:
    return output[0] if isinstance(output, (list, tuple)) else output


def count_conv(layer: Layer, inputs: tuple, output: Any) -> None:
    kernel = _numel(layer.weight.shape[2:])
    per_output = inputs[0].shape[1] / layer._groups * kernel + (0 if layer.bias is None else 1)
    layer.total_ops += abs(int(_numel(output.shape) * per_output))


def count_linear(layer: Layer, inputs: tuple, output: Any) -> None:
    layer.total_ops += abs(int(layer.weight.shape[0] * _numel(output.shape)))


def count_elements(layer: Layer, inputs: tuple, output: Any) -> None:
    layer.total_ops += _numel(inputs[0].shape)


def count_batch_norm(layer: Layer, inputs: tuple, output: Any) -> None:
    layer.total_ops += 2 * _numel(inputs[0].shape)


def count_avg_pool(layer: Layer, inputs: tuple, output: Any) -> None:
    layer.total_ops += _numel(output.shape)


def count_adaptive_avg_pool(layer: Layer, inputs: tuple, output: Any) -> None:
    window = _numel(i // o for i, o in zip(inputs[0].shape[2:], output.shape[2:]))
    layer.total_ops += abs(int((window + 1) * _numel(output.shape)))


def count_nothing(layer: Layer, inputs: tuple, output: Any) -> None:
    pass


COUNTERS: Dict[type, CountFn] = {
    **dict.fromkeys((Conv1D, Conv2D, Conv3D, Conv1DTranspose, Conv2DTranspose, Conv3DTranspose), count_conv),
    BatchNorm2D: count_batch_norm, BatchNorm: count_batch_norm,
    ReLU: count_nothing, ReLU6: count_nothing, Dropout: count_nothing,
    LeakyReLU: count_elements, Linear: count_linear,
    **dict.fromkeys((AvgPool1D, AvgPool2D, AvgPool3D), count_avg_pool),
    **dict.fromkeys((AdaptiveAvgPool1D, AdaptiveAvgPool2D, AdaptiveAvgPool3D), count_adaptive_avg_pool),
}


def flops(net: Layer, input_size: List[int], custom_ops: Optional[Dict[type, CountFn]] = None,
          print_detail: bool = False) -> int:
    """The FLOPs of one forward pass of ``net`` on an input of shape ``input_size`` (see the
    module docstring for the rules). A network that is itself a leaf layer is counted too (paddle
    counts only sublayers and answers 0 for, say, a bare Linear)."""
    if not isinstance(net, Layer):
        raise TypeError(f"flops: net must be a pycoll.nn.Layer, got {type(net).__name__} "
                        f"(pycoll has no static Program to count)")
    if not isinstance(input_size, (list, tuple)) or not all(
            isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in input_size):
        raise ValueError(f"flops: input_size must be a list of positive ints, got {input_size!r}")
    custom_ops = dict(custom_ops or {})
    bad = [key for key, fn in custom_ops.items() if not isinstance(key, type) or not callable(fn)]
    if bad:
        raise TypeError(f"flops: custom_ops must map Layer classes to functions, got {bad[0]!r}")
    leaves = [layer for layer in net.sublayers(include_self=True) if not list(layer.children())]
    rows = _count(net, leaves, list(input_size), custom_ops)
    total_ops = sum(row[4] for row in rows)
    total_params = sum(row[3] for row in rows)
    if print_detail:
        print(_table(["Layer Name", "Input Shape", "Output Shape", "Params", "Flops"], rows))
    print(f"Total Flops: {total_ops}     Total Params: {total_params}")
    return total_ops


def _count(net: Layer, leaves: List[Layer], input_size: List[int],
           custom_ops: Dict[type, CountFn]) -> List[list]:
    """One row per leaf layer that ran: name, input shape, output shape, params, FLOPs."""
    seen_types: set = set()
    ran: Dict[int, list] = {}
    handles = []

    def recorder(layer: Layer) -> CountFn:
        def record(_layer: Layer, inputs: tuple, output: Any) -> None:
            params = sum(_numel(p.shape) for p in layer.parameters())
            ran[id(layer)] = [layer.full_name(), list(inputs[0].shape),
                              list(_first_output(output).shape), params]
        return record

    for layer in leaves:
        kind = type(layer)
        count = custom_ops.get(kind) or COUNTERS.get(kind)
        if kind not in seen_types:
            print(f"Customize Function has been applied to {kind}" if kind in custom_ops
                  else f"{kind}'s flops has been counted" if count
                  else f"Cannot find suitable count function for {kind}. Treat it as zero FLOPs.")
            seen_types.add(kind)
        layer.register_buffer("total_ops", zeros([1], dtype="int64"), persistable=False)
        layer.register_buffer("total_params", zeros([1], dtype="int64"), persistable=False)
        if count is not None:
            handles.append(layer.register_forward_post_hook(count))
        handles.append(layer.register_forward_post_hook(recorder(layer)))
    training = net.training
    try:
        net.eval()
        with no_grad():
            net(randn(input_size))
        return [ran[id(layer)] + [int(layer.total_ops)] for layer in leaves if id(layer) in ran]
    finally:
        for handle in handles:
            handle.remove()
        for layer in leaves:
            for name in ("total_ops", "total_params"):
                if name in layer._buffers:
                    delattr(layer, name)
        if training:
            net.train()


def _table(heads: List[str], rows: List[list]) -> str:
    """paddle's table: centred cells between '|', ruled with '+---+' above and below the heads."""
    widths = [max(len(str(row[i])) for row in [heads] + rows) for i in range(len(heads))]
    rule = "".join("+" + "-" * (w + 2) for w in widths) + "+"

    def line(row: list) -> str:
        return "".join("|" + str(cell).center(w + 2) for cell, w in zip(row, widths)) + "|"
    return "\n".join([rule, line(heads), rule] + [line(row) for row in rows] + [rule])
