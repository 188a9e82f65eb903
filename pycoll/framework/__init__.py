"""paddle's ``paddle.framework`` module path for the framework calls scripts import from it
(``paddle.framework.seed``, ``paddle.framework.random.get_rng_state``, ...): the same objects as
``pycoll.<name>``."""
from pycoll import (CPUPlace, CUDAPlace, ParamAttr, disable_static, enable_static, get_default_dtype, grad,
                    in_dynamic_mode, load, no_grad, save, seed, set_default_dtype)
from pycoll.framework import random

__all__ = ["CPUPlace", "CUDAPlace", "ParamAttr", "disable_static", "enable_static", "get_default_dtype", "grad",
           "in_dynamic_mode", "load", "no_grad", "random", "save", "seed", "set_default_dtype"]
