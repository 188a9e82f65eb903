"""The folder a collective save writes into, made (or checked) by every rank before anything is
sent.

A save that made its folder on one rank only would raise there while the other ranks went on into
the save's collectives and waited for it; paddle's savers make the folder on every rank first, so
every rank meets a bad path alike and the job can go on. Every rank must see the folder (one
machine, or a shared file system)."""
from __future__ import annotations

import errno
import os
from typing import Any


def make_output_folder(api: str, argument: str, path: Any) -> str:
    """``path`` as a str, the folder made if missing. Raises on the calling rank, naming ``api``
    and ``argument``: TypeError for what is not a path, FileExistsError where ``path`` is a file,
    and the OSError met making the folder (FileNotFoundError, PermissionError, ...) or
    PermissionError where the folder cannot be written."""
    try:
        path = os.fspath(path)
    except TypeError:
        raise TypeError(f"{api}: {argument} must be a path (str or os.PathLike), got {type(path).__name__}") from None
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if os.path.exists(path) and not os.path.isdir(path):
        raise FileExistsError(errno.EEXIST, f"{api}: {argument}={path!r} is a file; it must be a folder "
                                            f"(made where missing)")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as err:
        raise type(err)(err.errno, f"{api}: cannot make the folder {argument}={path!r}: "
                                   f"{err.strerror or err}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise PermissionError(errno.EACCES, f"{api}: cannot write into the folder {argument}={path!r}")
    return path
