"""paddle's other ways to run an optimizer's update: ``minimize``, ``backward`` +
``apply_gradients``, ``zero_grad`` and ``load_state_dict``.

They are written once, here, over what the class that takes them in has: ``step()``,
``clear_grad()``, ``set_state_dict()`` and ``_parameter_list``. The optimizers take them in, and
so do the wrappers fleet, sharding and auto-parallel put around an optimizer, so that each form
runs the wrapper's own update (its gradient sync, its shards), not the wrapped optimizer's.

``apply_gradients`` (and ``minimize`` given ``parameters`` or ``no_grad_set``) updates a subset
of the parameters, or with gradients other than theirs: for the length of one ``step()``, each
parameter's gradient is the one given (None for the others); afterwards every gradient is as
it was.
"""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Tuple

from pycoll.tensor import Tensor

ParamsGrads = List[Tuple[Tensor, Tensor]]


class UpdateForms:
    # where the parameters' gradients are (MixPrecisionOptimizer steps with main_grad)
    _grad_attr = "grad"
    # False where step() reads gradients from elsewhere (group_sharded_parallel's reduced pieces):
    # such a class refuses apply_gradients (and minimize with parameters or no_grad_set)
    _steps_given_grads = True

    def minimize(self, loss: Any, startup_program: Any = None, parameters: Any = None,
                 no_grad_set: Any = None) -> Tuple[List[Any], ParamsGrads]:
        """paddle's dygraph ``minimize``: the gradients ``loss.backward()`` left are applied.
        ``parameters`` (tensors or names) limits the update to those, ``no_grad_set`` (tensors or
        names) leaves those out, as paddle documents (its eager build ignores ``no_grad_set``).
        Returns ``([], [(param, grad), ...])`` as paddle does; ``startup_program`` belongs to
        paddle's static graph and must stay None."""
        params_grads = self.backward(loss, startup_program, parameters, no_grad_set)
        if parameters is None and not no_grad_set:
            self.step()
        else:
            self.apply_gradients(params_grads)
        return [], params_grads

    def backward(self, loss: Any, startup_program: Any = None, parameters: Any = None, no_grad_set: Any = None,
                 callbacks: Optional[List[Any]] = None) -> ParamsGrads:
        """paddle's dygraph ``backward``: the ``(param, grad)`` pairs of the gradients that
        ``loss.backward()`` left, for ``parameters`` (default: every trainable one) less
        ``no_grad_set``. As in paddle's eager mode, nothing is differentiated here."""
        if startup_program is not None:
            raise ValueError(f"{type(self).__name__}.backward: startup_program is for paddle's static graph; "
                             f"pycoll runs eagerly")
        if callbacks is not None and not isinstance(callbacks, list):
            raise TypeError(f"{type(self).__name__}.backward: callbacks must be a list or None, "
                            f"got {type(callbacks).__name__}")
        pairs = []
        for p in self._chosen(parameters, no_grad_set):
            grad = getattr(p, self._grad_attr, None)
            if not p.stop_gradient and grad is not None:
                pairs.append((p, grad))
        return pairs

    def apply_gradients(self, params_grads: Iterable[Tuple[Tensor, Any]]) -> List[Any]:
        """paddle's second half of ``minimize``: update the parameters of ``params_grads`` with
        the gradients given there (changed or replaced since ``backward``), clipped and decayed
        as ``step()`` does; the other parameters are left alone. Returns ``[]`` (paddle's list of
        static-graph ops)."""
        given = self._checked_pairs(params_grads)
        if not self._steps_given_grads:
            raise NotImplementedError(
                f"{type(self).__name__}: its step updates every parameter from the gradients reduced into this "
                f"rank's pieces; it cannot apply given gradients or update only some parameters (call step(), or "
                f"minimize(loss) without parameters and no_grad_set)")
        attr = self._grad_attr
        held = [(p, hasattr(p, attr), getattr(p, attr, None)) for p in self._parameter_list]
        try:
            for p in self._parameter_list:
                setattr(p, attr, given.get(id(p)))
            self.step()
        finally:
            for p, had, grad in held:
                if had:
                    setattr(p, attr, grad)
                else:  # main_grad of a parameter outside a MixPrecisionLayer: none again
                    delattr(p, attr)
        return []

    def zero_grad(self, set_to_none: bool = True) -> None:
        """paddle's (and torch's) ``zero_grad``: drop the gradients, or zero them with
        ``set_to_none=False``."""
        self.clear_grad(set_to_zero=not set_to_none)

    def load_state_dict(self, state_dict: Dict[str, Any]) -> Any:
        """paddle's other name for ``set_state_dict``."""
        return self.set_state_dict(state_dict)

    def _chosen(self, parameters: Any, no_grad_set: Any) -> List[Tensor]:
        """This optimizer's parameters named by ``parameters`` (tensors or names; None: all), in
        its order, less those ``no_grad_set`` names (entries that are no parameter of it are
        ignored, as paddle's static graph takes any variable there)."""
        fn = type(self).__name__
        params = self._parameter_list
        if parameters is not None:
            wanted = _entries(parameters, f"{fn}: parameters")
            unknown = [w for w in wanted if not any(_names(p, w) for p in params)]
            if unknown:
                raise ValueError(f"{fn}: parameters names {_shown(unknown[0])}, which is not a parameter of this "
                                 f"optimizer")
            params = [p for p in params if any(_names(p, w) for w in wanted)]
        if no_grad_set:
            left_out = _entries(no_grad_set, f"{fn}: no_grad_set")
            params = [p for p in params if not any(_names(p, w) for w in left_out)]
        return params

    def _checked_pairs(self, params_grads: Any) -> Dict[int, Any]:
        """``{id(param): grad}`` of ``params_grads``; ValueError or TypeError naming it unless each
        entry is a (parameter of this optimizer, gradient of its shape or None) pair."""
        fn = f"{type(self).__name__}.apply_gradients"
        if not isinstance(params_grads, (list, tuple)):
            raise TypeError(f"{fn}: params_grads must be a list of (param, grad) pairs, got "
                            f"{type(params_grads).__name__}")
        ours = {id(p) for p in self._parameter_list}
        given: Dict[int, Any] = {}
        for entry in params_grads:
            if not (isinstance(entry, (list, tuple)) and len(entry) == 2):
                raise TypeError(f"{fn}: params_grads must hold (param, grad) pairs, got a {type(entry).__name__}")
            param, grad = entry
            if id(param) not in ours:
                raise ValueError(f"{fn}: params_grads holds {_shown(param)}, which is not a parameter of this "
                                 f"optimizer")
            shape = getattr(grad, "shape", None)
            if grad is not None and (shape is None or list(shape) != list(param.shape)):
                got = shape if shape is not None else type(grad).__name__
                raise ValueError(f"{fn}: the gradient params_grads gives {_shown(param)} must be a tensor of its "
                                 f"shape {list(param.shape)}, got {got}")
            if grad is not None:
                given[id(param)] = grad
        return given


def _entries(value: Any, where: str) -> List[Any]:
    if isinstance(value, (str, Tensor)) or not isinstance(value, (list, tuple, set, frozenset)):
        raise TypeError(f"{where} must be a list or set of parameters or their names, got {type(value).__name__}")
    return list(value)


def _names(param: Tensor, entry: Any) -> bool:
    """Whether ``entry`` (a tensor or a name) is ``param``."""
    return entry is param if not isinstance(entry, str) else entry == param.name


def _shown(entry: Any) -> str:
    return repr(entry) if isinstance(entry, str) else f"a tensor named {getattr(entry, 'name', '?')!r}"
