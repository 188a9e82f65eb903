"""The optimizer base: parameters (and parameter groups), the learning rate (a float or an
LRScheduler), weight decay, gradient clipping, accumulators and their state_dict.

Updates run under no_grad, in place on each parameter's array, in the parameter's array module.
"""
from __future__ import annotations

import copy
import functools
import gc
import warnings
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, Union

import numpy as np

from pycoll._sparse_rows import forget_rows, rows_to_update
from pycoll.autograd import no_grad
from pycoll.device import array_module, is_array, to_module
from pycoll.dtypes import is_half
from pycoll.optimizer._checks import real
from pycoll.optimizer._moments import scalar_dtype
from pycoll.optimizer._groups import BASE_OPTIONS, OptionCheck, check_decay, check_grad_clip, parse_parameters
from pycoll.optimizer.lr_decay import LambdaDecay
from pycoll.optimizer.lr_scheduler import LRScheduler
from pycoll.optimizer.update_forms import UpdateForms
from pycoll.regularizer import L2Decay
from pycoll.tensor import RowsGrad, Tensor, wrap

LR_SCHEDULER_KEY = "LR_Scheduler"  # paddle's key for the scheduler's state in an optimizer's
MASTER_WEIGHTS_KEY = "master_weights"  # and for the float32 copies of low-precision parameters

# completes the clip's sums of squares for optimizers not given their own (complete_norms_with):
# auto-parallel sets it, for the parameters it splits over ranks
_default_norm_sums: Optional[Callable[[List[Tensor]], Any]] = None


class StateMismatch(ValueError):
    """A state saved for parameters of other names (another model, or the same one built again
    in one process, whose parameters got other unique names)."""


def nested_state(state_dict: Dict[str, Any]) -> Dict[str, Any]:
    """``state_dict`` with the entries of its nested dicts ('master_weights', 'LR_Scheduler')
    nested again where a checkpoint flattened them ('master_weights.linear_0.w_0', as
    ``dist.load_merged_state_dict`` gives them)."""
    state: Dict[str, Any] = {}
    for key, value in state_dict.items():
        head, dot, rest = key.partition(".")
        if dot and head in (MASTER_WEIGHTS_KEY, LR_SCHEDULER_KEY):
            state.setdefault(head, {})[rest] = value
        else:
            state[key] = value
    return state


def state_owner(key: str, names: Iterable[str]) -> Optional[str]:
    """The parameter name a state_dict entry ``key`` ('<name>_<accumulator>_0') belongs to: the
    longest of ``names`` that prefixes it (names may prefix one another: 'w' and 'w_1')."""
    return max((name for name in names if key.startswith(f"{name}_")), key=len, default=None)


def set_default_norm_sums(norm_sums: Optional[Callable[[List[Tensor]], Any]]) -> None:
    """What ``Optimizer.norm_sums_for`` uses when ``complete_norms_with`` was not called."""
    global _default_norm_sums
    _default_norm_sums = norm_sums


# parameters handed to another owner (``hand_over``): the optimizers holding them let it take them
# over at their next call. The count tells an optimizer whether anything was handed over since it looked.
_TAKER = "_optimizer_taker"
_handovers = 0


def hand_over(params: Iterable[Tensor], taker: Callable[["Optimizer"], bool]) -> None:
    """From now on, an optimizer holding any of ``params`` first calls ``taker(optimizer)`` at its
    next ``step``/``clear_grad``/``state_dict``/``set_state_dict``/``step_grads``/``scale_grads``;
    a taker that returns True has rebound that optimizer's methods (``fully_shard`` makes it step
    the parameters' shards), and the call goes to them. paddle marks its parameters alike
    (``_need_shard``) for its optimizer to notice at its first step."""
    global _handovers
    for p in params:
        setattr(p, _TAKER, taker)
    _handovers += 1


def _after_handover(method: Callable) -> Callable:
    """``method``, run by whatever took the optimizer over (``hand_over``) if something did."""
    name = method.__name__

    def checked(self: "Optimizer", *args: Any, **kwargs: Any) -> Any:
        if self._taken_over():
            return getattr(self, name)(*args, **kwargs)
        return method(self, *args, **kwargs)
    checked.__name__, checked.__qualname__, checked.__doc__ = name, method.__qualname__, method.__doc__
    checked.__wrapped__ = method
    return checked


