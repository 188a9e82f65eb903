"""Sequential and LayerList."""
from __future__ import annotations

from typing import Any, Iterable, Iterator, Optional, Union

from pycoll.nn.layer import Layer


class Sequential(Layer):
    """Calls its sublayers in order. Takes layers, or (name, layer) pairs."""

    def __init__(self, *layers: Any):
        super().__init__()
        for i, item in enumerate(layers):
            if isinstance(item, (tuple, list)) and len(item) == 2:
                self.add_sublayer(str(item[0]), item[1])
            else:
                self.add_sublayer(str(i), item)

    def forward(self, x: Any) -> Any:
        for layer in self._sub_layers.values():
            x = layer(x)
        return x

    def __getitem__(self, index: Union[int, slice, str]) -> Any:
        if isinstance(index, str):
            return self._sub_layers[index]
        layers = list(self._sub_layers.values())
        if isinstance(index, slice):
            return Sequential(*layers[index])
        return layers[index]

    def __len__(self) -> int:
        return len(self._sub_layers)

    def __iter__(self) -> Iterator[Layer]:
        return iter(self._sub_layers.values())


class LayerList(Layer):
    """A list of sublayers, registered under '0', '1', ... (it has no forward)."""

    def __init__(self, sublayers: Optional[Iterable[Layer]] = None):
        super().__init__()
        self.extend(sublayers or [])

    def _rebuild(self, layers: list) -> None:
        for key in list(self._sub_layers):
            delattr(self, key)
        for i, layer in enumerate(layers):
            self.add_sublayer(str(i), layer)

    def append(self, sublayer: Layer) -> "LayerList":
        self.add_sublayer(str(len(self)), sublayer)
        return self

    def extend(self, sublayers: Iterable[Layer]) -> "LayerList":
        for layer in sublayers:
            self.append(layer)
        return self

    def insert(self, index: int, sublayer: Layer) -> None:
        layers = list(self._sub_layers.values())
        layers.insert(index, sublayer)
        self._rebuild(layers)

    def __getitem__(self, index: Union[int, slice]) -> Any:
        layers = list(self._sub_layers.values())
        return LayerList(layers[index]) if isinstance(index, slice) else layers[index]

    def __setitem__(self, index: int, sublayer: Layer) -> None:
        layers = list(self._sub_layers.values())
        layers[index] = sublayer
        self._rebuild(layers)

    def __len__(self) -> int:
        return len(self._sub_layers)

    def __iter__(self) -> Iterator[Layer]:
        return iter(self._sub_layers.values())
