"""paddle 3.3's torch-style names on ``nn.Layer``: ``load_state_dict``, ``named_modules``/``modules``,
``add_module``, ``get_sublayer``/``get_submodule``/``set_sublayer``/``get_parameter``/``get_buffer``,
``register_parameter``, ``register_forward_hook``, ``zero_grad``, ``requires_grad_``,
``half``/``bfloat16``/``type``/``cpu``/``cuda``/``xpu``, and the base ``backward`` and
``get_extra_state`` that refuse as paddle's do. Each is paddle 3.3.1's, over the Layer's own
methods."""
from __future__ import annotations

from typing import Any, Iterator, List, Mapping, NamedTuple, Optional, Tuple

from pycoll._param_aliases import param_aliases


_TYPE_NAMES = ("bool", "bfloat16", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
               "complex64", "complex128")  # paddle's names Layer.type takes


class IncompatibleKeys(NamedTuple):
    """What ``load_state_dict`` returns (paddle's and torch's ``_IncompatibleKeys``)."""
    missing_keys: List[str]
    unexpected_keys: List[str]


class TorchNames:
    """Mixed into ``pycoll.nn.Layer``."""

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> IncompatibleKeys:
        """``set_state_dict``; with ``strict``, a missing or unexpected key raises RuntimeError
        afterwards (what matched is loaded), as paddle's does. ``assign`` is accepted."""
        missing, unexpected = self.set_state_dict(dict(state_dict))  # type: ignore[attr-defined]
        errors = []
        if strict and missing:
            errors.append("Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
        if strict and unexpected:
            errors.append("Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(type(self).__name__,
                                                                                 "\n\t".join(errors)))
        return IncompatibleKeys(list(missing), list(unexpected))

    def named_modules(self, memo: Optional[set] = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[Tuple[str, Any]]:
        """(path, layer) for this layer (path ``prefix``) and every layer below it: each once, or
        at each of its paths without ``remove_duplicate``."""
        return self.named_sublayers(prefix=prefix, include_self=True, layers_set=memo,  # type: ignore[attr-defined]
                                    remove_duplicate=remove_duplicate)

    def modules(self) -> Iterator[Any]:
        for _, layer in self.named_modules():
            yield layer

    def add_module(self, name: str, module: Any) -> None:
        self.add_sublayer(name, module)  # type: ignore[attr-defined]

    register_module = add_module

    def get_sublayer(self, target: str) -> Any:
        """The layer at dotted path ``target`` ('' is this one); AttributeError naming the step
        that is missing or is no Layer."""
        layer: Any = self
        for atom in target.split(".") if target else []:
            if not hasattr(layer, atom):
                raise AttributeError(f"{type(layer).__name__} has no attribute `{atom}`")
            layer = getattr(layer, atom)
            if not isinstance(layer, TorchNames):  # (every Layer is one)
                raise AttributeError(f"`{atom}` is not an nn.Layer")
        return layer

    get_submodule = get_sublayer

    def register_parameter(self, name: str, param: Any) -> None:
        self.add_parameter(name, param)  # type: ignore[attr-defined]

    def backward(self, *inputs: Any) -> Any:
        """paddle's: a Layer's gradients come from autograd, never from a backward of its own."""
        raise ValueError("Layer shouldn't implement backward")

    def get_extra_state(self) -> Any:
        """paddle's (torch's) hook for a subclass to override; the base refuses, as paddle's."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called. "
                           "Please override get_extra_state() in the subclass that defines its extra state")

    @param_aliases({"module": "layer"})
    def set_sublayer(self, target: str, layer: Any, strict: bool = False) -> None:
        """Put ``layer`` at dotted path ``target`` (its parent must exist; with ``strict``, so must
        the layer it replaces)."""
        if not target:
            raise ValueError("Cannot set the sublayer without a target name!")
        if not isinstance(layer, TorchNames):
            raise ValueError(f"`module` is not an nn.Layer, found {type(layer)}")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_sublayer(parent_path)
        if strict and not isinstance(getattr(parent, name, None), TorchNames):
            raise AttributeError(f"{type(parent).__name__} has no sublayer `{name}` to replace")
        setattr(parent, name, layer)

    set_submodule = set_sublayer

    def get_parameter(self, target: str) -> Any:
        from pycoll.tensor import Tensor

        path, _, name = target.rpartition(".")
        layer = self.get_sublayer(path)
        if not hasattr(layer, name):
            raise AttributeError(f"{type(layer).__name__} has no attribute `{name}`")
        param = getattr(layer, name)
        if not isinstance(param, Tensor):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Any:
        path, _, name = target.rpartition(".")
        layer = self.get_sublayer(path)
        if name not in layer._buffers:
            raise AttributeError(f"`{name}` is not a buffer" if hasattr(layer, name)
                                 else f"{type(layer).__name__} has no attribute `{name}`")
        return layer._buffers[name]

    def register_forward_hook(self, hook: Any, **options: bool) -> Any:
        return self.register_forward_post_hook(hook, **options)  # type: ignore[attr-defined]

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Each parameter's gradient dropped (``set_to_none``, paddle's default here) or zeroed."""
        for p in self.parameters():  # type: ignore[attr-defined]
            if p.grad is not None:
                p.clear_gradient(not set_to_none)

    def requires_grad_(self, requires_grad: bool = True) -> Any:
        for p in self.parameters():  # type: ignore[attr-defined]
            p.stop_gradient = not requires_grad
        return self

    def half(self) -> Any:
        return self.to(dtype="float16")  # type: ignore[attr-defined]

    def bfloat16(self, excluded_layers: Any = None) -> Any:
        """Floating-point parameters and buffers to bfloat16 but those of ``excluded_layers``
        (a Layer type or a list of them; by default nn.BatchNorm, as paddle's: the layer types
        that say ``keeps_float_in_bfloat16``)."""
        if excluded_layers is None:
            excluded_layers = list({type(layer) for layer in self.sublayers(include_self=True)  # type: ignore[attr-defined]
                                    if getattr(type(layer), "keeps_float_in_bfloat16", False)})
        return self._cast_floating("bfloat16", excluded_layers)  # type: ignore[attr-defined]

    def type(self, dst_type: Any) -> Any:
        """Every parameter and buffer, integer ones too, cast to ``dst_type`` (a dtype, or one of
        paddle's names: bool, the int and uint8 kinds, the float and complex ones)."""
        from pycoll.dtypes import convert_dtype

        if isinstance(dst_type, str) and dst_type not in _TYPE_NAMES:
            raise ValueError(f"Layer.type: dst_type={dst_type!r}; it must be a dtype or one of {list(_TYPE_NAMES)}")
        return self.to(dtype=convert_dtype(dst_type))  # type: ignore[attr-defined]

    def cpu(self) -> Any:
        return self.to("cpu")  # type: ignore[attr-defined]

    def xpu(self, device: Any = None) -> Any:
        raise RuntimeError("Layer.xpu: pycoll runs on CPUs and CUDA GPUs only and has no XPU place; use cpu() "
                           "or cuda()")

    def cuda(self, device: Any = None) -> Any:
        return self.to("gpu" if device is None else device if isinstance(device, str) else  # type: ignore[attr-defined]
                       f"gpu:{device}" if isinstance(device, int) else device)
