"""paddle's distributed checkpoint: ``save_state_dict``, ``load_state_dict`` and
``load_merged_state_dict``.

A checkpoint is a folder: ``{rank}_{id}.distcp`` holds the pieces that rank wrote (``layout.py``)
and ``{id}.metadata`` (written by the coordinator) every tensor's whole shape and dtype and where
each piece lies and in which file. Both are ``pycoll.save`` files (atomic). ``id`` (paddle's
``unique_id``) counts the checkpoints saved in one folder: by default the next free one when
saving, the newest when loading. Loading reads, for each tensor to fill, the saved pieces that
meet the piece this rank holds, so a checkpoint loads into other placements, another mesh or
another number of ranks, or whole into one process. Every rank must see the folder (one
machine, or a shared file system).
"""
from __future__ import annotations

import os
import re
from typing import Any, Dict, List, Optional

import numpy as np

import pycoll.distributed as dist
from pycoll.device import move, place_of
from pycoll.distributed.auto_parallel.dtensor import is_dist_tensor
from pycoll.distributed.checkpoint.layout import bounds_of, flatten, overlaps, saved_form, writes
from pycoll.serialization import load, save
from pycoll.tensor import Tensor, to_tensor

_METADATA = re.compile(r"^(\d+)\.metadata$")


def _ids(path: str) -> List[int]:
    found = [_METADATA.match(name) for name in (os.listdir(path) if os.path.isdir(path) else [])]
    return sorted(int(m.group(1)) for m in found if m)


def _refuse(name: str, value: Any, allowed: Any) -> None:
    if value != allowed:
        raise NotImplementedError(f"{name}={value!r} is not supported by pycoll's checkpoints")


def save_state_dict(state_dict: Dict[str, Any], path: str, process_group: Optional[dist.Group] = None,
                    coordinator_rank: int = 0, unique_id: Optional[int] = None, async_save: bool = False,
                    safetensors: bool = False, save_replicas: bool = False) -> None:
    """Save ``state_dict`` (Tensors and distributed tensors, nested dicts allowed) into folder
    ``path``; collective over ``process_group`` (default: every rank), every rank with the same
    keys. ``async_save`` is accepted: the save is complete when this returns. ``save_replicas``
    is accepted too: pycoll writes each replicated piece once either way, and a checkpoint loads
    the same whichever way paddle would have written it."""
    _refuse("safetensors", safetensors, False)
    if not isinstance(save_replicas, bool):
        raise TypeError(f"save_state_dict: save_replicas must be a bool, got {type(save_replicas).__name__}")
    if not isinstance(state_dict, dict):
        raise TypeError(f"save_state_dict: state_dict must be a dict, got {type(state_dict).__name__}")
    dist.init_parallel_env()
    group = process_group or dist.get_group()
    flat = flatten(state_dict)
    bad = [k for k, v in flat.items() if not isinstance(v, Tensor)]
    if bad:
        raise TypeError(f"save_state_dict: state_dict values must be Tensors; {bad[:5]} are not")
    path = os.fspath(path)
    if dist.get_rank() == coordinator_rank:
        os.makedirs(path, exist_ok=True)
    ids: List[Any] = []
    dist.all_gather_object(ids, _ids(path) if dist.get_rank() == coordinator_rank else None, group=group)
    taken = next(i for i in ids if i is not None)
    uid = (taken[-1] + 1 if taken else 0) if unique_id is None else int(unique_id)
    pieces, saved, shapes = [], [], {}
    me = dist.get_rank()
    for key in sorted(flat):
        tensor = saved_form(flat[key])
        shapes[key] = {"shape": list(tensor.shape), "dtype": str(tensor.dtype)}
        bounds = bounds_of(tensor)
        if bounds is None or not writes(tensor, me == coordinator_rank):
            continue
        array = tensor._array
        host = np.array(array if isinstance(array, np.ndarray) else array.get(), order="C")  # 0-d stays 0-d
        where = {"key": key, "offsets": [lo for lo, _ in bounds], "shape": list(host.shape),
                 "file": f"{me}_{uid}.distcp"}
        pieces.append(where)
        saved.append(host)
    if pieces:
        save({"pieces": pieces, "values": saved}, os.path.join(path, f"{me}_{uid}.distcp"))
    everyone: List[Any] = []
    dist.all_gather_object(everyone, pieces, group=group)
    if me == coordinator_rank:
        save({"tensors": shapes, "pieces": [p for ps in everyone for p in ps]}, os.path.join(path, f"{uid}.metadata"))
    dist.barrier(group=group)


