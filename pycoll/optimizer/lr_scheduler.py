"""paddle.optimizer.lr.LRScheduler: the base every learning-rate schedule derives from.

A scheduler holds a step counter ``last_epoch`` and the value ``last_lr`` it gives for that step;
``step()`` moves to the next step, ``__call__`` reads the value. Construction takes the first step
(``last_epoch`` -1 becomes 0), as paddle's does, so a fresh scheduler already gives step 0's value.
"""
from __future__ import annotations

import numbers
import warnings
from typing import Any, Dict, List, Optional, Union

from pycoll.optimizer._checks import integer, real
from pycoll.tensor import Tensor


class LRScheduler:
    """Subclasses define ``get_lr()``: the value for step ``last_epoch``. A subclass whose value
    depends on the previous one (CosineAnnealingDecay) may also define ``_get_closed_form_lr()``,
    used when ``step(epoch)`` jumps to an arbitrary step. ``state_keys()`` sets ``self.keys``, the
    attributes ``state_dict()`` saves (paddle's protocol, so paddle subclasses port unchanged)."""

    base_lr: float
    last_lr: float
    last_epoch: int
    verbose: bool

    def __init__(self, learning_rate: float = 0.1, last_epoch: int = -1, verbose: bool = False) -> None:
        self.base_lr = real(learning_rate, "learning_rate", low=0.0)
        self.last_lr = self.base_lr
        self.last_epoch = integer(last_epoch, "last_epoch", low=-1)
        self.verbose = bool(verbose)
        self.step()

    def __call__(self) -> float:
        return self.last_lr

    def step(self, epoch: Optional[Union[int, float]] = None) -> None:
        """Move to the next step, or to step ``epoch``, and compute its learning rate. A float
        ``epoch`` (a fraction of an epoch, ``step(epoch + i / iters)``) is taken as paddle takes it,
        and so is a Tensor of one number."""
        if isinstance(epoch, Tensor) and epoch.size == 1:
            epoch = epoch.item()
        if epoch is None:
            self.last_epoch += 1
            self.last_lr = self.get_lr()
        else:
            self.last_epoch = integer(epoch, "epoch") if isinstance(epoch, numbers.Integral) else real(epoch, "epoch")
            closed_form = getattr(self, "_get_closed_form_lr", None)
            self.last_lr = closed_form() if closed_form is not None else self.get_lr()
        self._announce()

    def _announce(self) -> None:
        if self.verbose:
            print(f"Epoch {self.last_epoch}: {self.__class__.__name__} set learning rate to {self.last_lr}.")

    def get_lr(self) -> float:
        raise NotImplementedError(f"{type(self).__name__} must define get_lr()")

    def state_keys(self) -> None:
        self.keys: List[str] = ["last_epoch", "last_lr"]

    def state_dict(self) -> Dict[str, Any]:
        """The attributes ``state_keys()`` names (a one-element Tensor saved as its float)."""
        self.state_keys()
        out: Dict[str, Any] = {}
        for key in self.keys:
            if key not in self.__dict__:
                continue
            value = self.__dict__[key]
            if isinstance(value, Tensor):
                if value.size != 1:
                    raise ValueError(f"state_dict: {key} must hold one number, got shape {value.shape}")
                value = float(value)
            out[key] = value
        return out

    def set_state_dict(self, state_dict: Dict[str, Any]) -> None:
        """Restore what ``state_dict()`` saved; every key ``state_keys()`` names must be there."""
        if not isinstance(state_dict, dict):
            raise TypeError(f"state_dict must be a dict, got {type(state_dict).__name__}")
        self.state_keys()
        missing = [key for key in self.keys if key not in state_dict]
        if missing:
            raise ValueError(f"state_dict has no {missing} for {type(self).__name__} (it has "
                             f"{sorted(state_dict)}): was it saved from another scheduler?")
        for key in self.keys:
            self.__dict__[key] = state_dict[key]
        if len(state_dict) > len(self.keys):
            warnings.warn("There are some unused values in state_dict. Maybe the optimizer have different "
                          "'LearningRateDecay' when invoking state_dict and set_dict")

    set_dict = set_state_dict
