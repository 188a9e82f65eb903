"""paddle's distributed checkpoint: ``save_state_dict``, ``load_state_dict`` and
``load_merged_state_dict``.

A checkpoint is a folder in paddle 3.3.1's format, which each of pycoll and paddle reads from the
other: ``{rank}_{id}.distcp`` holds the pieces that rank wrote (``layout.py``), a state dict
``{key: local piece}`` written by ``pycoll.save`` (atomic), and ``{id}.metadata`` (written by the
coordinator, ``paddle_metadata.py``) every tensor's whole shape and dtype and where each piece
lies and in which file. ``id`` (paddle's
``unique_id``) counts the checkpoints saved in one folder: by default the next free one when
saving, the newest when loading. Loading reads, for each tensor to fill, the saved pieces that
meet the piece this rank holds, so a checkpoint loads into other placements, another mesh or
another number of ranks, or whole into one process. Every rank must see the folder (one
machine, or a shared file system).
"""
from __future__ import annotations

import math
import os
import re
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

import pycoll.distributed as dist
from pycoll._logging import logger
from pycoll.device import move, place_of
from pycoll.distributed.auto_parallel.dtensor import is_dist_tensor
from pycoll.distributed.checkpoint.layout import bounds_of, flatten, key_paths, offers, overlaps, saved_form
from pycoll.distributed.checkpoint.paddle_metadata import paddle_metadata, read_metadata, write_metadata
from pycoll.distributed.checkpoint.sharded_weight import ShardedWeight, as_block
from pycoll.distributed.output_folder import make_output_folder
from pycoll.dtypes import convert_dtype
from pycoll.serialization import load, save
from pycoll.tensor import Tensor, to_tensor, wrap

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
    """Save ``state_dict`` (Tensors, distributed tensors and ShardedWeights, nested dicts
    allowed) into folder ``path``; collective over ``process_group`` (default: every rank). A key
    may be held by some ranks only (a pipeline stage's, a sharded optimizer's); the ranks that
    hold it agree on its whole shape and dtype. A plain Tensor is written once, by the
    coordinator when it holds the key, else by the first rank that does. ``async_save`` is
    accepted: the save is complete when this returns. ``save_replicas`` is accepted too: pycoll writes each replicated
    piece once either way (a ShardedWeight block several ranks hold: the first of them), and a
    checkpoint loads the same whichever way paddle would have written it."""
    _refuse("safetensors", safetensors, False)
    if not isinstance(save_replicas, bool):
        raise TypeError(f"save_state_dict: save_replicas must be a bool, got {type(save_replicas).__name__}")
    if not isinstance(state_dict, dict):
        raise TypeError(f"save_state_dict: state_dict must be a dict, got {type(state_dict).__name__}")
    dist.init_parallel_env()
    group = process_group or dist.get_group()
    if isinstance(coordinator_rank, bool) or not isinstance(coordinator_rank, int) or \
            coordinator_rank not in group.ranks:
        raise ValueError(f"save_state_dict: coordinator_rank={coordinator_rank!r} is not a rank of "
                         f"{group.describe()}; it writes the metadata")
    if unique_id is not None and (isinstance(unique_id, bool) or not isinstance(unique_id, int) or unique_id < 0):
        raise ValueError(f"save_state_dict: unique_id={unique_id!r}; it must be an int >= 0 (or None: "
                         f"the next free one)")
    paths = key_paths(state_dict)
    flat = {key: as_block(key, leaf) for key, (_, leaf) in paths.items()}
    bad = [k for k, v in flat.items() if not isinstance(v, (Tensor, ShardedWeight))]
    if bad:
        raise TypeError(f"save_state_dict: state_dict values must be Tensors or ShardedWeights; {bad[:5]} are not")
    path = make_output_folder("save_state_dict", "path", path)  # on every rank, before anything is sent
    me = dist.get_rank()
    shapes, mine = {}, {}
    for key in sorted(flat):
        value = flat[key]
        if isinstance(value, ShardedWeight):
            tensor, bounds, whole, candidate = value.local_tensor, value.bounds(), value.global_shape, True
        else:
            tensor = saved_form(value)
            bounds, whole = bounds_of(tensor), tensor.shape
            candidate = bounds is not None and offers(tensor)
        shapes[key] = {"shape": list(whole), "dtype": tensor.dtype.name,  # paddle's names: float32, bfloat16
                       "path": list(paths[key][0])}  # the nested dicts' keys leading to it
        if candidate:
            mine[(key, tuple(lo for lo, _ in bounds))] = tensor
    everyone: List[Any] = []
    offered = [(key, list(offsets), list(t._array.shape)) for (key, offsets), t in mine.items()]
    dist.all_gather_object(everyone, (me, _ids(path) if me == coordinator_rank else None, shapes, offered,
                                      unique_id), group=group)
    asked = {rank: uid for rank, _, _, _, uid in everyone}
    if len(set(asked.values())) > 1:
        raise ValueError(f"save_state_dict: the ranks passed different unique_id values (rank: unique_id): "
                         f"{asked}; every rank passes the same")
    taken = next(ids for _, ids, _, _, _ in everyone if ids is not None)
    uid = (taken[-1] + 1 if taken else 0) if unique_id is None else unique_id
    pieces = _writers(everyone, uid, coordinator_rank)  # the same on every rank: each block once
    written = [p for p in pieces if p["file"] == f"{me}_{uid}.distcp"]
    if written:  # a rank holds one piece of a key: its file is a state dict of them, as paddle's
        save({p["key"]: wrap(mine[(p["key"], tuple(p["offsets"]))]._array) for p in written},
             os.path.join(path, f"{me}_{uid}.distcp"))
    if me == coordinator_rank:
        every_key = {key: info for _, _, held, _, _ in everyone for key, info in held.items()}
        write_metadata(paddle_metadata({"tensors": {k: {"shape": v["shape"], "dtype": v["dtype"]}
                                                    for k, v in every_key.items()}, "pieces": pieces},
                                       {k: tuple(v["path"]) for k, v in every_key.items()}),
                       os.path.join(path, f"{uid}.metadata"))
    dist.barrier(group=group)


