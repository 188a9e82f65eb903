"""What a pipeline stage sends its neighbours: its output forward (a tensor, a tuple of them, or
as in paddle a dict of tensors or of lists of tensors), the gradients of the tensors it received
backward. Each forward message starts with a small header (count, whether a dict, then each
tensor's dtype, ``stop_gradient``, shape and, for a dict, its key and place in its key's list),
so activations whose shapes change from batch to batch need nothing set; a backward message
needs none, the receiver knows the shapes of what it sent. A dict arrives as a dict with the
sender's keys in its order, a list or tuple under a key as a list (paddle's
``dict_to_tuple_helper`` / ``tuple_to_dict_helper``). Everything goes over the pipe group with pycoll's blocking
``send``/``recv``; the 1F1B order, and the interleaved schedules' programs
(``interleave_schedule``), make every send meet its receive."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

import pycoll.distributed as dist
from pycoll.dtypes import convert_dtype
from pycoll.tensor import Tensor, wrap

DTYPES = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool",
          "complex64", "complex128")
Activation = Union[Tensor, Tuple[Tensor, ...], Dict[str, Any]]


class StageLink:
    """The sends and receives of one stage (``hcg``'s) with the previous and next stage."""

    def __init__(self, hcg: Any):
        self.group = hcg.get_pipe_parallel_group()
        self.next_rank = hcg._get_p2p_next_rank()
        self.prev_rank = hcg._get_p2p_prev_rank()
        self.xp = self.group.array_module

    def send_forward(self, output: Activation) -> None:
        tensors = flatten(output, "the stage's output")
        keys = _dict_keys(output) if isinstance(output, dict) else None
        header = [len(tensors), int(keys is not None)]
        for i, t in enumerate(tensors):
            name = str(t.array.dtype)
            if name not in DTYPES:
                raise TypeError(f"PipelineParallel: a stage output of dtype {name} cannot be sent; use one of {DTYPES}")
            header += [DTYPES.index(name), int(t.stop_gradient), t.array.ndim, *t.array.shape]
            if keys is not None:
                key, place = keys[i]
                encoded = key.encode()
                header += [place, len(encoded), *encoded]
        self._send(np.asarray([len(header)], np.int64), self.next_rank)
        self._send(np.asarray(header, np.int64), self.next_rank)
        for t in tensors:
            self._send(t.array, self.next_rank)

    def recv_forward(self) -> Activation:
        """The previous stage's output as new leaf tensors (a tuple where it sent several, a dict
        where it sent one), each with the sender's ``stop_gradient``."""
        size = self._recv(np.empty(1, np.int64), self.prev_rank)
        header = [int(v) for v in self._recv(np.empty(int(size[0]), np.int64), self.prev_rank)]
        count, is_dict, at = header[0], bool(header[1]), 2
        received: List[Tensor] = []
        as_dict: Dict[str, Any] = {}
        for _ in range(count):
            dtype, stop, ndim = convert_dtype(DTYPES[header[at]]), bool(header[at + 1]), header[at + 2]
            shape = tuple(header[at + 3:at + 3 + ndim])
            at += 3 + ndim
            t = wrap(self._recv(self.xp.empty(shape, dtype), self.prev_rank))
            t.stop_gradient = stop
            received.append(t)
            if is_dict:
                place, length = header[at], header[at + 1]
                key = bytes(header[at + 2:at + 2 + length]).decode()
                at += 2 + length
                if place < 0:
                    as_dict[key] = t
                else:
                    as_dict.setdefault(key, []).append(t)
        if is_dict:
            return as_dict
        return received[0] if count == 1 else tuple(received)

    def send_backward(self, grads: Sequence[Any]) -> None:
        """The gradients of the received tensors that need one, in their order."""
        for g in grads:
            self._send(g, self.prev_rank)

    def recv_backward(self, output: Activation) -> List[Any]:
        """The gradients of ``output``'s tensors that need one, from the next stage."""
        return [self._recv(self.xp.empty(t.array.shape, t.array.dtype), self.next_rank)
                for t in flatten(output, "the stage's output") if not t.stop_gradient]

    def _send(self, array: Any, peer: int) -> None:
        dist.send(self.xp.ascontiguousarray(self.xp.asarray(array)), dst=peer, group=self.group)

    def _recv(self, array: Any, peer: int) -> Any:
        out = self.xp.asarray(array)
        dist.recv(out, src=peer, group=self.group)
        return out


def flatten(value: Any, what: str) -> Tuple[Tensor, ...]:
    """The tensors of an activation in the order they travel: a tuple's in order, a dict's by
    key in its order (a key's list or tuple in its order)."""
    if isinstance(value, dict):
        items: List[Any] = []
        for v in value.values():
            items.extend(v if isinstance(v, (list, tuple)) else (v,))
    else:
        items = list(value) if isinstance(value, (tuple, list)) else [value]
    for t in items:
        if not isinstance(t, Tensor):
            raise TypeError(f"PipelineParallel: {what} must be a Tensor, a tuple of Tensors or a dict of Tensors "
                            f"(or of lists of them), got {type(t).__name__} in it")
    return tuple(items)


def _dict_keys(value: Dict[Any, Any]) -> List[Tuple[str, int]]:
    """Each tensor's key and place in its key's list (-1: the key holds the tensor itself)."""
    keys: List[Tuple[str, int]] = []
    for key, v in value.items():
        if not isinstance(key, str):
            raise TypeError(f"PipelineParallel: a stage output dict's keys must be str, got {key!r}")
        keys.extend([(key, i) for i in range(len(v))] if isinstance(v, (list, tuple)) else [(key, -1)])
    return keys


def grads_of(received: Optional[Activation]) -> List[Any]:
    """The gradients of the received tensors that need one (zeros where backward gave none)."""
    if received is None:
        return []
    return [t.grad.array if t.grad is not None else t.array * 0
            for t in flatten(received, "the received input") if not t.stop_gradient]