def _gc_paused(method: Callable) -> Callable:
    """``method`` run with Python's cyclic garbage collector paused (as it was before, after):
    state_dict and set_state_dict make a few objects per parameter, no cycles among them, and
    with many parameters the collections these allocations set off (each scanning every live
    object, the model's layers too) took most of their time (16 000 tensors: 369 -> 133 ms)."""
    @functools.wraps(method)
    def paused(*args: Any, **kwargs: Any) -> Any:
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return method(*args, **kwargs)
        finally:
            if was_enabled:
                gc.enable()
    return paused


def _listing(keys: List[str], limit: int = 8) -> str:
    shown = ", ".join(repr(k) for k in keys[:limit])
    return f"[{shown}{f', ... ({len(keys) - limit} more)' if len(keys) > limit else ''}]"


def _learning_rate(value: Any) -> Union[float, LRScheduler]:
    """A float or an LRScheduler; any float, as paddle takes (a negative one ascends the gradient)."""
    return value if isinstance(value, LRScheduler) else real(value, "learning_rate")


class Optimizer(UpdateForms):
    """Base class: subclasses implement ``_update(key, param, grad, lr, options)``, ``options``
    being the parameter's group's own (read with the optimizer's value as the default).

    ``weight_decay`` (a float) is L2 regularisation: coeff * param is added to the gradient.
    ``parameters`` may be paddle's groups: dicts with 'params' and options for those parameters,
    'learning_rate' (a multiplier of the optimizer's learning rate), 'weight_decay', 'grad_clip'
    (applied to the group's gradients alone) and those in the subclass's ``_group_options``.
    Per-parameter state lives in accumulators keyed paddle-style, '<param name>_<acc>_0'
    ('<param name>_<name>_<acc>_0' for an optimizer given a ``name``).

    ``multi_precision`` (paddle's master weights): a float16 or bfloat16 parameter is updated
    through a float32 copy kept in the optimizer (``state_dict()['master_weights']``), with its
    accumulators in float32 too (keyed after the copy: '<param name>_fp32_master_0_<acc>_0');
    after each update the parameter gets the copy's value, rounded to its own dtype.
    """

    _accumulator_names: tuple = ()
    _scalar_accumulators: tuple = ()  # kept as Python floats, saved as shape [1] tensors
    _group_options: Dict[str, OptionCheck] = BASE_OPTIONS
    _state_on_host = False  # see over()
    _groups_set_regularizer = True  # paddle's groups replace the parameters' regularizers (not AdamW's)
    # paddle's lazy_mode: a parameter with a sparse gradient (pycoll._sparse_rows) is updated by
    # _update_rows(key, param, grad_rows, lr, options, rows), which changes those rows alone
    _lazy_mode = False
    _positions: Optional[Dict[int, int]] = None  # id(parameter) -> its index in _parameter_list (options_of)

    def __init__(self, learning_rate: Union[float, LRScheduler] = 0.001, parameters: Optional[Iterable[Any]] = None,
                 weight_decay: Optional[float] = None, grad_clip: Optional[Any] = None, name: Optional[str] = None,
                 *, multi_precision: bool = False):
        if parameters is None:
            raise ValueError(f"{type(self).__name__}: parameters must be given, e.g. parameters=model.parameters() "
                             f"(pycoll runs eagerly only: a static-graph program's optimizer without parameters "
                             f"has no counterpart here)")
        params, self._groups, self._group_index, grouped = parse_parameters(parameters, self._group_options)
        keys = [p._name or f"param_{i}" for i, p in enumerate(params)]  # (an unnamed tensor: its place, stable across runs)
        if len(set(keys)) != len(keys):
            dupes = sorted({k for k in keys if keys.count(k) > 1})
            raise ValueError(f"parameters must have distinct names, got duplicates {dupes}")
        self._parameter_list: List[Tensor] = params
        self._keys: List[str] = keys
        self._learning_rate = _learning_rate(learning_rate)
        self._weight_decay = check_decay(weight_decay, "weight_decay")
        self._grad_clip = check_grad_clip(grad_clip, "grad_clip")
        self._norm_sums: Optional[Callable[[List[Tensor]], Any]] = None  # see complete_norms_with
        self._name = name
        self._multi_precision = bool(multi_precision)
        self._grouped = grouped
        if grouped:
            self._groups_set_parameter_options()
        self._reset_state()

    @property
    def regularization(self) -> Any:
        """paddle's: the weight decay added to the gradients, as a regularizer (a float is an
        L2Decay); None without one (AdamW's decoupled decay is not one)."""
        decay = self._l2_coeff({})
        return L2Decay(decay) if isinstance(decay, float) else decay

    @property
    def _param_groups(self) -> List[Any]:
        """paddle's: the parameters, or with groups given each group's dict (its parameters and
        options, the optimizer's weight decay and clip where it names none). A copy: read it."""
        if not self._grouped:
            return list(self._parameter_list)
        defaults = {"weight_decay": self.regularization, "grad_clip": self._grad_clip}
        return [{"params": [p for p, i in zip(self._parameter_list, self._group_index) if i == g],
                 **defaults, **options} for g, options in enumerate(self._groups)]

    def _groups_set_parameter_options(self) -> None:
        """As paddle's ``_add_param_group``: a parameter given in a group takes the group's
        learning-rate factor (1.0 when the group names none) and the group's weight decay (the
        optimizer's by default) as its own ``optimize_attr['learning_rate']`` and ``regularizer``,
        in place of what its ParamAttr said."""
        for p, g in zip(self._parameter_list, self._group_index):
            options = self._groups[g]
            if hasattr(p, "optimize_attr"):
                p.optimize_attr["learning_rate"] = options.get("learning_rate", 1.0)
            if self._groups_set_regularizer:
                decay = options.get("weight_decay", self._weight_decay)
                p.regularizer = L2Decay(decay) if isinstance(decay, float) else decay

    def _reset_state(self) -> None:
        self._accumulators: Dict[str, Dict[str, Any]] = {n: {} for n in
                                                          self._accumulator_names + self._scalar_accumulators}
        self._master_weights: Dict[str, Any] = {}  # float32 copies of low-precision parameters
        self._unresumed: Dict[str, List[str]] = {}  # see set_state_dict
        # the one-value entries state_dict() gave out, live from then on (see _live_scalars): by
        # (accumulator, key), the host tensor and the value this optimizer last put in it
        self._scalar_tensors: Dict[Tuple[str, str], Tuple[Tensor, float]] = {}

    def _mastered(self, param: Tensor) -> bool:
        """Whether `param` is updated through a float32 master copy."""
        return self._multi_precision and is_half(param.dtype)  # master weights for float16 and bfloat16

    def _state_prefix(self, key: str, param: Tensor) -> str:
        """What a parameter's state_dict entries start with (paddle's names)."""
        prefix = f"{key}_fp32_master_0" if self._mastered(param) else key
        return f"{prefix}_{self._name}" if self._name else prefix

    def over(self, tensors: Iterable[Tensor], state_on_host: bool = False) -> "Optimizer":
        """A copy with this one's settings and no state that updates ``tensors`` instead, keyed
        by their names: sharding's per-rank optimizer, over this rank's pieces of the parameters.
        A tensor named as one of the parameters is in that parameter's group; others are in a
        group without options. The learning-rate scheduler is shared, not copied.
        With ``state_on_host`` (sharding's offload) the state lives in host memory and each step
        updates on the host: gradient and value come to the host, the updated value goes back."""
        part = copy.copy(self)
        part._state_on_host = state_on_host
        part._originals = dict(zip(self._keys, self._parameter_list))  # what the user's callbacks are given
        part._parameter_list = list(tensors)
        part._keys = [t.name for t in part._parameter_list]
        group_of = dict(zip(self._keys, self._group_index))
        part._groups = list(self._groups)
        if any(key not in group_of for key in part._keys):
            part._groups.append({})
        part._group_index = [group_of.get(key, len(part._groups) - 1) for key in part._keys]
        part._reset_state()
        return part

    _originals: Dict[str, Tensor] = {}  # over(): each key's parameter, for callbacks that take one

    def _parameter_of(self, key: str) -> Tensor:
        """The parameter keyed ``key`` as the user made it (under ``over``, the whole parameter a
        stand-in is a piece of), for the callbacks paddle passes a parameter."""
        original = self._originals.get(key)
        return self._parameter_list[self._keys.index(key)] if original is None else original

    # ---- the learning rate -------------------------------------------------------------------
    def _taken_over(self) -> bool:
        """Whether something its parameters were handed over to (``hand_over``) took this
        optimizer over just now; looked for only when something was handed over since the last look."""
        if getattr(self, "_handovers_seen", None) == _handovers:
            return False
        self._handovers_seen = _handovers
        takers = {id(t): t for t in (getattr(p, _TAKER, None) for p in self._parameter_list) if t is not None}
        return any([taker(self) for taker in takers.values()])

    def get_lr(self) -> float:
        """The learning rate the next step uses: the scheduler's current value, if there is one."""
        if isinstance(self._learning_rate, LRScheduler):
            return float(self._learning_rate())
        return self._learning_rate

    def set_lr(self, value: float) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"The type of 'value' in optimizer.set_lr must be float, but received {type(value)}.")
        if isinstance(self._learning_rate, LRScheduler):
            raise RuntimeError("optimizer's learning rate can't be LRScheduler when invoke this API, because "
                               "this will lead to conflict.")
        self._learning_rate = real(value, "value")

    def set_lr_scheduler(self, scheduler: LRScheduler) -> None:
        """Drive the learning rate by ``scheduler`` from now on."""
        if not isinstance(scheduler, LRScheduler):
            raise TypeError(f"scheduler must be a pycoll.optimizer.lr.LRScheduler, got {type(scheduler).__name__}")
        self._learning_rate = scheduler

    # ---- the update --------------------------------------------------------------------------
    # paddle's Adam family keeps a 16-bit parameter's moments in float32 (its other optimizers in
    # the parameter's dtype): an fp16 Adam whose second moment underflowed gave inf and NaN
    _moments_in_float32 = False

    def _kept_dtype(self, param: Any) -> Any:
        """The dtype of ``param``'s accumulators (``param``: an array or a Tensor)."""
        dtype = param.dtype
        if is_half(dtype) and (self._moments_in_float32 or (isinstance(param, Tensor) and
                                                                        self._mastered(param))):
            return np.dtype(np.float32)
        return dtype

    def _array_acc(self, name: str, key: str, param: Any, fill: float = 0.0) -> Any:
        acc = self._accumulators[name]
        if key not in acc:
            acc[key] = array_module(param).full_like(param, fill, dtype=self._kept_dtype(param))
        return acc[key]

    def _with_decay(self, grad: Any, param: Any, term: Any, options: Dict[str, Any]) -> Any:
        """The gradient an update takes: `grad` with the weight-decay term of `term` (a
        regularizer, or None) added (``options``, the parameter's group's, for subclasses
        whose gradient depends on them)."""
        return grad + term.term(param, grad, array_module(param)) if term is not None and term.applies else grad

    def _l2_coeff(self, options: Dict[str, Any]) -> Any:
        """The weight decay added to a gradient: an L2 coefficient, a regularizer or None
        (AdamW's weight decay is not one)."""
        return options.get("weight_decay", self._weight_decay)

    @_after_handover
    @no_grad()
    def step(self) -> None:
        """Update every trainable parameter that has a gradient, group by group (each group's
        gradients clipped by its ``grad_clip``, the optimizer's by default, first)."""
        self._take_written_scalars()
        lr = self.get_lr()
        for g, options in enumerate(self._groups):
            todo = [(key, p) for key, p, i in zip(self._keys, self._parameter_list, self._group_index)
                    if i == g and not p.stop_gradient and p.grad is not None]
            if not todo:
                continue
            for key, _ in todo:
                self._check_resumed(key)
            clip = options.get("grad_clip", self._grad_clip)
            decay = self._l2_coeff(options)
            group_term = L2Decay(decay) if isinstance(decay, float) else decay  # once per group, not per parameter
            # the parameters whose gradient is still rows, updated from those rows alone: id -> row ids
            by_rows = {} if self._state_on_host else {id(p): self._rows_of(p, group_term, options) for _, p in todo}
            grads = [p.grad.array if by_rows.get(id(p)) is None else by_rows[id(p)][1] for _, p in todo]
            if clip is not None:  # need_clip=False (ParamAttr's) is the clip's to honour; rows clip as
                grads = clip.clip_grads([p for _, p in todo], grads, self.norm_sums_for)  # the zeros around them
            for (key, p), grad in zip(todo, grads):
                if by_rows.get(id(p)) is not None:
                    forget_rows(p)  # the lazy record of these rows is used up, as rows_to_update marks it
                    self._update_rows(key, p.array, grad, lr * self._rate_factor(p, options), options, by_rows[id(p)][0])
                    self._write_back(p, p.array, p.array)
                    continue
                term = getattr(p, "regularizer", None) or group_term  # its ParamAttr's (or its given group's) wins
                rows = rows_to_update(p, grad) if options.get("lazy_mode", self._lazy_mode) else None
                if rows is not None and term is not None and term.applies:
                    rows = None  # the decay reaches every row: paddle's regularized sparse gradient is dense
                param = p.array
                if self._state_on_host:
                    param, grad = to_module(param, np), to_module(grad, np)
                    rows = None if rows is None else to_module(rows, np)
                target = param  # what the update changes: the parameter, or its float32 master copy
                if is_half(p.dtype) and not self._multi_precision:
                    self._warn_half_accumulation()
                if self._mastered(p):
                    target = self._master_weights.get(key)
                    if target is None:
                        target = self._master_weights[key] = param.astype(np.float32)
                    grad = grad.astype(np.float32)
                elif self._kept_dtype(param) != param.dtype:  # float32 moments: computed in float32, as paddle's
                    grad = grad.astype(np.float32)
                grad = self._with_decay(grad, target, term, options)
                if rows is None:
                    self._update(key, target, grad, lr * self._rate_factor(p, options), options)
                else:
                    self._update_rows(key, target, grad[rows], lr * self._rate_factor(p, options), options, rows)
                self._write_back(p, param, target)
        self._give_scalars()

    def _warn_half_accumulation(self) -> None:
        """paddle's warning, once per optimizer: a float16/bfloat16 parameter updated in its own
        precision, without master weights."""
        if not getattr(self, "_warned_half", False):
            self._warned_half = True
            warnings.warn(f"Accumulating with FP16/BF16 in optimizer can lead to poor accuracy or slow convergence. "
                          f"Consider using multi_precision=True option of the {type(self).__name__} optimizer.",
                          UserWarning, stacklevel=2)

    @staticmethod
    def _rate_factor(p: Tensor, options: Dict[str, Any]) -> float:
        """The group's factor of the rate, else the parameter's own (ParamAttr(learning_rate=...))."""
        return options.get("learning_rate", getattr(p, "optimize_attr", {}).get("learning_rate", 1.0))

    # updating the rows a gradient holds alone gives the dense update (SGD's: no state decays)
    _rows_equal_dense = False

    def _rows_of(self, p: Tensor, group_term: Any, options: Dict[str, Any]) -> Optional[Tuple[Any, Any]]:
        """(row ids, their gradient) where ``p``'s gradient is still rows (an
        ``Embedding(sparse=True)`` weight's, ``pycoll.tensor.RowsGrad``) and updating those rows
        alone equals the update this step would make from the dense gradient: lazy_mode's, or an
        optimizer whose update of a zero-gradient row changes nothing; no decay term, no master
        copy. Else None: the step reads the dense gradient."""
        rows = p.grad.pending if isinstance(p.grad, RowsGrad) else None
        term = getattr(p, "regularizer", None) or group_term
        if rows is None or rows.dtype != p.dtype or self._mastered(p) or (term is not None and term.applies) \
                or not (self._rows_equal_dense or options.get("lazy_mode", self._lazy_mode)):
            return None
        return rows.coalesced()

    def _write_back(self, p: Tensor, param: Any, target: Any) -> None:
        """Give parameter ``p`` the update just made to ``target``: ``param`` is the array the
        step took for ``p`` (its own, or a host copy with ``_state_on_host``), ``target`` that
        array or the float32 master copy the update changed."""
        if target is not param:
            param[...] = target  # rounded to the parameter's dtype, in its own memory
        if param is not p.array:
            p.set_value(param)
        else:
            p._bump_inplace_version()  # a backward that saved p must not use the new values

    def _update(self, key: str, param: Any, grad: Any, lr: float, options: Dict[str, Any]) -> None:
        raise NotImplementedError(
            f'class "{type(self).__name__}" cannot be used directly as an optimizer: use a subclass such as '
            f'paddle.optimizer.Adam, or define its _update(key, param, grad, lr, options)')

    def append_regularization_ops(self, parameters_and_grads: Iterable[Tuple[Tensor, Optional[Tensor]]],
                                  regularization: Optional[Any] = None) -> List[Tuple[Tensor, Optional[Tensor]]]:
        """paddle's: each (parameter, gradient) pair with its gradient plus the decay term of the
        parameter's own regularizer (ParamAttr's), else of ``regularization`` (a float is an
        L2Decay); a None gradient, or no regularizer, keeps the gradient as it is."""
        decay = check_decay(regularization, "regularization")
        default = L2Decay(decay) if isinstance(decay, float) else decay
        regularized = []
        for param, grad in parameters_and_grads:
            term = getattr(param, "regularizer", None) or default
            if grad is not None and term is not None and term.applies:
                grad = wrap(grad.array + term.term(param.array, grad.array, array_module(param.array)))
            regularized.append((param, grad))
        return regularized

    def complete_norms_with(self, norm_sums: Callable[[List[Tensor]], Any]) -> None:
        """``norm_sums(params)`` gives the ``sum_across`` that completes the clip's sums of squares
        of those parameters' gradients (fleet sets it where model parallelism splits weights)."""
        self._norm_sums = norm_sums

    def norm_sums_for(self, params: List[Tensor]) -> Any:
        norm_sums = self._norm_sums if self._norm_sums is not None else _default_norm_sums
        return None if norm_sums is None else norm_sums(params)

    @_after_handover
    def step_grads(self) -> List[Any]:
        """The gradient arrays the next step uses, to be changed in place (GradScaler unscales them)."""
        return [p.grad.array for p in self._parameter_list if p.grad is not None]

    @_after_handover
    def scale_grads(self, factor: float) -> None:
        """Multiply the gradients the next step uses by ``factor`` (gradient merge's averaging)."""
        for p in self._parameter_list:
            if p.grad is not None:
                p.grad = p.grad.array * factor

    @_after_handover
    def clear_grad(self, set_to_zero: bool = True) -> None:
        """Zero every parameter's gradient in place (paddle's default) or drop it."""
        for p in self._parameter_list:
            p.clear_gradient(set_to_zero)

    clear_gradients = clear_grad

    # ---- state -------------------------------------------------------------------------------
    def _entries(self, key: str, param: Tensor) -> Dict[str, str]:
        """The state_dict keys of a parameter's accumulators, to the accumulators' names."""
        prefix = self._state_prefix(key, param)
        return {f"{prefix}_{name}_0": name for name in self._accumulator_names + self._scalar_accumulators}

    @_after_handover
    @_gc_paused
    def state_dict(self) -> Dict[str, Any]:
        """Accumulators as Tensors, keyed '<param name>_<accumulator>_0', the master weights (a
        dict by parameter name) under 'master_weights' if there are any, and the scheduler's
        state under 'LR_Scheduler' when the learning rate is an LRScheduler (paddle's layout)."""
        self._take_written_scalars()
        out: Dict[str, Any] = {}
        params = dict(zip(self._keys, self._parameter_list))
        for name, accs in self._accumulators.items():
            for key, value in accs.items():
                entry = f"{self._state_prefix(key, params[key])}_{name}_0"
                if name in self._scalar_accumulators:  # a number: its live tensor (see _take_written_scalars)
                    if (name, key) not in self._scalar_tensors:
                        self._scalar_tensors[(name, key)] = (wrap(np.zeros(1, scalar_dtype(params[key]))), np.nan)
                    out[entry] = self._scalar_tensors[(name, key)][0]
                else:
                    out[entry] = wrap(value)
        self._give_scalars()
        if self._master_weights:
            out[MASTER_WEIGHTS_KEY] = {key: wrap(value) for key, value in self._master_weights.items()}
        if isinstance(self._learning_rate, LRScheduler):
            out[LR_SCHEDULER_KEY] = self._learning_rate.state_dict()
        return out

    @_after_handover
    @_gc_paused
    def set_state_dict(self, state_dict: Dict[str, Any]) -> None:
        """Load a state saved by state_dict() (or paddle's), replacing this optimizer's.

        An empty state (saved before the first step) loads as a fresh start. A state that lacks
        some trainable parameter's entries and holds entries that belong to none of this
        optimizer's parameters is refused here, naming both (the checkpoint belongs to a model
        whose parameter names differ), and nothing is loaded. Entries missing without such a
        mismatch (a parameter that had no gradient before the save) start from scratch at the
        parameter's first step, with a warning (torch's rule; paddle refuses it, "Optimizer set
        error, <key> should in state dict", for some parameter orders only). Entries for other
        parameters alone are ignored (paddle's)."""
        if not isinstance(state_dict, dict):
            raise TypeError(f"state_dict must be a dict, got {type(state_dict).__name__}")
        state = nested_state(state_dict)
        lr_state = state.pop(LR_SCHEDULER_KEY, None)
        masters = state.pop(MASTER_WEIGHTS_KEY, None) or {}
        scheduler = self._learning_rate if isinstance(self._learning_rate, LRScheduler) else None
        if scheduler is not None and lr_state is None and not isinstance(scheduler, LambdaDecay):
            raise ValueError(f"set_state_dict: state_dict has no {LR_SCHEDULER_KEY!r} entry, the state of this "
                             f"optimizer's {type(scheduler).__name__}")
        expected = {entry: (key, p, name) for key, p in zip(self._keys, self._parameter_list)
                    for entry, name in self._entries(key, p).items()}
        loaded = {entry: self._accumulator_from(entry, name, state[entry], p)
                  for entry, (key, p, name) in expected.items() if entry in state}
        missing = {key: [e for e in self._entries(key, p) if e not in state]
                   for key, p in zip(self._keys, self._parameter_list) if not p.stop_gradient}
        missing = {key: entries for key, entries in missing.items() if entries}
        unexpected = sorted(k for k in state if k not in expected)
        if state and missing and unexpected:
            raise StateMismatch(
                f"set_state_dict: the state does not fit this optimizer's parameters: it has no "
                f"{_listing(sorted(e for entries in missing.values() for e in entries))} (missing) and has "
                f"{_listing(unexpected)} (unexpected). Was it saved from a model whose parameter names "
                f"differ? Loading it would restart those parameters' state from scratch")
        if scheduler is not None and lr_state:  # paddle ignores it where the learning rate is a float
            scheduler.set_state_dict(lr_state)
        self._reset_state()
        for entry, value in loaded.items():
            key, _, name = expected[entry]
            self._accumulators[name][key] = value
        for key, p in zip(self._keys, self._parameter_list):
            if self._mastered(p) and key in masters:
                self._master_weights[key] = self._state_array(f"{MASTER_WEIGHTS_KEY}[{key!r}]", masters[key], p)
        if state:
            self._unresumed = missing

    def holds_one_value(self, entry: str) -> bool:
        """Whether state entry ``entry`` is a one-element accumulator (a beta power), whatever
        the shape of its parameter."""
        return any(entry.endswith(f"_{name}_0") for name in self._scalar_accumulators)

    def state_slots(self) -> Dict[str, Any]:
        """Every trainable parameter's state entries as :meth:`state_dict` would name them,
        zero-filled, master weights included (under 'master_weights'): slots a checkpoint is
        read into before the first step (``shard_optimizer``'s ``state_dict``; :meth:`resume_from`
        then loads what was written)."""
        slots: Dict[str, Any] = {}
        masters: Dict[str, Tensor] = {}
        for key, p in zip(self._keys, self._parameter_list):
            if p.stop_gradient:
                continue
            xp = self._state_module(p)
            kept = self._kept_dtype(p)  # as _state_array keeps them
            for entry, name in self._entries(key, p).items():
                if name in self._scalar_accumulators:  # a host tensor, as state_dict() gives it
                    slots[entry] = wrap(np.zeros([1], scalar_dtype(p.array)))
                else:
                    slots[entry] = wrap(xp.zeros(p.array.shape, kept))
            if self._mastered(p):
                masters[key] = wrap(xp.zeros(p.array.shape, np.float32))
        if masters:
            slots[MASTER_WEIGHTS_KEY] = masters
        return slots

    def resume_from(self, state_dict: Dict[str, Any]) -> None:
        """:meth:`set_state_dict`, except that a parameter ``state_dict`` holds nothing for
        starts from a fresh state at its next step instead of being refused there."""
        self.set_state_dict(state_dict)
        self._unresumed = {}

    def _accumulator_from(self, entry: str, name: str, value: Any, param: Tensor) -> Any:
        """State entry ``entry`` (accumulator ``name``) as this optimizer keeps it: a float, or an
        array like the parameter's."""
        if name in self._scalar_accumulators:
            array = value.array if isinstance(value, Tensor) else value
            if not is_array(array):
                raise TypeError(f"state_dict[{entry}] must be a Tensor or an array, got {type(value).__name__}")
            if array.size != 1:
                raise ValueError(f"set_state_dict: state_dict[{entry!r}] has shape {list(array.shape)}; this "
                                 f"accumulator holds one value (shape [1])")
            return self._scalar_from(name, float(array.reshape(-1)[0]), param)
        return self._state_array(entry, value, param)

    # The one-value accumulators (beta powers) are numbers here, for speed. The tensors state_dict()
    # gives for them are live as paddle's (which keeps them on the host too): one host tensor per
    # entry, the same in every state_dict(), holding the current value after each step, and a
    # value written into it (``dist.load_state_dict(opt.state_dict(), path)`` loads in place) is
    # taken at the next step or state_dict(). Only entries a state_dict() gave out cost anything.
    def _take_written_scalars(self) -> None:
        """Take the values written into the live one-value tensors since this optimizer last
        put its own there."""
        if not self._scalar_tensors:
            return
        params = dict(zip(self._keys, self._parameter_list))
        for (name, key), (tensor, given) in self._scalar_tensors.items():
            now = float(tensor.array[0])
            if now != given and key in self._accumulators[name]:
                self._accumulators[name][key] = self._scalar_from(name, now, params[key])
                self._scalar_tensors[(name, key)] = (tensor, now)

    def _give_scalars(self) -> None:
        """Put the current one-value accumulators into their live tensors."""
        for (name, key), (tensor, _) in self._scalar_tensors.items():
            if key in self._accumulators[name]:
                tensor.array[0] = self._accumulators[name][key]
                self._scalar_tensors[(name, key)] = (tensor, float(tensor.array[0]))

    def _scalar_from(self, name: str, saved: float, param: Tensor) -> float:
        """A one-element accumulator as this optimizer keeps it, from its saved value."""
        return saved

    def _options_of(self, param: Tensor) -> Dict[str, Any]:
        """The options of ``param``'s group, found through a map of the parameter list (made
        again when the list changed), not a scan of it: set_state_dict asks for every parameter."""
        index = None if self._positions is None else self._positions.get(id(param))
        if index is None or index >= len(self._parameter_list) or self._parameter_list[index] is not param:
            self._positions = {id(p): i for i, p in enumerate(self._parameter_list)}
            index = self._positions[id(param)]
        return self._groups[self._group_index[index]]

    def _state_module(self, param: Tensor) -> Any:
        """The array module of ``param``'s state: NumPy with sharding's offload, else the
        parameter's own (a GPU parameter's state on its device, whatever the current device)."""
        return np if self._state_on_host else array_module(param.array)

    def _state_array(self, entry: str, value: Any, param: Tensor) -> Any:
        """An array of a parameter's state (an accumulator, a master weight) as this optimizer
        keeps it: of the parameter's shape, in float32 for a master-weighted parameter."""
        array = value.array if isinstance(value, Tensor) else value
        if not is_array(array):
            raise TypeError(f"state_dict[{entry}] must be a Tensor or an array, got {type(value).__name__}")
        if array.shape != param.array.shape and array.ndim == 1 and array.size == param.array.size:
            array = array.reshape(param.array.shape)  # a sharded optimizer's state, merged flattened
        elif array.shape != param.array.shape:  # the array this rank holds (a piece of a sharded one)
            raise ValueError(f"state_dict[{entry}] has shape {list(array.shape)}, "
                             f"the parameter has shape {list(param.array.shape)}")
        return to_module(array, self._state_module(param)).astype(self._kept_dtype(param), copy=True)

    def _check_resumed(self, key: str) -> None:
        """Say (once) that a parameter the loaded state has no entries for starts its state from
        scratch: it had no gradient before the save (a head added later, an expert never routed).
        torch does the same silently; paddle refuses it for some parameter orders and not others."""
        entries = self._unresumed.pop(key, None)
        if entries:
            warnings.warn(f"{type(self).__name__}: the state loaded by set_state_dict has no {entries} for "
                          f"parameter {key!r}, which has a gradient now: its state starts from scratch",
                          stacklevel=4)