def _writers(everyone: List[Any], uid: int, coordinator: int) -> List[Dict[str, Any]]:
    """Where each saved block goes: every rank's offers (rank, _, its keys' whole shapes, dtypes
    and nested paths, its blocks, _) checked to agree, each distinct block kept once (the coordinator
    writes it if it offers it, else the first rank that does). ValueError, on every rank alike,
    for a key whose whole shape or dtype differs between the ranks that hold it, or two blocks of
    a tensor that overlap."""
    seen: Dict[str, Any] = {}  # key -> (the first rank holding it, its whole shape and dtype there)
    for rank, _, shapes, _, _ in everyone:
        for key, shape in shapes.items():
            first_rank, first = seen.setdefault(key, (rank, shape))
            if first != shape:
                raise ValueError(f"save_state_dict: {key!r} is {first} on rank {first_rank} but {shape} on "
                                 f"rank {rank}: the ranks that save a key give the same whole shape and dtype "
                                 f"(and nesting)")
    chosen: Dict[Any, Dict[str, Any]] = {}
    for rank, _, _, offered, _ in sorted(everyone, key=lambda offer: offer[0] != coordinator):
        for key, offsets, shape in offered:
            piece = {"key": key, "offsets": offsets, "shape": shape, "file": f"{rank}_{uid}.distcp"}
            held = chosen.setdefault((key, tuple(offsets)), piece)
            if held["shape"] != shape:
                raise ValueError(f"save_state_dict: {key!r} has a block of shape {held['shape']} at {offsets} in "
                                 f"{held['file']} and one of shape {shape} on rank {rank}")
    pieces = list(chosen.values())
    for i, a in enumerate(pieces):
        for b in pieces[i + 1:]:
            if a["key"] == b["key"] and all(x < y + m and y < x + n for x, n, y, m
                                            in zip(a["offsets"], a["shape"], b["offsets"], b["shape"])):
                raise ValueError(f"save_state_dict: two blocks of {a['key']!r} overlap: shape {a['shape']} at "
                                 f"{a['offsets']} and shape {b['shape']} at {b['offsets']}")
    return pieces


