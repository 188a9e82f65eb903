"""`pycoll.save` / `pycoll.load`.

File format: a ZIP archive (stored, not compressed) holding `pycoll.json` and one `.npy` file per
array. The JSON gives the format name and version and the object tree, where dicts, lists and
tuples are tagged objects, numbers/strings/booleans/None are plain JSON, and arrays are references
to their `.npy` entries: `{"tensor": i}` loads back as a Tensor, `{"ndarray": i}` as a numpy
array. Nothing is unpickled, so loading a foreign file cannot run code. `load` also reads
paddle.save's files, through an unpickler that builds nothing but containers and arrays
(`pycoll.paddle_files`).

Saving is atomic: the archive is written to a temporary file in the target directory,
`.<name>.<host>-<pid>-<random>.pycoll-tmp`, and moved into place with os.replace, so two processes
saving the same path at once leave one complete file, never a torn one. A save killed before its
move leaves its temporary behind; the next save to that path removes the temporaries of writers
on this host that are no longer alive (a live writer's is never touched).

Loading trusts nothing in the file: entries must be stored (not compressed) and no larger than
the file, an array's header (numpy's .npy, at most 10 000 bytes) must describe exactly the bytes
that follow it, and containers nest at most 128 deep; anything else is a ValueError naming the
file, before anything is allocated.
"""
from __future__ import annotations

import io
import json
import math
import os
import pickle
import re
import secrets
import warnings
import zipfile
from typing import Any, BinaryIO, Callable, Dict, List

import numpy as np

from pycoll._logging import logger
from pycoll.device import is_array
from pycoll.dtypes import bfloat16
from pycoll.paddle_files import is_paddle_file, load_paddle_file
from pycoll.tensor import Tensor, to_tensor

FORMAT = "pycoll.save"
VERSION = 1
_MANIFEST = "pycoll.json"
MAX_DEPTH = 128  # containers inside containers: a checkpoint's tree is a few levels deep
_MAX_NPY_HEADER = 10_000  # numpy's own bound on a .npy header
_READ_CHUNK = 16 << 20
# The writer's host in temporary names, so that a shared file system's other hosts are left alone.
_HOST = re.sub(r"[^A-Za-z0-9.]", "_", os.uname().nodename)[:64]


def _array_node(kind: str, array: np.ndarray, arrays: List[np.ndarray]) -> Dict[str, Any]:
    """The manifest's reference to `array`, stored as the next .npy entry. bfloat16 (ml_dtypes',
    which a .npy header cannot name) is stored as its 16-bit patterns and named in the node."""
    node: Dict[str, Any] = {kind: len(arrays)}
    if array.dtype.name == "bfloat16":
        array, node["dtype"] = array.view(np.uint16), "bfloat16"
    arrays.append(array)
    return node


def _encode(obj: Any, arrays: List[np.ndarray], where: str, depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        raise ValueError(f"save: {where} nests containers more than {MAX_DEPTH} deep (a "
                         f"container holding itself?); pycoll.save stores at most {MAX_DEPTH} levels")
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, Tensor):
        return _array_node("tensor", obj.numpy(), arrays)
    if is_array(obj) or isinstance(obj, np.generic):
        return _array_node("ndarray", obj.get() if hasattr(obj, "get") and not isinstance(obj, np.generic)
                           else np.asarray(obj), arrays)
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            if not (k is None or isinstance(k, (bool, int, float, str))):
                raise TypeError(f"save: dict keys must be str, int, float, bool or None, got "
                                f"{type(k).__name__} at {where}")
            items.append([k, _encode(v, arrays, f"{where}[{k!r}]", depth + 1)])
        return {"dict": items}
    if isinstance(obj, (list, tuple)):
        kind = "list" if isinstance(obj, list) else "tuple"
        return {kind: [_encode(v, arrays, f"{where}[{i}]", depth + 1) for i, v in enumerate(obj)]}
    raise TypeError(f"save: cannot store {type(obj).__name__} at {where}; supported are Tensors, "
                    f"arrays, numbers, strings, None and dicts/lists/tuples of them")


