"""`pycoll.save` / `pycoll.load`.

File format: a ZIP archive (stored, not compressed) holding `pycoll.json` and one `.npy` file per
array. The JSON gives the format name and version and the object tree, where dicts, lists and
tuples are tagged objects, numbers/strings/booleans/None are plain JSON, and arrays are references
to their `.npy` entries: `{"tensor": i}` loads back as a Tensor, `{"ndarray": i}` as a numpy
array. Nothing is unpickled, so loading a foreign file cannot run code.

Saving is atomic: the archive is written to a temporary file in the target directory, whose name
includes the pid and a random suffix, and moved into place with os.replace, so two processes
saving the same path at once leave one complete file, never a torn one.
"""
from __future__ import annotations

import json
import os
import secrets
import zipfile
from typing import Any, List

import numpy as np

from pycoll.device import is_array
from pycoll.tensor import Tensor, to_tensor

FORMAT = "pycoll.save"
VERSION = 1
_MANIFEST = "pycoll.json"


def _encode(obj: Any, arrays: List[np.ndarray], where: str) -> Any:
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, Tensor):
        arrays.append(obj.numpy())
        return {"tensor": len(arrays) - 1}
    if is_array(obj) or isinstance(obj, np.generic):
        arrays.append(obj.get() if hasattr(obj, "get") and not isinstance(obj, np.generic)
                      else np.asarray(obj))
        return {"ndarray": len(arrays) - 1}
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            if not (k is None or isinstance(k, (bool, int, float, str))):
                raise TypeError(f"save: dict keys must be str, int, float, bool or None, got "
                                f"{type(k).__name__} at {where}")
            items.append([k, _encode(v, arrays, f"{where}[{k!r}]")])
        return {"dict": items}
    if isinstance(obj, (list, tuple)):
        kind = "list" if isinstance(obj, list) else "tuple"
        return {kind: [_encode(v, arrays, f"{where}[{i}]") for i, v in enumerate(obj)]}
    raise TypeError(f"save: cannot store {type(obj).__name__} at {where}; supported are Tensors, "
                    f"arrays, numbers, strings, None and dicts/lists/tuples of them")


def save(obj: Any, path: "os.PathLike[str] | str") -> None:
    """Write `obj` (Tensors, arrays, numbers, strings, nested dicts/lists/tuples) to `path`.

    Tensors and arrays are stored as host numpy arrays; missing parent directories are created.
    """
    path = os.fspath(path)
    arrays: List[np.ndarray] = []
    tree = _encode(obj, arrays, "obj")
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.{secrets.token_hex(8)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as zf:
                manifest = {"format": FORMAT, "version": VERSION, "tree": tree}
                zf.writestr(_MANIFEST, json.dumps(manifest))
                for i, arr in enumerate(arrays):
                    with zf.open(f"{i}.npy", "w", force_zip64=True) as entry:
                        np.lib.format.write_array(entry, np.ascontiguousarray(arr), allow_pickle=False)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _decode(node: Any, zf: zipfile.ZipFile, return_numpy: bool) -> Any:
    if not isinstance(node, dict):
        return node
    if "tensor" in node or "ndarray" in node:
        index = node.get("tensor", node.get("ndarray"))
        with zf.open(f"{index}.npy") as entry:
            arr = np.lib.format.read_array(entry, allow_pickle=False)
        return to_tensor(arr) if "tensor" in node and not return_numpy else arr
    if "dict" in node:
        return {k: _decode(v, zf, return_numpy) for k, v in node["dict"]}
    if "list" in node:
        return [_decode(v, zf, return_numpy) for v in node["list"]]
    if "tuple" in node:
        return tuple(_decode(v, zf, return_numpy) for v in node["tuple"])
    raise ValueError(f"unknown node {sorted(node)}")


def load(path: "os.PathLike[str] | str", return_numpy: bool = False) -> Any:
    """Read what `save` wrote. Tensors come back as Tensors on the current device (numpy arrays
    with return_numpy=True). Raises FileNotFoundError for a missing file and ValueError for a
    truncated, corrupt or foreign one."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"load: no such file {path!r}")
    try:
        with zipfile.ZipFile(path) as zf:
            try:
                manifest = json.loads(zf.read(_MANIFEST))
            except KeyError:
                raise ValueError("it has no pycoll manifest") from None
            if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
                raise ValueError("its manifest is not a pycoll.save manifest")
            if manifest.get("version") != VERSION:
                raise ValueError(f"it has format version {manifest.get('version')}, this pycoll "
                                 f"reads version {VERSION}")
            return _decode(manifest["tree"], zf, return_numpy)
    except (zipfile.BadZipFile, ValueError, TypeError, KeyError, EOFError, OSError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise ValueError(f"load: {path!r} is not a readable pycoll.save file "
                         f"(truncated, corrupt or foreign): {exc}") from exc
