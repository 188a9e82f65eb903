"""`pycoll.save` / `pycoll.load`.

The file is paddle.save's (`pycoll.paddle_files`): paddle.load reads what pycoll.save writes and
pycoll.load reads what paddle.save writes, each tree coming back as paddle.load gives it. Loading
unpickles from the file as it reads it (no copy of the whole file first) and builds nothing but
containers, numbers, strings, arrays, dtypes, numpy scalars and Namespaces. `load` also reads the
ZIP files earlier pycoll versions wrote (format version 1, at the end of this module).

Saving is atomic: the file is written to a temporary file in the target directory,
`.<name>.<host>-<pid>-<random>.pycoll-tmp`, and moved into place with os.replace, so two processes
saving the same path at once leave one complete file, never a torn one. A save killed before its
move leaves its temporary behind; the next save to that path removes the temporaries of writers
on this host that are no longer alive (a live writer's is never touched).
"""
from __future__ import annotations

import errno
import hashlib
import io
import json
import math
import os
import pickle
import re
import secrets
import stat
import warnings
import zipfile
from typing import Any, BinaryIO, Callable, Dict, Tuple

import numpy as np

from pycoll._logging import logger
from pycoll._pids import alive
from pycoll.dtypes import bfloat16
from pycoll.paddle_files import MAX_DEPTH, RefusedName, is_paddle_file, read_paddle_file, write_paddle_file
from pycoll.tensor import tensor_of

# The writer's host in temporary names, so that a shared file system's other hosts are left alone.
_HOST = re.sub(r"[^A-Za-z0-9.]", "_", os.uname().nodename)[:64]
_LOAD_CONFIGS = ("return_numpy", "keep_name_table")
# the ZIP files of earlier pycoll versions
_FORMAT = "pycoll.save"
_VERSION = 1
_MANIFEST = "pycoll.json"
_ZIP_START = b"PK"
_MAX_NPY_HEADER = 10_000  # numpy's own bound on a .npy header
_READ_CHUNK = 16 << 20


