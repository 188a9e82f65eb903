"""paddle's layer specifications (``fleet.meta_parallel.parallel_layers.spec_utils``): a
``LayerSpec`` names a layer class, either the class itself or a ``(module path, name)`` pair
imported when it is built, with keyword arguments to build it with; ``LayerDesc`` takes one in
place of a class. ``build_spec_layer`` builds it (a function given as the layer comes back as it
is), ``get_spec_layer`` returns the class, ``import_spec_layer`` imports a named object."""
from __future__ import annotations

import importlib
import types
import warnings
from dataclasses import dataclass, field
from typing import Any, Optional, Tuple, Union

__all__ = ["LayerSpec", "build_spec_layer", "get_spec_layer", "import_spec_layer"]


@dataclass
class LayerSpec:
    """``layer``: a class (or function), or ``(module path, name)``; ``extra_kwargs`` go to its
    constructor; ``sublayers_spec``, when set, is passed to it as ``sublayers_spec=``."""

    layer: Union[tuple, type]
    extra_kwargs: dict = field(default_factory=dict)
    sublayers_spec: Optional[Any] = None

    def __repr__(self) -> str:  # paddle's text
        if isinstance(self.layer, tuple):
            return "".join(repr(part) + "," for part in self.layer)
        return repr(self.layer) + repr(self.extra_kwargs)


def import_spec_layer(layer_path: Tuple[str, str]) -> Any:
    """The object ``name`` of module ``base_path``, for ``layer_path = (base_path, name)``.
    (paddle prints the import error and returns None; pycoll raises it, naming the path.)"""
    if not (isinstance(layer_path, tuple) and len(layer_path) == 2 and all(isinstance(p, str) for p in layer_path)):
        raise TypeError(f"import_spec_layer: layer_path must be a (module path, name) tuple of str, got {layer_path!r}")
    base_path, name = layer_path
    try:
        return vars(importlib.import_module(base_path))[name]
    except (ImportError, KeyError) as e:
        raise ImportError(f"import_spec_layer: cannot import {name!r} from {base_path!r}: {e}") from e


def _is_class_or_function(obj: Any) -> bool:
    return isinstance(obj, (type, types.FunctionType))


def get_spec_layer(spec_or_layer: Union[LayerSpec, type], **additional_kwargs: Any) -> Any:
    """The class (or function) a spec names; a class or function given directly comes back."""
    if _is_class_or_function(spec_or_layer):
        return spec_or_layer
    if _is_class_or_function(spec_or_layer.layer):
        return spec_or_layer.layer
    return import_spec_layer(spec_or_layer.layer)


def build_spec_layer(spec_or_layer: Union[LayerSpec, type], *args: Any, **kwargs: Any) -> Any:
    """An instance of the spec's class, built with ``*args``, the spec's ``extra_kwargs`` and
    ``**kwargs`` (a key in both: the spec's value wins, with a warning, as paddle's), plus
    ``sublayers_spec=`` when the spec has one. A function (given, or named by the spec) is
    returned, not called."""
    if not isinstance(spec_or_layer, (LayerSpec, type, types.FunctionType)):
        raise TypeError(f"build_spec_layer: spec_or_layer must be a LayerSpec, a class or a function, got "
                        f"{type(spec_or_layer).__name__}")
    layer = get_spec_layer(spec_or_layer)
    if isinstance(layer, types.FunctionType):
        return layer
    if not isinstance(spec_or_layer, LayerSpec):
        return layer(*args, **kwargs)
    if spec_or_layer.sublayers_spec is not None:
        kwargs["sublayers_spec"] = spec_or_layer.sublayers_spec
    for key in spec_or_layer.extra_kwargs:
        if key in kwargs:
            warnings.warn(f"Got same key {key} in extra_kwargs and kwargs during init {layer.__name__}. "
                          f"Keeping the value in extra_kwargs.")
            kwargs.pop(key)
    try:
        return layer(*args, **spec_or_layer.extra_kwargs, **kwargs)
    except Exception as e:  # paddle's: say which class failed to build
        raise type(e)(f"{e!s} when instantiating {layer.__name__}").with_traceback(e.__traceback__) from None
