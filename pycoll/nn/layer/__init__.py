"""`nn.Layer`: the base class of every model (paddle semantics).

Assigning a Parameter or a Layer to an attribute registers it (in assignment order); buffers are
registered with `register_buffer`. `state_dict()` keys are the structured attribute paths,
e.g. '_linear1.weight'.
"""
from __future__ import annotations

import collections
import functools
import inspect
import itertools
import re
import warnings
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import numpy as np

from pycoll._errors import AssertedArgument
from pycoll._graph import RemovableHandle
from pycoll._logging import logger
from pycoll._param_aliases import param_aliases
from pycoll.creation import zeros
from pycoll.device import is_array
from pycoll.nn._convert import check_dtype_name, convert_layers, convert_tensor, parse_device
from pycoll.nn.initializer import Constant, Initializer, XavierUniform, global_initializer, lazy_pending
from pycoll.nn.parameter import Parameter, ParamAttr
from pycoll.dtypes import DTypeLike, convert_dtype, default_float
from pycoll.tensor import Tensor
from pycoll.nn.layer.torch_names import TorchNames

_name_counters: Dict[str, itertools.count] = collections.defaultdict(itertools.count)


def _unique_name(prefix: str) -> str:
    return f"{prefix}_{next(_name_counters[prefix])}"


def new_parameter(shape: Any, dtype: DTypeLike, name: str, attr: Any = None, is_bias: bool = False,
                  default_initializer: Optional[Initializer] = None) -> Parameter:
    """A Parameter named ``name`` unless ``attr`` names it, initialised by (first that is set)
    attr's initializer, set_global_initializer's, ``default_initializer``, else Constant(0) for
    biases and XavierUniform."""
    attr = ParamAttr.from_arg(attr, "attr")
    param = Parameter(zeros(shape, dtype or default_float()), name=attr.name or name, trainable=attr.trainable)
    default_initializer = global_initializer(is_bias) or default_initializer
    init = attr.initializer or default_initializer or (Constant(0.0) if is_bias else XavierUniform())
    init(param)
    return attr.apply_to(param)


_created = itertools.count()


def create_parameter(shape: Any, dtype: DTypeLike, name: Optional[str] = None, attr: Any = None,
                     is_bias: bool = False, default_initializer: Optional[Initializer] = None) -> Parameter:
    """paddle's ``create_parameter``: a Parameter outside any layer (named ``name``, else
    ``create_parameter_N.w_0``), initialised as ``Layer.create_parameter`` does."""
    kind = "b" if is_bias else "w"
    return new_parameter(shape, dtype, name or f"create_parameter_{next(_created)}.{kind}_0", attr, is_bias,
                         default_initializer)


def _snake(name: str) -> str:
    """A class name as paddle turns it into a layer's name scope: ``BatchNorm2D`` -> ``batch_norm2d``,
    ``ReLU`` -> ``re_lu``, ``LSTM`` -> ``lstm`` (its parameters are then named ``batch_norm2d_0.w_0``,
    the names paddle's optimizer state files are keyed by)."""
    words = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", words).lower()


# paddle names the tensor-parallel layers' parameters as those of the layers they split
# (``linear_3.w_0``), sharing their counters, so that its checkpoints' keys match either way
_SPLIT_LAYER_SCOPES = {"column_parallel_linear": "linear", "row_parallel_linear": "linear",
                       "vocab_parallel_embedding": "embedding"}


def _scope(class_name: str) -> str:
    """A layer class's default name scope, as paddle's."""
    scope = _snake(class_name)
    return _SPLIT_LAYER_SCOPES.get(scope, scope)


@functools.lru_cache(maxsize=None)
def _first_input_name(forward: Callable[..., Any]) -> Optional[str]:
    """The name of ``forward``'s first parameter after self where it is not ``input`` (and
    ``input`` is none of its names, nor does it take ``**kwargs``); None otherwise."""
    try:
        params = list(inspect.signature(forward).parameters.values())[1:]
    except (TypeError, ValueError):
        return None
    if not params or any(p.name == "input" or p.kind == inspect.Parameter.VAR_KEYWORD for p in params) or \
            params[0].kind not in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
        return None  # (a forward taking **kwargs gets input= there, as paddle's)
    return params[0].name


