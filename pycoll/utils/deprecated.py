"""``pycoll.utils.deprecated``: paddle's decorator that marks an API as deprecated.

The decorated function's (or class's) docstring starts with a "Warning:" notice; with
``level=1`` each call warns (``VisibleDeprecationWarning``, a UserWarning so that Python shows
it outside ``__main__``) once the paddle version pycoll follows
(``version_check.PADDLE_API_VERSION``) has reached ``since`` (or always when ``since`` is empty); with ``level=2`` each call raises RuntimeError;
``level=0`` changes only the docstring. A decorated class stays a class (paddle's becomes a
function): its ``__init__`` warns.
"""
from __future__ import annotations

import functools
import inspect
import sys
import warnings
from typing import Any, Callable, TypeVar

from pycoll.utils.version_check import PADDLE_API_VERSION, padded

F = TypeVar("F", bound=Callable[..., Any])


class VisibleDeprecationWarning(UserWarning):
    """A deprecation warning Python shows wherever it is raised (DeprecationWarning is hidden
    outside ``__main__``, PEP 565)."""


def deprecated(update_to: str = "", since: str = "", reason: str = "", level: int = 0) -> Callable[[F], F]:
    """Mark the decorated API deprecated (see the module notes). ``update_to`` names the API to
    use instead (``"pycoll.x"``, or paddle's ``"paddle.x"``)."""
    for name, value in (("update_to", update_to), ("since", since), ("reason", reason)):
        if not isinstance(value, str):
            raise TypeError(f"deprecated: {name} must be a str, got {type(value).__name__}")
    if isinstance(level, bool) or not isinstance(level, int) or level not in (0, 1, 2):
        raise ValueError(f"deprecated: level must be 0, 1 or 2, got {level!r}")
    update_to, since, reason = update_to.strip(), since.strip(), reason.strip()
    if update_to and not update_to.startswith(("pycoll.", "paddle.")):
        raise ValueError(f'deprecated: update_to must start with "pycoll." (or "paddle."), got "{update_to}"')

    def decorate(obj: F) -> F:
        api = f"{obj.__module__}.{obj.__name__}"
        msg = f'API "{api}" is deprecated' + (f" since {since}" if since else "")
        msg += ", and will be removed in future versions."
        if update_to:
            msg += f' Please use "{update_to}" instead.'
        if reason:
            msg += f"\n    Reason: {reason}"
        if obj.__doc__:
            obj.__doc__ = "\n\nWarning:\n    " + msg + "\n\n" + inspect.cleandoc(obj.__doc__)
        if level == 0:
            return obj
        shown = f"\nWarning:\n{msg} " if sys.platform.lower() == "win32" else f"\033[93m\nWarning:\n{msg} \033[0m"

        def check() -> None:
            if level == 2:
                raise RuntimeError(f'API "{api}" has been deprecated.')
            if not since or padded(PADDLE_API_VERSION) >= padded(since):
                warnings.warn(shown, category=VisibleDeprecationWarning, stacklevel=3)

        if inspect.isclass(obj):
            init = obj.__init__

            @functools.wraps(init)
            def warning_init(self: Any, *args: Any, **kwargs: Any) -> None:
                check()
                init(self, *args, **kwargs)

            obj.__init__ = warning_init  # type: ignore[misc]
            return obj

        @functools.wraps(obj)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            check()
            return obj(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
