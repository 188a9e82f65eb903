"""paddle's ``paddle.framework`` module path for the framework calls scripts import from it
(``paddle.framework.seed``, ``paddle.framework.random.get_rng_state``, ...): the same objects as
``pycoll.<name>``, plus paddle's mode queries, ``dtype`` module, parameter tests and async save."""
from pycoll import (CPUPlace, CUDAPlace, ParamAttr, disable_static, enable_static, get_default_dtype, grad,
                    in_dynamic_mode, load, no_grad, save, seed, set_default_dtype)
from pycoll.framework import dtype, random
from pycoll.framework.async_save import async_save, clear_async_save_task_queue
from pycoll.framework.dtype import convert_np_dtype_to_dtype_
from pycoll.framework.io_utils import is_parameter, is_persistable
from pycoll.framework.modes import in_dynamic_or_pir_mode, in_pir_executor_mode, in_pir_mode, use_pir_api
from pycoll.nn.parameter import Parameter
from pycoll.runtime_config import get_flags, set_flags

__all__ = ["CPUPlace", "CUDAPlace", "ParamAttr", "Parameter", "async_save", "clear_async_save_task_queue",
           "convert_np_dtype_to_dtype_", "disable_static", "dtype", "enable_static", "get_default_dtype",
           "get_flags", "grad", "in_dynamic_mode", "in_dynamic_or_pir_mode", "in_pir_executor_mode", "in_pir_mode",
           "is_parameter", "is_persistable", "load", "no_grad", "random", "save", "seed", "set_default_dtype",
           "set_flags", "use_pir_api"]
