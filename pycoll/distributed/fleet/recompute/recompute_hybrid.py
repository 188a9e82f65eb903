"""paddle's ``fleet.recompute.recompute_hybrid`` module: recomputation of model-parallel blocks.

paddle's ``ctx`` options ``offload`` (keep the saved inputs on the host) and ``partition`` (keep
1/n of each saved input per model-parallel rank, all-gathered again in backward) decide only where
the block's saved inputs wait for backward: the values and gradients are those of plain
``recompute``. pycoll keeps saved inputs where they are, so both are accepted and change nothing.
"""
from __future__ import annotations

from typing import Any, Callable, Dict

from pycoll.distributed.fleet.recompute.recompute import recompute

__all__ = ["recompute_hybrid"]


def recompute_hybrid(ctx: Dict[str, Any], function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``recompute`` for model-parallel blocks (paddle's ``recompute_hybrid``): the random states,
    the model-parallel tracker's included, are always preserved. ``ctx`` is a dict of
    ``mp_group`` (the model-parallel group the activations would be split over),
    ``offload`` and ``partition`` (default False; memory options that change nothing here, see the
    module's text)."""
    if not isinstance(ctx, dict):
        raise TypeError(f"recompute_hybrid: ctx must be a dict of mp_group, offload and partition, got "
                        f"{type(ctx).__name__}")
    unknown = set(ctx) - {"mp_group", "offload", "partition"}
    if unknown:
        raise ValueError(f"recompute_hybrid: ctx takes mp_group, offload and partition, got {sorted(unknown)}")
    kwargs.pop("preserve_rng_state", None)
    return recompute(function, *args, preserve_rng_state=True, **kwargs)