def _metadata(path: str, unique_id: Optional[int], fn: str) -> Dict[str, Any]:
    ids = _ids(os.fspath(path))
    if not ids:
        raise FileNotFoundError(f"{fn}: no checkpoint in {os.fspath(path)!r} (no *.metadata file)")
    uid = ids[-1] if unique_id is None else int(unique_id)
    if uid not in ids:
        raise ValueError(f"{fn}: unique_id={unique_id} is not among the checkpoints in {path!r}: {ids}")
    return read_metadata(os.path.join(path, f"{uid}.metadata"))


class _Files:
    """The pieces of the data files read so far (each file read once): each file a state dict
    ``{key: this rank's piece}``."""

    def __init__(self, path: str):
        self.path, self._read = path, {}

    def value(self, piece: Dict[str, Any], dtype: str) -> np.ndarray:
        """The piece, of the dtype named ``dtype`` (paddle writes bfloat16 as its bit patterns)."""
        name, key = piece["file"], piece["key"]
        if name not in self._read:
            self._read[name] = load(os.path.join(self.path, name), return_numpy=True)
        data, saved = self._read[name], convert_dtype(dtype)
        value = data.get(key) if isinstance(data, dict) else None
        if isinstance(value, np.ndarray) and value.dtype != saved and saved.kind == "V" and value.dtype.kind in "iu" \
                and value.dtype.itemsize == saved.itemsize:  # bfloat16, float8: written as their bit patterns
            value = value.view(saved)
        if not isinstance(value, np.ndarray) or list(value.shape) != list(piece["shape"]) or value.dtype != saved:
            raise ValueError(f"{os.path.join(self.path, name)!r} holds no {dtype} block of {key!r} of shape "
                             f"{piece['shape']}, which the checkpoint's metadata says it does")
        return value


def load_state_dict(state_dict: Dict[str, Any], path: str, process_group: Optional[dist.Group] = None,
                    coordinator_rank: int = 0, unique_id: Optional[int] = None, offload: bool = False,
                    mw_name_compatibility: bool = True, aoa_config: Optional[Dict[str, List[str]]] = None,
                    safetensors: bool = False) -> None:
    """Fill every tensor of ``state_dict`` (in place: this rank's piece of each, a ShardedWeight's
    block) from the checkpoint in folder ``path``, whatever placements, blocks, mesh or number of
    ranks saved it, and whether pycoll or paddle 3.3.1 wrote it.
    ValueError naming the keys the checkpoint lacks or whose whole shape differs. ``aoa_config``
    (paddle's renaming and reshaping of saved tensors on load) is accepted as None only.

    Collective over ``process_group`` (default: every rank), as paddle's: the ranks agree that
    each can load its part (its keys, shapes and files) before any tensor is written, so a
    checkpoint one rank cannot read (a file missing) is refused on every rank, naming that rank
    (:class:`PeerCannotLoad` where a peer failed), and no rank is left half-resumed."""
    _refuse("aoa_config", aoa_config, None)
    _refuse("safetensors", safetensors, False)
    plan: List[Tuple[Any, ...]] = []
    problem: Optional[Exception] = None
    try:
        plan = _load_plan(state_dict, path, unique_id)
    except (TypeError, ValueError, OSError) as exc:
        problem = exc
    _agree("load_state_dict", path, problem, process_group)
    files = _Files(os.fspath(path))
    for tensor, read, saved, pieces_dtype, pieces, reshaped in plan:
        block = _assemble(saved, read, tensor._array.dtype, pieces_dtype, pieces, files)
        if reshaped is not None:  # the whole saved tensor: in the shape it loads as, this rank's block of that
            shape, bounds = reshaped
            block = block.reshape(shape)[tuple(slice(lo, hi) for lo, hi in bounds)]
        tensor._array[...] = move(block, place_of(tensor._array))


class PeerCannotLoad(ValueError, FileNotFoundError):
    """``load_state_dict`` on a rank whose peer cannot load its part of the checkpoint: nothing was
    loaded here either. A ValueError and a FileNotFoundError, as the peer's own error mostly is."""