def save(obj: Any, path: "os.PathLike[str] | str | BinaryIO", protocol: int = 4, **configs: Any) -> None:
    """Write `obj` (Tensors, arrays, numbers, strings, nested dicts/lists/tuples) to `path`, or
    into `path` when it is a binary file object (``io.BytesIO()``, paddle's "save to memory").

    Tensors and arrays are stored as host numpy arrays; missing parent directories are created.
    `protocol` (paddle's pickle protocol, 2 to 4) and the `configs` paddle takes
    (``pickle_protocol``, its deprecated name for `protocol`; ``use_binary_format`` and
    ``safetensors``, other file formats, which must stay False) are checked as paddle checks them
    and change nothing else: pycoll's format pickles nothing.
    """
    _check_save_options(protocol, configs)
    arrays: List[np.ndarray] = []
    tree = _encode(obj, arrays, "obj")
    if hasattr(path, "write"):
        _write_archive(path, tree, arrays)
        return
    path = _path_arg(path, "save")
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    name = os.path.basename(path)
    _remove_dead_writers_temps(directory, name)
    tmp = os.path.join(directory, f".{name}.{_HOST}-{os.getpid()}-{secrets.token_hex(8)}.pycoll-tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            _write_archive(f, tree, arrays)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _write_archive(f: BinaryIO, tree: Any, arrays: List[np.ndarray]) -> None:
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(_MANIFEST, json.dumps({"format": FORMAT, "version": VERSION, "tree": tree}))
        for i, arr in enumerate(arrays):
            with zf.open(f"{i}.npy", "w", force_zip64=True) as entry:
                # np.ascontiguousarray would make a 0-d array 1-d
                np.lib.format.write_array(entry, arr if arr.flags.c_contiguous else np.ascontiguousarray(arr),
                                          allow_pickle=False)


def _path_arg(path: Any, fn: str) -> str:
    try:
        return os.fspath(path)
    except TypeError:
        raise TypeError(f"{fn}: path must be a file path (str or os.PathLike) or a binary file object, "
                        f"got {type(path).__name__}") from None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def _check_save_options(protocol: Any, configs: Dict[str, Any]) -> None:
    unknown = sorted(set(configs) - {"use_binary_format", "pickle_protocol", "safetensors"})
    if unknown:
        raise ValueError(f"save: the additional configs {unknown} are not supported; paddle's are "
                         f"use_binary_format, pickle_protocol and safetensors")
    for name in ("use_binary_format", "safetensors"):
        if not isinstance(configs.get(name, False), bool):
            raise TypeError(f"save: {name} must be a bool, got {type(configs[name]).__name__}")
        if configs.get(name):
            raise ValueError(f"save: {name}=True asks for another file format; pycoll.save writes its own")
    if configs.get("pickle_protocol") is not None:
        warnings.warn("'pickle_protocol' is a deprecated argument. Please use 'protocol' instead.")
        protocol = configs["pickle_protocol"]
    if isinstance(protocol, bool) or not isinstance(protocol, int):
        raise ValueError(f"save: protocol must be an int, got {type(protocol).__name__}")
    if not 2 <= protocol <= 4:
        raise ValueError(f"save: protocol must be 2, 3 or 4, got {protocol}")


def _remove_dead_writers_temps(directory: str, name: str) -> None:
    """Remove the temporaries that saves to ``name`` killed on this host left in ``directory``."""
    temp = re.compile(rf"\.{re.escape(name)}\.{re.escape(_HOST)}-([0-9]+)-[0-9a-f]{{16}}\.pycoll-tmp")
    for entry in os.scandir(directory):
        match = temp.fullmatch(entry.name)
        if not match or not entry.is_file(follow_symlinks=False):
            continue
        pid = int(match.group(1))
        if pid > 0 and not _alive(pid):
            try:
                os.unlink(entry.path)
            except FileNotFoundError:  # another save removed it first
                continue
            logger.info("save: removed %s, left by a save (pid %d) that did not finish",
                        entry.path, pid)


def _stored_entry(zf: zipfile.ZipFile, name: str, file_size: int) -> zipfile.ZipInfo:
    """``name``'s entry, checked to be stored as is and no larger than the file holding it."""
    try:
        info = zf.getinfo(name)
    except KeyError:
        raise ValueError(f"it has no entry {name!r}") from None
    if info.compress_type != zipfile.ZIP_STORED:
        raise ValueError(f"its entry {name!r} is compressed; pycoll.save stores entries as they are")
    if info.file_size > file_size:
        raise ValueError(f"its entry {name!r} claims {info.file_size} bytes, more than the "
                         f"{file_size} of the whole file")
    return info


def _read_npy(zf: zipfile.ZipFile, name: str, file_size: int) -> np.ndarray:
    """The array in entry ``name``; ValueError unless its header describes exactly its bytes."""
    info = _stored_entry(zf, name, file_size)
    with zf.open(info) as entry:
        version = np.lib.format.read_magic(entry)
        if version not in ((1, 0), (2, 0)):
            raise ValueError(f"its entry {name!r} is a .npy file of version {version}; pycoll "
                             f"reads versions 1.0 and 2.0")
        read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                       else np.lib.format.read_array_header_2_0)
        shape, fortran_order, dtype = read_header(entry, max_header_size=_MAX_NPY_HEADER)
        if dtype.hasobject:
            raise ValueError(f"its entry {name!r} holds Python objects, which pycoll never unpickles")
        count = math.prod(shape)
        held = info.file_size - entry.tell()
        if min(shape, default=0) < 0 or count * dtype.itemsize != held:
            raise ValueError(f"its entry {name!r} claims an array of shape {shape} and dtype "
                             f"{dtype} ({count * dtype.itemsize} bytes) but holds {held} bytes")
        array = np.empty(count, dtype)
        if held:
            _read_into(entry, array.view(np.uint8), name)
    return array.reshape(shape, order="F" if fortran_order else "C")


