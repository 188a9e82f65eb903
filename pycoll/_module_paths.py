"""Submodule paths that are no files: paddle defines its functions in submodules and re-exports
them one level up, and scripts import the submodule (``from paddle.nn.functional.loss import
mse_loss``, ``from paddle.distributed.communication.reduce import ReduceOp``) where pycoll keeps
the names only in the parent. :func:`install_paths` makes such paths importable."""
from __future__ import annotations

import sys
import types
from typing import Any, Callable, Iterable


def install_paths(parent: types.ModuleType, names: Iterable[str], lookup: Callable[[str, str], Any],
                  what: str) -> None:
    """Make ``parent.<name>`` for each of ``names`` importable (``import parent.name``,
    ``from parent.name import f``) and an attribute of ``parent``: a module whose attribute ``f``
    is ``lookup(module_name, f)``. A real module already at that path is kept; so is a function
    ``parent`` already holds under that name (paddle's ``F.sparse_attention`` is the function,
    its module importable only by path). ``what`` says, in each module's docstring, where its
    functions come from."""
    for name in names:
        full = f"{parent.__name__}.{name}"
        module = types.ModuleType(full, f"paddle's {full.replace('pycoll', 'paddle', 1)}: {what}")
        module.__getattr__ = lambda attr, full=full: lookup(full, attr)  # type: ignore[attr-defined]
        module = sys.modules.setdefault(full, module)
        if isinstance(getattr(parent, name, module), types.ModuleType):
            setattr(parent, name, module)


def picklable_by_name(module: types.ModuleType) -> None:
    """Make every public function of ``module`` that pickle cannot find where its ``__module__``
    and ``__qualname__`` say (a wrapper made with ``functools.wraps``, which copies the wrapped
    function's names, stands here in the wrapped one's place) findable as ``module.<name>``:
    pickle sends a function by that name, and so do RPC and multiprocessing."""
    for name, obj in list(vars(module).items()):
        if name.startswith("_") or not isinstance(obj, types.FunctionType):
            continue
        found: Any = sys.modules.get(obj.__module__)
        for part in obj.__qualname__.split("."):
            found = getattr(found, part, None)
        if found is not obj:
            obj.__module__, obj.__qualname__ = module.__name__, name