def _load_plan(state_dict: Dict[str, Any], path: str, unique_id: Optional[int]) -> List[Tuple[Any, ...]]:
    """What this rank reads: (tensor, the bounds read of the saved tensor, the saved key, the saved
    dtype, the saved pieces, and (shape, the tensor's block's bounds) where the tensor loads in
    another shape than it was saved in, else None) for each tensor it holds a piece of, once every
    key, shape and file it needs is checked (nothing read from the data files yet). A tensor saved
    flattened loads into its own shape and back (a
    sharded optimizer's FlatBlocks into an unsharded optimizer, DataParallel's or one process's,
    and the reverse): each such rank reads the whole saved tensor."""
    if not isinstance(state_dict, dict):
        raise TypeError(f"load_state_dict: state_dict must be a dict, got {type(state_dict).__name__}")
    meta = _metadata(path, unique_id, "load_state_dict")
    flat = {key: as_block(key, leaf) for key, leaf in flatten(state_dict).items()}
    bad = [k for k, v in flat.items() if not isinstance(v, (Tensor, ShardedWeight))]
    if bad:
        raise TypeError(f"load_state_dict: state_dict values must be Tensors or ShardedWeights; {bad[:5]} are not")
    saved_as = _saved_keys(flat, meta["tensors"])
    missing = sorted(k for k in flat if k not in saved_as)
    if missing:
        raise ValueError(f"load_state_dict: the checkpoint in {path!r} has no {missing[:5]}")
    unexpected = sorted(set(meta["tensors"]) - set(saved_as.values()))
    if unexpected:  # paddle's warning: a checkpoint may hold more than one state_dict loads
        logger.warning(f"load_state_dict: the checkpoint in {path!r} also holds {len(unexpected)} key(s) this "
                       f"state_dict has not, not loaded: {unexpected[:5]}")
    loaded_as: Dict[str, List[int]] = {}  # key: the shape it loads as, where it was saved in another
    for key, value in flat.items():
        whole, saved = value.global_shape if isinstance(value, ShardedWeight) else value.shape, saved_as[key]
        saved_shape = [int(n) for n in meta["tensors"][saved]["shape"]]
        if list(whole) != saved_shape:
            if (len(whole) == 1 or len(saved_shape) == 1) and math.prod(whole) == math.prod(saved_shape):
                # one side flattened: a sharded optimizer's state (FlatBlocks) saved or loaded
                loaded_as[key] = [int(n) for n in whole]
            else:
                raise ValueError(f"load_state_dict: {key!r} has shape {list(whole)} here, "
                                 f"{saved_shape} in the checkpoint")
        if is_dist_tensor(value) and any(p.is_partial() for p in value.placements):
            raise ValueError(f"load_state_dict: {key!r} is Partial; load into Replicate or Shard placements")
    by_key = _pieces_by_key(meta)
    plan = []
    for key, value in flat.items():
        tensor, bounds = (value.local_tensor, value.bounds()) if isinstance(value, ShardedWeight) else (value, bounds_of(value))
        if bounds is None:
            continue
        saved = saved_as[key]
        pieces = by_key.get(saved, [])
        read = [(0, int(n)) for n in meta["tensors"][saved]["shape"]] if key in loaded_as else bounds
        _check_covered(path, saved, read, pieces)
        plan.append((tensor, read, saved, meta["tensors"][saved]["dtype"], pieces,
                     (loaded_as[key], bounds) if key in loaded_as else None))
    return plan


def _check_covered(path: str, key: str, bounds: List[Any], pieces: List[Dict[str, Any]]) -> None:
    """The saved pieces meeting block ``bounds`` of ``key`` cover it, and their files are there."""
    covered = 0
    for piece, into, _ in overlaps(bounds, pieces):
        name = os.path.join(os.fspath(path), piece["file"])
        if not os.path.isfile(name):
            raise FileNotFoundError(f"load_state_dict: {name!r}, which holds part of {key!r}, is missing: "
                                    f"the checkpoint is incomplete")
        covered += int(np.prod([s.stop - s.start for s in into], dtype=np.int64))
    needed = int(np.prod([hi - lo for lo, hi in bounds], dtype=np.int64))
    if covered != needed:
        raise ValueError(f"load_state_dict: the checkpoint holds {covered} of the {needed} values of {key!r} this "
                         f"rank needs: a file of it is missing")