def _input_keyword(forward: Callable[..., Any], kwargs: Dict[str, Any]) -> Dict[str, Any]:
    """``layer(input=x)``, paddle's layers' name for their input, given to a forward whose first
    parameter has another name (``x``): the keyword renamed to it."""
    first = _first_input_name(forward)
    if first is None or first in kwargs:
        return kwargs
    kwargs = dict(kwargs)
    kwargs[first] = kwargs.pop("input")
    return kwargs


class Layer(TorchNames):
    """Base class for layers: subclasses build sublayers/parameters in __init__ and define forward."""

    def __init__(self, name_scope: Optional[str] = None, dtype: DTypeLike = None):
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", collections.OrderedDict())
        object.__setattr__(self, "_sub_layers", collections.OrderedDict())
        object.__setattr__(self, "_buffers", collections.OrderedDict())
        object.__setattr__(self, "_non_persistable_buffer_names", set())
        object.__setattr__(self, "_full_name", _unique_name(name_scope or _scope(type(self).__name__)))
        object.__setattr__(self, "_dtype", convert_dtype(dtype) or default_float())
        object.__setattr__(self, "_param_counts", {"w": itertools.count(), "b": itertools.count()})
        object.__setattr__(self, "_forward_pre_hooks", collections.OrderedDict())
        object.__setattr__(self, "_forward_post_hooks", collections.OrderedDict())
        object.__setattr__(self, "_forward_hook_options", {})  # hook id -> {"with_kwargs", "always_call"}
        object.__setattr__(self, "_state_dict_hooks", collections.OrderedDict())
        object.__setattr__(self, "_load_state_dict_pre_hooks", collections.OrderedDict())
        object.__setattr__(self, "_load_state_dict_post_hooks", collections.OrderedDict())

    # ---- registration ---------------------------------------------------------------------
    def _registries(self) -> Tuple[dict, dict, dict]:
        try:
            return self._parameters, self._sub_layers, self._buffers
        except AttributeError:
            raise RuntimeError(f"{type(self).__name__}.__init__ must call super().__init__() before "
                               f"assigning parameters, sublayers or tensors") from None

    def __setattr__(self, name: str, value: Any) -> None:
        """paddle's registries: a Parameter, a Layer, or any other Tensor, which becomes a buffer
        that state_dict leaves out unless ``register_buffer`` made it persistable (as paddle's; it
        moves and casts with the layer). Before ``super().__init__()`` each is refused."""
        if isinstance(value, (Parameter, Layer)) or name in self.__dict__.get("_parameters", ()) \
                or name in self.__dict__.get("_sub_layers", ()) or name in self.__dict__.get("_buffers", ()) \
                or isinstance(value, Tensor):
            params, layers, buffers = self._registries()
            if isinstance(value, Parameter):
                layers.pop(name, None)
                buffers.pop(name, None)
                params[name] = value
            elif isinstance(value, Layer):
                if params.get(name) is not None:  # paddle refuses it too
                    raise TypeError(f"attribute {name!r} is a parameter: assign a Parameter or None, "
                                    f"got {type(value).__name__}")
                params.pop(name, None)
                buffers.pop(name, None)
                layers[name] = value
            elif name in params:
                if value is not None:
                    raise TypeError(f"attribute {name!r} is a parameter: assign a Parameter or None, "
                                    f"got {type(value).__name__}")
                params[name] = None
            elif name in buffers:
                if value is not None and not isinstance(value, Tensor):
                    raise TypeError(f"attribute {name!r} is a buffer: assign a Tensor or None, "
                                    f"got {type(value).__name__}")
                buffers[name] = value
            elif name in layers:
                if value is not None:  # (`self.fc = self.fc(x)` in a forward: paddle refuses it too)
                    raise TypeError(f"attribute {name!r} is a sublayer: assign a Layer or None, "
                                    f"got {type(value).__name__}")
                layers[name] = None
            if isinstance(value, Tensor) and not isinstance(value, Parameter) and name not in buffers:
                buffers[name] = value
                self._non_persistable_buffer_names.add(name)
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        for registry in (self._parameters, self._sub_layers, self._buffers):
            registry.pop(name, None)
        self._non_persistable_buffer_names.discard(name)
        object.__delattr__(self, name)

    def add_parameter(self, name: str, parameter: Optional[Parameter]) -> Optional[Parameter]:
        if parameter is not None and not isinstance(parameter, Parameter):
            raise TypeError(f"parameter must be a Parameter or None, got {type(parameter).__name__}")
        self._check_name(name)
        if parameter is None:
            self._registries()[0][name] = None
        setattr(self, name, parameter)
        return parameter

    def add_sublayer(self, name: str, sublayer: "Layer") -> "Layer":
        if not isinstance(sublayer, Layer):
            raise TypeError(f"sublayer must be a Layer, got {type(sublayer).__name__}")
        if not isinstance(name, str) or not name:  # a dotted name is paddle's too: "block.0"
            raise ValueError(f"name must be a non-empty str, got {name!r}")
        setattr(self, name, sublayer)
        return sublayer

    @param_aliases({"persistent": "persistable"})
    def register_buffer(self, name: str, tensor: Optional[Tensor], persistable: bool = True) -> None:
        """Register a non-trainable tensor; persistable buffers go into state_dict()."""
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"tensor must be a Tensor or None, got {type(tensor).__name__}")
        self._check_name(name)
        params, layers, buffers = self._registries()
        if name in params or name in layers or (name not in buffers and (name in self.__dict__ or
                                                                          hasattr(type(self), name))):
            raise KeyError(f"register_buffer: attribute {name!r} already exists")  # paddle's KeyError
        buffers[name] = tensor
        if persistable:
            self._non_persistable_buffer_names.discard(name)
        else:
            self._non_persistable_buffer_names.add(name)
        object.__setattr__(self, name, tensor)

    @staticmethod
    def _check_name(name: str) -> None:
        if not isinstance(name, str) or not name or "." in name:
            raise ValueError(f"name must be a non-empty str without '.', got {name!r}")

    def create_parameter(self, shape: Any, attr: Any = None, dtype: DTypeLike = None,
                         is_bias: bool = False, default_initializer: Optional[Initializer] = None,
                         device: Any = None) -> Optional[Parameter]:
        """A new Parameter on `device` (default: the current one), initialised by (first that is
        set) attr's initializer, `default_initializer`, else Constant(0) for biases and
        XavierUniform.

        `attr=False` means no parameter: returns None.
        """
        if attr is False:
            return None
        place = None if device is None else parse_device(device)
        kind = "b" if is_bias else "w"
        name = f"{self._full_name}.{kind}_{next(self._param_counts[kind])}"
        # (paddle's: dtype None is the default dtype, not the layer's own ``dtype``, which the
        # layers that take one pass themselves)
        param = new_parameter(shape, dtype or default_float(), name, attr, is_bias, default_initializer)
        if place is not None:
            convert_tensor(param, None, place)
        return param

    def create_tensor(self, name: Optional[str] = None, persistable: Optional[bool] = None,
                      dtype: DTypeLike = None) -> Tensor:
        """An empty (0-d) tensor named ``<layer's full name>.<name>``, for ``paddle.assign(x,
        it)`` to fill later (paddle's: it takes x's shape and dtype then)."""
        tensor = zeros([], dtype or default_float())
        scoped = f"{self._full_name}._generated_var"
        tensor.name = f"{self._full_name}.{name}" if name is not None else _unique_name(scoped)
        tensor.persistable = bool(persistable)
        return tensor

    create_variable = create_tensor  # paddle's older name

    # ---- traversal --------------------------------------------------------------------------
    def named_sublayers(self, prefix: str = "", include_self: bool = False, layers_set: Optional[set] = None,
                        remove_duplicate: bool = True) -> Iterator[Tuple[str, "Layer"]]:
        """(path, layer) for every layer below (and with include_self, this one): a layer reached by
        two paths comes once with remove_duplicate, at each path without it. Layers in `layers_set`
        (layer objects, as paddle's) are skipped, their sublayers still listed."""
        if layers_set is None:
            layers_set = set()
        if include_self and self not in layers_set:
            if remove_duplicate:
                layers_set.add(self)
            yield prefix, self
        for key, layer in self._sub_layers.items():
            if layer is None:
                continue
            path = f"{prefix}.{key}" if prefix else key
            yield from layer.named_sublayers(path, include_self=True, layers_set=layers_set,
                                             remove_duplicate=remove_duplicate)

    def sublayers(self, include_self: bool = False) -> List["Layer"]:
        return [layer for _, layer in self.named_sublayers(include_self=include_self)]

    def named_children(self) -> Iterator[Tuple[str, "Layer"]]:
        seen = set()
        for name, layer in self._sub_layers.items():
            if layer is not None and id(layer) not in seen:
                seen.add(id(layer))
                yield name, layer

    def children(self) -> Iterator["Layer"]:
        for _, layer in self.named_children():
            yield layer

    def _named_members(self, registry: str, prefix: str, include_sublayers: bool, remove_duplicate: bool
                       ) -> Iterator[Tuple[str, Tensor]]:
        layers = (self.named_sublayers(prefix, include_self=True, remove_duplicate=remove_duplicate)
                  if include_sublayers else [(prefix, self)])
        seen = set()
        for path, layer in layers:
            for name, member in getattr(layer, registry).items():
                if member is None or id(member) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(member))
                yield (f"{path}.{name}" if path else name), member

    @param_aliases({"recurse": "include_sublayers"})
    def named_parameters(self, prefix: str = "", include_sublayers: bool = True, remove_duplicate: bool = True
                         ) -> Iterator[Tuple[str, Parameter]]:
        """(structured name, parameter) pairs; a parameter shared by two layers (or a layer shared
        at two paths) comes once with remove_duplicate, under each name without it."""
        return self._named_members("_parameters", prefix, include_sublayers, remove_duplicate)

    @param_aliases({"recurse": "include_sublayers"})
    def parameters(self, include_sublayers: bool = True) -> List[Parameter]:
        return [p for _, p in self.named_parameters(include_sublayers=include_sublayers)]

    @param_aliases({"recurse": "include_sublayers"})
    def named_buffers(self, prefix: str = "", include_sublayers: bool = True, remove_duplicate: bool = True
                      ) -> Iterator[Tuple[str, Tensor]]:
        """(structured name, buffer) pairs, shared ones as named_parameters treats parameters."""
        return self._named_members("_buffers", prefix, include_sublayers, remove_duplicate)

    @param_aliases({"recurse": "include_sublayers"})
    def buffers(self, include_sublayers: bool = True) -> List[Tensor]:
        return [b for _, b in self.named_buffers(include_sublayers=include_sublayers)]

    def apply(self, fn: Callable[["Layer"], None]) -> "Layer":
        """Call fn on every sublayer (children first) and then on this layer."""
        for layer in self.children():
            layer.apply(fn)
        fn(self)
        return self

    def clear_gradients(self, set_to_zero: bool = True) -> None:
        """clear_gradient() on every parameter (zero in place, or drop with set_to_zero=False)."""
        for p in self.parameters():
            p.clear_gradient(set_to_zero)

    # ---- modes and calling ---------------------------------------------------------------
    def train(self, mode: bool = True) -> "Layer":
        """Training mode for this layer and every sublayer (``mode=False``: evaluation mode)."""
        if not isinstance(mode, bool):
            raise ValueError(f"train: mode must be a bool, got {type(mode).__name__}")
        for layer in self.sublayers(include_self=True):
            object.__setattr__(layer, "training", mode)
        return self

    def eval(self) -> "Layer":
        for layer in self.sublayers(include_self=True):
            object.__setattr__(layer, "training", False)
        return self

    def _inference_layer(self) -> "Layer":
        """What ``jit.save`` keeps of this layer: itself; a parallel wrapper's, the layer it wraps
        (whose state_dict keys it shares: paddle keeps the model's program, not the wrapper's)."""
        return self

    def full_name(self) -> str:
        return self._full_name

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if lazy_pending:
            self._refuse_lazy_parameters()
        if "input" in kwargs:
            kwargs = _input_keyword(type(self).forward, kwargs)
        if not self.__dict__.get("_forward_pre_hooks") and not self.__dict__.get("_forward_post_hooks"):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args: tuple, kwargs: Dict[str, Any]) -> Any:
        """forward between its hooks (paddle's order and return rules); should a hook or forward
        raise, the post-hooks registered ``always_call`` that have not run yet run before the
        error goes on (their own errors only warned of)."""
        options = self.__dict__.get("_forward_hook_options", {})
        post_hooks = list(self._forward_post_hooks.items())
        outputs, ran = None, set()

        def post(key: int, hook: Callable) -> Any:
            if "with_kwargs" in options.get(key, ()):
                return hook(self, args, kwargs, outputs)
            return hook(self, args, outputs)
        try:
            for key, hook in list(self._forward_pre_hooks.items()):
                if "with_kwargs" not in options.get(key, ()):
                    replaced = hook(self, args)
                    if replaced is not None:
                        args = replaced if isinstance(replaced, tuple) else (replaced,)
                    continue
                replaced = hook(self, args, kwargs)
                if replaced is not None:
                    if not (isinstance(replaced, tuple) and len(replaced) == 2):
                        raise RuntimeError(f"a forward pre-hook registered with_kwargs must return None or a "
                                           f"(args, kwargs) pair, got {type(replaced).__name__}")
                    args, kwargs = replaced
            outputs = self.forward(*args, **kwargs)
            for key, hook in post_hooks:
                ran.add(key)
                replaced = post(key, hook)
                if replaced is not None:
                    outputs = replaced
            return outputs
        except Exception:
            for key, hook in post_hooks:
                if key in ran or "always_call" not in options.get(key, ()):
                    continue
                try:
                    replaced = post(key, hook)
                    outputs = outputs if replaced is None else replaced
                except Exception as err:
                    warnings.warn(f"a forward post-hook registered always_call raised while another error "
                                  f"was on its way (that one is raised): {err}")
            raise

    def _refuse_lazy_parameters(self) -> None:
        """Raise if a Parameter of this layer was made under LazyGuard and neither initialised nor
        loaded since (its forward would compute on placeholder zeros)."""
        for key, (ref, version) in list(lazy_pending.items()):
            param = ref()
            if param is None or param.inplace_version != version:  # gone, or a value was loaded into it
                lazy_pending.pop(key, None)
        mine = [p.name for p in self.parameters() if id(p) in lazy_pending]
        if mine:
            raise RuntimeError(f"{type(self).__name__}: parameter {mine[0]} (and {len(mine) - 1} more) was "
                               f"created under LazyGuard and is not initialised yet; call initialize() on "
                               f"each parameter (for p in layer.parameters(): p.initialize()) or load a "
                               f"state dict before running the layer")

    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Run ``hook(layer, inputs)`` before each forward; what it returns (not None) replaces
        the positional inputs (paddle's semantics). With ``with_kwargs``, ``hook(layer, inputs,
        kwargs)`` returns None or a new ``(inputs, kwargs)`` pair. ``prepend`` runs it before the
        hooks registered so far. ``.remove()`` on the handle unregisters it."""
        return self._add_hook(self._forward_pre_hooks, hook, "register_forward_pre_hook", prepend,
                              with_kwargs=with_kwargs)

    def register_forward_post_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                   with_kwargs: bool = False, always_call: bool = False) -> RemovableHandle:
        """Run ``hook(layer, inputs, outputs)`` (``hook(layer, inputs, kwargs, outputs)`` with
        ``with_kwargs``) after each forward; what it returns (not None) replaces the outputs.
        ``always_call``: it runs even when forward (or an earlier hook) raises."""
        return self._add_hook(self._forward_post_hooks, hook, "register_forward_post_hook", prepend,
                              with_kwargs=with_kwargs, always_call=always_call)

    def _add_hook(self, hooks: "collections.OrderedDict[int, Callable]", hook: Callable, fn: str,
                  prepend: bool = False, **options: bool) -> RemovableHandle:
        if not callable(hook):
            raise TypeError(f"{fn}: hook must be callable, got {type(hook).__name__}")
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        chosen = {option for option, on in options.items() if on}
        if chosen:
            self.__dict__.setdefault("_forward_hook_options", {})[handle.id] = chosen
        return handle

    def _named(self, name: Optional[str]) -> None:
        """Keep a built-in layer's ``name`` argument, as paddle's: printed last (``ReLU(name=act)``)
        where given; it does not scope the layer's parameters (``Linear(2, 2, name='fc')``'s weight
        is ``linear_0.w_0``)."""
        object.__setattr__(self, "_display_name", name)

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = [f"({name}): " + repr(layer).replace("\n", "\n  ")  # each entry, a layer held twice too (paddle's)
                 for name, layer in self._sub_layers.items() if layer is not None]
        extra, shown = self.extra_repr(), self.__dict__.get("_display_name")
        if shown:
            extra = f"{extra}, name={shown}" if extra else f"name={shown}"
        head = f"{type(self).__name__}({extra}"
        return head + ("\n  " + "\n  ".join(lines) + "\n)" if lines else ")")

    # ---- state ---------------------------------------------------------------------------------
    def state_dict(self, destination: Optional[dict] = None, include_sublayers: bool = True,
                   structured_name_prefix: str = "", use_hook: bool = True, keep_vars: bool = True
                   ) -> "collections.OrderedDict[str, Tensor]":
        """Parameters and persistable buffers by structured name (the tensors themselves; with
        ``keep_vars`` False, detached views of them). With ``use_hook``, each layer's state-dict
        hooks then see (and may replace) the dict."""
        return self._state(destination, include_sublayers, structured_name_prefix, use_hook, keep_vars, False)

    def to_static_state_dict(self, destination: Optional[dict] = None, include_sublayers: bool = True,
                             structured_name_prefix: str = "", use_hook: bool = True, keep_vars: bool = True
                             ) -> "collections.OrderedDict[str, Tensor]":
        """``state_dict`` with the non-persistable buffers too (paddle's, for pure-fp16 and
        exporting)."""
        return self._state(destination, include_sublayers, structured_name_prefix, use_hook, keep_vars, True)

    def _state(self, destination: Optional[dict], include_sublayers: bool, prefix: str, use_hook: bool,
               keep_vars: bool, non_persistable: bool) -> "collections.OrderedDict[str, Tensor]":
        out = collections.OrderedDict() if destination is None else destination
        for name, p in self._parameters.items():
            if p is not None:
                out[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and (non_persistable or name not in self._non_persistable_buffer_names):
                out[prefix + name] = b if keep_vars else b.detach()
        if include_sublayers:
            for name, layer in self._sub_layers.items():
                if layer is not None:
                    out = layer._state(out, True, f"{prefix}{name}.", use_hook, keep_vars, non_persistable)
        for hook in list(self.__dict__.get("_state_dict_hooks", {}).values()) if use_hook else ():
            replaced = hook(out)
            if replaced is not None:
                out = replaced
        return out

    def register_state_dict_hook(self, hook: Callable[[dict], Optional[dict]]) -> RemovableHandle:
        """Run ``hook(destination)`` at the end of this layer's ``state_dict`` (paddle's): it sees
        the dict built so far (a sub-layer's hook: the keys up to its own, prefixed) and may change
        it in place or return a replacement. ``set_state_dict`` finds its targets without hooks."""
        return self._add_hook(self._state_dict_hooks, hook, "register_state_dict_hook")

    def register_load_state_dict_pre_hook(self, hook: Callable[["Layer", dict], None]) -> RemovableHandle:
        """Run ``hook(layer, state_dict)`` when ``set_state_dict`` of this layer, or of a layer
        holding it, starts, before the targets are looked up (torch's name)."""
        return self._add_hook(self._load_state_dict_pre_hooks, hook, "register_load_state_dict_pre_hook")

    def register_load_state_dict_post_hook(self, hook: Callable[["Layer"], None]) -> RemovableHandle:
        """Run ``hook(layer)`` when ``set_state_dict`` of this layer, or of a layer holding it, ends
        (also when it raises)."""
        return self._add_hook(self._load_state_dict_post_hooks, hook, "register_load_state_dict_post_hook")

    def _run_load_hooks(self, registry: str, *args: Any) -> None:
        for layer in self.sublayers(include_self=True):
            for hook in list(layer.__dict__.get(registry, {}).values()):
                hook(layer, *args)

    def set_state_dict(self, state_dict: Dict[str, Any], use_structured_name: bool = True
                       ) -> Tuple[List[str], List[str]]:
        """Copy values from `state_dict` (Tensors or arrays) into this layer's parameters and
        persistable buffers, in place (paddle 3.3.1's rules).

        Keys are structured names, or the tensors' names with use_structured_name=False. A tensor
        whose key is missing, or whose value has another shape, is skipped with paddle's warning
        (``warnings.warn``, "Skip loading for <key>. ...") and listed in missing_keys; keys that
        loaded nothing (unknown ones, and those of a mismatched shape) are listed in
        unexpected_keys, and said on the "pycoll" logger. A dtype
        mismatch raises ValueError before anything is copied. Returns (missing_keys,
        unexpected_keys).
        """
        if not isinstance(state_dict, dict):
            raise TypeError(f"state_dict must be a dict, got {type(state_dict).__name__}")
        self._run_load_hooks("_load_state_dict_pre_hooks", state_dict)
        try:
            return self._load_state(state_dict, use_structured_name)
        finally:
            self._run_load_hooks("_load_state_dict_post_hooks")

    def _load_state(self, state_dict: Dict[str, Any], use_structured_name: bool) -> Tuple[List[str], List[str]]:
        missing, matched, loads, problems = [], set(), [], []
        for key, target in self.state_dict(use_hook=False).items():
            lookup = key if use_structured_name else (target.name or key)
            value = state_dict.get(lookup)
            if value is None:
                missing.append(lookup)
                warnings.warn(f"Skip loading for {key}. {lookup} is not found in the provided dict.")  # paddle's
                continue
            arr = value.array if isinstance(value, Tensor) else value
            if not is_array(arr):  # lists and numbers take the tensor's dtype
                try:
                    arr = np.asarray(arr, dtype=None if isinstance(arr, np.generic) else target.dtype)
                except (TypeError, ValueError) as exc:
                    raise TypeError(f"set_state_dict: the value of {lookup!r} must be a Tensor, an array, a list or a "
                                    f"number, got {type(value).__name__} {value!r:.60} ({exc})") from None
            shape = value.shape if isinstance(value, Tensor) else list(arr.shape)  # a distributed one's: whole
            if shape != target.shape:
                missing.append(lookup)
                warnings.warn(f"Skip loading for {key}. {lookup} receives a shape {list(shape)}, but the "
                              f"expected shape is {list(target.shape)}.")
                continue
            bits = arr.dtype == np.uint16 and target.dtype.name == "bfloat16"  # set_value takes them
            if arr.dtype != target.dtype and not bits:
                problems.append(f"{lookup}: dtype {arr.dtype}, expected {target.dtype}")
            matched.add(lookup)
            loads.append((target, value if isinstance(value, Tensor) else arr))  # set_value places it
        if problems:
            raise AssertedArgument("set_state_dict: mismatched dtypes: " + "; ".join(problems))  # paddle asserts
        for target, arr in loads:
            target.set_value(arr)
        unexpected = [k for k in state_dict if k not in matched]
        if unexpected:
            logger.warning("set_state_dict: these keys loaded nothing: %s", unexpected)
        return missing, unexpected

    set_dict = load_dict = set_state_dict

    # ---- dtype and device ------------------------------------------------------------------------
    def to(self, device: Any = None, dtype: DTypeLike = None, blocking: Optional[bool] = None,
           non_blocking: Optional[bool] = None) -> "Layer":
        """Move every parameter and buffer (integer ones too, as paddle) of this layer and its
        sublayers to `device` ('cpu', 'gpu', 'gpu:N') and/or cast it to `dtype`, in place: the
        tensors keep their identity. `blocking`/`non_blocking` are accepted for compatibility."""
        if device is None and dtype is None:
            return self
        place = None if device is None else parse_device(device)
        convert_layers(self.sublayers(include_self=True), dtype, place)
        return self

    def astype(self, dtype: DTypeLike = None) -> "Layer":
        """Cast every parameter to `dtype` in place. Buffers keep their dtype: paddle 3.3.1's
        astype leaves them (its buffer cast is not in place)."""
        dt = check_dtype_name(dtype)
        convert_layers(self.sublayers(include_self=True), dt, buffers=False)
        return self

    def _cast_floating(self, dtype: str, excluded_layers: Any) -> "Layer":
        """float()/float16(): cast the floating-point tensors of every layer whose type is not
        in excluded_layers (a Layer type or a list of them)."""
        if excluded_layers is None:
            excluded = ()
        elif isinstance(excluded_layers, type):
            excluded = (excluded_layers,)
        elif isinstance(excluded_layers, (list, tuple)):
            excluded = tuple(excluded_layers)
        else:
            raise TypeError(f"excluded_layers must be a Layer type or a list of them, got "
                            f"{type(excluded_layers).__name__}")
        layers = [layer for layer in self.sublayers(include_self=True) if type(layer) not in excluded]
        convert_layers(layers, dtype, floating_only=True)
        return self

    def float(self, excluded_layers: Any = None) -> "Layer":
        """Cast floating-point parameters and buffers to float32 (integer ones stay)."""
        return self._cast_floating("float32", excluded_layers)

    def float16(self, excluded_layers: Any = None) -> "Layer":
        """Cast floating-point parameters and buffers to float16 (integer ones stay)."""
        return self._cast_floating("float16", excluded_layers)

    def double(self) -> "Layer":
        """Cast every parameter and buffer to float64 (integer buffers too, as paddle's)."""
        return self.to(dtype="float64")
