"""L-BFGS (paddle's ``paddle.optimizer.LBFGS``): a limited-memory quasi-Newton method over all the
parameters as one flat vector, driven by a closure that re-evaluates the loss."""
from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from pycoll._logging import logger
from pycoll.autograd import enable_grad, no_grad
from pycoll.device import array_module, is_array, to_module
from pycoll.optimizer._checks import integer, real
from pycoll.optimizer._line_search import dot, strong_wolfe
from pycoll.optimizer.optimizer import Optimizer
from pycoll.tensor import Tensor, wrap

LINE_SEARCHES = (None, "strong_wolfe")
_VECTORS = ("d", "prev_flat_grad")  # state entries that are flat arrays
_HISTORIES = ("old_yk", "old_sk")  # and lists of them
_FLOATS = ("alpha", "prev_loss", "H_diag")  # and numbers (H_diag a 0-d Tensor in a state_dict)


def _without_options(parameters: Any) -> Any:
    """`parameters` with a group's options dropped, with a warning (paddle's LBFGS ignores them)."""
    if not isinstance(parameters, (list, tuple)) or not any(isinstance(p, dict) for p in parameters):
        return parameters
    groups = []
    for group in parameters:
        if isinstance(group, dict) and set(group) - {"params"}:
            logger.warning(f"LBFGS ignores the options {sorted(set(group) - {'params'})} of a parameter group, as "
                           f"paddle's does")
            group = {"params": group.get("params")}
        groups.append(group)
    return groups


def _max_abs(x: Any) -> float:
    return float(abs(x).max())


