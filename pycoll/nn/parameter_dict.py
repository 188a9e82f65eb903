"""paddle.nn.ParameterDict: Parameters registered under string keys (it has no forward)."""
from __future__ import annotations

from typing import Any, Iterator, Mapping

from pycoll.nn.layer import Layer
from pycoll.nn.parameter import Parameter


class ParameterDict(Layer):
    """Parameters by name, in insertion order: ``pd['w']``, ``pd['w'] = p``, ``len``, iteration
    over the keys, ``update`` from a mapping or from (key, Parameter) pairs."""

    def __init__(self, parameters: Any = None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str) -> Parameter:
        return self._parameters[key]

    def __setitem__(self, key: str, param: Parameter) -> None:
        self._add(key, param)

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[str]:
        return iter(self._parameters)

    def _add(self, key: str, param: Any) -> None:
        if not isinstance(param, Parameter):
            raise TypeError(f"ParameterDict: the value of {key!r} must be a Parameter, got {type(param).__name__}")
        self.add_parameter(key, param)

    def update(self, parameters: Any) -> None:
        """Add (or replace) the parameters of a mapping, a ParameterDict or (key, Parameter) pairs."""
        if isinstance(parameters, (Mapping, ParameterDict)):
            items = list(parameters.items() if isinstance(parameters, Mapping) else
                         ((k, parameters[k]) for k in parameters))
        else:
            try:
                items = list(parameters)
            except TypeError:
                raise TypeError(f"ParameterDict.update: parameters must be a mapping or an iterable of (key, "
                                f"Parameter) pairs, got {type(parameters).__name__}") from None
        for i, kv in enumerate(items):
            if not isinstance(kv, (list, tuple)) or len(kv) != 2:
                raise ValueError(f"ParameterDict.update: parameters[{i}] must be a (key, Parameter) pair, got {kv!r}")
            self._add(kv[0], kv[1])
