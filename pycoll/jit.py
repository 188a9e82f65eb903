"""``pycoll.jit``: paddle.jit's names for code written for paddle's dynamic-to-static conversion.

pycoll runs eagerly and has no static program, so ``to_static`` gives back what it is given: a
decorated function or Layer computes exactly what it computes in paddle's dygraph mode (which is
what paddle itself runs after ``enable_to_static(False)``), and training scripts decorated for
paddle run unchanged.

``jit.save`` / ``jit.load`` keep a Layer for inference (and fine-tuning), as paddle's do, in files
of pycoll's own: ``path + ".pdiparams"`` holds the state_dict (``pycoll.save``'s format, which
``paddle.load`` reads too) and ``path + ".pdmodel"`` the Layer without its tensors, pickled by
``cloudpickle``: classes and functions of installed packages (and pycoll's) by name; those of the
script (``__main__``), of the script's own modules loaded at the save (a ``models.py`` beside it,
the helpers it imports: any module outside the installed packages' folders), of a function's body
and lambdas (hooks) with their code, so that another script loads the Layer without defining or
importing them. A parallel wrapper
(DataParallel, fleet's) keeps the model it wraps. Beside the Layer, ``.pdmodel`` keeps its input
names and the outputs ``output_spec`` kept, which ``pycoll.inference``'s predictors read.
paddle's inference program (``.json`` / ``.pdmodel``) is not made: paddle cannot run these
files, nor pycoll paddle's. Loading runs the pickled code, as loading any pickle does: load
files you trust.
"""
from __future__ import annotations

import inspect
import io
import os
import pickle
import site
import sys
import sysconfig
from types import ModuleType
from typing import Any, Callable, Dict, List, Optional, Tuple

from pycoll._atomic_files import write_whole
from pycoll.nn import Layer
from pycoll.serialization import load as load_file, save as save_file
from pycoll.static import InputSpec
from pycoll.tensor import Tensor

__all__ = ["save", "load", "to_static", "ignore_module", "set_code_level", "set_verbosity",
           "not_to_static", "enable_to_static", "TranslatedLayer"]

_NO_PROGRAM = ("pycoll runs eagerly and has no static program; jit.load returns the saved Layer itself")
_MODEL_SUFFIX, _PARAMS_SUFFIX = ".pdmodel", ".pdiparams"
# jit.save's configs paddle takes; output_spec keeps the outputs it names, the others change
# nothing pycoll writes
_SAVE_CONFIGS = ("output_spec", "with_hook", "combine_params", "clip_extra", "skip_forward", "input_names_after_prune",
                 "skip_prune_program", "separate_parameters", "input_names", "full_graph")
_IO_MARK = "pycoll.jit inputs and outputs"  # the .pdmodel's second part: what paddle.inference reads