class LBFGS(Optimizer):
    """Each ``step(closure)`` runs up to ``max_iter`` L-BFGS iterations (Nocedal & Wright,
    Algorithm 7.5), calling ``closure`` (clear the gradients, compute the loss, backward, return
    the loss) at most about ``max_eval`` times; it returns the loss of its first call.

    The direction is the two-loop recursion over the last ``history_size`` pairs (s, y) whose
    curvature y.s exceeds 1e-10, scaled by y.s / y.y; the step is ``learning_rate`` (on the very
    first iteration min(1, 1 / sum|g|) * learning_rate), or, with ``line_search_fn=
    'strong_wolfe'``, what the strong-Wolfe line search finds from there. An iteration stops the
    step when max|g| <= tolerance_grad, when the slope along the direction is above
    -tolerance_change, or when the change of the parameters (max|step * d|) or of the loss is
    below tolerance_change. The history carries over from one step to the next.

    As in paddle 3.3.1, ``weight_decay`` and ``grad_clip`` are accepted and do nothing: the
    closure's loss is what is minimised (a warning says so). Unlike paddle: several parameter
    groups are refused (paddle's silently optimises the last one alone), and the one group may
    set no options; ``set_state_dict`` restores the history (paddle's loads none of it);
    ``get_lr``/``set_lr`` are the learning rate the steps use (paddle's ``get_lr`` says 1.0);
    bad arguments are refused here (paddle fails at the first step, or never).

    Scalars (curvatures, steps, losses) are Python floats here, float32 tensors in paddle's
    float32 runs: float64 iterates agree with paddle's to the last bits, float32 ones to float32
    rounding, though a line search's decision near a tie can then send them on different paths.
    """

    _group_options: Dict[str, Any] = {}

    def __init__(self, learning_rate: float = 1.0, max_iter: int = 20, max_eval: Optional[int] = None,
                 tolerance_grad: float = 1e-07, tolerance_change: float = 1e-09, history_size: int = 100,
                 line_search_fn: Optional[str] = None, parameters: Optional[Iterable[Any]] = None,
                 weight_decay: Optional[Any] = None, grad_clip: Optional[Any] = None, name: Optional[str] = None):
        lr = real(learning_rate, "learning_rate", low=0.0, low_open=True)
        self.max_iter = integer(max_iter, "max_iter", low=1)
        self.max_eval = self.max_iter * 5 // 4 if max_eval is None else integer(max_eval, "max_eval", low=1)
        self.tolerance_grad = real(tolerance_grad, "tolerance_grad", low=0.0)
        self.tolerance_change = real(tolerance_change, "tolerance_change", low=0.0)
        self.history_size = integer(history_size, "history_size", low=1)
        if line_search_fn not in LINE_SEARCHES:
            raise ValueError(f"line_search_fn must be None or 'strong_wolfe', got {line_search_fn!r}")
        self.line_search_fn = line_search_fn
        super().__init__(lr, _without_options(parameters), weight_decay, grad_clip, name)
        if not self._parameter_list:
            raise ValueError("parameters must hold at least one parameter, got none")
        if len(self._groups) > 1:
            raise ValueError(f"LBFGS takes one parameter group, got {len(self._groups)}: it optimises all its "
                             f"parameters as one vector (paddle's would optimise only the last group)")
        if weight_decay is not None or grad_clip is not None:
            logger.warning("LBFGS ignores weight_decay and grad_clip, as paddle's does: it minimises the loss "
                           "the closure returns; add any penalty to that loss")

    @property
    def learning_rate(self) -> float:
        """paddle's attribute: the step size the iterations use (``get_lr``/``set_lr`` too)."""
        return self.get_lr()

    @learning_rate.setter
    def learning_rate(self, value: float) -> None:
        self.set_lr(value)

    @property
    def state(self) -> Dict[str, Any]:
        """paddle's attribute: 'func_evals', 'n_iter' and the history (what state_dict saves)."""
        return self._state

    def _reset_state(self) -> None:
        super()._reset_state()
        self._state: Dict[str, Any] = {"func_evals": 0, "n_iter": 0}

    # ---- the parameters as one flat vector -----------------------------------------------------
    def _flat_grad(self) -> Any:
        """Every parameter's gradient, flattened and joined (zeros for a parameter without one)."""
        xp = array_module(self._parameter_list[0].array)
        return xp.concatenate([p.grad.array.reshape(-1) if p.grad is not None else xp.zeros(p.array.size, p.array.dtype)
                               for p in self._parameter_list])

    def _move(self, step: float, d: Any) -> None:
        """Parameters += step * their slice of ``d``, in place."""
        offset = 0
        for p in self._parameter_list:
            array = p.array
            array += (d[offset:offset + array.size] * step).reshape(array.shape)
            p._bump_inplace_version()
            offset += array.size

    def _restore(self, saved: List[Any]) -> None:
        for p, value in zip(self._parameter_list, saved):
            p.array[...] = value
            p._bump_inplace_version()

    def _evaluate(self, closure: Callable[[], Any]) -> Tuple[Any, float]:
        with enable_grad():
            loss = closure()
        if loss is None:
            raise TypeError("closure must return the loss (a Tensor or a number), got None")
        return loss, float(loss)

    # ---- the step ------------------------------------------------------------------------------
    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Up to ``max_iter`` iterations; returns what the first call of ``closure`` returned."""
        if not callable(closure):
            raise TypeError(f"closure must be a callable that clears the gradients, computes the loss, calls "
                            f"backward and returns the loss, got {type(closure).__name__}")
        with no_grad():
            return self._iterate(closure)

    def _iterate(self, closure: Callable[[], Any]) -> Any:
        state = self._state
        first_loss, loss = self._evaluate(closure)
        state["func_evals"] += 1
        evals = 1
        flat_grad = self._flat_grad()
        if _max_abs(flat_grad) <= self.tolerance_grad:
            return first_loss
        lr = self.get_lr()
        d, alpha = state.get("d"), state.get("alpha")
        prev_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")
        for n_iter in range(1, self.max_iter + 1):
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                state.update(old_yk=[], old_sk=[], ro=[], H_diag=1.0)
            else:
                self._remember(flat_grad - prev_grad, d * alpha)
                d = self._direction(flat_grad)
            prev_grad, prev_loss = flat_grad, loss
            alpha = min(1.0, 1.0 / float(abs(flat_grad).sum())) * lr if state["n_iter"] == 1 else lr
            gtd = dot(flat_grad, d)
            if gtd > -self.tolerance_change:  # not a descent direction any more
                break
            searched = 0
            if self.line_search_fn is not None:
                start = [p.array.copy() for p in self._parameter_list]
                loss, flat_grad, alpha, searched = strong_wolfe(
                    lambda t: self._evaluate_along(closure, start, t, d), alpha, d, loss, flat_grad, gtd)
                self._move(alpha, d)
                converged = _max_abs(flat_grad) <= self.tolerance_grad
            else:
                self._move(alpha, d)
                converged = False
                if n_iter != self.max_iter:  # paddle leaves the last iteration's point unevaluated
                    loss = self._evaluate(closure)[1]
                    flat_grad = self._flat_grad()
                    converged = _max_abs(flat_grad) <= self.tolerance_grad
                    searched = 1
            evals += searched
            state["func_evals"] += searched
            if (converged or _max_abs(d * alpha) <= self.tolerance_change
                    or abs(loss - prev_loss) < self.tolerance_change or evals >= self.max_eval):
                break
        state.update(d=d, alpha=alpha, prev_flat_grad=prev_grad, prev_loss=prev_loss)
        return first_loss

    def _evaluate_along(self, closure: Callable[[], Any], start: List[Any], t: float, d: Any) -> Tuple[float, Any]:
        """The loss and flat gradient at start + t * d; the parameters are left at ``start``."""
        self._move(t, d)
        loss = self._evaluate(closure)[1]
        flat_grad = self._flat_grad()
        self._restore(start)
        return loss, flat_grad

    def _remember(self, y: Any, s: Any) -> None:
        """Keep the pair (s, y) when its curvature y.s is above 1e-10, dropping the oldest pair
        beyond history_size, and rescale the initial inverse Hessian to y.s / y.y."""
        state = self._state
        ys = dot(y, s)
        if ys <= 1e-10:
            return
        if len(state["old_yk"]) == self.history_size:
            for key in ("old_yk", "old_sk", "ro"):
                state[key].pop(0)
        state["old_yk"].append(y)
        state["old_sk"].append(s)
        state["ro"].append(1.0 / ys)
        state["H_diag"] = ys / dot(y, y)

    def _direction(self, flat_grad: Any) -> Any:
        """-H g by the two-loop recursion over the remembered pairs."""
        ys, ss, ro = self._state["old_yk"], self._state["old_sk"], self._state["ro"]
        q = -flat_grad
        al = [0.0] * len(ys)
        for i in reversed(range(len(ys))):
            al[i] = dot(ss[i], q) * ro[i]
            q = q + ys[i] * (-al[i])
        r = q * self._state["H_diag"]
        for i in range(len(ys)):
            be = dot(ys[i], r) * ro[i]
            r = r + ss[i] * (al[i] - be)
        return r

    def minimize(self, loss: Any, startup_program: Any = None, parameters: Any = None,
                 no_grad_set: Any = None) -> Any:
        raise NotImplementedError("LBFGS optimizer does not use this way to minimize loss. Please refer "
                                  "'Examples' of LBFGS() for usage: call step(closure)")

    # ---- state -------------------------------------------------------------------------------
    def state_dict(self) -> Dict[str, Any]:
        """paddle's layout: ``{'state': {...}}`` with 'func_evals' and 'n_iter' (ints, counted over
        all steps) and, once an iteration ran, 'd' and 'prev_flat_grad' (flat Tensors), 'old_yk'
        and 'old_sk' (lists of them), 'ro' (a list of 0-d float64 Tensors), 'H_diag' (one),
        'alpha' and 'prev_loss' (floats). The Tensors share the optimizer's arrays, which it never
        writes in place, so a saved state stays as it was. (paddle's scratch list 'al' is left out:
        it holds nothing a step reads.)"""
        out: Dict[str, Any] = {}
        for key, value in self._state.items():
            if key in _VECTORS:
                value = wrap(value)
            elif key in _HISTORIES:
                value = [wrap(v) for v in value]
            elif key == "ro":
                value = [self._scalar_tensor(v) for v in value]
            elif key == "H_diag":
                value = self._scalar_tensor(value)
            out[key] = value
        return {"state": out}

    def _scalar_tensor(self, value: float) -> Tensor:
        xp = array_module(self._parameter_list[0].array)
        return wrap(xp.asarray(value, dtype=xp.float64))

    def set_state_dict(self, state_dict: Dict[str, Any]) -> None:
        """Resume from a ``state_dict()`` of this optimizer (or paddle's): the next step continues
        the history as if it had never stopped. Refused, naming the entry, when it does not fit
        these parameters (a vector of another length, a history longer than history_size)."""
        if not isinstance(state_dict, dict) or not isinstance(state_dict.get("state"), dict):
            raise TypeError(f"state_dict must be a dict with a 'state' dict, LBFGS.state_dict()'s layout, got "
                            f"{state_dict if not isinstance(state_dict, dict) else sorted(state_dict)!r}")
        saved = dict(state_dict["state"])
        saved.pop("al", None)  # paddle's scratch
        known = ("func_evals", "n_iter", "ro") + _VECTORS + _HISTORIES + _FLOATS
        unknown = sorted(set(saved) - set(known))
        if unknown:
            raise ValueError(f"state_dict['state'] has entries {unknown} that are not LBFGS's; it takes "
                             f"{sorted(known)}")
        state = {key: integer(saved.get(key, 0), f"state_dict['state'][{key!r}]", low=0)
                 for key in ("func_evals", "n_iter")}
        if state["n_iter"]:
            missing = sorted(set(known) - set(saved))
            if missing:
                raise ValueError(f"state_dict['state'] has n_iter {state['n_iter']} but no {missing}")
            for key in _VECTORS:
                state[key] = self._vector(saved[key], f"state_dict['state'][{key!r}]")
            for key in _FLOATS:
                state[key] = self._number(saved[key], f"state_dict['state'][{key!r}]")
            lengths = [len(saved[key]) for key in _HISTORIES + ("ro",)]
            if len(set(lengths)) != 1 or max(lengths) > self.history_size:
                raise ValueError(f"state_dict['state']: old_yk, old_sk and ro must have one length, at most "
                                 f"history_size {self.history_size}; got lengths {lengths}")
            for key in _HISTORIES:
                state[key] = [self._vector(v, f"state_dict['state'][{key!r}][{i}]") for i, v in enumerate(saved[key])]
            state["ro"] = [self._number(v, f"state_dict['state']['ro'][{i}]") for i, v in enumerate(saved["ro"])]
        self._state = state

    def _vector(self, value: Any, where: str) -> Any:
        array = value.array if isinstance(value, Tensor) else value
        if not is_array(array):
            raise TypeError(f"{where} must be a Tensor or an array, got {type(value).__name__}")
        size = sum(p.array.size for p in self._parameter_list)
        if array.ndim != 1 or array.size != size:
            raise ValueError(f"{where} has shape {list(array.shape)}; these parameters need [{size}]")
        xp = array_module(self._parameter_list[0].array)
        flat_dtype = xp.result_type(*[p.array.dtype for p in self._parameter_list])  # the flat gradient's
        return to_module(array, xp).astype(flat_dtype, copy=True)

    @staticmethod
    def _number(value: Any, where: str) -> float:
        if isinstance(value, Tensor):
            value = value.array
        if is_array(value):
            if value.size != 1:
                raise ValueError(f"{where} must hold one number, got shape {list(value.shape)}")
            return float(value.reshape(-1)[0])
        return real(value, where)