def _agree(fn: str, path: str, problem: Optional[Exception], group: Optional[dist.Group]) -> None:
    """Every rank of ``group`` learns whether each could load (one all-gather, where a job of
    several ranks runs): ``problem`` raises here, a peer's as :class:`PeerCannotLoad`."""
    several = dist.is_initialized() and dist.get_world_size(group) > 1 and dist.get_rank(group) >= 0
    told: List[Any] = []
    if several:
        text = None if problem is None else f"{type(problem).__name__}: {problem}"
        dist.all_gather_object(told, text, group=group)
    if problem is not None:
        raise problem
    ranks = (group or dist.get_group()).ranks if several else []
    failed = [(rank, text) for rank, text in zip(ranks, told) if text is not None]
    if failed:
        rank, text = failed[0]
        raise PeerCannotLoad(f"{fn}: rank {rank} cannot load its part of the checkpoint in {os.fspath(path)!r} "
                             f"({text}); no rank loaded it")


_PADDLE_DIST_NAME = re.compile(r"\.dist(?=_|\.|$)")


def _saved_keys(flat: Dict[str, Any], saved: Dict[str, Any]) -> Dict[str, str]:
    """Each key of ``flat`` the checkpoint holds, and the key it holds it under: its own, or for
    a parameter paddle renamed ``<name>.dist`` when it was sharded (``shard_tensor`` of a
    Parameter; its optimizer state is then ``<name>.dist_moment1_0``...) that name."""
    undist = {_PADDLE_DIST_NAME.sub("", key): key for key in saved if ".dist" in key}
    found = {key: key if key in saved else undist.get(key) for key in flat}
    return {key: name for key, name in found.items() if name is not None}


def load_merged_state_dict(path: str, prefix: Optional[str] = None, unique_id: Optional[int] = None,
                           offload: bool = False, safetensors: bool = False) -> Dict[str, Tensor]:
    """The checkpoint in folder ``path`` as whole Tensors (no collective: one process may read
    what many saved), keyed as saved (flattened); with ``prefix`` ('model' or 'model.'), only
    the keys under that dotted name, without it ('model.linear.weight' as 'linear.weight',
    paddle's; paddle takes any key that starts with the text and cuts one character more than
    it: 'model.' gives 'inear.weight', 'mod' 'l.linear.weight')."""
    _refuse("safetensors", safetensors, False)
    meta = _metadata(path, unique_id, "load_merged_state_dict")
    files = _Files(os.fspath(path))
    by_key = _pieces_by_key(meta)
    under = prefix.rstrip(".") + "." if prefix else ""
    out: Dict[str, Tensor] = {}
    for key, info in meta["tensors"].items():
        if not key.startswith(under):
            continue
        out[key[len(under):]] = to_tensor(_assemble(key, [(0, n) for n in info["shape"]], convert_dtype(info["dtype"]),
                                                    info["dtype"], by_key.get(key, []), files))
    return out


def _pieces_by_key(meta: Dict[str, Any]) -> Dict[str, List[Dict[str, Any]]]:
    by_key: Dict[str, List[Dict[str, Any]]] = {}
    for piece in meta["pieces"]:
        by_key.setdefault(piece["key"], []).append(piece)
    return by_key


def _assemble(key: str, bounds: List[Any], dtype: Any, saved_dtype: str, pieces: List[Dict[str, Any]],
              files: _Files) -> np.ndarray:
    """The block ``bounds`` of saved tensor ``key`` from the pieces that meet it (saved pieces
    never overlap: one rank writes each); ValueError if they leave part of it uncovered."""
    block = np.empty([hi - lo for lo, hi in bounds], dtype=dtype)
    filled = 0
    for piece, into, out in overlaps(bounds, pieces):
        part = files.value(piece, saved_dtype)[out]
        block[into] = part
        filled += part.size
    if filled != block.size:
        raise ValueError(f"the checkpoint holds {filled} of the {block.size} values of {key!r} this rank "
                         f"needs: a file of it is missing")
    return block
