"""``pycoll.autograd.saved_tensors_hooks``: a pack / unpack pair for the tensors a PyLayer saves.

Paddle calls ``pack_hook`` on every tensor saved for backward, by its built-in ops and by
``PyLayerContext.save_for_backward``, and ``unpack_hook`` on what it returned whenever backward
needs the tensor. pycoll applies the pair to PyLayer's saved tensors only: its built-in ops keep
the arrays their backward needs in the backward function's closure (``pycoll._graph``), with no
record of which tensors those are, so there is nothing the hooks could be applied to there short
of rewriting every op; inside the context the ops keep their arrays as usual (a warning says so
the first time the context is entered).
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Tuple

from pycoll._logging import logger
from pycoll.tensor import Tensor

_active: Optional["saved_tensors_hooks"] = None
_warned = False


class saved_tensors_hooks:
    """``with saved_tensors_hooks(pack_hook, unpack_hook):`` — every Tensor a PyLayer's forward
    passes to ``ctx.save_for_backward`` inside the block is handed to ``pack_hook(tensor)`` at once,
    and ctx keeps what it returns instead of the tensor; each ``ctx.saved_tensor()`` call (in
    backward, even after the block has ended) returns ``unpack_hook(packed)`` for each, which must
    be a Tensor with the original's values. One pair at a time, as in paddle: entering a second
    one inside the first raises ValueError.

    PyLayer only: pycoll's built-in ops keep what their backward needs without calling the hooks
    (see the module's docstring), where paddle calls them for the ops' saved tensors too.
    """

    def __init__(self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]):
        for name, hook in (("pack_hook", pack_hook), ("unpack_hook", unpack_hook)):
            if not callable(hook):
                raise TypeError(f"saved_tensors_hooks: {name} must be callable, got {type(hook).__name__}")
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self) -> None:
        global _active, _warned
        if _active is not None:
            raise ValueError("saved_tensors_hooks: only one pair of hooks is allowed at a time (this one is "
                             "entered inside another)")
        _active = self
        if not _warned:
            _warned = True
            logger.warning("saved_tensors_hooks: pycoll applies the hooks to the tensors PyLayers save; its "
                           "built-in ops keep what their backward needs without calling them")

    def __exit__(self, *exc: Any) -> None:
        global _active
        _active = None


class _Packed:
    """A saved tensor as pack_hook left it, with the unpack_hook of the same pair."""

    __slots__ = ("value", "unpack_hook")

    def __init__(self, value: Any, unpack_hook: Callable[[Any], Tensor]):
        self.value, self.unpack_hook = value, unpack_hook

    def unpack(self) -> Tensor:
        tensor = self.unpack_hook(self.value)
        if not isinstance(tensor, Tensor):
            raise TypeError(f"saved_tensors_hooks: unpack_hook must return a Tensor, got {type(tensor).__name__}")
        return tensor


def pack_saved(items: Tuple[Any, ...]) -> Tuple[Any, ...]:
    """What a PyLayer context keeps of the tensors given to save_for_backward: each Tensor packed
    by the active pair's pack_hook, if a pair is active; everything else as it is."""
    hooks = _active
    if hooks is None:
        return items
    return tuple(_Packed(hooks.pack_hook(t), hooks.unpack_hook) if isinstance(t, Tensor) else t for t in items)


def unpack_saved(items: Tuple[Any, ...]) -> Tuple[Any, ...]:
    """The tensors back from what ``pack_saved`` kept (unpack_hook runs on every call)."""
    return tuple(t.unpack() if isinstance(t, _Packed) else t for t in items)
