"""`QuantConfig`: which quanter each layer of a model gets, set globally, by layer type, by layer
full name or by layer object (later ones win), and which QAT layer replaces which float layer."""
from __future__ import annotations

from typing import Dict, List, Optional, Type, Union

from pycoll import nn
from pycoll.nn.quant.qat import QuantedConv2D, QuantedLinear
from pycoll.nn.quant.stub import QuanterStub, Stub
from pycoll.quantization.factory import QuanterFactory
from pycoll.quantization.wrapper import ObserveWrapper

DEFAULT_QAT_LAYER_MAPPINGS: Dict[type, type] = {Stub: QuanterStub, nn.Linear: QuantedLinear,
                                                nn.Conv2D: QuantedConv2D}
DEFAULT_LEAVES = [nn.ReLU, nn.AvgPool2D]  # observed as one layer although they are not childless everywhere


def _check_factory(fn: str, name: str, value: object) -> None:
    if value is not None and not isinstance(value, QuanterFactory):
        raise TypeError(f"{fn}: {name} must be a quanter factory (e.g. FakeQuanterWithAbsMaxObserver(...), "
                        f"AbsmaxObserver()) or None, got {type(value).__name__}")


def _check_layer_type(fn: str, name: str, value: object) -> None:
    if not (isinstance(value, type) and issubclass(value, nn.Layer)):
        raise TypeError(f"{fn}: {name} must be a subclass of pycoll.nn.Layer, got {value!r}")


class SingleLayerConfig:
    """The activation and weight quanter factories of one layer."""

    def __init__(self, activation: Optional[QuanterFactory], weight: Optional[QuanterFactory]) -> None:
        self._activation = activation
        self._weight = weight

    @property
    def activation(self) -> Optional[QuanterFactory]:
        return self._activation

    @property
    def weight(self) -> Optional[QuanterFactory]:
        return self._weight

    def __str__(self) -> str:
        return f"activation: {self._activation}\nweight: {self._weight}"


