"""The optimizer base: parameter bookkeeping, weight decay, accumulators and their state_dict.

Updates run under no_grad, in place on each parameter's array, in the parameter's array module.
"""
from __future__ import annotations

import copy
import numbers
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

import numpy as np

from pycoll.autograd import no_grad
from pycoll.device import array_module, is_array, to_module
from pycoll.tensor import Tensor, wrap


def _number(value: Any, name: str, low: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or value < low:
        raise ValueError(f"{name} must be a number >= {low}, got {value!r}")
    return float(value)


class Optimizer:
    """Base class: subclasses implement `_update(key, param_array, grad_array)`.

    `weight_decay` (a float) is L2 regularisation: coeff * param is added to the gradient.
    Per-parameter state lives in accumulators keyed paddle-style, '<param name>_<acc>_0'.
    """

    _accumulator_names: tuple = ()
    _scalar_accumulators: tuple = ()  # kept as Python floats, saved as shape [1] tensors
    _state_on_host = False  # see over()

    def __init__(self, learning_rate: float = 0.001, parameters: Optional[Iterable[Tensor]] = None,
                 weight_decay: Optional[float] = None, grad_clip: Optional[Any] = None):
        if parameters is None:
            raise ValueError("parameters must be given, e.g. parameters=model.parameters()")
        params = list(parameters)
        for i, p in enumerate(params):
            if not isinstance(p, Tensor):
                raise TypeError(f"parameters must be Tensors, got {type(p).__name__} at index {i}")
        keys = [p.name or f"param_{i}" for i, p in enumerate(params)]
        if len(set(keys)) != len(keys):
            dupes = sorted({k for k in keys if keys.count(k) > 1})
            raise ValueError(f"parameters must have distinct names, got duplicates {dupes}")
        self._parameter_list: List[Tensor] = params
        self._keys: List[str] = keys
        self._learning_rate = _number(learning_rate, "learning_rate")
        self._weight_decay = None if weight_decay is None else _number(weight_decay, "weight_decay")
        if grad_clip is not None and not callable(getattr(grad_clip, "clip", None)):
            raise TypeError(f"grad_clip must be a pycoll.nn.ClipGradBy... object, got {type(grad_clip).__name__}")
        self._grad_clip = grad_clip
        self._norm_sums: Optional[Callable[[List[Tensor]], Any]] = None  # see complete_norms_with
        self._accumulators: Dict[str, Dict[str, Any]] = {n: {} for n in
                                                          self._accumulator_names + self._scalar_accumulators}

    def over(self, tensors: Iterable[Tensor], state_on_host: bool = False) -> "Optimizer":
        """A copy with this one's settings and no state that updates ``tensors`` instead, keyed
        by their names: sharding's per-rank optimizer, over this rank's pieces of the parameters.
        With ``state_on_host`` (sharding's offload) the state lives in host memory and each step
        updates on the host: gradient and value come to the host, the updated value goes back."""
        part = copy.copy(self)
        part._state_on_host = state_on_host
        part._parameter_list = list(tensors)
        part._keys = [t.name for t in part._parameter_list]
        part._accumulators = {name: {} for name in self._accumulators}
        return part

    def get_lr(self) -> float:
        return self._learning_rate

    def set_lr(self, value: float) -> None:
        self._learning_rate = _number(value, "value")

    def _array_acc(self, name: str, key: str, param: Any) -> Any:
        acc = self._accumulators[name]
        if key not in acc:
            acc[key] = array_module(param).zeros_like(param)
        return acc[key]

    @no_grad()
    def step(self) -> None:
        """Update every trainable parameter that has a gradient (clipped by ``grad_clip`` first)."""
        todo = [(key, p) for key, p in zip(self._keys, self._parameter_list)
                if not p.stop_gradient and p.grad is not None]
        grads = [p.grad.array for _, p in todo]
        if self._grad_clip is not None:
            grads = self._grad_clip.clip(grads, self.norm_sums_for([p for _, p in todo]))
        for (key, p), g in zip(todo, grads):
            param = p.array
            if self._state_on_host:
                param, g = to_module(param, np), to_module(g, np)
            if self._weight_decay:
                g = g + self._weight_decay * param
            self._update(key, param, g)
            if param is not p.array:
                p.set_value(param)

    def _update(self, key: str, param: Any, grad: Any) -> None:
        raise NotImplementedError

    def minimize(self, loss: Any, startup_program: Any = None, parameters: Any = None,
                 no_grad_set: Any = None) -> Tuple[List[Any], List[Tuple[Tensor, Tensor]]]:
        """paddle's dygraph ``minimize``: the gradients ``loss.backward()`` left are applied
        (``step()``); returns ``([], [(param, grad), ...])`` as paddle does. ``startup_program``,
        ``parameters`` and ``no_grad_set`` belong to paddle's static graph and must stay None."""
        for name, value in (("startup_program", startup_program), ("parameters", parameters),
                            ("no_grad_set", no_grad_set)):
            if value is not None:
                raise ValueError(f"minimize: {name} is for paddle's static graph; pycoll runs eagerly")
        pairs = [(p, p.grad) for p in self._parameter_list if not p.stop_gradient and p.grad is not None]
        self.step()
        return [], pairs

    def complete_norms_with(self, norm_sums: Callable[[List[Tensor]], Any]) -> None:
        """``norm_sums(params)`` gives the ``sum_across`` that completes the clip's sums of squares
        of those parameters' gradients (fleet sets it where model parallelism splits weights)."""
        self._norm_sums = norm_sums

    def norm_sums_for(self, params: List[Tensor]) -> Any:
        return None if self._norm_sums is None else self._norm_sums(params)

    def scale_grads(self, factor: float) -> None:
        """Multiply the gradients the next step uses by ``factor`` (gradient merge's averaging)."""
        for p in self._parameter_list:
            if p.grad is not None:
                p.grad = p.grad.array * factor

    def clear_grad(self, set_to_zero: bool = True) -> None:
        """Zero every parameter's gradient in place (paddle's default) or drop it."""
        for p in self._parameter_list:
            p.clear_gradient(set_to_zero)

    clear_gradients = clear_grad

    def state_dict(self) -> Dict[str, Tensor]:
        """Accumulators as Tensors, keyed '<param name>_<accumulator>_0'."""
        out: Dict[str, Tensor] = {}
        for name, accs in self._accumulators.items():
            for key, value in accs.items():
                if name in self._scalar_accumulators:
                    out[f"{key}_{name}_0"] = Tensor([value], dtype="float64")
                else:
                    out[f"{key}_{name}_0"] = wrap(value)
        return out

    def set_state_dict(self, state_dict: Dict[str, Any]) -> None:
        """Load accumulators saved by state_dict(); entries for unknown parameters are ignored and
        parameters without an entry start fresh."""
        if not isinstance(state_dict, dict):
            raise TypeError(f"state_dict must be a dict, got {type(state_dict).__name__}")
        for key, p in zip(self._keys, self._parameter_list):
            for name in self._accumulator_names + self._scalar_accumulators:
                entry = state_dict.get(f"{key}_{name}_0")
                if entry is None:
                    continue
                value = entry.array if isinstance(entry, Tensor) else entry
                if not is_array(value):
                    raise TypeError(f"state_dict[{key}_{name}_0] must be a Tensor or an array, "
                                    f"got {type(entry).__name__}")
                if name in self._scalar_accumulators:
                    self._accumulators[name][key] = float(value.reshape(-1)[0])
                    continue
                if value.shape != p.array.shape:  # the array this rank holds (a piece of a sharded one)
                    raise ValueError(f"state_dict[{key}_{name}_0] has shape {list(value.shape)}, "
                                     f"the parameter has shape {list(p.array.shape)}")
                xp = np if self._state_on_host else array_module(p.array)
                self._accumulators[name][key] = to_module(value, xp).astype(p.dtype, copy=True)
