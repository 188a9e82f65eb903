"""paddle.nn.decode: step-by-step decoding with an RNN cell (paddle's dygraph path): the Decoder
interface, BeamSearchDecoder and dynamic_decode.

dynamic_decode calls decoder.initialize once and decoder.step until every sequence has finished
(or max_step_num is passed), stacks the step outputs along time and lets decoder.finalize turn
them into the result. BeamSearchDecoder keeps beam_size hypotheses per batch entry: each step
scores every (beam, token) pair by its summed log-probability, keeps the beam_size best, and a
finished beam only extends with end_token at no cost; finalize backtraces the beams with
gather_tree. The arithmetic is paddle 3.3.1's, step for step (log of softmax, the 1e9 masks, top-k),
so the same cell gives the same ids.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple, Optional, Tuple

import numpy as np

from pycoll._tensor_ops import as_tensor
from pycoll.dtypes import get_default_dtype
from pycoll.index_ops import gather_nd
from pycoll.logic_ops import logical_not, logical_or
from pycoll.math_ops import cast, log
from pycoll.search_ops import topk
from pycoll.nn._activation_functional import softmax
from pycoll.nn._temporal_functional import gather_tree
from pycoll.shape_ops import stack, tile, transpose
from pycoll.tensor import Tensor, to_tensor

__all__ = ["Decoder", "BeamSearchDecoder", "dynamic_decode"]


def _map(fn: Callable, *structures: Any) -> Any:
    """fn over the leaves of equally nested lists, tuples and named tuples (keeping the first's
    nesting and types)."""
    first = structures[0]
    if isinstance(first, tuple) and hasattr(first, "_fields"):
        return type(first)(*(_map(fn, *items) for items in zip(*structures)))
    if isinstance(first, (list, tuple)):
        return type(first)(_map(fn, *items) for items in zip(*structures))
    return fn(*structures)


def _first_leaf(structure: Any) -> Any:
    while isinstance(structure, (list, tuple)):
        structure = structure[0]
    return structure


class Decoder:
    """What dynamic_decode drives: initialize(inits) -> (inputs, states, finished);
    step(time, inputs, states, **kwargs) -> (outputs, next_states, next_inputs, finished);
    finalize(outputs, final_states, sequence_lengths) -> (final_outputs, final_states)."""

    def initialize(self, inits: Any) -> Any:
        raise NotImplementedError

    def step(self, time: Tensor, inputs: Any, states: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def finalize(self, outputs: Any, final_states: Any, sequence_lengths: Tensor) -> Any:
        raise NotImplementedError

    @property
    def tracks_own_finished(self) -> bool:
        """Whether step itself keeps finished sequences finished (and their lengths)."""
        return False


class BeamSearchDecoder(Decoder):
    """Beam search over `cell` (an RNN cell): its outputs, through output_fn, are the logits of
    the next token; the chosen tokens, through embedding_fn, its next inputs."""

    class OutputWrapper(NamedTuple):
        scores: Tensor
        predicted_ids: Tensor
        parent_ids: Tensor

    class StateWrapper(NamedTuple):
        cell_states: Any
        log_probs: Tensor
        finished: Tensor
        lengths: Tensor

    kinf = 1e9

    def __init__(self, cell: Any, start_token: int, end_token: int, beam_size: int,
                 embedding_fn: Optional[Callable[..., Any]] = None, output_fn: Optional[Callable[..., Any]] = None):
        if isinstance(beam_size, bool) or not isinstance(beam_size, int) or beam_size < 1:
            raise ValueError(f"BeamSearchDecoder: beam_size must be an int >= 1, got {beam_size!r}")
        self.cell, self.embedding_fn, self.output_fn = cell, embedding_fn, output_fn
        self.start_token, self.end_token, self.beam_size = start_token, end_token, beam_size

    @staticmethod
    def tile_beam_merge_with_batch(x: Tensor, beam_size: int) -> Tensor:
        """x [batch, ...] with each entry repeated beam_size times in a row: [batch * beam, ...]."""
        x = as_tensor(x)
        return tile(x.unsqueeze(1), [1, beam_size] + [1] * (x.ndim - 1)).reshape([-1] + x.shape[1:])

    def _split_batch_beams(self, x: Tensor) -> Tensor:
        return x.reshape([-1, self.beam_size] + x.shape[1:])

    def _merge_batch_beams(self, x: Tensor) -> Tensor:
        return x.reshape([-1] + x.shape[2:])

    def _expand_to_beam_size(self, x: Tensor) -> Tensor:
        return tile(x.unsqueeze(1), [1, self.beam_size] + [1] * (x.ndim - 1))

    def _gather(self, x: Tensor, indices: Tensor, batch_size: int) -> Tensor:
        """x[b, indices[b, k]] for every batch entry b and beam k."""
        rows = np.repeat(np.arange(batch_size)[:, None], self.beam_size, axis=1)
        coords = np.stack([rows, indices.numpy()], axis=2).astype(np.int64)
        return gather_nd(x, to_tensor(coords, place=x.place))

    def _float_dtype(self) -> str:
        return "float64" if get_default_dtype() == "float64" else "float32"

    def initialize(self, initial_cell_states: Any) -> Tuple[Any, "BeamSearchDecoder.StateWrapper", Tensor]:
        state = _first_leaf(initial_cell_states)
        if not isinstance(state, Tensor):
            raise TypeError(f"BeamSearchDecoder.initialize: initial_cell_states (dynamic_decode's inits) must be the "
                            f"cell's initial states, a Tensor or a nest of Tensors, got {initial_cell_states!r}")
        self.batch_size = state.shape[0]
        place = state.place
        init_cell_states = _map(self._expand_to_beam_size, initial_cell_states)
        init_inputs = to_tensor(np.full((self.batch_size, self.beam_size), self.start_token, np.int64), place=place)
        first = np.array([[0.0] + [-self.kinf] * (self.beam_size - 1)], np.float32).astype(self._float_dtype())
        log_probs = to_tensor(np.repeat(first, self.batch_size, axis=0), place=place)
        init_finished = to_tensor(np.zeros((self.batch_size, self.beam_size), bool), place=place)
        init_lengths = to_tensor(np.zeros((self.batch_size, self.beam_size), np.int64), place=place)
        if self.embedding_fn:
            init_inputs = self.embedding_fn(init_inputs)
        return init_inputs, self.StateWrapper(init_cell_states, log_probs, init_finished, init_lengths), init_finished

    def _mask_probs(self, probs: Tensor, finished: Tensor) -> Tensor:
        """A finished beam's scores: 0 for end_token, -1e9 for every other token."""
        done = cast(finished, probs.dtype).unsqueeze(2)
        return done * self.noend_mask_tensor - probs * (done - 1)

    def _beam_search_step(self, time: Tensor, logits: Tensor, next_cell_states: Any,
                          beam_state: "BeamSearchDecoder.StateWrapper") -> Tuple[Any, Any]:
        self.vocab_size = logits.shape[-1]
        noend = np.full(self.vocab_size, -self.kinf, np.float32)
        noend[self.end_token] = 0
        self.noend_mask_tensor = to_tensor(noend.astype(self._float_dtype()), place=logits.place)
        step_log_probs = self._mask_probs(log(softmax(logits)), beam_state.finished)
        log_probs = step_log_probs + beam_state.log_probs.unsqueeze(2)
        flat = log_probs.reshape([-1, self.beam_size * self.vocab_size])
        topk_scores, topk_indices = topk(flat, k=self.beam_size)
        beam_indices = topk_indices // self.vocab_size
        token_indices = topk_indices % self.vocab_size
        next_log_probs = self._gather(flat, topk_indices, self.batch_size)
        next_cell_states = _map(lambda x: self._gather(x, beam_indices, self.batch_size), next_cell_states)
        next_finished = self._gather(beam_state.finished, beam_indices, self.batch_size)
        next_lengths = self._gather(beam_state.lengths, beam_indices, self.batch_size)
        next_lengths = next_lengths + cast(logical_not(next_finished), next_lengths.dtype)
        next_finished = logical_or(next_finished, token_indices == self.end_token)
        return (self.OutputWrapper(topk_scores, token_indices, beam_indices),
                self.StateWrapper(next_cell_states, next_log_probs, next_finished, next_lengths))

    def step(self, time: Tensor, inputs: Any, states: "BeamSearchDecoder.StateWrapper", **kwargs: Any) -> Tuple:
        inputs = _map(self._merge_batch_beams, inputs)
        cell_states = _map(self._merge_batch_beams, states.cell_states)
        cell_outputs, next_cell_states = self.cell(inputs, cell_states, **kwargs)
        cell_outputs = _map(self._split_batch_beams, cell_outputs)
        next_cell_states = _map(self._split_batch_beams, next_cell_states)
        if self.output_fn is not None:
            cell_outputs = self.output_fn(cell_outputs)
        output, state = self._beam_search_step(time, cell_outputs, next_cell_states, states)
        sample_ids = output.predicted_ids
        next_inputs = self.embedding_fn(sample_ids) if self.embedding_fn else sample_ids
        return output, state, next_inputs, state.finished

    def finalize(self, outputs: "BeamSearchDecoder.OutputWrapper", final_states: Any,
                 sequence_lengths: Tensor) -> Tuple[Tensor, Any]:
        """The beams' token ids [time, batch, beam], backtraced through their parents."""
        return gather_tree(outputs.predicted_ids, outputs.parent_ids), final_states

    @property
    def tracks_own_finished(self) -> bool:
        return True


