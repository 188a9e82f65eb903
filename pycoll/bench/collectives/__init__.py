"""The collectives pycoll-bench measures: one module each, found here.

Adding a collective is one new module in this package, named after the op (``gather.py`` for
``gather``), that defines ``OP``, an instance of a :class:`pycoll.bench.ops.Op` subclass
holding everything about the op: its name, its ``position`` in listings and ``all`` runs,
its layout and busbw factor (or those of :class:`~pycoll.bench.ops.Blocked`), where the input
goes and the result lands, the expected result, and the three calls (``through_pycoll``,
``through_mpi``, ``through_nccl``) with the raw calls' names. The command line, the checks, the
runner and the report read :data:`OPS` and need no change.
"""
from __future__ import annotations

import importlib
import pkgutil
from typing import Dict, Iterable

from pycoll.bench.ops import Op


def discover(package: str, path: Iterable[str]) -> Dict[str, Op]:
    """The ``OP`` of every module of ``package`` (whose ``__path__`` is ``path``) by name, in
    ``position`` order; ImportError for a module without the Op its name promises."""
    found = []
    for module in pkgutil.iter_modules(path):
        if module.name.startswith("_"):
            continue
        op = getattr(importlib.import_module(f"{package}.{module.name}"), "OP", None)
        if not isinstance(op, Op) or op.name != module.name:
            raise ImportError(f"{package}.{module.name} must define OP, the Op of the collective "
                              f"{module.name!r} (got {op!r})")
        found.append(op)
    return {op.name: op for op in sorted(found, key=lambda op: op.position)}


OPS: Dict[str, Op] = discover(__name__, __path__)


def busbw_factor(op: str, nranks: int) -> float:
    """nccl-tests' bus-bandwidth factor of ``op`` on ``nranks`` ranks (busbw = algbw * factor)."""
    if nranks < 1:
        raise ValueError(f"nranks={nranks}: it must be at least 1")
    try:
        spec = OPS[op]
    except KeyError:
        raise ValueError(f"op={op!r} is not one of {', '.join(OPS)}") from None
    return spec.busbw_factor(nranks)