def _metadata(path: str, unique_id: Optional[int], fn: str) -> Dict[str, Any]:
    ids = _ids(os.fspath(path))
    if not ids:
        raise FileNotFoundError(f"{fn}: no checkpoint in {os.fspath(path)!r} (no *.metadata file)")
    uid = ids[-1] if unique_id is None else int(unique_id)
    if uid not in ids:
        raise ValueError(f"{fn}: unique_id={unique_id} is not among the checkpoints in {path!r}: {ids}")
    return load(os.path.join(path, f"{uid}.metadata"), return_numpy=True)


class _Files:
    """The pieces of the data files read so far (each file read once)."""

    def __init__(self, path: str):
        self.path, self._read = path, {}

    def value(self, piece: Dict[str, Any]) -> np.ndarray:
        name = piece["file"]
        if name not in self._read:
            data = load(os.path.join(self.path, name), return_numpy=True)
            self._read[name] = {(p["key"], tuple(p["offsets"])): v for p, v in zip(data["pieces"], data["values"])}
        return self._read[name][(piece["key"], tuple(piece["offsets"]))]


def load_state_dict(state_dict: Dict[str, Any], path: str, process_group: Optional[dist.Group] = None,
                    coordinator_rank: int = 0, unique_id: Optional[int] = None, offload: bool = False,
                    mw_name_compatibility: bool = True, aoa_config: Optional[Dict[str, List[str]]] = None,
                    safetensors: bool = False) -> None:
    """Fill every tensor of ``state_dict`` (in place: this rank's piece of each) from the
    checkpoint in folder ``path``, whatever placements, mesh or number of ranks saved it.
    ValueError naming the keys the checkpoint lacks or whose whole shape differs. ``aoa_config``
    (paddle's renaming and reshaping of saved tensors on load) is accepted as None only."""
    _refuse("aoa_config", aoa_config, None)
    _refuse("safetensors", safetensors, False)
    if not isinstance(state_dict, dict):
        raise TypeError(f"load_state_dict: state_dict must be a dict, got {type(state_dict).__name__}")
    meta = _metadata(path, unique_id, "load_state_dict")
    flat = flatten(state_dict)
    missing = sorted(k for k in flat if k not in meta["tensors"])
    if missing:
        raise ValueError(f"load_state_dict: the checkpoint in {path!r} has no {missing[:5]}")
    for key, tensor in flat.items():
        if list(tensor.shape) != list(meta["tensors"][key]["shape"]):
            raise ValueError(f"load_state_dict: {key!r} has shape {list(tensor.shape)} here, "
                             f"{meta['tensors'][key]['shape']} in the checkpoint")
        if is_dist_tensor(tensor) and any(p.is_partial() for p in tensor.placements):
            raise ValueError(f"load_state_dict: {key!r} is Partial; load into Replicate or Shard placements")
    files = _Files(os.fspath(path))
    by_key = _pieces_by_key(meta)
    for key, tensor in flat.items():
        bounds = bounds_of(tensor)
        if bounds is None:
            continue
        tensor._array[...] = move(_assemble(key, bounds, tensor._array.dtype, by_key.get(key, []), files),
                                  place_of(tensor._array))


def load_merged_state_dict(path: str, prefix: Optional[str] = None, unique_id: Optional[int] = None,
                           offload: bool = False, safetensors: bool = False) -> Dict[str, Tensor]:
    """The checkpoint in folder ``path`` as whole Tensors (no collective: one process may read
    what many saved), keyed as saved (flattened); only keys starting with ``prefix`` if given."""
    _refuse("safetensors", safetensors, False)
    meta = _metadata(path, unique_id, "load_merged_state_dict")
    files = _Files(os.fspath(path))
    by_key = _pieces_by_key(meta)
    out: Dict[str, Tensor] = {}
    for key, info in meta["tensors"].items():
        if prefix is not None and not key.startswith(prefix):
            continue
        out[key] = to_tensor(_assemble(key, [(0, n) for n in info["shape"]], np.dtype(info["dtype"]),
                                       by_key.get(key, []), files))
    return out


def _pieces_by_key(meta: Dict[str, Any]) -> Dict[str, List[Dict[str, Any]]]:
    by_key: Dict[str, List[Dict[str, Any]]] = {}
    for piece in meta["pieces"]:
        by_key.setdefault(piece["key"], []).append(piece)
    return by_key


def _assemble(key: str, bounds: List[Any], dtype: Any, pieces: List[Dict[str, Any]], files: _Files) -> np.ndarray:
    """The block ``bounds`` of saved tensor ``key`` from the pieces that meet it (saved pieces
    never overlap: one rank writes each); ValueError if they leave part of it uncovered."""
    block = np.empty([hi - lo for lo, hi in bounds], dtype=dtype)
    filled = 0
    for piece, into, out in overlaps(bounds, pieces):
        part = files.value(piece)[out]
        block[into] = part
        filled += part.size
    if filled != block.size:
        raise ValueError(f"the checkpoint holds {filled} of the {block.size} values of {key!r} this rank "
                         f"needs: a file of it is missing")
    return block
