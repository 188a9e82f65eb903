"""``pycoll.summary`` (paddle.summary): run a network once on random inputs of the given sizes
and print paddle's table of its layers (input and output shapes, parameter counts) with the
totals and size estimates; returns ``{'total_params': N, 'trainable_params': M}`` (np.int64, as paddle's).

Printing the table to stdout is what this function is for (as paddle's), so it prints rather than
log. Layers are named ``<Class>-<k>``, k from the layer's full name (``linear_0`` is ``Linear-1``),
as paddle names them; containers (``Sequential``, ``LayerList``) and the network itself, when it
has sublayers, have no row of their own.
"""
from __future__ import annotations

import numbers
import sys
from typing import Any, Dict, List, Sequence, Tuple, Union

import numpy as np

from pycoll.autograd import no_grad
from pycoll.creation import rand
from pycoll.math_ops import cast
from pycoll.nn import Layer, LayerList, Sequential
from pycoll.nn.rnn import RNNBase
from pycoll.static import InputSpec
from pycoll.tensor import Tensor

Shape = Tuple[int, ...]
MB = 1024 ** 2.0


def _is_shape(value: Any) -> bool:
    """A flat list or tuple (of numbers, None or -1): one input's shape."""
    return isinstance(value, (list, tuple)) and not any(isinstance(v, (list, tuple)) for v in value)


def _shapes_of(input: Any) -> Any:  # noqa: A002 - paddle's argument name
    if isinstance(input, Tensor):
        return tuple(input.shape)
    if isinstance(input, (list, tuple)):
        return [tuple(x.shape) for x in input]
    if isinstance(input, dict):
        return [tuple(v.shape) for v in input.values()]
    raise ValueError(f"input is a {type(input).__name__}, not a Tensor, list, tuple or dict; unable to determine "
                     f"input_size, please give input_size")


def _as_sizes(input_size: Any) -> Any:
    """``input_size`` in one form: a shape tuple, or a list of them (ints and InputSpecs read)."""
    if isinstance(input_size, InputSpec):
        return tuple(input_size.shape)
    if isinstance(input_size, int) and not isinstance(input_size, bool):
        return (input_size,)
    if isinstance(input_size, list):
        sizes = []
        for item in input_size:
            if isinstance(item, int) and not isinstance(item, bool):
                item = (item,)
            if not isinstance(item, (tuple, InputSpec)):
                raise TypeError(f"input_size is a list, so each item must be a tuple or InputSpec, got "
                                f"{type(item).__name__}")
            sizes.append(tuple(item.shape) if isinstance(item, InputSpec) else item)
        return sizes
    if isinstance(input_size, tuple):
        return input_size
    raise TypeError(f"input_size must be a tuple, an int, an InputSpec or a list of them, got "
                    f"{type(input_size).__name__}")


def _checked(sizes: Any) -> Any:
    """Every shape with its batch dimension (None or -1, at most one per shape) set to 1."""
    if not _is_shape(sizes):
        return [_checked(s) for s in sizes]
    unknown = [d for d in sizes if d is None or d == -1]
    if len(unknown) > 1:
        raise ValueError(f"input_size {sizes}: only the dim of batch_size can be None or -1.")
    for d in sizes:
        if isinstance(d, numbers.Number) and d != -1 and d <= 0:
            raise ValueError(f"Expected element in input size greater than zero, but got {d}")
    return tuple(1 if d is None or d == -1 else d for d in sizes)


def summary(net: Layer, input_size: Any = None, dtypes: Union[str, Sequence[Any], None] = None,
            input: Any = None) -> Dict[str, np.int64]:  # noqa: A002 - paddle's argument name
    """Print the table of ``net`` run on inputs of ``input_size`` (a shape, an ``InputSpec``, or a
    list of them for several inputs; the batch dimension may be None or -1) and ``dtypes`` (default
    float32), or on ``input`` itself when given. The network runs in eval mode, without gradients."""
    if not isinstance(net, Layer):
        raise TypeError(f"net must be a pycoll.nn.Layer, got {type(net).__name__}")
    if input_size is None and input is None:
        raise ValueError("input_size and input cannot be None at the same time")
    sizes = _checked(_as_sizes(_shapes_of(input) if input_size is None else input_size))
    training = net.training
    net.eval()
    try:
        text, totals = summary_string(net, sizes, dtypes, input)
    finally:
        if training:
            net.train()
    sys.stdout.write(text + "\n")
    return totals


def _tensor_shapes(x: Any) -> Any:
    if isinstance(x, Tensor):
        return list(x.shape)
    if isinstance(x, (list, tuple)):
        return [_tensor_shapes(v) for v in x]
    return None


def _output_shapes(x: Any) -> Any:
    if isinstance(x, (list, tuple)):
        return [_output_shapes(v) for v in x]
    return list(x.shape) if hasattr(x, "shape") else []


def _elements(shape: Any) -> int:
    """How many values outputs of these shapes hold (several outputs: the sum)."""
    if all(isinstance(d, numbers.Number) for d in shape):
        count = 1
        for d in shape:
            count *= d
        return count
    return sum(_elements(s) for s in shape)


