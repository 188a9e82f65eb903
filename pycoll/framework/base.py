"""paddle's ``paddle.base`` (served as ``pycoll.base``; ``import pycoll.base`` works too): what a
dygraph script reaches through it. Paddle's docstrings call ``paddle.base.set_flags(...)``; older
scripts ``paddle.base.in_dygraph_mode()`` or ``paddle.base.CPUPlace()``. ``set_flags`` and
``get_flags`` are pycoll's; the other names paddle.base shares with paddle's API are pycoll's
objects (:func:`__getattr__`), and the static-graph machinery (Program, Executor, Scope, core...)
raises AttributeError naming ``pycoll.base``."""
from __future__ import annotations

from typing import Any, List

from pycoll.framework.modes import in_dynamic_or_pir_mode, in_pir_mode
from pycoll.runtime_config import get_flags, set_flags

__all__ = ["get_flags", "in_dynamic_or_pir_mode", "in_pir_mode", "set_flags"]

# paddle.base's names for what paddle's top level also holds (paddle.base.X is paddle.X, or paddle.Y
# for the renamed ones): base name -> pycoll's top-level name. paddle.base's io, incubate, dataset,
# reader and device_guard are static-graph objects other than paddle's of those names; its
# framework module is served by pycoll.framework.base_framework (the types checks name).
_FROM_TOP = {**{name: name for name in ("CPUPlace", "CUDAPinnedPlace", "CUDAPlace", "CustomPlace", "IPUPlace",
                                        "ParamAttr", "Tensor", "XPUPinnedPlace", "XPUPlace", "is_compiled_with_cinn",
                                        "is_compiled_with_cuda", "is_compiled_with_rocm", "is_compiled_with_xpu")},
             "in_dygraph_mode": "in_dynamic_mode", "enable_dygraph": "disable_static",
             "enable_imperative": "disable_static", "disable_dygraph": "enable_static",
             "disable_imperative": "enable_static"}
_ELSEWHERE = ("initializer", "set_global_initializer", "unique_name", "require_version")


def _elsewhere(name: str) -> Any:
    """paddle.base's names (``_ELSEWHERE``) whose pycoll objects live below the top level."""
    if name in ("initializer", "set_global_initializer"):
        from pycoll.nn import initializer

        return initializer if name == "initializer" else initializer.set_global_initializer
    from pycoll import utils

    return getattr(utils, name)


def __getattr__(name: str) -> Any:
    """paddle.base's ``name``: the pycoll object paddle's is (``_FROM_TOP``, ``_elsewhere``)."""
    import pycoll

    if name in _FROM_TOP:
        return getattr(pycoll, _FROM_TOP[name])
    if name in _ELSEWHERE:
        return _elsewhere(name)
    if name == "dygraph":  # (pycoll/__init__ also serves it as the module pycoll.base.dygraph)
        from pycoll.framework import dygraph

        return dygraph
    if name == "framework":  # (served as the module pycoll.base.framework too)
        from pycoll.framework import base_framework

        return base_framework
    raise AttributeError(f"module 'pycoll.base' has no attribute {name!r}")


def __dir__() -> List[str]:
    return sorted({*__all__, *_FROM_TOP, *_ELSEWHERE, "dygraph", "framework"})
