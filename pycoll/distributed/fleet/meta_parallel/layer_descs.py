"""paddle's descriptions of the layers of a ``PipelineLayer``, built later by the stage that holds
them: ``LayerDesc`` (a class and its arguments, or a ``LayerSpec``), ``SharedLayerDesc`` (one
layer whose weights several stages use, e.g. an embedding tied to the output projection) and
``LocalSharedLayerDesc`` (weights shared by the two chunks of one stage, which only paddle's
DualPipeV schedule runs: pycoll's PipelineLayer refuses it, as paddle's does without DualPipeV)."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, List, Optional, Union

from pycoll.distributed.fleet.meta_parallel.spec_utils import LayerSpec, build_spec_layer, get_spec_layer
from pycoll.nn import Layer

__all__ = ["LayerDesc", "LocalSharedLayerDesc", "SharedLayerDesc"]


class LayerDesc:
    """``layer_func(*inputs, **kwargs)``, built by the stage that holds it; or, given a
    ``LayerSpec``, its class built with the spec's ``extra_kwargs`` updated by ``kwargs`` (and
    those of ``build_layer``), as paddle's (``inputs`` are then not used)."""

    def __init__(self, layer_func_or_spec: Union[type, LayerSpec], *inputs: Any, **kwargs: Any):
        layer_func = layer_func_or_spec  # paddle's argument name
        self.using_layer_spec = isinstance(layer_func, LayerSpec)
        if self.using_layer_spec:
            self.layer_spec = layer_func
            layer_func = get_spec_layer(layer_func)
        if not (isinstance(layer_func, type) and issubclass(layer_func, Layer)):
            raise TypeError(f"LayerDesc: layer_func_or_spec must be a subclass of pycoll.nn.Layer (or a LayerSpec "
                            f"naming one), got {layer_func!r}")
        self.layer_func = layer_func
        self.inputs = inputs
        self.kwargs = kwargs

    def build_layer(self, **extra_kwargs: Any) -> Layer:
        if self.using_layer_spec:
            merged = {**self.layer_spec.extra_kwargs, **self.kwargs, **extra_kwargs}
            return build_spec_layer(dataclasses.replace(self.layer_spec, extra_kwargs=merged))
        return self.layer_func(*self.inputs, **{**self.kwargs, **extra_kwargs})

    def __repr__(self) -> str:
        args = [repr(a) for a in self.inputs] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"{self.layer_func.__name__}({', '.join(args)})"


class SharedLayerDesc(LayerDesc):
    """A layer named ``key``: every ``SharedLayerDesc`` with that key uses one layer per stage,
    whose ``shared_weight_attr`` weights are kept equal across stages. ``forward_func(layer, x)``,
    when given, is called instead of the layer (e.g. ``x @ layer.weight.T`` for an output
    projection tied to an embedding)."""

    def __init__(self, key: str, layer_func: Union[type, LayerSpec], forward_func: Optional[Callable[..., Any]] = None,
                 shared_weight_attr: Union[str, List[str]] = "weight", *inputs: Any, **kwargs: Any):
        super().__init__(layer_func, *inputs, **kwargs)
        name = type(self).__name__
        attrs = [shared_weight_attr] if isinstance(shared_weight_attr, str) else shared_weight_attr
        if not isinstance(attrs, list) or not attrs or not all(isinstance(a, str) for a in attrs):
            raise TypeError(f"{name}: shared_weight_attr must be a str or a list of str, got {shared_weight_attr!r}")
        if forward_func is not None and not callable(forward_func):
            raise TypeError(f"{name}: forward_func must be callable, got {forward_func!r}")
        self.layer_name = key
        self.forward_func = forward_func
        self.shared_weight_attr = attrs


class LocalSharedLayerDesc(SharedLayerDesc):
    """paddle's description of a layer whose ``shared_weight_attr`` weights the chunks of one
    DualPipeV stage share (same arguments as ``SharedLayerDesc``). paddle's class derives from
    ``LayerDesc`` only; here it shares ``SharedLayerDesc``'s checks, and ``PipelineLayer`` refuses
    it before looking at it as a shared layer."""
