"""Quanter factories: what a QuantConfig holds. A factory keeps a quanter class and its arguments,
and makes one quanter layer per quantized layer (``_instance(layer)``)."""
from __future__ import annotations

import abc
import sys
from functools import partial
from typing import Any, Callable, Type

from pycoll.nn.layer import Layer
from pycoll.quantization.base_quanter import BaseQuanter


class ClassWithArguments(metaclass=abc.ABCMeta):
    """A class and the arguments to create it with; printed as ``Name(arg,key=value)`` (paddle's)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._args = args
        self._kwargs = kwargs

    @property
    def args(self) -> tuple:
        return self._args

    @property
    def kwargs(self) -> dict:
        return self._kwargs

    @abc.abstractmethod
    def _get_class(self) -> type:
        """The class the arguments are for."""

    def __str__(self) -> str:
        args_str = ",".join([str(a) for a in self.args] + [f"{k}={v}" for k, v in self.kwargs.items()])
        return f"{type(self).__name__}({args_str})"

    __repr__ = __str__


class QuanterFactory(ClassWithArguments):
    """Holds a quanter class and its arguments; ``_instance(layer)`` makes the quanter of ``layer``
    (the class is called as ``cls(layer, *args, **kwargs)``)."""

    def _instance(self, layer: Layer) -> BaseQuanter:
        return partial(self._get_class(), *self.args, **self.kwargs)(layer)


ObserverFactory = QuanterFactory


def quanter(class_name: str) -> Callable[[Type[BaseQuanter]], Type[BaseQuanter]]:
    """Decorator declaring a factory named ``class_name`` for a quanter layer class.

    The factory class is put in the decorated class's module (and its ``__all__``, if it has one),
    as paddle's: ``@quanter("MyQuanter") class MyQuanterLayer(BaseQuanter)`` then
    ``QuantConfig(activation=MyQuanter(arg, kw=1), ...)``; each quantized layer gets
    ``MyQuanterLayer(layer, arg, kw=1)``. The decorated class is returned unchanged.
    """
    if not isinstance(class_name, str) or not class_name.isidentifier():
        raise ValueError(f"quanter: class_name must be a Python identifier, got {class_name!r}")

    def wrapper(target_class: Type[BaseQuanter]) -> Type[BaseQuanter]:
        if not isinstance(target_class, type) or not issubclass(target_class, Layer):
            raise TypeError(f"quanter({class_name!r}) decorates a quanter layer class (a pycoll.nn.Layer "
                            f"subclass, usually of BaseQuanter), got {target_class!r}")
        factory = type(class_name, (QuanterFactory,), {"_get_class": lambda self: target_class,
                                                       "__module__": target_class.__module__,
                                                       "__doc__": f"The factory of {target_class.__name__}."})
        module = sys.modules.get(target_class.__module__)
        if module is not None:
            setattr(module, class_name, factory)
            if isinstance(getattr(module, "__all__", None), list):
                module.__all__.append(class_name)
        return target_class

    return wrapper
