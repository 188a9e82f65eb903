"""``GradScaler`` (paddle.amp): dynamic loss scaling.

``scale(loss)`` multiplies the loss by the scale; ``step(optimizer)`` (or ``minimize``) divides the
parameters' gradients by it, and skips the update when any gradient is inf or NaN; ``update()``
halves the scale after ``decr_every_n_nan_or_inf`` such steps and doubles it after
``incr_every_n_steps`` clean ones (paddle's rule and defaults). As in paddle, it only acts on an
accelerator: on the CPU it warns that it "makes no effect", and every call passes straight to the
optimizer. Ranks whose gradients could disagree on inf (sharded or model-parallel gradients) need
``fleet.distributed_scaler(scaler)``, which makes every rank see any rank's inf.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable, Dict, List, Optional

import numpy as np

from pycoll._logging import logger
from pycoll.amp.auto_cast import last_autocast_dtype, on_accelerator, place_name
from pycoll.device import array_module
from pycoll.tensor import Tensor

_INIT, _UNSCALED, _STEPPED = "init", "unscaled", "stepped"


class GradScaler:
    def __init__(self, enable: bool = True, init_loss_scaling: float = 2.0 ** 16, incr_ratio: float = 2.0,
                 decr_ratio: float = 0.5, incr_every_n_steps: int = 2000, decr_every_n_nan_or_inf: int = 1,
                 use_dynamic_loss_scaling: bool = True):
        if enable and not on_accelerator():
            warnings.warn(f"AmpScaler can only be enabled on CUDAPlace, XPUPlace and CustomPlace, current place "
                          f"is {place_name()}, so it makes no effect.", stacklevel=2)
            enable = False
        self._enable = bool(enable)
        self._use_dynamic_loss_scaling = False
        self._init_loss_scaling = 1.0
        # the settings are kept even when disabled: their getters report them (paddle's documentation)
        self._incr_ratio, self._decr_ratio = incr_ratio, decr_ratio
        self._incr_every_n_steps, self._decr_every_n_nan_or_inf = incr_every_n_steps, decr_every_n_nan_or_inf
        self._incr_count = self._decr_count = 0
        self._scale = 1.0
        if self._enable:
            if not incr_ratio > 1.0:
                raise ValueError(f"incr_ratio must be > 1.0, got {incr_ratio!r}")
            if not decr_ratio < 1.0:
                raise ValueError(f"decr_ratio must be < 1.0, got {decr_ratio!r}")
            self._init_loss_scaling = init_loss_scaling
            self._scale = float(init_loss_scaling)
            self._use_dynamic_loss_scaling = bool(use_dynamic_loss_scaling)
        self._found_inf = False
        self._unscaled_any = False  # the last unscale_ had gradients (an open gradient-merge window has none)
        self._states: Dict[int, str] = {}
        self._combine_found_inf: Optional[Callable[[bool], bool]] = None  # fleet.distributed_scaler's

    # -- the training step ---------------------------------------------------------------------
    def scale(self, var: Tensor) -> Tensor:
        """``var`` times the loss scale (``var`` itself when disabled). Dynamic loss scaling
        turns itself off, as paddle's does, when the last ``auto_cast`` entered (the loss is
        usually scaled after its block) is not float16."""
        if not self._enable:
            return var
        if not isinstance(var, Tensor):
            raise TypeError(f"var must be a Tensor, got {type(var).__name__}")
        if last_autocast_dtype() != "float16" and self._use_dynamic_loss_scaling:
            self._enable = self._use_dynamic_loss_scaling = False
            self._init_loss_scaling = 1.0
            warnings.warn(f"It is not recommended to use dynamic loss scaling for "
                          f"{last_autocast_dtype()}, so GradScaler is disable by default.", stacklevel=2)
        return var * self._scale if self._enable else var

    def unscale_(self, optimizer: Any) -> None:
        """Divide the gradients of ``optimizer``'s parameters by the scale now (to clip them, say),
        and note whether any is inf or NaN; at most once between two ``update()``s."""
        if not self._enable:
            return
        state = self._states.get(id(optimizer), _INIT)
        if state == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        grads = _grads(optimizer)
        for grad in grads:
            grad *= 1.0 / self._scale
        found = False
        if grads:  # one host read for all of them (on a GPU, one synchronisation per step)
            xp = array_module(grads[0])
            found = not bool(xp.stack([xp.isfinite(grad).all() for grad in grads]).all())
        if self._combine_found_inf is not None:
            found = self._combine_found_inf(found)
        self._found_inf = found
        self._unscaled_any = bool(grads)
        self._states[id(optimizer)] = _UNSCALED

    def step(self, optimizer: Any) -> None:
        """``optimizer.step()`` on unscaled gradients, skipped when one is inf or NaN."""
        if not self._enable:
            return optimizer.step()
        if self._states.get(id(optimizer)) == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if self._states.get(id(optimizer), _INIT) == _INIT:
            self.unscale_(optimizer)
        if not self._found_inf:
            optimizer.step()
        self._states[id(optimizer)] = _STEPPED
        if not self._use_dynamic_loss_scaling:
            self._states.clear()

    def minimize(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """``step`` then ``update`` (paddle's one call); with the scaler disabled,
        ``optimizer.minimize(*args, **kwargs)``."""
        if not self._enable:
            return optimizer.minimize(*args, **kwargs)
        if self._states.get(id(optimizer), _INIT) == _INIT:
            self.unscale_(optimizer)
        result = (None, None) if self._found_inf else optimizer.minimize(*args, **kwargs)
        if self._use_dynamic_loss_scaling:
            self._update()
        self._states.clear()
        return result

    def update(self) -> None:
        """Move the loss scale by what the last step found (dynamic scaling only)."""
        if self._enable and self._use_dynamic_loss_scaling:
            self._update()
            self._states.clear()

    def _update(self) -> None:
        if not self._unscaled_any:  # nothing was unscaled (a gradient-merge window still open): the
            return                  # scale its accumulating gradients carry must not change
        if self._found_inf:
            self._incr_count = 0
            self._decr_count += 1
            if self._decr_count == self._decr_every_n_nan_or_inf:
                logger.info("GradScaler: found inf or nan, the loss scale goes from %s to %s", self._scale,
                            self._scale * self._decr_ratio)
                self._scale *= self._decr_ratio
                self._decr_count = 0
        else:
            self._decr_count = 0
            self._incr_count += 1
            if self._incr_count == self._incr_every_n_steps:
                self._scale *= self._incr_ratio
                self._incr_count = 0

    # -- settings and state ----------------------------------------------------------------------
    def is_enable(self) -> bool:
        return self._enable

    def is_use_dynamic_loss_scaling(self) -> bool:
        return self._use_dynamic_loss_scaling

    def get_init_loss_scaling(self) -> float:
        return self._init_loss_scaling

    def set_init_loss_scaling(self, new_init_loss_scaling: float) -> None:
        """Restart the scale from this value."""
        self._init_loss_scaling = new_init_loss_scaling
        self._scale = float(new_init_loss_scaling)

    def get_incr_ratio(self) -> float:
        return self._incr_ratio

    def set_incr_ratio(self, new_incr_ratio: float) -> None:
        if not new_incr_ratio > 1.0:
            raise ValueError(f"new_incr_ratio must be > 1.0, got {new_incr_ratio!r}")
        self._incr_ratio = new_incr_ratio

    def get_decr_ratio(self) -> float:
        return self._decr_ratio

    def set_decr_ratio(self, new_decr_ratio: float) -> None:
        if not new_decr_ratio < 1.0:
            raise ValueError(f"new_decr_ratio must be < 1.0, got {new_decr_ratio!r}")
        self._decr_ratio = new_decr_ratio

    def get_incr_every_n_steps(self) -> int:
        return self._incr_every_n_steps

    def set_incr_every_n_steps(self, new_incr_every_n_steps: int) -> None:
        self._incr_every_n_steps = new_incr_every_n_steps

    def get_decr_every_n_nan_or_inf(self) -> int:
        return self._decr_every_n_nan_or_inf

    def set_decr_every_n_nan_or_inf(self, new_decr_every_n_nan_or_inf: int) -> None:
        self._decr_every_n_nan_or_inf = new_decr_every_n_nan_or_inf

    def state_dict(self) -> Dict[str, Any]:
        """paddle's keys; empty when disabled."""
        if not self._enable:
            return {}
        return {"scale": np.array([self._scale], np.float32), "incr_ratio": self._incr_ratio,
                "decr_ratio": self._decr_ratio,
                "incr_every_n_steps": self._incr_every_n_steps,
                "decr_every_n_nan_or_inf": self._decr_every_n_nan_or_inf, "incr_count": self._incr_count,
                "decr_count": self._decr_count, "use_dynamic_loss_scaling": self._use_dynamic_loss_scaling}

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        if not self._enable:
            return
        if not state_dict:
            raise RuntimeError("The input state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        scale = state_dict["scale"]
        self._init_loss_scaling = self._scale = float(scale.numpy()[0] if isinstance(scale, Tensor) else scale[0])
        self._incr_ratio, self._decr_ratio = state_dict["incr_ratio"], state_dict["decr_ratio"]
        self._incr_every_n_steps = state_dict["incr_every_n_steps"]
        self._decr_every_n_nan_or_inf = state_dict["decr_every_n_nan_or_inf"]
        self._incr_count, self._decr_count = state_dict["incr_count"], state_dict["decr_count"]
        self._use_dynamic_loss_scaling = state_dict["use_dynamic_loss_scaling"]


AmpScaler = GradScaler


def _grads(optimizer: Any) -> List[Any]:
    """The gradient arrays ``optimizer``'s next step uses, written in place."""
    if not hasattr(optimizer, "step_grads"):
        raise TypeError(f"optimizer must be a pycoll optimizer (or sharding's), got {type(optimizer).__name__}")
    return optimizer.step_grads()
