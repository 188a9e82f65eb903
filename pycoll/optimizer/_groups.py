"""An optimizer's ``parameters`` argument: a list of Tensors, or paddle's parameter groups
(``[{'params': [...], 'learning_rate': 0.1, 'weight_decay': 0.01, ...}, ...]``), checked and
flattened into the parameters, each group's own options, and each parameter's group."""
from __future__ import annotations

import warnings
from typing import Any, Callable, Dict, Iterable, List, Tuple

from pycoll.optimizer._checks import real
from pycoll.regularizer import WeightDecayRegularizer
from pycoll.tensor import Tensor

OptionCheck = Callable[[Any, str], Any]  # (value, its name for messages) -> the value to keep


def check_grad_clip(value: Any, name: str) -> Any:
    if value is not None and not callable(getattr(value, "clip_grads", None)):
        raise TypeError(f"{name} must be a pycoll.nn.ClipGradBy... object, got {type(value).__name__}")
    return value


def check_rate(value: Any, name: str) -> float:
    return real(value, name, low=0.0)


def check_decay(value: Any, name: str) -> Any:
    """A weight decay: None, a float (L2) or a ``pycoll.regularizer`` L1Decay / L2Decay (or a
    WeightDecayRegularizer of one's own)."""
    if value is None or isinstance(value, WeightDecayRegularizer):
        return value
    return real(value, name, low=0.0)


# what every optimizer's groups may set: a multiplier of the optimizer's learning rate (paddle
# keeps it as the parameter's optimize_attr['learning_rate']), the weight decay and the clip
BASE_OPTIONS: Dict[str, OptionCheck] = {"learning_rate": check_rate, "weight_decay": check_decay,
                                        "grad_clip": check_grad_clip}


# torch's names of options paddle's groups spell otherwise: kept, but said not to be read
TORCH_SPELLINGS = {"lr": "learning_rate", "eps": "epsilon", "betas": "beta1/beta2"}


def _spelled(names: List[str]) -> str:
    return ", ".join(f"{TORCH_SPELLINGS[n]!r} (not {n!r})" for n in names)


def _tensors(values: Iterable[Any], where: str) -> List[Tensor]:
    out = list(values)
    for i, p in enumerate(out):
        if not isinstance(p, Tensor):
            raise TypeError(f"{where} must be Tensors, got {type(p).__name__} at index {i}")
    return out


def parse_parameters(parameters: Any, options: Dict[str, OptionCheck]
                     ) -> Tuple[List[Tensor], List[Dict[str, Any]], List[int], bool]:
    """(the parameters, each group's options as given, each parameter's group index, whether
    groups were given). Plain Tensors make one group without options. A group's ``weight_decay``
    of None is dropped: the optimizer's own applies (paddle's rule); its ``grad_clip`` of None
    means no clipping. Keys a group has beyond its options (a name to find it by, say) are kept
    as given and change nothing, as in paddle and torch; torch's spellings of options (``'lr'``)
    are said (a warning) not to be read."""
    if isinstance(parameters, Tensor):
        raise TypeError("parameters must be an iterable of Tensors or of parameter-group dicts, got a Tensor")
    if isinstance(parameters, dict):
        raise TypeError("parameters must not be a dict: give parameter groups as a list of dicts")
    entries = list(parameters)
    if not any(isinstance(e, dict) for e in entries):
        params = _tensors(entries, "parameters")
        return params, [{}], [0] * len(params), False
    if not all(isinstance(e, dict) for e in entries):
        raise TypeError("parameters must be all Tensors or all parameter-group dicts, not a mixture")
    params: List[Tensor] = []
    groups: List[Dict[str, Any]] = []
    index: List[int] = []
    for g, group in enumerate(entries):
        where = f"parameters[{g}]"
        if "params" not in group:
            raise ValueError(f"{where} must have 'params', the group's parameters")
        unread = sorted(set(group) & set(TORCH_SPELLINGS) - set(options))
        if unread:
            warnings.warn(f"{where} has {unread}, which paddle's optimizers do not read; the group's options "
                          f"are {_spelled(unread)}", stacklevel=4)
        members = group["params"]
        if isinstance(members, set):
            raise TypeError(f"{where}['params'] must be an ordered collection (a list), got a set")
        members = [members] if isinstance(members, Tensor) else _tensors(members, f"{where}['params']")
        own = {name: options[name](value, f"{where}[{name!r}]") if name in options else value  # other keys
               for name, value in group.items()  # are the user's (a group's name, say), kept as given
               if name != "params" and not (name == "weight_decay" and value is None)}
        groups.append(own)
        params.extend(members)
        index.extend([g] * len(members))
    if len({id(p) for p in params}) != len(params):
        raise ValueError("some parameters appear in more than one parameter group")
    return params, groups, index, True