def _check_input_spec(input_spec: Any, fn: str = "to_static") -> None:
    if input_spec is None:
        return
    if not isinstance(input_spec, (list, tuple, dict)):
        raise TypeError(f"{fn}: input_spec must be a list or tuple of InputSpec, got "
                        f"{type(input_spec).__name__}")
    items = input_spec.values() if isinstance(input_spec, dict) else input_spec
    for i, spec in enumerate(items):
        if isinstance(spec, (list, tuple, dict)):
            _check_input_spec(spec, fn)
        elif spec is not None and not isinstance(spec, (InputSpec, Tensor, int, float, bool, str)):
            raise TypeError(f"{fn}: input_spec[{i}] must be an InputSpec or a Tensor, got "
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


def save(layer: Layer, path: str, input_spec: Any = None, **configs: Any) -> None:
    """Keep ``layer`` for ``jit.load``: its state_dict in ``path + '.pdiparams'`` and its
    structure in ``path + '.pdmodel'`` (see the module docstring; the directories are made). A
    function (paddle saves ``to_static`` functions too) is kept as a Layer that calls it.
    ``input_spec`` (the Layer runs on what it is given) names the inputs, as paddle's does:
    each spec's ``name``, else the forward's argument's (what ``paddle.inference`` calls them).
    ``output_spec``, the positions of the outputs to keep (e.g. ``[0]``), prunes what the loaded
    Layer returns (one output alone, not in a tuple). paddle's other ``configs`` are taken
    (``combine_params``, ...) and change nothing here."""
    if not isinstance(layer, Layer):
        if not callable(layer) or isinstance(layer, type):
            raise TypeError(f"jit.save: layer must be a Layer or a function, got {type(layer).__name__}")
        layer = _FunctionLayer(layer)
    if not isinstance(path, str) or not os.path.basename(path):
        raise ValueError(f"jit.save: path={path!r}; it must be 'dirname/file_prefix' or 'file_prefix'")
    _check_input_spec(input_spec, "jit.save")
    unknown = sorted(set(configs) - set(_SAVE_CONFIGS))
    if unknown:
        raise ValueError(f"jit.save: the additional configs {unknown} are not supported; paddle's are "
                         f"{list(_SAVE_CONFIGS)}")
    layer = layer._inference_layer()  # a parallel wrapper's own layer (paddle keeps the model's program)
    outputs = _output_positions(configs.get("output_spec"))
    earlier = getattr(layer, "_jit_io", {}).get("outputs")  # a loaded Layer's, whose forward already prunes
    if earlier is not None:
        if outputs is not None and max(outputs, default=0) >= len(earlier):
            raise ValueError(f"jit.save: output_spec {outputs} names an output past the {len(earlier)} this loaded "
                             f"Layer returns")
        outputs = earlier if outputs is None else [earlier[i] for i in outputs]
    kept_io = {"mark": _IO_MARK, "input_names": _input_names(layer, input_spec),
               "input_spec": list(input_spec) if input_spec is not None else None, "outputs": outputs}
    state = layer.state_dict()
    names = {id(tensor): key for key, tensor in state.items()}
    structure = io.BytesIO()
    try:  # before anything is written
        _pickled(layer, lambda pickler_class: pickler_class(structure, names).dump((layer, kept_io)))
    except Exception as exc:  # pickle's errors, and whatever an object refusing it raises (mpi4py's ValueError)
        raise TypeError(f"jit.save: the Layer cannot be kept: {_unpicklable_part(layer)}{exc}") from exc
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, exist_ok=True)
    save_file(state, path + _PARAMS_SUFFIX)
    write_whole(path + _MODEL_SUFFIX, lambda f: f.write(structure.getvalue()), binary=True)


def _input_names(layer: Layer, input_spec: Any) -> List[str]:
    """The saved Layer's input names: each InputSpec's name, else its forward's positional
    argument's at that place (paddle's feed names), else ``x<i>``."""
    forward = layer._function if isinstance(layer, _FunctionLayer) else layer.forward
    try:
        arguments = [p.name for p in inspect.signature(forward).parameters.values()
                     if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):  # (a builtin's signature)
        arguments = []
    specs = list(input_spec) if input_spec is not None else [None] * len(arguments)
    return [(spec.name if isinstance(spec, InputSpec) and spec.name else None)
            or (arguments[i] if i < len(arguments) else f"x{i}") for i, spec in enumerate(specs)]


def _output_positions(output_spec: Any) -> Optional[List[int]]:
    """``output_spec`` as the positions of the outputs to keep, or None for all."""
    if output_spec is None:
        return None
    if not isinstance(output_spec, (list, tuple)) or not all(
            isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in output_spec):
        raise TypeError(f"jit.save: output_spec must be a list of the positions (ints >= 0) of the forward's "
                        f"outputs to keep, got {output_spec!r}")
    return list(output_spec)


def _kept_outputs(layer: Layer, inputs: Any, outputs: Any) -> Any:
    """A loaded Layer's forward post-hook: the outputs ``jit.save``'s output_spec kept."""
    positions = layer._jit_io["outputs"]
    every = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    if max(positions) >= len(every):
        raise ValueError(f"jit.save's output_spec {positions} names an output past the {len(every)} the forward "
                         f"returns")
    kept = [every[i] for i in positions]
    return kept[0] if len(kept) == 1 else tuple(kept)