def _input_mb(sizes: Any) -> float:
    if _is_shape(sizes):
        return abs(_elements(sizes) * 4.0 / MB)
    return sum(_input_mb(s) for s in sizes)


def _dtypes_for(sizes: Any, dtype: Any) -> List[Any]:
    if _is_shape(sizes):
        return [dtype or "float32"]
    return [_dtypes_for(s, dtype) for s in sizes]


def _random_inputs(sizes: Any, dtypes: Any) -> Any:
    if _is_shape(sizes):
        return cast(rand(list(sizes)), dtypes[0] if isinstance(dtypes, (list, tuple)) else dtypes)
    return [_random_inputs(s, d) for s, d in zip(sizes, dtypes)]


def _rows(model: Layer, sizes: Any, dtypes: Any, input: Any) -> Dict[str, Dict[str, Any]]:  # noqa: A002
    """One record per layer that ran (name -> input_shape, output_shape, nb_params, trainable_params)."""
    rows: Dict[str, Dict[str, Any]] = {}
    depth = len(model.sublayers())

    def hook(layer: Layer, inputs: Any, outputs: Any) -> None:
        try:
            index = int(layer.full_name().split("_")[-1])
        except ValueError:
            index = len(rows)
        params = [p for p in layer._parameters.values() if p is not None]
        rows[f"{type(layer).__name__}-{index + 1}"] = {
            "input_shape": _tensor_shapes(inputs), "output_shape": _output_shapes(outputs),
            "nb_params": sum(_elements(p.shape) for p in params),
            "trainable_params": sum(_elements(p.shape) for p in params
                                    if getattr(p, "trainable", True) and not p.stop_gradient)}

    handles = []
    # paddle runs SimpleRNN/LSTM/GRU as one fused op: a row of their own (although they are
    # LayerLists), none for their cells
    fused = [layer for layer in model.sublayers(include_self=True) if isinstance(layer, RNNBase)]
    inside_fused = {id(sub) for layer in fused for sub in layer.sublayers()}
    for layer in model.sublayers(include_self=True):
        if id(layer) in inside_fused:
            continue
        if (isinstance(layer, RNNBase) or not isinstance(layer, (Sequential, LayerList))) and \
                (layer is not model or depth < 1 or isinstance(layer, RNNBase)):
            handles.append(layer.register_forward_post_hook(hook))
    try:
        with no_grad():
            if input is not None:
                model(input)
            else:
                model(*_random_inputs(sizes, dtypes))
    finally:
        for handle in handles:
            handle.remove()
    return rows


def summary_string(model: Layer, input_size: Any = None, dtypes: Any = None,
                   input: Any = None) -> Tuple[str, Dict[str, np.int64]]:  # noqa: A002
    """The table ``summary`` prints, and its totals."""
    if not isinstance(dtypes, (list, tuple)):
        dtypes = _dtypes_for(input_size, dtypes)
    if isinstance(input_size, tuple):
        input_size = [input_size]
    rows = _rows(model, input_size, dtypes, input)
    widths = {"layer": 15, "input": 20, "output": 20, "params": 15}
    for name, row in rows.items():
        widths["layer"] = max(widths["layer"], len(name))
        widths["input"] = max(widths["input"], len(str(row["input_shape"])))
        widths["output"] = max(widths["output"], len(str(row["output_shape"])))
        widths["params"] = max(widths["params"], len(str(row["nb_params"])))
    table_width = max(75, sum(widths.values()) + 5)

    def line(layer: str, inputs: str, outputs: str, params: str) -> str:
        return (f"{layer:^{widths['layer']}} {inputs:^{widths['input']}} {outputs:^{widths['output']}} "
                f"{params:^{widths['params']}}\n")

    text = "-" * table_width + "\n" + line("Layer (type)", "Input Shape", "Output Shape", "Param #")
    text += "=" * table_width + "\n"
    total = trainable = outputs = 0
    for name, row in rows.items():
        text += line(name, str(row["input_shape"]), str(row["output_shape"]), f"{row['nb_params']:,}")
        total += row["nb_params"]
        trainable += row["trainable_params"]
        outputs += _elements(row["output_shape"])
    input_mb = _input_mb(input_size)
    output_mb = abs(2.0 * outputs * 4.0 / MB)  # x2 for gradients
    params_mb = abs(total * 4.0 / MB)
    text += "=" * table_width + "\n"
    text += f"Total params: {total:,}\nTrainable params: {trainable:,}\nNon-trainable params: {total - trainable:,}\n"
    text += "-" * table_width + "\n"
    total_mb = input_mb + output_mb + params_mb
    text += (f"Input size (MB): {input_mb:0.2f}\nForward/backward pass size (MB): {output_mb:0.2f}\n"
             f"Params size (MB): {params_mb:0.2f}\nEstimated Total Size (MB): {total_mb:0.2f}\n")
    text += "-" * table_width + "\n"
    return text, {"total_params": np.int64(total), "trainable_params": np.int64(trainable)}  # as paddle's
