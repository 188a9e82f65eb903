"""A checkpoint's ``{id}.metadata`` file in paddle 3.3.1's format, both ways.

paddle pickles a ``Metadata`` of its ``paddle.distributed.flex_checkpoint.dcp.metadata`` (three
dataclasses, mirrored below field for field): ``state_dict_metadata`` (each key's saved blocks:
offset, shape, dtype name, whole shape), ``storage_metadata`` (each block's ``LocalTensorIndex``
-> the ``{rank}_{id}.distcp`` file holding it) and ``flat_mapping`` (each flat key -> the keys
of the nested dicts it came from). The file names paddle's classes: pycoll reads it with
``pycoll.paddle_files``' restricted unpickler, which builds these mirrors in their place (and
refuses any other class by name), and writes it naming paddle's classes, so each side reads the
other's checkpoints.

What the rest of the package uses is pycoll's description of a checkpoint:
``{"tensors": {key: {"shape": [...], "dtype": name}}, "pieces": [{"key", "offsets", "shape",
"file"}]}``.
"""
from __future__ import annotations

import dataclasses
import io
import os
import pickle
import re
from typing import Any, Dict, List, Optional, Tuple

from pycoll._atomic_files import write_whole
from pycoll.dtypes import convert_dtype
from pycoll.paddle_files import read_paddle_file

PADDLE_MODULE = "paddle.distributed.flex_checkpoint.dcp.metadata"
DATA_FILE = re.compile(r"^\d+_\d+\.distcp$")  # what a block's file may be called: a name in the folder


@dataclasses.dataclass(frozen=True)
class LocalTensorMetadata:
    """paddle's: one saved block of a tensor."""
    global_offset: Tuple[int, ...]
    local_shape: Tuple[int, ...]
    dtype: str
    global_shape: Optional[Tuple[int, ...]] = None
    is_flattened: bool = False
    flattened_range: Optional[Tuple[int, int]] = None


@dataclasses.dataclass(frozen=True)
class LocalTensorIndex:
    """paddle's: which block (a key of ``storage_metadata``)."""
    tensor_key: str
    global_offset: Tuple[int, ...]
    is_flattened: bool = False
    flattened_range: Optional[Tuple[int, int]] = None
    replica_id: Optional[int] = None
    local_shape: Optional[Tuple[int, ...]] = None


@dataclasses.dataclass
class Metadata:
    """paddle's: the whole metadata file."""
    state_dict_metadata: Optional[Dict[str, List[LocalTensorMetadata]]] = None
    storage_metadata: Optional[Dict[LocalTensorIndex, str]] = None
    flat_mapping: Optional[Dict[str, Tuple[str, ...]]] = None


_RECORDS = {(PADDLE_MODULE, cls.__name__): cls for cls in (LocalTensorMetadata, LocalTensorIndex, Metadata)}
_PADDLE_NAMES = {cls: name for name, cls in _RECORDS.items()}
_READ_ERRORS = (pickle.UnpicklingError, ValueError, TypeError, EOFError, RecursionError, MemoryError,
                AttributeError, IndexError, KeyError, ImportError)


# -- reading ----------------------------------------------------------------------------------------
def read_metadata(path: str) -> Dict[str, Any]:
    """pycoll's description of the checkpoint whose metadata file is ``path``; ValueError naming
    the file for one that is not paddle's metadata, NotImplementedError for flattened blocks."""
    with open(path, "rb") as f:
        try:
            meta = read_paddle_file(f, os.fstat(f.fileno()).st_size, return_numpy=True, records=_RECORDS)
        except _READ_ERRORS as exc:
            raise ValueError(f"{path!r} is not a checkpoint's metadata file (truncated, corrupt or "
                             f"foreign): {exc}") from exc
    if type(meta) is not Metadata:
        raise ValueError(f"{path!r} holds a {type(meta).__name__}, not paddle's checkpoint Metadata")
    return _description(meta, path)


def _ints(value: Any, what: str, path: str) -> List[int]:
    if type(value) is not tuple or not all(type(v) is int and v >= 0 for v in value):
        raise ValueError(f"{path!r}: {what} is {value!r}, not a tuple of non-negative ints")
    return list(value)


def _dtype_name(name: Any) -> bool:
    try:
        return type(name) is str and convert_dtype(name).kind in "biufcV"
    except TypeError:
        return False


