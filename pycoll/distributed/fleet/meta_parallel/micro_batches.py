"""The micro-batches of a pipeline batch, as paddle's ``train_batch`` reads ``data``: ``[inputs,
labels]``; the first stage takes inputs, the last takes labels. Each of them is a Tensor, a tuple
(or dict) of Tensors (or None), all cut along their first axis into ``accumulate_steps`` blocks
of ``micro_batch_size`` rows, or a list holding one entry per micro-batch already cut. ``data``
may instead be an iterator giving one ``[inputs, labels]`` pair per micro-batch (paddle's
``_wrap_data`` takes it as it is); its ``accumulate_steps`` pairs are taken when the batch starts,
so that a short one is refused before anything is sent. A ``PipelineDatasetPreprocessor`` is
called first and its result read as ``data``."""
from __future__ import annotations

from typing import Any

from pycoll.tensor import Tensor


class PipelineDatasetPreprocessor:
    """paddle's wrapper of a function making a batch's data (e.g. an iterator): the pipeline
    calls it when the batch starts."""

    def __init__(self, function: Any):
        self.function = function

    def __call__(self) -> Any:
        return self.function()


class MicroBatches:
    """Micro-batch ``step`` of ``data``'s inputs (``inputs(step)``) and labels (``labels(step)``),
    checked when made: a wrong batch size is refused before anything runs."""

    def __init__(self, data: Any, micro_batch_size: int, accumulate_steps: int, fn: str):
        if isinstance(data, PipelineDatasetPreprocessor):
            data = data()
        if hasattr(data, "__next__"):
            data = _pairs_of(data, accumulate_steps, fn)
        if not isinstance(data, (list, tuple)) or len(data) != 2:
            raise ValueError(f"PipelineParallel.{fn}: data must be [inputs, labels] (a list of two), "
                             f"got {_kind(data)}")
        self._size, self._steps, self._fn = micro_batch_size, accumulate_steps, fn
        self._inputs, self._labels = data
        _check(self._inputs, "data[0] (the inputs)", self)
        _check(self._labels, "data[1] (the labels)", self)

    def inputs(self, step: int) -> Any:
        return self._cut(self._inputs, step)

    def labels(self, step: int) -> Any:
        return self._cut(self._labels, step)

    def _cut(self, item: Any, step: int) -> Any:
        if isinstance(item, list):
            return _detached(item[step])
        if isinstance(item, tuple):
            return tuple(self._cut(x, step) for x in item)
        if isinstance(item, dict):
            return {k: self._cut(v, step) for k, v in item.items()}
        if item is None:
            return None
        return item[step * self._size:(step + 1) * self._size].detach()


def _check(item: Any, what: str, batches: MicroBatches) -> None:
    size, steps, fn = batches._size, batches._steps, batches._fn
    if isinstance(item, list):
        if len(item) != steps:
            raise ValueError(f"PipelineParallel.{fn}: {what} is a list of {len(item)} micro-batches; it must "
                             f"hold accumulate_steps={steps}")
        return
    if isinstance(item, (tuple, dict)):
        for x in (item.values() if isinstance(item, dict) else item):
            _check(x, what, batches)
        return
    if item is None:
        return
    if not isinstance(item, Tensor):
        raise TypeError(f"PipelineParallel.{fn}: {what} must hold pycoll Tensors, got {type(item).__name__}")
    if not item.shape or item.shape[0] != size * steps:
        raise ValueError(f"PipelineParallel.{fn}: {what} has batch size {item.shape[0] if item.shape else None} "
                         f"(shape {item.shape}); it must be micro_batch_size={size} x accumulate_steps={steps} "
                         f"= {size * steps} (pipeline_configs)")


def _pairs_of(iterator: Any, steps: int, fn: str) -> list:
    """``accumulate_steps`` ``[inputs, labels]`` pairs from ``iterator``, as ``[inputs per
    micro-batch, labels per micro-batch]``."""
    pairs = []
    for _ in range(steps):
        try:
            pair = next(iterator)
        except StopIteration:
            raise ValueError(f"PipelineParallel.{fn}: data (an iterator of micro-batches) ended after {len(pairs)}; "
                             f"accumulate_steps={steps} needs {steps} [inputs, labels] pairs") from None
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise ValueError(f"PipelineParallel.{fn}: data (an iterator of micro-batches) gave {_kind(pair)} as "
                             f"micro-batch {len(pairs)}; each must be [inputs, labels]")
        pairs.append(pair)
    return [[p[0] for p in pairs], [p[1] for p in pairs]]


def _detached(item: Any) -> Any:
    if isinstance(item, (list, tuple)):
        return type(item)(_detached(x) for x in item)
    if isinstance(item, dict):
        return {k: _detached(v) for k, v in item.items()}
    return item.detach() if isinstance(item, Tensor) else item


def _kind(data: Any) -> str:
    return f"a {type(data).__name__} of {len(data)}" if isinstance(data, (list, tuple)) else type(data).__name__
