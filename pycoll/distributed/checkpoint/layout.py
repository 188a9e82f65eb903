"""What a distributed checkpoint is made of: the pieces a rank holds (where each lies in its whole
tensor) and how a saved piece meets a piece to fill.

A state dict is flattened to ``{"a.b": tensor}`` (nested dicts joined with dots). A tensor's piece
is its local array and the offset of that array in the whole tensor (``local_bounds`` of its
placements); a plain tensor is a whole piece at offset 0. Of several ranks holding the same piece
(replicated along a mesh dimension) only the one at coordinate 0 there offers it.
"""
from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from pycoll.distributed.auto_parallel.dtensor import is_dist_tensor, reshard
from pycoll.distributed.auto_parallel.placements import Replicate, local_bounds
from pycoll.tensor import Tensor

Bounds = List[Tuple[int, int]]


def key_paths(state_dict: Dict[str, Any], path: Tuple[str, ...] = ()) -> Dict[str, Tuple[Tuple[str, ...], Any]]:
    """Each leaf of ``state_dict`` under its dotted key, with the keys of the nested dicts leading
    to it (paddle's ``flat_mapping``); TypeError for keys that are not str."""
    out: Dict[str, Tuple[Tuple[str, ...], Any]] = {}
    for key, value in state_dict.items():
        if not isinstance(key, str):
            raise TypeError(f"state_dict keys must be str, got {key!r}")
        if isinstance(value, dict):
            out.update(key_paths(value, path + (key,)))
        else:
            out[".".join(path + (key,))] = (path + (key,), value)
    return out


def flatten(state_dict: Dict[str, Any]) -> Dict[str, Any]:
    """``state_dict`` with nested dicts' keys joined by dots; TypeError for keys that are not str."""
    return {name: leaf for name, (_, leaf) in key_paths(state_dict).items()}


def bounds_of(tensor: Tensor) -> Optional[Bounds]:
    """[start, stop) per dimension of the piece this rank holds; None when it holds none (a rank
    outside the tensor's mesh)."""
    if not is_dist_tensor(tensor):
        return [(0, n) for n in tensor._array.shape]
    coord = tensor.process_mesh.coordinate()
    if coord is None:
        return None
    return local_bounds(tensor.shape, tensor.process_mesh, tensor.placements, coord)


def offers(tensor: Tensor) -> bool:
    """Whether this rank offers its piece for writing: always for a plain tensor (the saving
    ranks choose one holder), and for a distributed tensor the first copy along every
    replicated mesh dimension."""
    if not is_dist_tensor(tensor):
        return True
    coord = tensor.process_mesh.coordinate()
    return coord is not None and all(c == 0 for c, p in zip(coord, tensor.placements) if not p.is_shard())


def saved_form(tensor: Tensor) -> Tensor:
    """``tensor`` with Partial values summed up (collective over its mesh): a piece on disk is
    a piece of the whole value."""
    if is_dist_tensor(tensor) and any(p.is_partial() for p in tensor.placements):
        placements = [Replicate() if p.is_partial() else p for p in tensor.placements]
        return reshard(tensor, tensor.process_mesh, placements)
    return tensor


def overlaps(target: Bounds, pieces: Sequence[Dict[str, Any]]) -> Iterator[Tuple[Dict[str, Any], tuple, tuple]]:
    """Each saved piece meeting ``target`` with the index of the overlap in the target's array and
    in the piece's array."""
    for piece in pieces:
        into, out = [], []
        for (lo, hi), start, size in zip(target, piece["offsets"], piece["shape"]):
            a, b = max(lo, start), min(hi, start + size)
            if a >= b:
                break
            into.append(slice(a - lo, b - lo))
            out.append(slice(a - start, b - start))
        else:
            yield piece, tuple(into), tuple(out)
