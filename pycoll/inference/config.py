"""``paddle.inference.Config``: where the model a predictor runs lies and how to run it.

The model is what ``pycoll.jit.save`` wrote: ``prefix + ".pdmodel"`` (the Layer) and ``prefix +
".pdiparams"`` (its state_dict). A Config names them as paddle's does: the two files, their
prefix, or a directory holding one model. The settings a CPU or GPU run of that Layer can honour
act (``enable_use_gpu`` / ``disable_gpu`` choose the device, ``set_cpu_math_library_num_threads``
the BLAS threads); paddle's graph passes (``switch_ir_optim``, ``enable_memory_optim``,
oneDNN's, feed/fetch ops) are kept and reported, and change nothing: pycoll runs the Layer's
own code. Engines pycoll does not have (TensorRT, XPU, IPU, ONNX Runtime, OpenVINO) are refused
by name.
"""
from __future__ import annotations

import enum
import glob
import os
from typing import Any, List, Optional, Tuple

MODEL_SUFFIX, PARAMS_SUFFIX = ".pdmodel", ".pdiparams"


class PrecisionType(enum.Enum):
    """paddle's precision of a GPU run (pycoll computes in the saved Layer's own dtypes)."""

    Float32 = 0
    Int8 = 1
    Half = 2
    Bfloat16 = 3


class PlaceType(enum.Enum):
    """paddle's device kinds."""

    UNK = -1
    CPU = 0
    GPU = 1
    XPU = 2
    CUSTOM = 4


def _flag(value: Any, method: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"Config.{method}: the switch must be a bool, got {value!r}")
    return value


def _refused(engine: str) -> Any:
    def refuse(self: "Config", *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"Config: {engine} is not part of pycoll, which runs the saved Layer's own code "
                                  f"on the CPU or a CUDA GPU (enable_use_gpu)")
    refuse.__doc__ = f"{engine}: not part of pycoll (refused)."
    return refuse


