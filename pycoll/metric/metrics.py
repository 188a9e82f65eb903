"""paddle.metric's metrics, computed as paddle computes them (the same counts, the same float
arithmetic, so the same values).

A ``Metric`` is driven as paddle's ``Model`` drives it: ``compute`` (optional) turns a batch's
outputs into what ``update`` takes, ``update`` adds the batch to running counts (and returns the
batch's own value where paddle's does), ``accumulate`` gives the value over every batch since
``reset``, ``name`` names it. Counts are kept in host memory (NumPy), whatever device the
tensors are on.
"""
from __future__ import annotations

import abc
from typing import Any, List, Optional, Sequence, Union

import numpy as np

from pycoll import search_ops
from pycoll._tensor_ops import as_tensor
from pycoll.device import array_module
from pycoll.math_ops import argmax, cast
from pycoll.shape_ops import reshape
from pycoll.dtypes import float32
from pycoll.tensor import Tensor, wrap


def _host(value: Any, what: str) -> np.ndarray:
    """A Tensor's or array's values as a NumPy array; paddle's ValueError for anything else."""
    if isinstance(value, Tensor):
        return value.numpy()
    if isinstance(value, (np.ndarray, np.generic)):
        return np.asarray(value)
    raise ValueError(f"The '{what}' must be a numpy ndarray or Tensor.")


def _per_sample(values: np.ndarray, samples: int, what: str) -> np.ndarray:
    """The first `samples` entries of `values` ([N] or [N, 1]), one per sample."""
    flat = values[:samples].reshape(samples, -1) if values.ndim else values.reshape(1, 1)
    if flat.shape[1] != 1 or len(flat) != samples:
        raise ValueError(f"'{what}' must hold one value per sample ({samples}), got shape {list(values.shape)}")
    return flat[:, 0]


class Metric(abc.ABC):
    """The base of every metric: subclasses define reset, update, accumulate and name."""

    def __init__(self) -> None:
        pass

    @abc.abstractmethod
    def reset(self) -> None:
        """Forget every batch seen so far."""

    @abc.abstractmethod
    def update(self, *args: Any) -> Any:
        """Add a batch (what ``compute`` returned, or the batch's outputs and labels)."""

    @abc.abstractmethod
    def accumulate(self) -> Any:
        """The metric over every batch since the last reset."""

    @abc.abstractmethod
    def name(self) -> Any:
        """The metric's name (a list of names where it gives several values)."""

    def compute(self, *args: Any) -> Any:
        """What ``update`` takes, from a batch's outputs and labels: here, the arguments as given."""
        return args


