"""``paddle.inference``'s predictor: the Layer ``pycoll.jit.save`` kept, run for inference.

``create_predictor(config)`` loads the Layer (``pycoll.jit.load``: eval mode) and runs it without
a graph (``no_grad``). Its inputs are named as ``jit.save`` named them (each InputSpec's name, else
the forward's argument's); its outputs ``fetch_name_<i>``, as paddle's. Two ways to run, as
paddle's: the handles (``get_input_handle(name).copy_from_cpu(array)``, ``run()``,
``get_output_handle(name).copy_to_cpu()``) or ``run([tensors])``, which returns the outputs.
"""
from __future__ import annotations

import enum
import os
import warnings
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from pycoll import jit
from pycoll._blas_threads import set_threads
from pycoll.autograd import no_grad
from pycoll.device import device_count
from pycoll.inference.config import Config
from pycoll.static import InputSpec
from pycoll.tensor import Tensor as PycollTensor, to_tensor

__all__ = ["DataType", "Tensor", "Predictor", "PredictorPool", "create_predictor", "get_num_bytes_of_data_type"]


class DataType(enum.Enum):
    """paddle's element types of the predictor's tensors."""

    FLOAT32 = 0
    INT64 = 1
    INT32 = 2
    UINT8 = 3
    INT8 = 4
    FLOAT16 = 5
    BOOL = 6
    FLOAT64 = 7
    BFLOAT16 = 8


_NUMPY_NAMES = {DataType.FLOAT32: "float32", DataType.INT64: "int64", DataType.INT32: "int32",
                DataType.UINT8: "uint8", DataType.INT8: "int8", DataType.FLOAT16: "float16", DataType.BOOL: "bool",
                DataType.FLOAT64: "float64", DataType.BFLOAT16: "bfloat16"}
_BYTES = {DataType.FLOAT32: 4, DataType.INT64: 8, DataType.INT32: 4, DataType.UINT8: 1, DataType.INT8: 1,
          DataType.FLOAT16: 2, DataType.BOOL: 1, DataType.FLOAT64: 8, DataType.BFLOAT16: 2}


def _data_type(dtype: Any) -> DataType:
    name = str(dtype).replace("paddle.", "").replace("pycoll.", "")
    for kind, known in _NUMPY_NAMES.items():
        if known == name:
            return kind
    raise TypeError(f"paddle.inference has no data type for {dtype}")


def get_num_bytes_of_data_type(dtype: DataType) -> int:
    """The bytes of one element of ``dtype``."""
    return _BYTES[DataType(dtype)]


class Tensor:
    """A predictor's input or output (paddle's ``inference.Tensor``): NumPy arrays in and out."""

    def __init__(self, name: str, is_input: bool) -> None:
        self._name, self._is_input = name, is_input
        self._value: Optional[PycollTensor] = None
        self._shape: Optional[List[int]] = None
        self._lod: List[List[int]] = []

    def _need_input(self, method: str) -> None:
        if not self._is_input:
            raise RuntimeError(f"inference.Tensor.{method}: {self._name!r} is an output; only inputs take data")

    def reshape(self, shape: Sequence[int]) -> None:
        """The shape of the data to come (what ``shape()`` says until then; ``copy_from_cpu``
        takes its array's shape, as paddle's does)."""
        self._need_input("reshape")
        if not isinstance(shape, (list, tuple)) or not all(isinstance(d, int) and d >= 0 for d in shape):
            raise ValueError(f"inference.Tensor.reshape: shape must be a list of ints >= 0, got {shape!r}")
        self._shape = list(shape)

    def copy_from_cpu(self, data: np.ndarray) -> None:
        """The input's value: a copy of the NumPy array ``data``."""
        self._need_input("copy_from_cpu")
        if not isinstance(data, np.ndarray):
            raise TypeError(f"inference.Tensor.copy_from_cpu: data must be a numpy.ndarray, got {type(data).__name__}")
        self._value = to_tensor(data)  # (a copy: to_tensor copies an array)
        self._shape = list(data.shape)

    def share_external_data(self, data: PycollTensor) -> None:
        """The input's value: the pycoll Tensor ``data`` itself (no copy)."""
        self._need_input("share_external_data")
        if not isinstance(data, PycollTensor):
            raise TypeError(f"inference.Tensor.share_external_data: data must be a pycoll Tensor, got "
                            f"{type(data).__name__}")
        self._value, self._shape = data, list(data.shape)

    def copy_to_cpu(self) -> np.ndarray:
        """The value as a new NumPy array."""
        if self._value is None:
            raise RuntimeError(f"inference.Tensor.copy_to_cpu: {self._name!r} holds no data yet"
                               + ("" if self._is_input else "; call the predictor's run() first"))
        return np.array(self._value.numpy())

    def shape(self) -> List[int]:
        return list(self._value.shape) if self._value is not None else list(self._shape or [0])

    def type(self) -> DataType:
        return _data_type(self._value.dtype) if self._value is not None else DataType.FLOAT32

    def lod(self) -> List[List[int]]:
        return [list(level) for level in self._lod]

    def set_lod(self, lod: Sequence[Sequence[int]]) -> None:
        self._lod = [list(level) for level in lod]


