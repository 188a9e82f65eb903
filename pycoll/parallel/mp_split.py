"""``pycoll.distributed.split``: paddle's functional model-parallel split, over the parallel layers.

Paddle's ``split`` makes its parameters when the (static) program is built, once. Eagerly, a call
runs every step, so pycoll makes the layer on the first call with a given ``name`` and reuses it
on every later call with that name; ``split_layers()`` hands out the layers (and through them the
parameters) for the optimizer, saving and loading.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Dict, Optional, Sequence

import pycoll.distributed as dist
from pycoll.nn import Layer
from pycoll.parallel.mp_layers import ColumnParallelLinear, RowParallelLinear, VocabParallelEmbedding
from pycoll.parallel.mp_ops import model_parallel_group
from pycoll.tensor import Tensor

_layers: Dict[str, Layer] = {}
_specs: Dict[str, tuple] = {}


def split(x: Any, size: Sequence[int], operation: str, axis: int = 0, num_partitions: int = 1,
          gather_out: bool = True, weight_attr: Any = None, bias_attr: Any = None,
          name: Optional[str] = None) -> Tensor:
    """Compute ``operation`` on ``x`` with its weight of shape ``size`` split over all ranks.

    - ``operation='linear'``, ``size=[in, out]``: ``axis=0`` splits the weight's rows (input
      features): ``RowParallelLinear(in, out)``; ``x`` is whole on every rank (its last axis is
      ``in``: each rank takes its block) or already this rank's block (a column split's output
      with ``gather_out=False``, paddle's pairing that skips a gather: any other last axis is
      taken as one, as paddle decides), and the result is whole (``gather_out`` must be True:
      the partial sums are always all-reduced). ``axis=1`` splits its columns (output features):
      ``ColumnParallelLinear(in, out, gather_output=gather_out)``; with ``gather_out=False`` each
      rank returns its block of the output's last axis. ``bias_attr=False`` drops the bias.
    - ``operation='embedding'``, ``size=[vocab, dim]``: splits the rows (``axis`` must be 0):
      ``VocabParallelEmbedding(vocab, dim)``; the result is whole on every rank (``gather_out``
      must be True).

    ``num_partitions`` is the number of ranks the weight is split over: the world's, or after
    ``fleet.init`` with an ``mp_degree`` its model-parallel group's (the layers' default group).

    ``name`` is how the parameters are found again: the first call with a name makes the layer,
    initialised from pycoll's seeded generator (see ``pycoll.parallel.mp_layers``), and later
    calls with that name reuse it (``weight_attr`` / ``bias_attr`` only matter on that first
    call; calling a name again with a different operation, size, axis or gather_out raises
    ValueError). Without a name (paddle's default) the call's place in the source names it
    (``"linear@train.py:42"``), so a training loop that calls ``split`` on one line reuses one
    layer. Train the parameters through ``split_layers()``::

        y = dist.split(x, [16, 32], "linear", axis=1, num_partitions=n, name="fc1")
        params = [p for layer in dist.split_layers().values() for p in layer.parameters()]
        opt = pycoll.optimizer.SGD(learning_rate=0.1, parameters=params)

    Inside an ``nn.Layer`` model prefer the layer classes themselves: the parameters that
    ``split`` makes are not registered in the calling model, so ``model.parameters()`` and
    ``DataParallel(model)`` do not see them.
    """
    if operation not in ("linear", "embedding"):
        raise ValueError(f"split: operation must be 'linear' or 'embedding', got {operation!r}")
    if (not isinstance(size, (list, tuple)) or len(size) != 2
            or not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in size)):
        raise ValueError(f"split: size must be the full weight shape, two positive ints "
                         f"([in, out] or [vocab, dim]), got {size!r}")
    valid_axes = (0, 1) if operation == "linear" else (0,)
    if axis not in valid_axes:
        raise ValueError(f"split: axis={axis!r} for operation={operation!r}; it must be one of "
                         f"{list(valid_axes)}")
    group = model_parallel_group()
    parts = dist.get_world_size(group)
    if num_partitions != parts:
        where = (f"fleet's model-parallel group ({parts} ranks, mp_degree)" if group is not None else
                 f"all {parts} ranks (to split over fewer, set fleet's mp_degree to num_partitions)")
        raise ValueError(f"split: num_partitions={num_partitions!r}, but the weight is split over "
                         f"{where}; pass num_partitions={parts}")
    if not gather_out and (operation, axis) != ("linear", 1):
        raise ValueError(f"split: gather_out=False with operation={operation!r}, axis={axis}; only "
                         f"the column split (operation='linear', axis=1) can leave its output split")
    if name is None:
        caller = sys._getframe(1)
        name = f"{operation}@{os.path.basename(caller.f_code.co_filename)}:{caller.f_lineno}"
    if not isinstance(name, str) or not name:
        raise ValueError(f"split: name must be None or a non-empty str that identifies this split's "
                         f"parameters across calls (see split_layers()), got {name!r}")
    spec = (operation, tuple(size), axis, bool(gather_out))
    layer = _layers.get(name)
    if layer is None:
        layer = _make(spec, weight_attr, bias_attr, name)
        _layers[name], _specs[name] = layer, spec
    elif _specs[name] != spec:
        raise ValueError(f"split: name={name!r} was first used with (operation, size, axis, "
                         f"gather_out)={_specs[name]}, now with {spec}; give this split its own name")
    if isinstance(layer, RowParallelLinear):  # paddle's rule: an x not of size[0] is already split
        layer.input_is_parallel = list(getattr(x, "shape", [None]))[-1:] != [size[0]]
    return layer(x)


def _make(spec: tuple, weight_attr: Any, bias_attr: Any, name: str) -> Layer:
    operation, (rows, cols), axis, gather_out = spec
    if operation == "embedding":
        return VocabParallelEmbedding(rows, cols, weight_attr=weight_attr, name=name)
    has_bias = bias_attr is not False
    if axis == 0:
        return RowParallelLinear(rows, cols, weight_attr=weight_attr, has_bias=has_bias,
                                 input_is_parallel=False, name=name, bias_attr=bias_attr)
    return ColumnParallelLinear(rows, cols, weight_attr=weight_attr, has_bias=has_bias,
                                gather_output=gather_out, name=name, bias_attr=bias_attr)


def split_layers() -> Dict[str, Layer]:
    """The layers ``split`` has made in this process, by ``name``, in the order they were made."""
    return dict(_layers)
