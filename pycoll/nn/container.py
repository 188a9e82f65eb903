"""Containers: Sequential, LayerList, LayerDict and ParameterList."""
from __future__ import annotations

import operator
from collections import OrderedDict
from typing import Any, Iterable, Iterator, Mapping, Optional, Tuple, Union

from pycoll._param_aliases import param_aliases
from pycoll.nn.layer import Layer
from pycoll.nn.parameter import Parameter
from pycoll.tensor import Tensor


def _position(index: Any, fn: str) -> int:
    """A container's int index: any integer but a bool (``np.argmax``'s too), as paddle takes."""
    if not isinstance(index, bool):
        try:
            return operator.index(index)
        except TypeError:
            pass
    raise TypeError(f"{fn}: index must be an int, got {type(index).__name__}")


class Sequential(Layer):
    """Calls its sublayers in order. Takes layers, (name, layer) pairs or one OrderedDict.

    An int index means a position, a str a name: ``seq[1] = layer`` replaces the second layer under
    its name, ``del seq[0]`` removes the first and leaves the others' names (so their state_dict
    keys stay paddle's).
    """

    def __init__(self, *layers: Any):
        super().__init__()
        if len(layers) == 1 and isinstance(layers[0], OrderedDict):
            pairs = list(layers[0].items())
        elif layers and isinstance(layers[0], (tuple, list)):
            pairs = list(layers)
            for i, pair in enumerate(pairs):
                if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                    raise TypeError(f"Sequential: argument {i} must be a (name, layer) pair like "
                                    f"argument 0, got {type(pair).__name__}")
        else:
            pairs = [(str(i), layer) for i, layer in enumerate(layers)]
        for name, layer in pairs:
            self.add_sublayer(str(name), layer)

    def forward(self, x: Any) -> Any:
        for layer in self._sub_layers.values():
            x = layer(x)
        return x

    def _name_at(self, index: int) -> str:
        names = list(self._sub_layers)
        index = _position(index, "Sequential")
        if not -len(names) <= index < len(names):
            raise IndexError(f"Sequential: index {index!r} is out of range for {len(names)} layers")
        return names[index]

    def __getitem__(self, index: Union[int, slice, str]) -> Any:
        if isinstance(index, str):
            return self._sub_layers[index]
        if isinstance(index, slice):
            return Sequential(*list(self._sub_layers.values())[index])
        return self._sub_layers[self._name_at(index)]

    def __setitem__(self, index: Union[int, str], layer: Layer) -> None:
        if not isinstance(layer, Layer):
            raise TypeError(f"Sequential: the value set must be a Layer, got {type(layer).__name__}")
        self.add_sublayer(index if isinstance(index, str) else self._name_at(index), layer)

    def __delitem__(self, index: Union[int, slice, str]) -> None:
        if isinstance(index, str):
            if index not in self._sub_layers:
                raise KeyError(f"Sequential: no layer named {index!r}")
            names = [index]
        elif isinstance(index, slice):
            names = list(self._sub_layers)[index]
        else:
            names = [self._name_at(index)]
        for name in names:
            delattr(self, name)

    def append(self, module: Layer) -> "Sequential":
        """Add ``module`` at the end, named after its position (or the next free number)."""
        number = len(self)
        while str(number) in self._sub_layers:
            number += 1
        self.add_sublayer(str(number), module)
        return self

    def extend(self, sequential: Iterable[Layer]) -> "Sequential":
        for layer in sequential:
            self.append(layer)
        return self

    def insert(self, index: int, module: Layer) -> "Sequential":
        """Put ``module`` before position ``index``; the layers from there on shift one place.

        Layers named by position ('0', '1', ...) are renamed to their new positions, as paddle
        does; others keep their names.
        """
        if not isinstance(module, Layer):
            raise TypeError(f"Sequential.insert: module must be a Layer, got {type(module).__name__}")
        count = len(self)
        index = _position(index, "Sequential.insert")
        if not -count <= index <= count:
            raise IndexError(f"Sequential.insert: index {index!r} is out of range for {count} layers")
        pairs = list(self._sub_layers.items())
        position = index + count if index < 0 else index
        numbered = [name for name, _ in pairs] == [str(i) for i in range(count)]
        pairs.insert(position, (str(position), module))
        if numbered:
            pairs = [(str(i), layer) for i, (_, layer) in enumerate(pairs)]
        for name, _ in list(self._sub_layers.items()):
            delattr(self, name)
        for name, layer in pairs:
            self.add_sublayer(name, layer)
        return self

    def __len__(self) -> int:
        return len(self._sub_layers)

    def __iter__(self) -> Iterator[Layer]:
        return iter(self._sub_layers.values())