class Predictor:
    """paddle's ``inference.Predictor`` over a Config's model (see the module docstring)."""

    def __init__(self, config: Config, _layer: Any = None) -> None:
        if not isinstance(config, Config):
            raise TypeError(f"create_predictor: config must be a paddle.inference.Config, got {type(config).__name__}")
        if not config.prog_file():
            raise ValueError("create_predictor: the Config names no model (Config(model_file, params_file) or "
                             "Config(prefix))")
        self._config = config
        self._place = _place(config)
        if self._place == "cpu":
            set_threads(config.cpu_math_library_num_threads())
        self._layer = _layer if _layer is not None else _loaded(config, self._place)
        io = self._layer._jit_io
        self._inputs: Dict[str, Tensor] = {name: Tensor(name, True) for name in io["input_names"]}
        self._outputs: Dict[str, Tensor] = {}
        self._output_names: Optional[List[str]] = _output_names(self._layer, io["input_spec"], self._place)

    def get_input_names(self) -> List[str]:
        return list(self._inputs)

    def get_input_handle(self, name: str) -> Tensor:
        if name not in self._inputs:
            raise ValueError(f"Predictor.get_input_handle: no input {name!r}; the model's are {list(self._inputs)}")
        return self._inputs[name]

    def get_output_names(self) -> List[str]:
        if self._output_names is None:
            raise RuntimeError("Predictor.get_output_names: this model was saved without a complete input_spec, so "
                               "pycoll knows its outputs once it has run (it runs the Layer's code, not a program "
                               "listing them); call run() first, or save it with input_spec")
        return list(self._output_names)

    def get_output_handle(self, name: str) -> Tensor:
        if name not in self._outputs:
            raise ValueError(f"Predictor.get_output_handle: no output {name!r}"
                             + (f"; the model's are {list(self._outputs)}" if self._outputs else
                                "; call run() first: the outputs are known once the model has run"))
        return self._outputs[name]

    def run(self, inputs: Optional[Sequence[Any]] = None) -> Optional[List[PycollTensor]]:
        """Run the model: on ``inputs`` (one Tensor or array per input, in order), returning the
        outputs; or, without them, on the input handles' data, filling the output handles."""
        if inputs is None:
            missing = [name for name, handle in self._inputs.items() if handle._value is None]
            if missing:
                raise RuntimeError(f"Predictor.run: inputs {missing} hold no data; give each one "
                                   f"(get_input_handle(name).copy_from_cpu(array)) or call run([tensors])")
            values = [handle._value for handle in self._inputs.values()]
        else:
            if not isinstance(inputs, (list, tuple)) or len(inputs) != len(self._inputs):
                raise ValueError(f"Predictor.run: inputs must be a list of {len(self._inputs)} tensors (for "
                                 f"{list(self._inputs)}), got {inputs!r}"[:300])
            values = [v if isinstance(v, PycollTensor) else to_tensor(v) for v in inputs]
        values = [v if self._place == "cpu" else to_tensor(v, place=self._place) for v in values]
        with no_grad():
            outputs = self._layer(*values)
        outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        self._output_names = _fetch_names(len(outputs))
        self._outputs = {}
        for name, value in zip(self._output_names, outputs):
            handle = self._outputs[name] = Tensor(name, False)
            handle._value = value
        return outputs if inputs is not None else None

    def clone(self) -> "Predictor":
        """A predictor of its own handles over the same loaded model (paddle shares the weights)."""
        return Predictor(self._config, self._layer)

    def clear_intermediate_tensor(self) -> None:
        """Drop the outputs of the last run (pycoll keeps no other intermediate tensors)."""
        self._outputs = {}

    def try_shrink_memory(self) -> int:
        """paddle's release of its memory pool: pycoll holds none beyond the outputs (0 bytes freed)."""
        return 0


