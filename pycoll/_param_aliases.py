"""paddle 3.3's alternative (torch-style) keyword names of an op's parameters.

paddle 3.3.1 lets about a hundred APIs take other names for some keyword arguments
(``paddle.concat(tensors, dim=1)``, ``F.layer_norm(input=x, ..., eps=1e-5)``,
``nn.AdaptiveMaxPool2D(2, return_indices=True)``) through decorators in
``paddle/utils/decorator_utils.py``. Its rule, kept here: only keyword arguments are renamed, and
only when the parameter's own name is not given as well. Giving both is an error: paddle raises
ValueError (``ParamAliasDecorator``) or TypeError (``param_one_alias`` / ``param_two_alias``, the
function then seeing an unexpected keyword) depending on the API, so ``ParamAliasConflict`` is
both.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Mapping, Optional, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class ParamAliasConflict(TypeError, ValueError):
    """A call gave a parameter under both its name and one of paddle's other names for it."""


def param_aliases(aliases: Mapping[str, str],
                  when_aliased: Optional[Mapping[str, Any]] = None) -> Callable[[F], F]:
    """Decorator: the function also takes each keyword ``alias`` of ``aliases`` (alias -> the
    parameter's name) for that parameter. ``when_aliased`` gives defaults that apply only to a call
    that used an alias (paddle's ``median(x, dim=0)`` takes ``mode='min'``, torch's median).
    The wrapper keeps the function's signature (``inspect.signature``) and name."""
    aliases = dict(aliases)
    extra = dict(when_aliased or {})

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def renamed(*args: Any, **kwargs: Any) -> Any:
            if kwargs:
                used = False
                for alias, name in aliases.items():
                    if alias in kwargs:
                        if name in kwargs:
                            raise ParamAliasConflict(f"{func.__name__}() got both {name!r} and its "
                                                     f"alias {alias!r}; give one of them")
                        kwargs[name] = kwargs.pop(alias)
                        used = True
                if used:
                    for key, value in extra.items():
                        kwargs.setdefault(key, value)
            return func(*args, **kwargs)
        return renamed  # type: ignore[return-value]
    return decorate