class LayerList(Layer):
    """A list of sublayers, registered under '0', '1', ... (it has no forward)."""

    @param_aliases({"modules": "sublayers"})
    def __init__(self, sublayers: Optional[Iterable[Layer]] = None):
        super().__init__()
        self.extend(sublayers or [])

    def _rebuild(self, layers: list) -> None:
        for key in list(self._sub_layers):
            delattr(self, key)
        for i, layer in enumerate(layers):
            self.add_sublayer(str(i), layer)

    @param_aliases({"module": "sublayer"})
    def append(self, sublayer: Layer) -> "LayerList":
        self.add_sublayer(str(len(self)), sublayer)
        return self

    @param_aliases({"modules": "sublayers"})
    def extend(self, sublayers: Iterable[Layer]) -> "LayerList":
        for layer in sublayers:
            self.append(layer)
        return self

    @param_aliases({"module": "sublayer"})
    def insert(self, index: int, sublayer: Layer) -> None:
        """Put ``sublayer`` before position ``index`` (-len <= index <= len, as paddle's)."""
        layers = list(self._sub_layers.values())
        index = _position(index, "LayerList.insert")
        if not -len(layers) <= index <= len(layers):
            raise IndexError(f"LayerList.insert: index must be an int in [{-len(layers)}, {len(layers)}], got "
                             f"{index!r}")
        layers.insert(index, sublayer)
        self._rebuild(layers)

    def _checked(self, index: Union[int, slice]) -> Union[int, slice]:
        if isinstance(index, slice):
            return index
        count = len(self._sub_layers)
        index = _position(index, "LayerList")
        if not -count <= index < count:
            raise IndexError(f"LayerList: index {index!r} is out of range, should be an int in [{-count}, {count})")
        return index

    def __getitem__(self, index: Union[int, slice]) -> Any:
        layers = list(self._sub_layers.values())
        return LayerList(layers[index]) if isinstance(index, slice) else layers[self._checked(index)]

    def __setitem__(self, index: int, sublayer: Layer) -> None:
        layers = list(self._sub_layers.values())
        layers[self._checked(index)] = sublayer
        self._rebuild(layers)

    def __delitem__(self, index: Union[int, slice]) -> None:
        """Remove a layer (or a slice of them); the rest are renumbered '0', '1', ... as paddle does."""
        layers = list(self._sub_layers.values())
        del layers[self._checked(index)]
        self._rebuild(layers)

    def pop(self, index: Union[int, slice] = -1) -> Any:
        """Remove and return the layer at ``index`` (a LayerList of them for a slice)."""
        taken = self[index]
        del self[index]
        return taken

    def __add__(self, other: Iterable[Layer]) -> "LayerList":
        return LayerList([*self, *other])

    def __iadd__(self, other: Iterable[Layer]) -> "LayerList":
        return self.extend(other)

    def __len__(self) -> int:
        return len(self._sub_layers)

    def __iter__(self) -> Iterator[Layer]:
        return iter(self._sub_layers.values())


class LayerDict(Layer):
    """An ordered dict of sublayers, registered under their keys (it has no forward).

    Takes a mapping (its order is kept) or a sequence of (key, layer) pairs.
    """

    @param_aliases({"modules": "sublayers"})
    def __init__(self, sublayers: Optional[Union[Mapping[str, Layer], Iterable[Tuple[str, Layer]]]] = None):
        super().__init__()
        if sublayers is not None:
            self.update(sublayers)

    def __getitem__(self, key: str) -> Layer:
        return self._sub_layers[key]

    def __setitem__(self, key: str, sublayer: Layer) -> None:
        self.add_sublayer(key, sublayer)

    def __delitem__(self, key: str) -> None:
        if key not in self._sub_layers:
            raise KeyError(key)
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._sub_layers)

    def __iter__(self) -> Iterator[str]:
        return iter(self._sub_layers)

    def __contains__(self, key: object) -> bool:
        return key in self._sub_layers

    def clear(self) -> None:
        for key in list(self._sub_layers):
            delattr(self, key)

    def pop(self, key: str) -> Layer:
        layer = self[key]
        del self[key]
        return layer

    def keys(self) -> Iterable[str]:
        return self._sub_layers.keys()

    def items(self) -> Iterable[Tuple[str, Layer]]:
        return self._sub_layers.items()

    def values(self) -> Iterable[Layer]:
        return self._sub_layers.values()

    @param_aliases({"modules": "sublayers"})
    def update(self, sublayers: Union[Mapping[str, Layer], Iterable[Tuple[str, Layer]]]) -> None:
        """Add (or replace) layers from a mapping, a LayerDict or (key, layer) pairs."""
        pairs = sublayers.items() if isinstance(sublayers, (Mapping, LayerDict)) else sublayers
        for i, pair in enumerate(pairs):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ValueError(f"LayerDict.update: element {i} must be a (key, layer) pair, got {pair!r}")
            self.add_sublayer(pair[0], pair[1])


class ParameterList(Layer):
    """A list of Parameters, registered under '0', '1', ... (it has no forward)."""

    def __init__(self, parameters: Optional[Iterable[Parameter]] = None):
        super().__init__()
        for param in parameters or []:
            self.append(param)

    def append(self, parameter: Parameter) -> "ParameterList":
        if not isinstance(parameter, Parameter):
            raise TypeError(f"ParameterList: parameter must be a Parameter, got {type(parameter).__name__}")
        self.add_parameter(str(len(self._parameters)), parameter)
        return self

    def __getitem__(self, index: int) -> Parameter:
        return list(self._parameters.values())[index]

    def __setitem__(self, index: int, parameter: Parameter) -> None:
        """``params[i] = p``; a plain Tensor becomes a trainable Parameter of its value (paddle's,
        here only: append and the constructor take Parameters)."""
        if isinstance(parameter, Tensor) and not isinstance(parameter, Parameter):
            parameter = Parameter(parameter.detach())
        if not isinstance(parameter, Parameter):
            raise TypeError(f"ParameterList: parameter must be a Parameter, got {type(parameter).__name__}")
        keys = list(self._parameters)
        self.add_parameter(keys[index], parameter)  # IndexError past the end

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(list(self._parameters.values()))
