"""Paddle's module paths over pycoll's flat namespaces. paddle defines its functions in submodules
and re-exports them one level up, so scripts write ``paddle.tensor.math.matmul`` or
``from paddle.nn.functional.loss import mse_loss`` where pycoll keeps the function only at the top
(``pycoll.matmul``, ``pycoll.nn.functional.mse_loss``). :func:`install_paths` makes each such
submodule path a module that answers a name with the function of that name found in its parent's
namespaces (:func:`first_function`), and an AttributeError naming the module where pycoll has none.

``paddle.tensor``'s submodules (``math``, ``manipulation``, ``creation``, ``linalg``, ``logic``,
``search``, ``stat``, ``random``, ``attribute``, ``einsum``, ``ops``, ``array``,
``layer_function_generator``, ``to_string``) are installed by :func:`install`; in pycoll
``pycoll.tensor`` is the Tensor module, and a name it lacks is looked up by :func:`op`."""
from __future__ import annotations

import types
from typing import Any, Iterable

from pycoll._module_paths import install_paths

_EXTRAS: list = []  # install's extras
SUBMODULES = ("array", "attribute", "creation", "einsum", "layer_function_generator", "linalg", "logic",
              "manipulation", "math", "ops", "random", "search", "stat", "to_string")


def first_function(module: str, name: str, namespaces: Iterable[Any]) -> Any:
    """The first function (callable, not a class or a module) named ``name`` in ``namespaces``;
    AttributeError, naming ``module``, where none has one (or ``name`` is private)."""
    if not name.startswith("_"):
        for namespace in namespaces:
            found = getattr(namespace, name, None)
            if callable(found) and not isinstance(found, (type, types.ModuleType)):
                return found
    raise AttributeError(f"module {module!r} has no attribute {name!r}")


def op(module: str, name: str) -> Any:
    """pycoll's function ``name`` (what ``paddle.tensor...name`` is): the top-level one, else
    ``pycoll.linalg``'s (paddle.tensor holds qr, eig, lstsq...), else ``pycoll.tensor_legacy``'s
    (the tensor arrays, fill_constant), else the Tensor method, called with the tensor first (the
    in-place ``add_``, ``clip_``...); AttributeError, naming ``module``, where pycoll has none."""
    import pycoll

    return first_function(module, name, (pycoll, pycoll.linalg, *_EXTRAS, pycoll.Tensor))


def install(tensor_module: types.ModuleType, extras: types.ModuleType) -> None:
    """Make paddle.tensor's submodules importable (``import pycoll.tensor.math``) and attributes of
    ``tensor_module``; ``extras`` (``pycoll.tensor_legacy``, given by the package's face) holds
    paddle.tensor's names found nowhere else."""
    _EXTRAS.append(extras)
    install_paths(tensor_module, SUBMODULES, op, "pycoll's top-level functions of those names.")