class _FunctionLayer(Layer):
    """A function kept by ``jit.save``: what ``jit.load`` gives back calls it."""

    def __init__(self, function: Callable):
        super().__init__()
        self._function = function

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._function(*args, **kwargs)


def _cloudpickle() -> Any:
    """cloudpickle (imported here: ``import pycoll`` does not need it)."""
    try:
        import cloudpickle
    except ImportError as exc:
        raise ImportError("jit.save needs cloudpickle, one of pycoll's dependencies: pip install cloudpickle") from exc
    return cloudpickle


def _installed_paths() -> Tuple[str, ...]:
    """The folders of installed code: the standard library, site-packages, and pycoll's own."""
    paths = sysconfig.get_paths()
    places = {paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths}
    places.update(site.getsitepackages() + [site.getusersitepackages()])
    places.add(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # pycoll's package folder
    return tuple(os.path.join(os.path.realpath(p), "") for p in places)


def _user_modules() -> List[ModuleType]:
    """The modules of the script's own code loaded now (a ``models.py`` beside the training
    script, the helpers it imports, a package of the project's): those whose files lie outside
    the installed packages' folders and pycoll's; ``__main__``'s code is pickled anyway."""
    installed = _installed_paths()
    found = []
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if name == "__main__" or path is None or not isinstance(module, ModuleType):
            continue
        if not os.path.join(os.path.realpath(path), "").startswith(installed):
            found.append(module)
    return found


def _pickled(layer: Layer, dump: Callable[[type], None]) -> None:
    """``dump(pickler_class)`` with the modules of the script's own classes pickled by value (with
    their code), as ``__main__``'s are, so that a script that cannot import them loads the Layer."""
    cloudpickle = _cloudpickle()
    already = set(cloudpickle.list_registry_pickle_by_value())
    added = [m for m in _user_modules() if m.__name__ not in already]
    for module in added:
        cloudpickle.register_pickle_by_value(module)
    try:
        dump(_structure_pickler(cloudpickle))
    finally:
        for module in added:
            cloudpickle.unregister_pickle_by_value(module)


def _unpicklable_part(layer: Layer) -> str:
    """'its attribute <path> (a <type>) cannot be pickled: ' for the first attribute of a layer
    in ``layer``'s tree that cloudpickle refuses on its own, or '' where none does."""
    cloudpickle = _cloudpickle()
    for prefix, sub in layer.named_sublayers(include_self=True):
        for name, value in vars(sub).items():
            if isinstance(value, (Layer, Tensor)) or name in ("_parameters", "_buffers", "_sub_layers"):
                continue
            try:
                cloudpickle.dumps(value)
            except Exception:  # noqa: BLE001 (any refusal names the culprit)
                where = f"{prefix}.{name}" if prefix else name
                return f"its attribute {where} (a {type(value).__module__}.{type(value).__qualname__}) cannot be pickled: "
    return ""


def _structure_pickler(cloudpickle: Any) -> type:
    """The pickler of a Layer's structure, over cloudpickle's."""

    class StructurePickler(cloudpickle.Pickler):
        """A Layer pickled with the values of its state_dict's tensors left out: each such tensor
        is kept as (its key, its class, its other state), to be rebuilt around the saved value."""

        def __init__(self, file: Any, names: Dict[int, str]):
            super().__init__(file, protocol=4)
            self._names = names

        def persistent_id(self, obj: Any) -> Optional[tuple]:
            key = self._names.get(id(obj)) if isinstance(obj, Tensor) else None
            if key is None:
                return None
            extra, slots = obj.__getstate__()
            return key, type(obj), extra, {name: value for name, value in slots.items() if name != "_array"}
    return StructurePickler


class _StructureUnpickler(pickle.Unpickler):
    """The Layer back, each left-out tensor rebuilt around the saved state_dict's value."""

    def __init__(self, file: Any, state: Dict[str, Any], path: str):
        super().__init__(file)
        self._state, self._path = state, path
        self._rebuilt: Dict[str, Tensor] = {}  # by key: one tensor for all its references (pickle's memo skips these)

    def persistent_load(self, kept: tuple) -> Tensor:
        key, cls, extra, slots = kept
        if key in self._rebuilt:
            return self._rebuilt[key]
        if key not in self._state:
            raise ValueError(f"jit.load: {self._path}{_PARAMS_SUFFIX} lacks {key!r}, which the Layer in "
                             f"{self._path}{_MODEL_SUFFIX} holds: the two files were not saved together")
        tensor = cls.__new__(cls)
        tensor.__setstate__((extra, {**slots, "_array": self._state[key]._array}))
        self._rebuilt[key] = tensor
        return tensor

    def find_class(self, module: str, name: str) -> Any:
        try:
            return super().find_class(module, name)
        except (AttributeError, ImportError) as exc:
            raise ImportError(f"jit.load: {self._path}{_MODEL_SUFFIX} holds a {module}.{name}, which cannot be "
                              f"imported here ({exc}): it was saved by name, as a part of an installed package, "
                              f"which must be installed where the Layer is loaded") from exc


def load(path: str, **configs: Any) -> Layer:
    """The Layer ``jit.save`` kept at ``path``, in eval mode (``train()`` makes it train again,
    as paddle's loaded layers are fine-tuned). paddle's ``configs`` (``model_filename``,
    ``params_filename``) name the two files instead of ``path`` + the suffixes."""
    unknown = sorted(set(configs) - {"model_filename", "params_filename"})
    if unknown:
        raise ValueError(f"jit.load: the additional configs {unknown} are not supported; paddle's are "
                         f"['model_filename', 'params_filename']")
    model_file = os.path.join(path, configs["model_filename"]) if "model_filename" in configs else path + _MODEL_SUFFIX
    params_file = os.path.join(path, configs["params_filename"]) if "params_filename" in configs else path + _PARAMS_SUFFIX
    if not os.path.exists(model_file) and os.path.exists(path + ".json"):
        raise ValueError(f"jit.load: {path}.json is paddle's jit.save program (PIR), which pycoll cannot run: "
                         f"pycoll's jit.load reads what pycoll's jit.save wrote ({path}{_MODEL_SUFFIX}, the "
                         f"Layer itself); build the Layer in code and load a state_dict paddle.save wrote")
    for file in (model_file, params_file):
        if not os.path.exists(file):
            raise ValueError(f"jit.load: {file} does not exist; path is the prefix jit.save was given")
    state = load_file(params_file)
    with open(model_file, "rb") as f:
        kept = _StructureUnpickler(f, state, path).load()
    # (files written before the inputs and outputs were kept hold the Layer alone)
    layer, kept_io = kept if isinstance(kept, tuple) and len(kept) == 2 and isinstance(kept[1], dict) \
        and kept[1].get("mark") == _IO_MARK else (kept, None)
    if not isinstance(layer, Layer):
        raise ValueError(f"jit.load: {model_file} does not hold a Layer kept by pycoll.jit.save")
    layer._jit_io = kept_io or {"mark": _IO_MARK, "input_names": _input_names(layer, None), "input_spec": None,
                                "outputs": None}
    layer._input_spec, layer._output_spec = layer._jit_io["input_spec"], layer._jit_io["outputs"]  # paddle's names
    for key, hook in list(layer._forward_post_hooks.items()):  # (a Layer saved after a load holds one)
        if hook is _kept_outputs:
            del layer._forward_post_hooks[key]
    if layer._jit_io["outputs"] is not None:
        layer.register_forward_post_hook(_kept_outputs)
    layer.eval()
    return layer


class TranslatedLayer(Layer):
    """paddle's class of what ``jit.load`` returns: a Layer that runs a loaded inference program.
    pycoll has no programs (see the module docstring): ``jit.load`` returns the saved Layer itself,
    and constructing this class raises NotImplementedError. It is a real Layer subclass so that
    ``isinstance`` checks in scripts written for paddle run (and answer False)."""

    def __init__(self, programs: Any = None, persistable_vars: Any = None):
        raise NotImplementedError(f"TranslatedLayer: {_NO_PROGRAM}")
