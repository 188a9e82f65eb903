"""pycoll: collective communication for CuPy (NCCL) and NumPy (MPI) arrays, paddle-style."""
from pycoll._errors import CollectiveError

__version__ = "0.1.0"

# ---- tensor / autograd / nn side (never imports pycoll.distributed) ----
from pycoll.autograd import is_grad_enabled, no_grad
from pycoll.device import get_device, set_device
from pycoll.random import seed
from pycoll.serialization import load, save
from pycoll.tensor import (Tensor, abs, add, arange, argmax, cast, clip, clone, concat, divide, exp,
                           flatten, float16, float32, float64, full, full_like, int32, int64, log,
                           matmul, max, mean, min, multiply, ones, ones_like, pow, rand, randn, relu,
                           reshape, sigmoid, sqrt, square, squeeze, stack, subtract, sum, tanh,
                           to_tensor, transpose, unsqueeze, zeros, zeros_like)
from pycoll import autograd, nn, optimizer
from pycoll.nn import ParamAttr

# ---- data parallelism (over pycoll.distributed) ----
from pycoll.parallel import DataParallel
from pycoll import io