class QuantConfig:
    """How to quantize a model: ``activation`` and ``weight`` are the global quanter factories
    (None and None: no global config; layers must then be configured one by one).

    Priority, lowest first: global, the parent's, by type, by full name, by layer object.
    """

    def __init__(self, activation: Optional[QuanterFactory], weight: Optional[QuanterFactory]) -> None:
        _check_factory("QuantConfig", "activation", activation)
        _check_factory("QuantConfig", "weight", weight)
        self._global_config = None if activation is None and weight is None else SingleLayerConfig(activation, weight)
        self._layer2config: Dict[nn.Layer, SingleLayerConfig] = {}
        self._prefix2config: Dict[str, SingleLayerConfig] = {}
        self._type2config: Dict[type, SingleLayerConfig] = {}
        self._model: Optional[nn.Layer] = None
        self._qat_layer_mapping = dict(DEFAULT_QAT_LAYER_MAPPINGS)
        self._customized_leaves: List[type] = []

    # ---- setting ----------------------------------------------------------------------------
    def add_layer_config(self, layer: Union[nn.Layer, List[nn.Layer]], activation: Optional[QuanterFactory] = None,
                         weight: Optional[QuanterFactory] = None) -> None:
        """Configure one layer (or a list): recorded by the layer's full name, so it also applies
        to the layer's copy that ``quantize(inplace=False)`` makes."""
        if isinstance(layer, list):
            for item in layer:
                self.add_layer_config(item, activation=activation, weight=weight)
            return
        if not isinstance(layer, nn.Layer):
            raise TypeError(f"add_layer_config: layer must be a pycoll.nn.Layer or a list of them, "
                            f"got {type(layer).__name__}")
        self.add_name_config(layer.full_name(), activation=activation, weight=weight)

    def add_name_config(self, layer_name: Union[str, List[str]], activation: Optional[QuanterFactory] = None,
                        weight: Optional[QuanterFactory] = None) -> None:
        """Configure the layers of this full name (``layer.full_name()``), or of each name in a list."""
        if isinstance(layer_name, list):
            for item in layer_name:
                self.add_name_config(item, activation=activation, weight=weight)
            return
        if not isinstance(layer_name, str):
            raise TypeError(f"add_name_config: layer_name must be a str or a list of str, "
                            f"got {type(layer_name).__name__}")
        _check_factory("add_name_config", "activation", activation)
        _check_factory("add_name_config", "weight", weight)
        self._prefix2config[layer_name] = SingleLayerConfig(activation, weight)

    def add_type_config(self, layer_type: Union[Type[nn.Layer], List[Type[nn.Layer]]],
                        activation: Optional[QuanterFactory] = None, weight: Optional[QuanterFactory] = None) -> None:
        """Configure every layer of this type (exactly this type, not subclasses), or of each type in a list."""
        if isinstance(layer_type, list):
            for item in layer_type:
                self.add_type_config(item, activation=activation, weight=weight)
            return
        _check_layer_type("add_type_config", "layer_type", layer_type)
        _check_factory("add_type_config", "activation", activation)
        _check_factory("add_type_config", "weight", weight)
        self._type2config[layer_type] = SingleLayerConfig(activation, weight)

    def add_qat_layer_mapping(self, source: Type[nn.Layer], target: Type[nn.Layer]) -> None:
        """QAT replaces layers of type ``source`` by ``target(layer, single_layer_config)``."""
        _check_layer_type("add_qat_layer_mapping", "source", source)
        _check_layer_type("add_qat_layer_mapping", "target", target)
        self._qat_layer_mapping[source] = target

    def add_customized_leaf(self, layer_type: Type[nn.Layer]) -> None:
        """Treat layers of this type as leaves: observed as one layer, their sublayers left alone."""
        _check_layer_type("add_customized_leaf", "layer_type", layer_type)
        self._customized_leaves.append(layer_type)

    # ---- reading ----------------------------------------------------------------------------
    @property
    def customized_leaves(self) -> List[type]:
        return self._customized_leaves

    @property
    def qat_layer_mappings(self) -> Dict[type, type]:
        return self._qat_layer_mapping

    @property
    def default_qat_layer_mapping(self) -> Dict[type, type]:
        return DEFAULT_QAT_LAYER_MAPPINGS

    @property
    def global_config(self) -> Optional[SingleLayerConfig]:
        return self._global_config

    def _get_config_by_layer(self, layer: nn.Layer) -> Optional[SingleLayerConfig]:
        return self._layer2config.get(layer)

    def _is_quantifiable(self, layer: nn.Layer) -> bool:
        return layer in self._layer2config

    def _is_leaf(self, layer: nn.Layer) -> bool:
        return (type(layer) in DEFAULT_LEAVES or not layer._sub_layers
                or type(layer) in self._customized_leaves)

    def _has_observer_config(self, layer: nn.Layer) -> bool:
        config = self._get_config_by_layer(layer)
        return config is not None and config.activation is not None

    def _need_observe(self, layer: nn.Layer) -> bool:
        return self._is_leaf(layer) and self._has_observer_config(layer)

    def _get_qat_layer(self, layer: nn.Layer) -> nn.Layer:
        return self._qat_layer_mapping[type(layer)](layer, self._get_config_by_layer(layer))

    def _get_observer(self, layer: nn.Layer) -> Optional[nn.Layer]:
        config = self._get_config_by_layer(layer)
        factory = None if config is None else config.activation
        return None if factory is None else factory._instance(layer)

    def _get_observe_wrapper(self, layer: nn.Layer) -> ObserveWrapper:
        return ObserveWrapper(self._get_observer(layer), layer)

    # ---- propagation ------------------------------------------------------------------------
    def _specify(self, model: nn.Layer) -> None:
        """Give every sublayer of ``model`` its config (see the class's priority)."""
        self._model = model
        self._specify_helper(model)

    def _specify_helper(self, model: nn.Layer) -> None:
        for child in model.children():
            config = self._layer2config.get(model, self._global_config)
            config = self._type2config.get(type(child), config)
            config = self._prefix2config.get(child.full_name(), config)
            if config is not None:
                self._layer2config[child] = config
            self._specify_helper(child)

    def details(self) -> str:
        """The model's layers with their configs once a model was specified, else ``str(self)``."""
        return str(self) if self._model is None else self._details_helper(self._model)

    def _details_helper(self, layer: nn.Layer) -> str:
        lines = []
        for name, sublayer in layer.named_children():
            if sublayer in self._layer2config:
                text = _indent(self._details_helper(sublayer), 2)
                lines.append(f"({name}): {text}, {self._layer2config[sublayer]}")
        body = "\n  " + "\n  ".join(lines) + "\n" if lines else ""
        return f"{type(layer).__name__}({body})"

    def __str__(self) -> str:
        text = f"Global config:\n{self._global_config}\n"
        if self._type2config:
            text += f"Layer type config:\n{self._type2config}\n"
        if self._prefix2config:
            text += f"Layer prefix config: \n{self._prefix2config}\n"
        return text


def _indent(text: str, indent: int) -> str:
    lines = text.split("\n")
    return lines[0] if len(lines) == 1 else lines[0] + "\n" + "\n".join(" " * indent + line for line in lines[1:])