class _Steps:
    """One step output's values so far (a leaf for _map, as paddle's ArrayWrapper)."""

    def __init__(self, first: Tensor):
        self.items = [first]

    def append(self, value: Tensor) -> "_Steps":
        self.items.append(value)
        return self


def _keep_finished(state: Tensor, new_state: Tensor, finished: Tensor) -> Tensor:
    """new_state where a sequence runs on, state where it had finished (impute_finished)."""
    kind = state.dtype
    if kind == np.bool_:
        state, new_state = cast(state, "float32"), cast(new_state, "float32")
    mask = cast(finished, state.dtype).unsqueeze(1)
    out = state * mask - new_state * (mask - 1)
    return cast(out, kind) if kind == np.bool_ else out


def dynamic_decode(decoder: Decoder, inits: Any = None, max_step_num: Optional[int] = None,
                   output_time_major: bool = False, impute_finished: bool = False, is_test: bool = False,
                   return_length: bool = False, **kwargs: Any) -> Tuple:
    """Run `decoder` until every sequence has finished or max_step_num + 1 steps are done:
    (final_outputs, final_states) and, with return_length, the sequence lengths. Outputs are
    batch-major unless output_time_major; with impute_finished a finished sequence's states stop
    changing (decoders that do not track finishing themselves). `is_test` is accepted for paddle
    compatibility; **kwargs go to every decoder.step."""
    inputs, states, finished = decoder.initialize(inits)
    place = finished.place
    lengths = to_tensor(np.zeros(finished.shape, np.int64), place=place)
    outputs = None
    step = 0
    while not bool(finished.numpy().all()):
        time = to_tensor(np.array([step], np.int64), place=place)
        step_outputs, next_states, next_inputs, next_finished = decoder.step(time, inputs, states, **kwargs)
        if not decoder.tracks_own_finished:
            next_finished = logical_or(next_finished, finished)
            finished = next_finished  # paddle assigns it into `finished` before the two uses below, so a
            # sequence's last step is not counted in its length and its states keep their previous values
            next_lengths = lengths + cast(logical_not(finished), lengths.dtype)
            if impute_finished:
                next_states = _map(lambda old, new: _keep_finished(old, new, finished), states, next_states)
        else:
            next_lengths = getattr(next_states, "lengths", lengths)
        outputs = (_map(_Steps, step_outputs) if outputs is None
                   else _map(lambda x, seen: seen.append(x), step_outputs, outputs))
        inputs, states, finished, lengths = next_inputs, next_states, next_finished, next_lengths
        step += 1
        if max_step_num is not None and step > max_step_num:
            break
    final_outputs = _map(lambda steps: stack(steps.items, axis=0), outputs)
    final_states = states
    try:
        final_outputs, final_states = decoder.finalize(final_outputs, final_states, lengths)
    except NotImplementedError:
        pass
    if not output_time_major:
        final_outputs = _map(lambda x: transpose(x, [1, 0] + list(range(2, x.ndim))), final_outputs)
    return (final_outputs, final_states, lengths) if return_length else (final_outputs, final_states)
