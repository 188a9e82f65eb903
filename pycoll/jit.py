"""``pycoll.jit``: paddle.jit's names for code written for paddle's dynamic-to-static conversion.

pycoll runs eagerly and has no static program, so ``to_static`` gives back what it is given: a
decorated function or Layer computes exactly what it computes in paddle's dygraph mode (which is
what paddle itself runs after ``enable_to_static(False)``), and training scripts decorated for
paddle run unchanged. Exporting an inference program (``jit.save`` / ``jit.load``: paddle's
``.pdmodel`` + ``.pdiparams``) needs that program, so those two refuse with what to do instead:
save the weights with ``pycoll.save(layer.state_dict(), path + ".pdparams")`` (paddle reads that
file) and rebuild the Layer to load them.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from pycoll.nn import Layer
from pycoll.static import InputSpec
from pycoll.tensor import Tensor

__all__ = ["save", "load", "to_static", "ignore_module", "set_code_level", "set_verbosity",
           "not_to_static", "enable_to_static", "TranslatedLayer"]

_NO_PROGRAM = ("pycoll runs eagerly and has no static program to export; save the weights with "
               "pycoll.save(layer.state_dict(), path + '.pdparams') (paddle.load reads that file) and "
               "rebuild the Layer to load them with set_state_dict")


def _check_input_spec(input_spec: Any) -> None:
    if input_spec is None:
        return
    if not isinstance(input_spec, (list, tuple, dict)):
        raise TypeError(f"to_static: input_spec must be a list or tuple of InputSpec, got "
                        f"{type(input_spec).__name__}")
    items = input_spec.values() if isinstance(input_spec, dict) else input_spec
    for i, spec in enumerate(items):
        if isinstance(spec, (list, tuple, dict)):
            _check_input_spec(spec)
        elif spec is not None and not isinstance(spec, (InputSpec, Tensor, int, float, bool, str)):
            raise TypeError(f"to_static: input_spec[{i}] must be an InputSpec or a Tensor, got "
                            f"{type(spec).__name__}")


def to_static(function: Optional[Callable] = None, input_spec: Any = None, build_strategy: Any = None,
              backend: Optional[str] = "CINN", **kwargs: Any) -> Any:
    """paddle's ``jit.to_static``, as a decorator (with or without arguments) or a call on a
    function or Layer: returns it unchanged, to run eagerly (see the module docstring). The
    arguments are checked as paddle checks them (``input_spec`` a list of InputSpecs/Tensors;
    ``full_graph`` a bool) and otherwise have nothing to configure."""
    _check_input_spec(input_spec)
    if "full_graph" in kwargs and not isinstance(kwargs["full_graph"], bool):
        raise TypeError(f"to_static: full_graph must be a bool, got {type(kwargs['full_graph']).__name__}")
    unknown = sorted(set(kwargs) - {"full_graph", "property"})
    if unknown:
        raise TypeError(f"to_static: unexpected keyword arguments {unknown}; paddle's are input_spec, "
                        f"build_strategy, backend, full_graph and property")

    def decorated(target: Any) -> Any:
        if not (callable(target) or isinstance(target, Layer)):
            raise TypeError(f"to_static: function must be a function or a Layer, got {type(target).__name__}")
        return target

    return decorated if function is None else decorated(function)


def not_to_static(func: Optional[Callable] = None) -> Any:
    """paddle's marker for a function to keep out of the conversion: every function is, here."""
    return func if func is not None else (lambda f: f)


def ignore_module(modules: list) -> None:
    """paddle's list of modules the conversion skips; nothing is converted here."""
    if not isinstance(modules, list):
        raise TypeError(f"ignore_module: modules must be a list of modules, got {type(modules).__name__}")


def enable_to_static(enable_to_static_bool: bool) -> None:
    """paddle's switch between converting and running eagerly; pycoll always runs eagerly."""
    if not isinstance(enable_to_static_bool, bool):
        raise TypeError(f"enable_to_static: enable_to_static_bool must be a bool, got "
                        f"{type(enable_to_static_bool).__name__}")


def set_code_level(level: int = 100, also_to_stdout: bool = False) -> None:
    """paddle's level of logging of converted code; no code is converted here, so none is logged."""
    if isinstance(level, bool) or not isinstance(level, int):
        raise TypeError(f"set_code_level: level must be an int, got {type(level).__name__}")


def set_verbosity(level: int = 0, also_to_stdout: bool = False) -> None:
    """paddle's verbosity of the conversion's logs; nothing is converted here, so none is logged."""
    if isinstance(level, bool) or not isinstance(level, int):
        raise TypeError(f"set_verbosity: level must be an int, got {type(level).__name__}")


def save(layer: Any, path: str, input_spec: Any = None, **configs: Any) -> None:
    """paddle's ``jit.save`` exports an inference program: NotImplementedError (see the module
    docstring), raised before anything is written."""
    raise NotImplementedError(f"jit.save: {_NO_PROGRAM}")


def load(path: str, **configs: Any) -> Any:
    """paddle's ``jit.load`` reads an exported inference program: NotImplementedError (see the
    module docstring)."""
    raise NotImplementedError(f"jit.load: {_NO_PROGRAM}")


class TranslatedLayer(Layer):
    """paddle's class of what ``jit.load`` returns: a Layer that runs a loaded inference program.
    pycoll has no programs (see the module docstring), so neither ``jit.load`` nor this class can
    build one: constructing it raises NotImplementedError, as ``jit.load`` does. It is a real Layer
    subclass so that ``isinstance`` checks in scripts written for paddle run (and answer False)."""

    def __init__(self, programs: Any = None, persistable_vars: Any = None):
        raise NotImplementedError(f"TranslatedLayer: {_NO_PROGRAM}")
