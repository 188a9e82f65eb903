"""paddle's ``paddle.text.viterbi_decode`` and ``ViterbiDecoder``: the highest-scoring tag sequence of a
linear-chain CRF, from per-step tag scores (``potentials``) and tag-to-tag ``transition_params``.

With ``include_bos_eos_tag`` the last tag is the start tag and the second to last the stop tag, as
in paddle's kernel: the walk starts from the start tag alone (every other tag at -10000, paddle's
constant), so step 0 adds the start tag's row of transitions, and a sequence's last step adds the
stop tag's row. Without it step 0 is the potentials alone. Steps past a sequence's length leave
its scores unchanged, and its path holds 0 there. Results take no gradient (paddle's op has none).
"""
from __future__ import annotations

from typing import Optional, Tuple

from pycoll.device import array_module
from pycoll.nn.layer import Layer
from pycoll.tensor import Tensor, wrap

__all__ = ["viterbi_decode", "ViterbiDecoder"]

_UNREACHABLE = -1e4  # paddle's score of the tags the walk may not start from


def _check(potentials: Tensor, transition_params: Tensor, lengths: Tensor, include_bos_eos_tag: bool) -> None:
    for name, value in (("potentials", potentials), ("transition_params", transition_params), ("lengths", lengths)):
        if not isinstance(value, Tensor):
            raise TypeError(f"viterbi_decode: {name} must be a Tensor, got {type(value).__name__}")
    if potentials.ndim != 3 or potentials.dtype.name not in ("float32", "float64"):
        raise ValueError(f"viterbi_decode: potentials must be a 3-D float32/float64 Tensor [batch, length, tags], "
                         f"got shape {potentials.shape} and dtype {potentials.dtype.name}")
    tags = potentials.shape[2]
    if transition_params.shape != [tags, tags] or transition_params.dtype != potentials.dtype:
        raise ValueError(f"viterbi_decode: transition_params must be [{tags}, {tags}] of dtype "
                         f"{potentials.dtype.name} (potentials' tags and dtype), got shape {transition_params.shape} "
                         f"and dtype {transition_params.dtype.name}")
    if lengths.shape != [potentials.shape[0]] or lengths.dtype.name != "int64":
        raise ValueError(f"viterbi_decode: lengths must be a 1-D int64 Tensor of one length per sequence "
                         f"([{potentials.shape[0]}]), got shape {lengths.shape} and dtype {lengths.dtype.name}")
    if not isinstance(include_bos_eos_tag, bool):
        raise TypeError(f"viterbi_decode: include_bos_eos_tag must be a bool, got {type(include_bos_eos_tag).__name__}")
    if include_bos_eos_tag and tags < 2:
        raise ValueError(f"viterbi_decode: include_bos_eos_tag needs 2 or more tags (start and stop), got {tags}")


def viterbi_decode(potentials: Tensor, transition_params: Tensor, lengths: Tensor, include_bos_eos_tag: bool = True,
                   name: Optional[str] = None) -> Tuple[Tensor, Tensor]:
    """(scores [batch], paths [batch, max(lengths)] int64) of the best tag sequences (see the module
    docstring). ``lengths`` must lie in [0, sequence_length]; an empty sequence (a batch's
    padding) gets an all-0 path, and the score of no step (0 with the BOS/EOS tags; without
    them, as paddle's, its first step's best potential)."""
    _check(potentials, transition_params, lengths, include_bos_eos_tag)
    pot, trans = potentials._array, transition_params._array
    xp = array_module(pot)
    lens = lengths._array
    batch, steps, tags = pot.shape
    if batch and (int(lens.min()) < 0 or int(lens.max()) > steps):
        raise ValueError(f"viterbi_decode: lengths must lie in [0, {steps}] (potentials' sequence length), "
                         f"got {lens.tolist()}")
    max_len = int(lens.max()) if batch else 0
    if include_bos_eos_tag:
        alpha = xp.full((batch, tags), _UNREACHABLE, dtype=pot.dtype)
        alpha[:, -1] = 0
        first = 0
    else:
        alpha = pot[:, 0].copy()
        first = 1
    stop_row = trans[-2]
    history = []  # history[t][b, tag]: the best tag at step t for `tag` at step t + 1
    for i in range(first, max_len):
        candidates = alpha[:, :, None] + trans[None]  # [batch, from, to]
        best_from = candidates.argmax(axis=1)
        stepped = candidates.max(axis=1) + pot[:, i]
        alpha = xp.where((lens > i)[:, None], stepped, alpha)
        if include_bos_eos_tag:
            alpha = alpha + (lens == i + 1)[:, None] * stop_row
        if i >= 1:
            history.append(best_from)
    scores = alpha.max(axis=1)
    last = alpha.argmax(axis=1).astype(xp.int64)
    paths = xp.zeros((batch, max_len), dtype=xp.int64)
    tag = last
    for t in range(max_len - 1, -1, -1):
        back = xp.take_along_axis(history[t], tag[:, None], axis=1)[:, 0] if t < max_len - 1 else last
        tag = xp.where(lens - 1 == t, last, xp.where(lens - 1 > t, back, 0))
        paths[:, t] = tag
    return wrap(scores), wrap(paths)


class ViterbiDecoder(Layer):
    """paddle's ``ViterbiDecoder(transitions, include_bos_eos_tag=True)``: ``viterbi_decode`` with fixed
    transitions; ``forward(potentials, lengths)`` returns (scores, paths)."""

    def __init__(self, transitions: Tensor, include_bos_eos_tag: bool = True, name: Optional[str] = None):
        super().__init__()
        self.transitions = transitions
        self.include_bos_eos_tag = include_bos_eos_tag
        self.name = name

    def forward(self, potentials: Tensor, lengths: Tensor) -> Tuple[Tensor, Tensor]:
        return viterbi_decode(potentials, self.transitions, lengths, self.include_bos_eos_tag, self.name)