class Accuracy(Metric):
    """The share of samples whose label is among the `topk` highest scores, for each k in topk.

    ``compute(pred, label)`` marks, for each sample, which of its max(topk) best-scored classes
    is its label (label: class ids, [N] or [N, 1], or one-hot [N, C]); ``update`` takes those marks.
    """

    def __init__(self, topk: Sequence[int] = (1,), name: Optional[str] = None, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.topk = topk
        self.maxk = max(topk)
        base = name or "acc"
        self._name = [f"{base}_top{k}" for k in topk] if self.maxk != 1 else [base]
        self.reset()

    def compute(self, pred: Tensor, label: Tensor, *args: Any) -> Tensor:
        """float32 marks [..., maxk]: 1 where the j-th best class of a sample is its label."""
        pred, label = as_tensor(pred), as_tensor(label)
        best = search_ops.argsort(pred, descending=True)[..., :self.maxk]
        if label.ndim == 1 or (label.ndim == 2 and label.shape[-1] == 1):
            label = reshape(label, [-1, 1])
        elif label.shape[-1] != 1:  # one-hot
            label = argmax(label, axis=-1, keepdim=True)
        return cast(best == cast(label, best.dtype), float32)

    def update(self, correct: Any, *args: Any) -> Union[float, List[float]]:
        """Add a batch's marks; returns its accuracy for each k (one with one k): NumPy floats, as
        paddle's (NaN, with NumPy's warning, for an empty batch)."""
        correct = _host(correct, "correct")
        samples = np.prod(np.asarray(correct.shape[:-1], dtype=np.int64))
        accs = []
        for i, k in enumerate(self.topk):
            hits = correct[..., :k].sum()
            accs.append(float(hits) / samples)
            self.total[i] += hits
            self.count[i] += samples
        return accs[0] if len(self.topk) == 1 else accs

    def reset(self) -> None:
        self.total = [0.0] * len(self.topk)
        self.count = [0] * len(self.topk)

    def accumulate(self) -> Union[float, List[float]]:
        res = [float(t) / c if c > 0 else 0.0 for t, c in zip(self.total, self.count)]
        return res[0] if len(self.topk) == 1 else res

    def name(self) -> List[str]:
        return self._name


class Precision(Metric):
    """True positives / predicted positives of a binary classifier: a prediction (a probability)
    counts as positive when it rounds to 1 (0.5 rounds up)."""

    def __init__(self, name: str = "precision", *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tp = 0
        self.fp = 0
        self._name = name

    def update(self, preds: Any, labels: Any) -> None:
        preds, labels = _host(preds, "preds"), _host(labels, "labels")
        samples = labels.shape[0]
        positive = _per_sample(np.floor(preds + 0.5).astype("int32"), samples, "preds") == 1
        hit = _per_sample(labels, samples, "labels") == 1
        self.tp += int(np.count_nonzero(positive & hit))
        self.fp += int(np.count_nonzero(positive & ~hit))

    def reset(self) -> None:
        self.tp = 0
        self.fp = 0

    def accumulate(self) -> float:
        ap = self.tp + self.fp
        return float(self.tp) / ap if ap != 0 else 0.0

    def name(self) -> str:
        return self._name


class Recall(Metric):
    """True positives / actual positives of a binary classifier: a prediction counts as positive
    when it rounds to 1 (to the nearest even: 0.5 is negative, as NumPy's rint and paddle's)."""

    def __init__(self, name: str = "recall", *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tp = 0
        self.fn = 0
        self._name = name

    def update(self, preds: Any, labels: Any) -> None:
        preds, labels = _host(preds, "preds"), _host(labels, "labels")
        samples = labels.shape[0]
        positive = _per_sample(np.rint(preds).astype("int32"), samples, "preds") == 1
        actual = _per_sample(labels, samples, "labels") == 1
        self.tp += int(np.count_nonzero(actual & positive))
        self.fn += int(np.count_nonzero(actual & ~positive))

    def accumulate(self) -> float:
        recall = self.tp + self.fn
        return float(self.tp) / recall if recall != 0 else 0.0

    def reset(self) -> None:
        self.tp = 0
        self.fn = 0

    def name(self) -> str:
        return self._name


class Auc(Metric):
    """The area under the ROC curve, paddle's bucketed estimate: each prediction (column 1 of
    preds [N, 2], the positive class's probability in [0, 1]) falls in bucket
    int(p * num_thresholds), and the curve runs through the buckets from the top. ``curve`` is
    kept as paddle keeps it; as in paddle, 'PR' computes the same ROC area."""

    def __init__(self, curve: str = "ROC", num_thresholds: int = 4095, name: str = "auc",
                 *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._curve = curve
        self._num_thresholds = num_thresholds
        self._name = name
        self.reset()

    def update(self, preds: Any, labels: Any) -> None:
        labels, preds = _host(labels, "labels"), _host(preds, "preds")
        samples = len(labels)
        bins = (preds[:samples, 1] * self._num_thresholds).astype(np.int64)
        if samples and (bins.min() < 0 or bins.max() > self._num_thresholds):
            raise ValueError(f"Auc: preds[:, 1] must be probabilities in [0, 1], got values from "
                             f"{preds[:samples, 1].min()} to {preds[:samples, 1].max()}")
        positive = _per_sample(labels, samples, "labels").astype(bool)
        np.add.at(self._stat_pos, bins[positive], 1.0)
        np.add.at(self._stat_neg, bins[~positive], 1.0)

    def accumulate(self) -> float:
        # from the top bucket down: the curve's points are the running totals, the area their
        # trapezoids (whole and half counts: exact in float64, in any order)
        pos = np.concatenate([[0.0], np.cumsum(self._stat_pos[::-1])])
        neg = np.concatenate([[0.0], np.cumsum(self._stat_neg[::-1])])
        auc = float(np.sum(np.abs(neg[1:] - neg[:-1]) * (pos[1:] + pos[:-1]) / 2.0))
        tot_pos, tot_neg = pos[-1], neg[-1]
        return auc / tot_pos / tot_neg if tot_pos > 0.0 and tot_neg > 0.0 else 0.0

    def reset(self) -> None:
        self._stat_pos = np.zeros(self._num_thresholds + 1)
        self._stat_neg = np.zeros(self._num_thresholds + 1)

    def name(self) -> str:
        return self._name


def accuracy(input: Tensor, label: Tensor, k: int = 1, correct: Optional[Tensor] = None,  # noqa: A002
             total: Optional[Tensor] = None, name: Optional[str] = None) -> Tensor:
    """The share of rows of `input` ([N, C] scores) whose label (`label`: [N, 1] class ids) is
    among their k highest scores, a 0-d float32 tensor. `correct` and `total`, if given, are set
    to the counts (as 0-d tensors of their own dtype)."""
    input, label = as_tensor(input), as_tensor(label)
    if label.ndim != 2:
        raise ValueError(f"accuracy: label must have 2 dimensions ([N, 1]), got shape {label.shape}")
    _, best = search_ops.topk(input, k)
    xp = array_module(best.array)
    hits = int((best.array == label.array.astype(best.dtype)).any(axis=-1).sum())
    rows = best.shape[0]
    for counter, count in ((correct, hits), (total, rows)):
        if counter is not None:
            counter._set_data(xp.asarray(count, dtype=counter.dtype))
    return wrap(xp.asarray(hits / rows if rows else 0.0, dtype=float32))
