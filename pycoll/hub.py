"""paddle's ``paddle.hub``: models published as a ``hubconf.py`` (its public callables are the entry
points; an optional ``dependencies`` list names the modules they need). pycoll downloads nothing:
``source='local'`` reads the ``hubconf.py`` of a folder on this machine, and ``'github'`` /
``'gitee'`` (paddle's default, which fetches the repository's archive) raise a RuntimeError that
says to clone the repository and pass its folder. ``load_state_dict_from_url`` likewise loads a
file already in ``model_dir`` under the URL's file name and downloads nothing.
"""
from __future__ import annotations

import builtins
import importlib.util
import os
import sys
from types import ModuleType
from typing import Any, Optional
from urllib.parse import urlparse

from pycoll.device import device_guard
from pycoll.serialization import load as _load

__all__ = ["list", "help", "load", "load_state_dict_from_url"]

_SOURCES = ("github", "gitee", "local")
_MAP_LOCATIONS = {"cpu": "cpu", "gpu": "gpu:0", "numpy": None, "np": None}
# paddle's cache folder when PADDLE_HOME / XDG_CACHE_HOME are unset (pycoll reads neither)
_CHECKPOINTS = os.path.join("~", ".cache", "paddle", "hub", "checkpoints")


def _hubconf(repo_dir: str, source: str) -> ModuleType:
    """The ``hubconf.py`` of ``repo_dir`` as a fresh module; its folder is on ``sys.path`` while it
    runs, so it can import the modules beside it."""
    if source not in _SOURCES:
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "gitee" | "local".')
    if source != "local":
        raise RuntimeError(f"hub: source={source!r} downloads {repo_dir!r} from {source}, and pycoll downloads "
                           f"nothing: clone the repository and pass its folder with source='local'")
    if not isinstance(repo_dir, str):
        raise TypeError(f"hub: repo_dir must be the str path of a folder holding hubconf.py, "
                        f"got {type(repo_dir).__name__}")
    path = os.path.join(repo_dir, "hubconf.py")
    if not os.path.isfile(path):
        raise RuntimeError(f"hub: repo_dir must hold a hubconf.py, and {path} does not exist")
    spec = importlib.util.spec_from_file_location("hubconf", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, repo_dir)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(repo_dir)
    return module


def _entry(module: ModuleType, model: Any) -> Any:
    if not isinstance(model, str):
        raise ValueError(f"Invalid input: model should be a str of function name, got {type(model).__name__}")
    entry = getattr(module, model, None)
    if entry is None or not callable(entry):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return entry


def list(repo_dir: str, source: str = "github", force_reload: bool = False) -> builtins.list:  # noqa: A001
    """The entry points of ``repo_dir``'s hubconf: its public callables' names, sorted."""
    module = _hubconf(repo_dir, source)
    return [name for name in dir(module) if not name.startswith("_") and callable(getattr(module, name))]


def help(repo_dir: str, model: str, source: str = "github", force_reload: bool = False) -> Optional[str]:  # noqa: A001
    """The docstring of entry point ``model`` of ``repo_dir``'s hubconf."""
    return _entry(_hubconf(repo_dir, source), model).__doc__


def load(repo_dir: str, model: str, source: str = "github", force_reload: bool = False, **kwargs: Any) -> Any:
    """Call entry point ``model`` of ``repo_dir``'s hubconf with ``kwargs`` (usually a Layer comes
    back), after checking that the modules its ``dependencies`` list names are importable."""
    module = _hubconf(repo_dir, source)
    missing = [name for name in getattr(module, "dependencies", None) or () if not _importable(name)]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    return _entry(module, model)(**kwargs)


def _importable(name: str) -> bool:
    """Whether module ``name`` can be imported; paddle's modules are pycoll's (a hubconf written
    for paddle names ``paddle`` among its dependencies)."""
    if name == "paddle" or name.startswith("paddle."):
        name = "pycoll" + name[len("paddle"):]
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent package is missing, or the name is malformed
        return False


def load_state_dict_from_url(url: str, model_dir: Optional[str] = None, check_hash: bool = False,
                             file_name: Optional[str] = None, map_location: Optional[str] = None) -> Any:
    """``pycoll.load`` of the file ``url`` names (``file_name``, else the URL's last part) in
    ``model_dir`` (default paddle's ``~/.cache/paddle/hub/checkpoints``). pycoll downloads nothing:
    a file not there raises a RuntimeError saying where to put it. ``map_location`` 'cpu' / 'gpu'
    loads onto that device, 'numpy' / 'np' gives NumPy arrays. ``check_hash`` is taken and unused
    (there is no download to check)."""
    if not isinstance(url, str):
        raise TypeError(f"load_state_dict_from_url: url must be a str, got {type(url).__name__}")
    if map_location is not None and map_location not in _MAP_LOCATIONS:
        raise ValueError(f"load_state_dict_from_url: map_location must be None, 'cpu', 'gpu', 'numpy' or 'np', "
                         f"got {map_location!r}")
    folder = os.path.expanduser(_CHECKPOINTS if model_dir is None else model_dir)
    path = os.path.join(folder, file_name if file_name is not None else os.path.basename(urlparse(url).path))
    if not os.path.isfile(path):
        raise RuntimeError(f"load_state_dict_from_url: {path} does not exist, and pycoll downloads nothing: "
                           f"download {url} to that path (or pass model_dir / file_name)")
    if map_location in ("numpy", "np"):
        return _load(path, return_numpy=True)
    if map_location is None:
        return _load(path)
    with device_guard(_MAP_LOCATIONS[map_location]):
        return _load(path)
