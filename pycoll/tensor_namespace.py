"""``paddle.tensor`` as a namespace of ops: paddle defines its tensor functions in
``paddle.tensor`` and its submodules (``math``, ``manipulation``, ``creation``, ``linalg``,
``logic``, ``search``, ``stat``, ``random``, ``attribute``, ``einsum``, ``ops``, ``array``,
``layer_function_generator``, ``to_string``) and re-exports them at the top, so scripts write
``paddle.tensor.matmul`` or ``from paddle.tensor.manipulation import reshape``. In pycoll
``pycoll.tensor`` is the Tensor module; a name it lacks is looked up here among pycoll's top-level
functions (:func:`op`), and each submodule is a module that answers the same way."""
from __future__ import annotations

import sys
import types
from typing import Any

_EXTRAS: list = []  # install's extras
SUBMODULES = ("array", "attribute", "creation", "einsum", "layer_function_generator", "linalg", "logic",
              "manipulation", "math", "ops", "random", "search", "stat", "to_string")


def op(module: str, name: str) -> Any:
    """pycoll's function ``name`` (what ``paddle.tensor...name`` is): the top-level one, else
    ``pycoll.linalg``'s (paddle.tensor holds qr, eig, lstsq...), else ``pycoll.tensor_legacy``'s
    (the tensor arrays, fill_constant), else the Tensor method, called with the tensor first (the
    in-place ``add_``, ``clip_``...); AttributeError, naming ``module``, where pycoll has none."""
    import pycoll

    if not name.startswith("_"):
        for namespace in (pycoll, pycoll.linalg, *_EXTRAS, pycoll.Tensor):
            found = getattr(namespace, name, None)
            if callable(found) and not isinstance(found, (type, types.ModuleType)):
                return found
    raise AttributeError(f"module {module!r} has no attribute {name!r}")


def _submodule(name: str) -> types.ModuleType:
    full = f"pycoll.tensor.{name}"
    module = types.ModuleType(full, f"paddle.tensor.{name}'s functions: pycoll's top-level ones of those names.")
    module.__getattr__ = lambda attr: op(full, attr)  # type: ignore[attr-defined]
    return module


def install(tensor_module: types.ModuleType, extras: types.ModuleType) -> None:
    """Make the submodules importable (``import pycoll.tensor.math``) and attributes of
    ``tensor_module``; ``extras`` (``pycoll.tensor_legacy``, given by the package's face) holds
    paddle.tensor's names found nowhere else."""
    _EXTRAS.append(extras)
    for name in SUBMODULES:
        module = sys.modules.setdefault(f"pycoll.tensor.{name}", _submodule(name))
        setattr(tensor_module, name, module)