class Config:
    """paddle's ``inference.Config(model_file, params_file)``, ``Config(prefix)`` or
    ``Config(model_dir)`` (see the module docstring)."""

    def __init__(self, model_file: Optional[str] = None, params_file: Optional[str] = None) -> None:
        self._files: Optional[Tuple[str, str]] = None  # (the .pdmodel, the .pdiparams)
        self._model_dir = ""
        if model_file is not None:
            self.set_model(model_file, params_file)
        elif params_file is not None:
            raise ValueError("Config: params_file needs a model_file")
        self._use_gpu, self._gpu_device_id, self._gpu_memory_mb = False, 0, 0
        self._precision = PrecisionType.Float32
        self._ir_optim, self._memory_optim, self._onednn = True, False, False
        self._math_threads = 1
        self._glog_info_disabled, self._feed_fetch_ops, self._specify_input_names = False, False, False
        self._profile = False

    # ---- the model ----
    def set_model(self, model_file: str, params_file: Optional[str] = None) -> None:
        """The model: its two files, their prefix, or a directory holding one model."""
        self._files, self._model_dir = _model_files(model_file, params_file)

    def set_prog_file(self, prog_file: str) -> None:
        self.set_model(prog_file, self.params_file() or None)

    def set_params_file(self, params_file: str) -> None:
        if self._files is None:
            raise ValueError("Config.set_params_file: set the model file first (set_model or set_prog_file)")
        self.set_model(self.prog_file(), params_file)

    def prog_file(self) -> str:
        return "" if self._files is None else self._files[0]

    def params_file(self) -> str:
        return "" if self._files is None else self._files[1]

    def model_dir(self) -> str:
        return self._model_dir

    # ---- the device ----
    def enable_use_gpu(self, memory_pool_init_size_mb: int, device_id: int = 0,
                       precision_mode: PrecisionType = PrecisionType.Float32) -> None:
        """Run on CUDA GPU ``device_id`` (the pool size is CuPy's to manage; the precision is the
        Layer's own: a float32 Layer computes in float32)."""
        if isinstance(device_id, bool) or not isinstance(device_id, int) or device_id < 0:
            raise ValueError(f"Config.enable_use_gpu: device_id must be an int >= 0, got {device_id!r}")
        self._use_gpu, self._gpu_device_id = True, device_id
        self._gpu_memory_mb, self._precision = int(memory_pool_init_size_mb), PrecisionType(precision_mode)

    def disable_gpu(self) -> None:
        self._use_gpu = False

    def use_gpu(self) -> bool:
        return self._use_gpu

    def gpu_device_id(self) -> int:
        return self._gpu_device_id

    def memory_pool_init_size_mb(self) -> int:
        return self._gpu_memory_mb

    def set_cpu_math_library_num_threads(self, cpu_math_library_num_threads: int) -> None:
        """The BLAS threads a CPU run computes with (process-wide, as paddle's math library's)."""
        n = cpu_math_library_num_threads
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"Config.set_cpu_math_library_num_threads: the count must be an int >= 1, got {n!r}")
        self._math_threads = n

    def cpu_math_library_num_threads(self) -> int:
        return self._math_threads

    # ---- paddle's graph passes: kept and reported ----
    def switch_ir_optim(self, x: bool = True) -> None:
        self._ir_optim = _flag(x, "switch_ir_optim")

    def ir_optim(self) -> bool:
        return self._ir_optim

    def enable_memory_optim(self, x: bool = True) -> None:
        self._memory_optim = _flag(x, "enable_memory_optim")

    def enable_mkldnn(self) -> None:
        self._onednn = True

    def disable_mkldnn(self) -> None:
        self._onednn = False

    def mkldnn_enabled(self) -> bool:
        return self._onednn

    enable_onednn, disable_onednn, onednn_enabled = enable_mkldnn, disable_mkldnn, mkldnn_enabled

    def disable_glog_info(self) -> None:
        self._glog_info_disabled = True

    def glog_info_disabled(self) -> bool:
        return self._glog_info_disabled

    def switch_use_feed_fetch_ops(self, x: bool = True) -> None:
        self._feed_fetch_ops = _flag(x, "switch_use_feed_fetch_ops")

    def use_feed_fetch_ops_enabled(self) -> bool:
        return self._feed_fetch_ops

    def switch_specify_input_names(self, x: bool = True) -> None:
        self._specify_input_names = _flag(x, "switch_specify_input_names")

    def specify_input_name(self) -> bool:
        return self._specify_input_names

    def enable_profile(self) -> None:
        self._profile = True

    enable_tensorrt_engine = _refused("TensorRT")
    enable_xpu = _refused("XPU")
    enable_ipu = _refused("IPU")
    enable_onnxruntime = _refused("ONNX Runtime")
    enable_openvino_engine = _refused("OpenVINO")

    def summary(self) -> str:
        """The settings as a table (paddle's ``Config.summary``)."""
        rows: List[Tuple[str, str]] = [
            ("model_file", self.prog_file()), ("params_file", self.params_file()),
            ("use_gpu", str(self._use_gpu).lower())]
        if self._use_gpu:
            rows += [("gpu_device_id", str(self._gpu_device_id)), ("precision", self._precision.name)]
        else:
            rows.append(("cpu_math_thread", str(self._math_threads)))
        rows += [("ir_optim", str(self._ir_optim).lower()), ("memory_optim", str(self._memory_optim).lower()),
                 ("enable_profile", str(self._profile).lower())]
        width = max(len(k) for k, _ in rows)
        rule = "-" * (width + 2 + max(len(v) for _, v in rows))
        return "\n".join([rule] + [f"{k:<{width}}  {v}" for k, v in rows] + [rule])


def _model_files(model_file: str, params_file: Optional[str]) -> Tuple[Tuple[str, str], str]:
    """((the .pdmodel, the .pdiparams), the directory named or '') from what a Config was given."""
    if not isinstance(model_file, str) or not model_file:
        raise TypeError(f"Config: model_file must be a path, got {model_file!r}")
    if params_file is not None and not isinstance(params_file, str):
        raise TypeError(f"Config: params_file must be a path, got {params_file!r}")
    if os.path.isdir(model_file) and params_file is None:
        models = sorted(glob.glob(os.path.join(model_file, "*" + MODEL_SUFFIX)))
        if len(models) != 1:
            raise ValueError(f"Config: the directory {model_file} holds {len(models)} models ({MODEL_SUFFIX} files); "
                             f"name the one to run (Config(model_file, params_file) or its prefix)")
        return (models[0], models[0][:-len(MODEL_SUFFIX)] + PARAMS_SUFFIX), model_file
    if model_file.endswith(".json") and os.path.exists(model_file):
        raise ValueError(f"Config: {model_file} is paddle's inference program (PIR), which pycoll cannot run; "
                         f"pycoll runs what pycoll.jit.save wrote (a {MODEL_SUFFIX} and a {PARAMS_SUFFIX} file)")
    prefix = model_file[:-len(MODEL_SUFFIX)] if model_file.endswith(MODEL_SUFFIX) else model_file
    return (prefix + MODEL_SUFFIX, params_file or prefix + PARAMS_SUFFIX), ""
