"""paddle.incubate's ``LookAhead`` optimizer wrapper (Zhang et al., 2019): the inner optimizer
moves the parameters ("fast weights"); a copy ("slow weights") taken after the first step is
pulled towards them every k steps, slow += alpha * (fast - slow), and the parameters restart
from it."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

import numpy as np

from pycoll.autograd import no_grad
from pycoll.device import array_module, is_array, to_module
from pycoll.optimizer import Optimizer
from pycoll.optimizer.update_forms import UpdateForms
from pycoll.tensor import Tensor, wrap

STEP_KEY = "lookahead_step_0"  # paddle's name for the step counter (a variable it does not save)


class LookAhead(UpdateForms):
    """LookAhead(inner_optimizer, alpha=0.5, k=5): ``step()`` runs the inner optimizer's step, then
    every k-th step sets each parameter and its slow copy to alpha * param + (1 - alpha) * slow."""

    def __init__(self, inner_optimizer: Optimizer, alpha: float = 0.5, k: int = 5, name: Optional[str] = None):
        if inner_optimizer is None:
            raise ValueError("LookAhead: inner_optimizer must be an optimizer, got None")
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0.0 <= alpha <= 1.0:
            raise ValueError(f"LookAhead: alpha must be a number in [0, 1], got {alpha!r}")
        if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
            raise ValueError(f"LookAhead: k must be a positive int, got {k!r}")
        self.inner_optimizer, self.alpha, self.k, self._name = inner_optimizer, float(alpha), k, name
        self._parameter_list: List[Tensor] = inner_optimizer._parameter_list
        self._slow: Dict[int, Any] = {}  # id(parameter) -> its slow weights (an array of its module)
        self._global_step = 0

    @no_grad()
    def step(self) -> None:
        """One inner step, then the slow weights' update on every k-th."""
        self.inner_optimizer.step()
        self._global_step += 1
        for p in self._parameter_list:
            if p.stop_gradient or p.grad is None:
                continue
            fast = p._array
            if self._global_step == 1 or id(p) not in self._slow:
                self._slow[id(p)] = fast.copy()
            if self._global_step % self.k == 0:
                slow = self._slow[id(p)]
                slow[...] = self.alpha * fast + (1.0 - self.alpha) * slow
                fast[...] = slow
                p._bump_inplace_version()


    def clear_grad(self, set_to_zero: bool = True) -> None:
        self.inner_optimizer.clear_grad(set_to_zero)

    def get_lr(self) -> float:
        return self.inner_optimizer.get_lr()

    def set_lr(self, value: float) -> None:
        self.inner_optimizer.set_lr(value)

    def _slow_key(self, index: int, param: Tensor) -> str:
        """paddle's name for a parameter's slow weights: '<param name>[_<name>]_slow_0'."""
        prefix = param._name or f"param_{index}"
        return f"{prefix}_{self._name}_slow_0" if self._name else f"{prefix}_slow_0"

    def state_dict(self) -> Dict[str, Any]:
        """The slow weights as Tensors under paddle's keys ('linear_0.w_0_slow_0'), beside the
        inner optimizer's state and the step count ('lookahead_step_0', an int32 tensor of shape
        [1]). paddle's holds the slow weights alone, so that its resumed run restarts the inner
        optimizer's state and the k-step cycle; this one resumes where the run stopped."""
        out = dict(self.inner_optimizer.state_dict())
        for index, p in enumerate(self._parameter_list):
            if id(p) in self._slow:
                out[self._slow_key(index, p)] = wrap(self._slow[id(p)])
        out[STEP_KEY] = wrap(np.array([self._global_step], np.int32))
        return out

    def set_state_dict(self, state_dict: Dict[str, Any]) -> None:
        """Load a state saved by state_dict(), or paddle's (slow weights alone: the inner
        optimizer and the step count then start afresh, as in paddle)."""
        if not isinstance(state_dict, dict):
            raise TypeError(f"LookAhead.set_state_dict: state_dict must be a dict, got {type(state_dict).__name__}")
        inner = dict(state_dict)
        slow: Dict[int, Any] = {}
        for index, p in enumerate(self._parameter_list):
            key = self._slow_key(index, p)
            if key in inner:
                slow[id(p)] = self._slow_from(key, inner.pop(key), p)
        step = inner.pop(STEP_KEY, None)
        self.inner_optimizer.set_state_dict(inner)
        self._slow = slow
        self._global_step = 0 if step is None else int(_host(step).reshape(-1)[0])

    @staticmethod
    def _slow_from(key: str, value: Any, param: Tensor) -> Any:
        """A saved slow weight as an array of the parameter's module, shape and dtype."""
        array = value.array if isinstance(value, Tensor) else value
        if not is_array(array):
            raise TypeError(f"LookAhead.set_state_dict: state_dict[{key!r}] must be a Tensor or an array, "
                            f"got {type(value).__name__}")
        if tuple(array.shape) != tuple(param.shape):
            raise ValueError(f"LookAhead.set_state_dict: state_dict[{key!r}] has shape {list(array.shape)}, "
                             f"the parameter's is {list(param.shape)}")
        return to_module(array, array_module(param._array)).astype(param._array.dtype, copy=True)


def _host(value: Any) -> Any:
    """A saved step count (a Tensor, an array of either module, a number) as a NumPy array."""
    return to_module(value.array if isinstance(value, Tensor) else value, np)