def _read_into(entry: Any, out: np.ndarray, name: str) -> None:
    """Fill ``out`` (bytes) from ``entry`` a chunk at a time (a whole read would double the memory)."""
    with memoryview(out) as view:
        done = 0
        while done < len(view):
            got = entry.readinto(view[done:done + _READ_CHUNK])
            if not got:
                raise EOFError(f"its entry {name!r} ends early")
            done += got


def _decode(node: Any, read_array: Callable[[str], np.ndarray], return_numpy: bool, depth: int = 0) -> Any:
    if not isinstance(node, dict):
        return node
    if depth > MAX_DEPTH:
        raise ValueError(f"its manifest nests containers more than {MAX_DEPTH} deep")
    if "tensor" in node or "ndarray" in node:
        arr = read_array(f"{node.get('tensor', node.get('ndarray'))}.npy")
        if node.get("dtype") == "bfloat16":
            if arr.dtype != np.uint16:
                raise ValueError(f"a bfloat16 entry holds {arr.dtype} values, not 16-bit patterns")
            arr = arr.view(bfloat16())
        return to_tensor(arr) if "tensor" in node and not return_numpy else arr
    if "dict" in node:
        return {k: _decode(v, read_array, return_numpy, depth + 1) for k, v in node["dict"]}
    if "list" in node:
        return [_decode(v, read_array, return_numpy, depth + 1) for v in node["list"]]
    if "tuple" in node:
        return tuple(_decode(v, read_array, return_numpy, depth + 1) for v in node["tuple"])
    raise ValueError(f"unknown node {sorted(node)}")


def _load_paddle(data: bytes, label: str, return_numpy: bool) -> Any:
    try:
        return load_paddle_file(data, return_numpy)
    except (pickle.UnpicklingError, ValueError, TypeError, EOFError, RecursionError,
            AttributeError, IndexError, KeyError) as exc:
        raise ValueError(f"load: {label} looks like a paddle.save file but cannot be read: {exc}") from exc


def load(path: "os.PathLike[str] | str | BinaryIO", return_numpy: bool = False) -> Any:
    """Read what `save` wrote, or what paddle.save wrote (`pycoll.paddle_files`), from a file or
    a binary file object (read from its current position). Tensors come back as Tensors on the
    current device (numpy arrays with return_numpy=True). Raises FileNotFoundError for a missing
    file and ValueError for a truncated, corrupt or foreign one."""
    if hasattr(path, "read"):
        data = path.read()
        if is_paddle_file(data[:1]):
            return _load_paddle(data, "the file object", return_numpy)
        return _load_archive(io.BytesIO(data), len(data), "the file object", return_numpy)
    path = _path_arg(path, "load")
    if not os.path.exists(path):
        raise FileNotFoundError(f"load: no such file {path!r}")
    with open(path, "rb") as f:
        if is_paddle_file(f.read(1)):
            f.seek(0)
            return _load_paddle(f.read(), repr(path), return_numpy)
    return _load_archive(path, os.path.getsize(path), repr(path), return_numpy)


def _load_archive(source: Any, file_size: int, label: str, return_numpy: bool) -> Any:
    try:
        with zipfile.ZipFile(source) as zf:
            if _MANIFEST not in zf.namelist():
                raise ValueError("it has no pycoll manifest")
            try:
                manifest = json.loads(zf.read(_stored_entry(zf, _MANIFEST, file_size)))
            except RecursionError:
                raise ValueError("its manifest nests deeper than JSON can be read") from None
            if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
                raise ValueError("its manifest is not a pycoll.save manifest")
            if manifest.get("version") != VERSION:
                raise ValueError(f"it has format version {manifest.get('version')}, this pycoll "
                                 f"reads version {VERSION}")
            return _decode(manifest["tree"], lambda name: _read_npy(zf, name, file_size), return_numpy)
    except (zipfile.BadZipFile, ValueError, TypeError, KeyError, EOFError, OSError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise ValueError(f"load: {label} is not a readable pycoll.save file "
                         f"(truncated, corrupt or foreign): {exc}") from exc
