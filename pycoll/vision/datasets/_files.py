"""Where the datasets' files are looked for: the path the user gave, else paddle's download
cache (``~/.cache/paddle/dataset/<name>/<file>``, so files paddle fetched are found). pycoll never
downloads: a missing file is an error saying where to put it."""
from __future__ import annotations

import os
from typing import Optional
from urllib.parse import unquote

DATA_HOME = os.path.join(os.path.expanduser("~"), ".cache", "paddle", "dataset")


def locate(path: Optional[str], argument: str, folder: str, url: str, download: bool, cls: str) -> str:
    """``path`` if given, else the cached copy of ``url`` under ``DATA_HOME/folder`` (named as
    paddle's download names it: the URL's last part, %-escapes kept)."""
    if path is not None:
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{cls}: {argument} {path!r} is not a file")
        return path
    if not download:
        raise ValueError(f"{cls}: {argument} is not set and downloading automatically is disabled "
                         f"(download=False); pass {argument}=<path of {unquote(url).rsplit('/', 1)[-1]}>")
    cached = os.path.join(DATA_HOME, folder, url.rsplit("/", 1)[-1])
    if not os.path.isfile(cached):
        raise FileNotFoundError(f"{cls}: pycoll does not download datasets; {cached} is missing. Fetch {url} "
                                f"yourself and put it there, or pass {argument}=<its path>")
    return cached


def check_mode(mode: str, cls: str) -> str:
    if not isinstance(mode, str) or mode.lower() not in ("train", "test"):
        raise ValueError(f"{cls}: mode must be 'train' or 'test', got {mode!r}")
    return mode.lower()


def check_backend(backend: Optional[str], cls: str) -> str:
    from pycoll.vision.image import get_image_backend
    backend = get_image_backend() if backend is None else backend
    if backend not in ("pil", "cv2"):
        raise ValueError(f"{cls}: backend must be 'pil' or 'cv2', got {backend!r}")
    return backend