def _fetch_names(count: int) -> List[str]:
    return [f"fetch_name_{i}" for i in range(count)]


def _output_names(layer: Any, input_spec: Optional[List[Any]], place: str) -> Optional[List[str]]:
    """The outputs' names before any run: the model run once on zeros of its input_spec's shapes
    (a free size as 1; eval mode, no graph), as paddle's program lists them; None where the spec
    does not describe every input (or that run fails: the first real run tells)."""
    if not input_spec or not all(isinstance(spec, InputSpec) for spec in input_spec):
        return None
    try:
        zeros = [to_tensor(np.zeros([max(d, 1) for d in spec.shape], dtype=spec.dtype), place=place)
                 for spec in input_spec]
        with no_grad():
            outputs = layer(*zeros)
    except Exception:  # noqa: BLE001 (a model that needs real values: its outputs are named at run())
        return None
    return _fetch_names(len(outputs) if isinstance(outputs, (list, tuple)) else 1)


def _place(config: Config) -> str:
    if not config.use_gpu():
        return "cpu"
    if device_count() > config.gpu_device_id():
        return f"gpu:{config.gpu_device_id()}"
    warnings.warn(f"Config.enable_use_gpu: there is no CUDA GPU {config.gpu_device_id()} here; the predictor runs "
                  f"on the CPU", stacklevel=3)
    return "cpu"


def _loaded(config: Config, place: str) -> Any:
    """The Config's Layer, loaded by ``jit.load`` (on ``place``)."""
    model, params = config.prog_file(), config.params_file()
    for file in (model, params):
        if not os.path.exists(file):
            raise ValueError(f"create_predictor: {file} does not exist; the Config names the files pycoll.jit.save "
                             f"wrote (prefix.pdmodel and prefix.pdiparams, or their prefix)")
    directory = os.path.dirname(model) or "."
    layer = jit.load(directory, model_filename=os.path.basename(model),
                     params_filename=os.path.relpath(params, directory))
    return layer if place == "cpu" else layer.to(place)


def create_predictor(config: Config) -> Predictor:
    """A Predictor of ``config``'s model."""
    return Predictor(config)


class PredictorPool:
    """``size`` predictors of one model, sharing its weights (paddle's pool)."""

    def __init__(self, config: Config, size: int = 1) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"PredictorPool: size must be an int >= 1, got {size!r}")
        first = Predictor(config)
        self._predictors = [first] + [first.clone() for _ in range(size - 1)]

    def retrive(self, idx: int) -> Predictor:  # (paddle's spelling)
        """Predictor ``idx`` of the pool."""
        if not 0 <= idx < len(self._predictors):
            raise IndexError(f"PredictorPool.retrive: idx must be in [0, {len(self._predictors)}), got {idx}")
        return self._predictors[idx]