def _description(meta: Metadata, path: str) -> Dict[str, Any]:
    blocks, storage = meta.state_dict_metadata, meta.storage_metadata
    if type(blocks) is not dict or type(storage) is not dict:
        raise ValueError(f"{path!r}: its state_dict_metadata and storage_metadata must be dicts, got "
                         f"{type(blocks).__name__} and {type(storage).__name__}")
    tensors: Dict[str, Dict[str, Any]] = {}
    for key, entries in blocks.items():
        if type(key) is not str or type(entries) is not list or not entries or not all(
                type(e) is LocalTensorMetadata for e in entries):
            raise ValueError(f"{path!r}: state_dict_metadata[{key!r}] is not a list of LocalTensorMetadata")
        first = entries[0]
        if not _dtype_name(first.dtype):
            raise ValueError(f"{path!r}: {key!r} has the dtype {first.dtype!r}, not a dtype's name")
        tensors[key] = {"shape": _ints(first.global_shape, f"the whole shape of {key!r}", path), "dtype": first.dtype}
    pieces = []
    for index, name in storage.items():
        if type(index) is not LocalTensorIndex or type(index.tensor_key) is not str:
            raise ValueError(f"{path!r}: storage_metadata has the key {index!r}, not a LocalTensorIndex")
        key = index.tensor_key
        if index.is_flattened or index.flattened_range is not None:
            raise NotImplementedError(f"{path!r}: {key!r} was saved as flattened blocks (paddle's sharding "
                                      f"stage 2 form), which pycoll's checkpoints do not read")
        if index.replica_id not in (None, 0):  # another copy of a block (save_replicas=True)
            continue
        if key not in tensors:
            raise ValueError(f"{path!r}: storage_metadata names {key!r}, which state_dict_metadata lacks")
        if type(name) is not str or not DATA_FILE.match(name):
            raise ValueError(f"{path!r}: a block of {key!r} is in {name!r}, not a '<rank>_<id>.distcp' file")
        offsets = _ints(index.global_offset, f"the offset of a block of {key!r}", path)
        shape = _ints(index.local_shape, f"the shape of the block of {key!r} at {offsets}", path)
        if not len(offsets) == len(shape) == len(tensors[key]["shape"]):
            raise ValueError(f"{path!r}: the block of {key!r} at {offsets} has shape {shape}, in a whole of "
                             f"shape {tensors[key]['shape']}")
        pieces.append({"key": key, "offsets": offsets, "shape": shape, "file": name})
    return {"tensors": tensors, "pieces": pieces}


# -- writing ----------------------------------------------------------------------------------------
def paddle_metadata(description: Dict[str, Any], key_paths: Dict[str, Tuple[str, ...]]) -> Metadata:
    """pycoll's description of a checkpoint (and each flat key's nested keys) as paddle's Metadata."""
    blocks: Dict[str, List[LocalTensorMetadata]] = {key: [] for key in description["tensors"]}
    storage: Dict[LocalTensorIndex, str] = {}
    for piece in description["pieces"]:
        key, offsets, shape = piece["key"], tuple(piece["offsets"]), tuple(piece["shape"])
        info = description["tensors"][key]
        blocks[key].append(LocalTensorMetadata(offsets, shape, info["dtype"], tuple(info["shape"])))
        storage[LocalTensorIndex(key, offsets, local_shape=shape)] = piece["file"]
    return Metadata(blocks, storage, {key: tuple(key_paths[key]) for key in description["tensors"]})


class _PaddleNamesPickler(pickle._Pickler):  # the Python one: how it names a class can be changed
    """Pickles the mirrors above under paddle's names (paddle need not be installed to write them)."""

    def save_global(self, obj: Any, name: Optional[str] = None) -> None:
        paddle_name = _PADDLE_NAMES.get(obj)
        if paddle_name is None:
            super().save_global(obj, name)
            return
        module, qualname = paddle_name
        self.save(module)
        self.save(qualname)
        self.write(pickle.STACK_GLOBAL)
        self.memoize(obj)


def write_metadata(meta: Metadata, path: str) -> None:
    """Write ``meta`` into file ``path`` as paddle.save does (pickle protocol 4), atomically: into a
    temporary file beside it, then moved into place."""
    buffer = io.BytesIO()
    _PaddleNamesPickler(buffer, protocol=4).dump(meta)
    write_whole(path, lambda f: f.write(buffer.getvalue()), binary=True, durable=True)