def save(obj: Any, path: "os.PathLike[str] | str | BinaryIO", protocol: int = 4, **configs: Any) -> None:
    """Write `obj` to `path` as paddle.save does (a layer's or optimizer's state_dict, a Tensor, or
    a tree of Tensors, arrays, numpy scalars and dtypes, numbers, strings, None, slices,
    argparse.Namespace, dicts, lists, tuples and sets), or into `path` when it is a binary file
    object (``io.BytesIO()``, paddle's "save to memory"). Missing parent directories are created.

    `protocol` is the pickle protocol, 2 to 4 (``pickle_protocol``, paddle's deprecated name for
    it, is taken too); ``use_binary_format`` and ``safetensors`` ask for other file formats and
    must stay False. Anything pycoll.load would not build back (a Layer, a function, a generator,
    an array of Python objects...) is a TypeError naming where it sits, before anything is written.
    """
    protocol = _check_save_options(protocol, configs)
    if hasattr(path, "write"):
        write_paddle_file(obj, path, protocol)
        return
    path = _path_arg(path, "save")
    name = os.path.basename(path)
    if not name or os.path.isdir(path):
        raise ValueError(f"save: path={path!r} names a directory; it must be 'dirname/filename'")
    # a symbolic link is written through, as paddle's open() does: its target gets the file
    target = os.path.realpath(path)
    if os.path.islink(target):  # still a link: a loop of them
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)
    if len(os.fsencode(os.path.basename(target))) > 255:
        raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG), path)
    existing = os.stat(target) if os.path.exists(target) else None
    if existing is not None and (not stat.S_ISREG(existing.st_mode) or existing.st_nlink > 1):
        # a FIFO or a device, or a file under several names (hard links): written into, as
        # paddle's open() does, so that every name sees the new file
        with open(target, "wb") as f:
            write_paddle_file(obj, f, protocol)
        return
    directory, name = os.path.split(target)
    os.makedirs(directory, exist_ok=True)
    _remove_dead_writers_temps(directory, name)
    tmp = os.path.join(directory, f".{_temp_stem(name)}.{_HOST}-{os.getpid()}-{secrets.token_hex(8)}.pycoll-tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        if existing is not None:  # the file keeps its permissions, as when written in place
            os.chmod(tmp, stat.S_IMODE(existing.st_mode))
        with os.fdopen(fd, "wb") as f:
            write_paddle_file(obj, f, protocol)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _path_arg(path: Any, fn: str) -> str:
    try:
        return os.fspath(path)
    except TypeError:
        raise TypeError(f"{fn}: path must be a file path (str or os.PathLike) or a binary file object, "
                        f"got {type(path).__name__}") from None


def _check_save_options(protocol: Any, configs: Dict[str, Any]) -> int:
    """The pickle protocol to write with, after paddle's checks of `protocol` and `configs`."""
    unknown = sorted(set(configs) - {"use_binary_format", "pickle_protocol", "safetensors"})
    if unknown:
        raise ValueError(f"save: the additional configs {unknown} are not supported; paddle's are "
                         f"use_binary_format, pickle_protocol and safetensors")
    for name in ("use_binary_format", "safetensors"):
        if not isinstance(configs.get(name, False), bool):
            raise TypeError(f"save: {name} must be a bool, got {type(configs[name]).__name__}")
        if configs.get(name):
            raise ValueError(f"save: {name}=True asks for another file format; pycoll.save writes "
                             f"paddle.save's pickle")
    if configs.get("pickle_protocol") is not None:
        warnings.warn("'pickle_protocol' is a deprecated argument. Please use 'protocol' instead.")
        protocol = configs["pickle_protocol"]
    if isinstance(protocol, bool) or not isinstance(protocol, int):
        raise ValueError(f"save: protocol must be an int, got {type(protocol).__name__}")
    if not 2 <= protocol <= 4:
        raise ValueError(f"save: protocol must be 2, 3 or 4, got {protocol}")
    return protocol


def _temp_stem(name: str) -> str:
    """The part of a temporary's name that says which file it becomes: ``name`` itself, or where
    the temporary's name would pass the 255 bytes a file name may have, its start and a hash."""
    room = 255 - len(f"..{_HOST}-{2 ** 22}-{'0' * 16}.pycoll-tmp")  # the longest pid Linux gives
    if len(os.fsencode(name)) <= room:
        return name
    start = name
    while len(os.fsencode(start)) > room - 17:
        start = start[:-1]
    return start + "~" + hashlib.sha1(os.fsencode(name)).hexdigest()[:16]


def _remove_dead_writers_temps(directory: str, name: str) -> None:
    """Remove the temporaries that saves to ``name`` killed on this host left in ``directory``."""
    temp = re.compile(rf"\.{re.escape(_temp_stem(name))}\.{re.escape(_HOST)}-([0-9]+)-[0-9a-f]{{16}}\.pycoll-tmp")
    for entry in os.scandir(directory):
        match = temp.fullmatch(entry.name)
        if not match or not entry.is_file(follow_symlinks=False):
            continue
        pid = int(match.group(1))
        if pid > 0 and not alive(pid):
            try:
                os.unlink(entry.path)
            except FileNotFoundError:  # another save removed it first
                continue
            logger.info("save: removed %s, left by a save (pid %d) that did not finish",
                        entry.path, pid)


def _load_options(configs: Dict[str, Any]) -> Tuple[bool, bool]:
    unknown = sorted(set(configs) - set(_LOAD_CONFIGS))
    if unknown:
        raise ValueError(f"load: the configs {unknown} are not supported; pycoll reads single files "
                         f"(paddle's model_filename, params_filename and safetensors read other "
                         f"formats) and takes {list(_LOAD_CONFIGS)}")
    return bool(configs.get("return_numpy", False)), bool(configs.get("keep_name_table", False))


class MissingFile(FileNotFoundError, ValueError):
    """``load`` of a path that does not exist: paddle raises ValueError there, Python code
    expects FileNotFoundError; either ``except`` catches it."""


def load(path: "os.PathLike[str] | str | BinaryIO", **configs: Any) -> Any:
    """Read what `save` or paddle.save wrote, from a file or a binary file object (from its
    current position). Tensors come back as Tensors on the current device with their names
    (``return_numpy=True``: numpy arrays), numpy scalars as numpy scalars, as paddle.load gives
    them; a state dict's name table is dropped unless ``keep_name_table=True``. Raises
    FileNotFoundError (a ValueError too, as paddle's) for a missing file and ValueError naming
    the file for a truncated, corrupt or foreign one, or one naming something pycoll does not
    build."""
    return_numpy, keep_name_table = _load_options(configs)
    if hasattr(path, "read"):
        return _load_from(path, "the file object", return_numpy, keep_name_table)
    path = _path_arg(path, "load")
    if not os.path.exists(path):
        raise MissingFile(f"load: no such file {path!r}")
    if os.path.isdir(path):
        raise ValueError(f"load: path {path!r} is a directory; it must name a file written by save")
    with open(path, "rb") as f:
        return _load_from(f, repr(path), return_numpy, keep_name_table)


def _load_from(f: BinaryIO, label: str, return_numpy: bool, keep_name_table: bool) -> Any:
    seekable = getattr(f, "seekable", lambda: False)()
    if not seekable:  # the old ZIP format needs to seek, and a length is checked against the rest
        f = io.BytesIO(f.read())
    start = f.tell()
    size = f.seek(0, io.SEEK_END) - start
    f.seek(start)
    head = f.read(2)
    f.seek(start)
    if is_paddle_file(head):
        try:
            return read_paddle_file(f, size, return_numpy, keep_name_table)
        except RefusedName as exc:
            raise ValueError(f"load: {label} cannot be loaded: {exc}") from exc
        except (pickle.UnpicklingError, ValueError, TypeError, EOFError, RecursionError, MemoryError,
                AttributeError, IndexError, KeyError, ImportError) as exc:
            raise ValueError(f"load: {label} looks like a paddle.save file but cannot be read "
                             f"(truncated, corrupt or foreign): {exc}") from exc
    try:
        if head != _ZIP_START:
            raise ValueError(f"it begins with {head!r}: neither a pickle (paddle.save's format) nor "
                             f"a ZIP archive (what pycoll.save wrote before)")
        return _read_zip_checkpoint(f, size, return_numpy)
    except (zipfile.BadZipFile, ValueError, TypeError, KeyError, EOFError, OSError) as exc:
        raise ValueError(f"load: {label} is not a readable paddle.save or pycoll.save file "
                         f"(truncated, corrupt or foreign): {exc}") from exc


# -- the ZIP files earlier pycoll versions wrote (format version 1) ----------------------------------
def _read_zip_checkpoint(f: BinaryIO, file_size: int, return_numpy: bool) -> Any:
    """The tree in the version-1 file `f` (seekable, `file_size` bytes from its position): a ZIP
    archive (stored, not compressed) of ``pycoll.json`` and one ``.npy`` file per array. The JSON
    gives the format name and version and the tree, where dicts, lists and tuples are tagged
    objects, numbers/strings/booleans/None plain JSON, and arrays references to their entries:
    ``{"tensor": i}`` loads back as a Tensor, ``{"ndarray": i}`` as an array (``"dtype":
    "bfloat16"`` beside it: the entry holds 16-bit patterns). Nothing in it is trusted: entries
    must be stored as they are and no larger than the file, an array's header (numpy's .npy, at
    most 10 000 bytes) must describe exactly the bytes that follow it, and containers nest at most
    `MAX_DEPTH` deep; anything else is a ValueError (or zipfile.BadZipFile), raised before
    anything is allocated."""
    with zipfile.ZipFile(f) as zf:
        if _MANIFEST not in zf.namelist():
            raise ValueError("it has no pycoll manifest")
        try:
            manifest = json.loads(zf.read(_stored_entry(zf, _MANIFEST, file_size)))
        except RecursionError:
            raise ValueError("its manifest nests deeper than JSON can be read") from None
        if not isinstance(manifest, dict) or manifest.get("format") != _FORMAT:
            raise ValueError("its manifest is not a pycoll.save manifest")
        if manifest.get("version") != _VERSION:
            raise ValueError(f"it has format version {manifest.get('version')}, this pycoll "
                             f"reads version {_VERSION}")
        return _decode(manifest["tree"], lambda name: _read_npy(zf, name, file_size), return_numpy)


def _stored_entry(zf: zipfile.ZipFile, name: str, file_size: int) -> zipfile.ZipInfo:
    """``name``'s entry, checked to be stored as is and no larger than the file holding it."""
    try:
        info = zf.getinfo(name)
    except KeyError:
        raise ValueError(f"it has no entry {name!r}") from None
    if info.compress_type != zipfile.ZIP_STORED:
        raise ValueError(f"its entry {name!r} is compressed; pycoll.save stored entries as they are")
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
        return tensor_of(arr) if "tensor" in node and not return_numpy else arr
    if "dict" in node:
        return {k: _decode(v, read_array, return_numpy, depth + 1) for k, v in node["dict"]}
    if "list" in node:
        return [_decode(v, read_array, return_numpy, depth + 1) for v in node["list"]]
    if "tuple" in node:
        return tuple(_decode(v, read_array, return_numpy, depth + 1) for v in node["tuple"])
    raise ValueError(f"unknown node {sorted(node)}")
