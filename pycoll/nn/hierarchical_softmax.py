"""Layers over `_hierarchical_softmax` (paddle.nn names): HSigmoidLoss and
AdaptiveLogSoftmaxWithLoss, holding their weights and calling the functional forms."""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

from pycoll.index_ops import scatter
from pycoll.math_ops import argmax, cast
from pycoll.nn._activation_functional import log_softmax
from pycoll.nn._hierarchical_softmax import adaptive_log_softmax_with_loss, hsigmoid_loss
from pycoll.nn.layer import Layer
from pycoll.shape_ops import concat
from pycoll.tensor import Tensor, to_tensor

__all__ = ["HSigmoidLoss", "AdaptiveLogSoftmaxWithLoss"]


class HSigmoidLoss(Layer):
    """`hsigmoid_loss` with weight [C, feature_size] and bias [C, 1] (zeros; bias_attr=False drops
    it), C = num_classes - 1 for the default tree or num_classes (the non-leaf nodes) with
    is_custom=True, when forward takes path_table and path_code."""

    def __init__(self, feature_size: int, num_classes: int, weight_attr: Any = None, bias_attr: Any = None,
                 is_custom: bool = False, is_sparse: bool = False, name: Optional[str] = None):
        super().__init__()
        if num_classes < 2 and not is_custom:
            raise ValueError(f"HSigmoidLoss: num_classes must be >= 2 with the default tree, got {num_classes}")
        self._feature_size, self._num_classes = feature_size, num_classes
        self._is_custom, self._is_sparse = is_custom, is_sparse and is_custom  # paddle drops sparse without a tree
        nodes = num_classes if is_custom else num_classes - 1
        self.weight = self.create_parameter([nodes, feature_size], attr=weight_attr)
        self.bias = self.create_parameter([nodes, 1], attr=bias_attr, is_bias=True)

    def forward(self, input: Tensor, label: Tensor, path_table: Optional[Tensor] = None,  # noqa: A002
                path_code: Optional[Tensor] = None) -> Tensor:
        return hsigmoid_loss(input, label, self._num_classes, self.weight, self.bias, path_table, path_code,
                             self._is_sparse)


def _valid_cutoffs(cutoffs: Sequence[int], n_classes: int) -> List[int]:
    cutoffs = list(cutoffs)
    if (cutoffs != sorted(cutoffs) or not cutoffs or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
            or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
        raise ValueError(f"AdaptiveLogSoftmaxWithLoss: cutoffs should be a sequence of unique, positive integers "
                         f"sorted in an increasing order, each between 1 and n_classes-1 = {n_classes - 1}; got "
                         f"{cutoffs}")
    return [int(c) for c in cutoffs]


class AdaptiveLogSoftmaxWithLoss(Layer):
    """`adaptive_log_softmax_with_loss` with cutoffs + [n_classes]: a head_weight [in_features,
    cutoffs[0] + clusters] (and head_bias with head_bias=True), and for tail cluster i two
    projections [in_features, in_features // div_value ** (i + 1)] and [that, cluster size].

    As in paddle 3.3.1, the tail projections live in the plain list `tail_weights`: they are not
    among the layer's parameters() or state_dict (so an optimizer built from parameters() leaves
    them as initialised)."""

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int], weight_attr: Any = None,
                 bias_attr: Any = None, div_value: float = 4.0, head_bias: bool = False, name: Optional[str] = None):
        super().__init__()
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = _valid_cutoffs(cutoffs, n_classes) + [n_classes]
        self.div_value, self.is_head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head_weight = self.create_parameter([in_features, self.head_size], attr=weight_attr)
        self.head_bias = (self.create_parameter([self.head_size], attr=bias_attr, is_bias=True)
                          if head_bias else None)
        tails = []
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            tails.append([self.create_parameter([in_features, hidden], attr=weight_attr),
                          self.create_parameter([hidden, size], attr=weight_attr)])
        object.__setattr__(self, "tail_weights", tails)  # a plain attribute, as paddle's

    def forward(self, input: Tensor, label: Tensor) -> Tuple[Tensor, Tensor]:  # noqa: A002
        return adaptive_log_softmax_with_loss(input, label, self.head_weight, self.tail_weights, self.cutoffs,
                                              self.head_bias)

    def _head(self, input: Tensor) -> Tensor:  # noqa: A002
        out = input @ self.head_weight
        return out if self.head_bias is None else out + self.head_bias

    def _get_full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:  # noqa: A002
        head_logprob = log_softmax(head_output, axis=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i, (first, second) in enumerate(self.tail_weights):
            cluster = log_softmax(input @ first @ second, axis=1)
            parts.append(cluster + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return concat(parts, axis=1)

    def log_prob(self, input: Tensor) -> Tensor:  # noqa: A002
        """The log-probability of every class, [N, n_classes]."""
        return self._get_full_log_prob(input, self._head(input))

    def predict(self, input: Tensor) -> Tensor:  # noqa: A002
        """The most likely class of each row. As paddle's: float32 when every row's head argmax is
        in the shortlist (or some are not), int64 when none is."""
        head_output = self._head(input)
        output = cast(argmax(head_output, axis=1), "float32")
        outside = (output >= self.shortlist_size).numpy()
        if not outside.any():
            return output
        if outside.all():
            return argmax(self._get_full_log_prob(input, head_output), axis=1)
        rows = to_tensor(outside.nonzero()[0], place=output.place)
        best = argmax(self._get_full_log_prob(input[rows], head_output[rows]), axis=1)
        return scatter(output, rows, cast(best, "float32"))
