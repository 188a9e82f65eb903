"""pycoll: collective communication for CuPy (NCCL) and NumPy (MPI) arrays, paddle-style."""
from typing import Any, List

from pycoll._errors import CollectiveError

__version__ = "0.1.0"

# ---- tensor / autograd / nn side (never imports pycoll.distributed) ----
from pycoll.autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from pycoll.device import CPUPlace, CUDAPlace, get_device, is_compiled_with_cuda, set_device
import pycoll.device.cuda  # noqa: E402,F401 - pycoll.device.cuda.device_count(), as paddle's
from pycoll.random import get_cuda_rng_state, get_rng_state, seed, set_cuda_rng_state, set_rng_state
from pycoll._printing import set_printoptions
from pycoll.serialization import load, save
from pycoll.dtypes import (complex64, complex128, float16, float32, float64, get_default_dtype, int8, int16, int32, int64,
                           set_default_dtype, uint8)
from pycoll.tensor import Tensor, to_tensor
from pycoll.size import Size
from pycoll.dtypes import (DType as dtype, complex64 as cfloat, complex128 as cdouble, float16 as half,  # paddle's
                           float64 as double, int16 as short, int64 as long, uint32, uint64)  # torch-style names
from pycoll.math_ops import (abs, add, argmax, bmm, cast, clip, divide, exp, log, matmul, max, mean, min,
                             multiply, pow, relu, scale, sigmoid, sqrt, square, subtract, sum, tanh)
from pycoll.shape_ops import (chunk, clone, concat, expand, flatten, is_tensor, numel, reshape, split, squeeze,
                              stack, tile, transpose, unsqueeze)
from pycoll.elementwise_ops import (allclose, equal, floor_divide, floor_mod, isfinite, isinf, isnan, maximum,
                                    minimum, mod, remainder)
from pycoll.reduce_ops import all, amax, amin, any, cumsum, logsumexp, prod, std, trapezoid, var  # noqa: A004
from pycoll.search_ops import argsort, masked_fill, masked_scatter, sort, topk, tril, triu, where
from pycoll.einsum_ops import einsum
from pycoll.unary_ops import (acos, acos_, acosh, acosh_, asin, asin_, asinh, asinh_, atan, atan_, atanh, atanh_, ceil,
                              cos, cos_, cosh, cosh_, deg2rad, digamma, digamma_, erf, erf_, erfinv, expm1, expm1_,
                              floor, frac, frac_, lgamma, lgamma_, log1p, log1p_, log2, log2_, log10, log10_, logit,
                              logit_, nan_to_num, nan_to_num_, neg, neg_, negative, rad2deg, reciprocal, round, rsqrt,
                              sgn, sign, sin, sin_, sinh, sinh_, tan, tan_, trunc, trunc_)
from pycoll.binary_ops import atan2, clamp, fmax, fmin, heaviside, hypot, hypot_, lerp, logaddexp
from pycoll.special_ops import (copysign, copysign_, cumulative_trapezoid, gammaln, gammaln_, gcd, gcd_, lcm, lcm_,
                                polygamma, polygamma_, renorm, renorm_, signbit, sinc, sinc_, stanh, unflatten, vander)
from pycoll.logic_ops import (bitwise_and, bitwise_not, bitwise_or, bitwise_xor, equal_all, greater_equal, greater_than,
                              is_complex, is_empty, is_floating_point, is_integer, isclose, less_equal, less_than,
                              logical_and, logical_not, logical_or, logical_xor, not_equal)
from pycoll.index_ops import (argmin, gather, gather_nd, index_add, index_add_, index_fill, index_fill_, index_select,
                              masked_select, nonzero, put_along_axis, scatter, scatter_, scatter_nd, scatter_nd_add,
                              take_along_axis)
from pycoll.stats_ops import (bincount, bucketize, count_nonzero, histogram, isin, nanmean, nansum, searchsorted, unique,
                              unique_consecutive)
from pycoll.order_ops import kthvalue, median, mode, nanmedian, nanquantile, quantile
from pycoll.scan_ops import cummax, cummin, cumprod, cumprod_, diff, logcumsumexp
from pycoll.reshape_ops import (atleast_1d, atleast_2d, atleast_3d, broadcast_shape, broadcast_tensors, broadcast_to,
                                crop, dsplit, expand_as, flip, hsplit, moveaxis, narrow, permute, rank, ravel,
                                repeat_interleave, roll, rot90, shape, slice, strided_slice, swapaxes, t, tensor_split,
                                unbind, unstack, view, view_as, vsplit)
from pycoll.reshape_ops import swapaxes as swapdims
from pycoll.reshape_ops import matrix_transpose
from pycoll.stack_ops import (block_diag, cartesian_prod, column_stack, combinations, dstack, hstack, row_stack,
                              vstack)
from pycoll.elementwise_ops import isneginf, isposinf, isreal, positive
from pycoll.index_ops import argwhere
from pycoll.index_ops import take_along_axis as take_along_dim  # paddle's alias
from pycoll.diag_ops import diag, diag_embed, diagflat, diagonal, meshgrid, trace, tril_indices, triu_indices
from pycoll.product_ops import add_n, addmm, cdist, pdist, cross, dist, dot, inner, kron, mm, mv, outer, tensordot
from pycoll.product_ops import outer as ger  # paddle.ger (given out= below, as outer)
from pycoll.sampling import (bernoulli, multinomial, normal, rand_like, randint_like, randn_like, randperm,
                             standard_normal, uniform)
from pycoll.inplace_ops import abs_, divide_, increment, multiply_, square_, subtract_, tanh_
from pycoll import inplace_ops  # noqa: F401 - attaches the in-place methods (zero_, add_, ...) to Tensor
from pycoll import tensor_methods  # noqa: F401 - attaches dim(), float(), new_full(), ... to Tensor
from pycoll.bit_operators import bitwise_invert, bitwise_left_shift, bitwise_right_shift  # and ~ & | ^ << >>
from pycoll.grad_ops import grad
from pycoll.aliases import cat, concatenate, e, eq, ge, gt, inf, le, lt, nan, ne, newaxis, pi, softmax
from pycoll.type_info import finfo, iinfo
from pycoll.matrix_ops import inverse
from pycoll.index_writes import (diagonal_scatter, index_put, index_put_, index_sample, scatter_add, scatter_add_,
                                 scatter_reduce, select_scatter, slice_scatter, take)
from pycoll.creation import (arange, assign, empty, empty_like, eye, from_dlpack, full, full_like, linspace, logspace,
                             ones, ones_like, rand, randint, randn, to_dlpack, tolist, zeros, zeros_like)
from pycoll import amp, autograd, incubate, linalg, metric, nn, optimizer, regularizer, static, utils
from pycoll import jit  # noqa: E402 - paddle.jit: to_static runs eagerly
from pycoll import inference  # noqa: E402,F401 - paddle.inference: predictors over jit.save's Layers
from pycoll.linalg import norm  # paddle.norm is paddle.linalg.norm

# paddle 3.3's torch-style names for the same functions
greater, less, mul, manual_seed = greater_than, less_than, multiply, seed
from pycoll import fft  # noqa: E402,F401 - paddle.fft
from pycoll.linalg import cholesky, eigvalsh, vecdot  # paddle's top-level names of these
from pycoll.complex_ops import angle, as_complex, as_real, complex, conj, imag, real  # noqa: A004 - paddle's
from pycoll.nn import ParamAttr
from pycoll.nn.layer import create_parameter
from pycoll.torch_style_arith import add, div, div_, sub, sub_, true_divide
subtract, divide = sub, div  # paddle 3.3's take alpha / rounding_mode
from pycoll.creation_extras import asarray, from_numpy
from pycoll.runtime_config import get_default_device, get_flags, set_flags
from pycoll.inplace_forms import cast_, t_, transpose_, where_
from pycoll.inplace_random import bernoulli_, log_normal, log_normal_
from pycoll.inplace_ops import flatten_, reshape_, squeeze_, unsqueeze_
from pycoll.window_split_ops import unfold
from pycoll import tensor_storage  # noqa: F401 - attaches data, data_ptr(), strides, persistable, device to Tensor
from pycoll import version  # noqa: F401 - paddle.version
from pycoll import profiler  # noqa: E402,F401 - paddle.profiler (host-side spans, step timing)
from pycoll.typed_tensors import (BFloat16Tensor, BoolTensor, ByteTensor, CharTensor,  # noqa: E402,F401
                                  DoubleTensor, FloatTensor, HalfTensor, IntTensor, LongTensor, ShortTensor)
from pycoll.extra_math import (baddbmm, baddbmm_, broadcast_shapes, frexp, ldexp, ldexp_, msort, multiplex, nextafter,
                               polar, reduce_as, shard_index)
from pycoll.bessel_ops import i0, i0_, i0e, i1, i1e
from pycoll.incomplete_gamma import gammainc, gammainc_, gammaincc, gammaincc_, multigammaln, multigammaln_
from pycoll.histogram_ops import histogram_bin_edges, histogramdd
from pycoll import distribution  # noqa: E402,F401 - paddle.distribution
from pycoll import audio  # noqa: E402,F401 - paddle.audio (functional, features)
from pycoll.audio.functional.window import (bartlett_window, blackman_window, hamming_window,  # noqa: E402,F401
                                            hann_window, kaiser_window)
from pycoll.sampling_counts import binomial, poisson, standard_gamma  # noqa: E402
from pycoll.inplace_names import (bitwise_and_, bitwise_not_, bitwise_or_, bitwise_xor_, cumsum_,  # noqa: E402
                                  floor_divide_, floor_mod_, log_, masked_fill_, mod_, normal_, pow_, remainder_,
                                  tril_, triu_)


def in_dynamic_mode() -> bool:
    """Always True: pycoll runs eagerly (paddle's dygraph); it has no static graph."""
    return True


def enable_static() -> None:
    """Accepted so that scripts written for paddle's static-graph datasets run (their slots come
    from ``pycoll.static.data``); pycoll stays eager, and says so once."""
    from pycoll._logging import logger

    if not getattr(enable_static, "_said", False):
        logger.warning("enable_static(): pycoll has no static graph and keeps running eagerly")
        enable_static._said = True  # type: ignore[attr-defined]


def disable_static(place: Any = None) -> None:
    """Back to dynamic mode, which pycoll never leaves."""

# ---- data parallelism (over pycoll.distributed), imported on first use ----
# `import pycoll` (and so `import pycoll.tensor` or `import pycoll.nn`) must not load the distributed
# side (mpi4py, the engines), so `pycoll.DataParallel`, `pycoll.io` and `pycoll.distributed` are
# module attributes that import on first access (PEP 562); `from pycoll import DataParallel, io`
# and `import pycoll.io` work as before. `pycoll.bfloat16` (ml_dtypes') is imported on first use too.
_LAZY = ("DataParallel", "io", "distributed", "bfloat16", "float8_e4m3fn", "float8_e5m2", "Model", "summary", "flops",
         "callbacks", "hapi", "vision", "compat", "quantization")


def __getattr__(name: str) -> Any:
    if name == "DataParallel":
        from pycoll.parallel import DataParallel as value
    elif name == "io":
        import pycoll.io as value
    elif name == "distributed":  # `import paddle; paddle.distributed.init_parallel_env()`
        import pycoll.distributed as value
    elif name == "callbacks":  # a module of its own, as paddle's: `from pycoll.callbacks import ...`
        import pycoll.callbacks as value
    elif name in ("Model", "summary", "flops", "hapi"):  # paddle's high-level API, on the parallel layer
        import pycoll.hapi as hapi

        value = hapi if name == "hapi" else getattr(hapi, name)
    elif name == "compat":  # paddle.compat: torch-style signatures over pycoll's functions
        import pycoll.compat as value
    elif name == "quantization":  # paddle.quantization (QAT / PTQ), imported on first use
        import pycoll.quantization as value
    elif name == "vision":  # paddle.vision: models, transforms, datasets (uses pycoll.io)
        import pycoll.vision as value
    elif name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):  # ml_dtypes', imported only when asked for
        from pycoll.dtypes import ml_dtype
        value = ml_dtype(name)
    else:
        raise AttributeError(f"module 'pycoll' has no attribute {name!r}")
    globals()[name] = value  # found directly from now on
    return value


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(_LAZY))



# paddle 3.3's keyword-only out= on these functions (pycoll.X only: operators and pycoll's own calls
# use the functions themselves and pay nothing for it)
from pycoll._tensor_ops import with_out as _with_out  # noqa: E402
for _name in ("abs", "add", "bmm", "bucketize", "clip", "complex", "concat", "cumprod", "cumsum", "diff",
              "divide", "dot", "equal", "exp", "floor_divide", "floor_mod", "gather", "index_add",
              "index_select", "log", "logsumexp", "masked_select", "matmul", "maximum", "median", "minimum",
              "mod", "mul", "multinomial", "multiply", "nonzero", "normal", "outer", "pow", "quantile",
              "remainder", "scatter", "searchsorted", "sigmoid", "sqrt", "stack", "subtract",
              "take_along_axis", "take_along_dim", "tanh", "topk", "tril", "triu", "var", "where"):
    _plain = globals()[_name]
    if getattr(_plain, "__pycoll_out__", False):  # an alias of a function already given out=
        continue
    _wrapped = _with_out(_plain)
    _wrapped.__pycoll_out__ = True
    for _alias in [n for n, f in globals().items() if f is _plain]:  # aliases stay one object
        globals()[_alias] = _wrapped
    _method = Tensor.__dict__.get(_name)
    if callable(_method) and not getattr(_method, "__pycoll_out__", False):  # x.exp(out=o) too, as paddle's
        _method = _with_out(_method)
        _method.__pycoll_out__ = True
        setattr(Tensor, _name, _method)
del _name, _alias, _plain, _wrapped, _method, _with_out
from pycoll import framework  # noqa: E402,F401 - paddle.framework; after every name it takes from here
from pycoll.framework.dtype import uint16  # noqa: E402 - paddle.uint16 (NumPy's uint16 here)
from pycoll.framework.modes import check_shape, disable_signal_handler  # noqa: E402
from pycoll.framework.random import Generator  # noqa: E402 - paddle.Generator
from pycoll.nn.lazy_init import LazyGuard  # noqa: E402
from pycoll.as_tensor_op import as_tensor  # noqa: E402
from pycoll.autocast import (autocast, get_autocast_cpu_dtype, get_autocast_dtype,  # noqa: E402
                             get_autocast_gpu_dtype, is_autocast_enabled)
from pycoll.batch_reader import batch  # noqa: E402 - paddle.batch
from pycoll import text  # noqa: E402,F401 - paddle.text (viterbi_decode, ViterbiDecoder)
from pycoll.nn.functional import (adaptive_avg_pool1d, conv1d, conv2d, conv3d, group_norm,  # noqa: E402
                                  layer_norm)  # paddle 3.3.1's top-level names of these
from pycoll._promotion import BOOL as bool  # noqa: E402,A001 - paddle.bool; last, so the code above sees the builtin
from pycoll.creation_extras import range  # noqa: E402,A001 - paddle.range (end-inclusive); last, as bool
from pycoll.dtypes import float32 as float, int32 as int  # noqa: E402,A001 - paddle.float/int; last, as bool
from pycoll.inplace_logic import (addmm_, bitwise_invert_, bitwise_left_shift_, bitwise_right_shift_,  # noqa: E402
                                  equal_, greater_equal_, greater_than_, less_, less_equal_, less_than_, logical_and_,
                                  logical_not_, logical_or_, logical_xor_, masked_scatter_, not_equal_)
from pycoll.inplace_distributions import cauchy_, geometric_  # noqa: E402
from pycoll.tensor_method_aliases import reverse, view_as_complex, view_as_real  # noqa: E402
from pycoll.strided_views import as_strided  # noqa: E402
from pycoll import tensor_kind  # noqa: E402,F401 - attaches is_dense(), layout, offset, get_device(), apply() ... to Tensor
from pycoll import sparse, tensor_sparse  # noqa: E402,F401 - paddle.sparse; Tensor.to_sparse_coo/_csr, to_dense
from pycoll import geometric  # noqa: E402,F401 - paddle.geometric
from pycoll import signal  # noqa: E402,F401 - paddle.signal (stft, istft; Tensor.stft / Tensor.istft)
from pycoll.framework import async_save, clear_async_save_task_queue  # noqa: E402 - paddle's top-level names
from pycoll.device import (Event, Stream, device_guard, get_cudnn_version, get_device_module,  # noqa: E402
                           set_default_device)  # paddle takes these from paddle.device
from pycoll.device.properties import (is_compiled_with_cinn, is_compiled_with_custom_device,  # noqa: E402
                                      is_compiled_with_distribute, is_compiled_with_ipu, is_compiled_with_rocm,
                                      is_compiled_with_xpu)
from pycoll import cuda  # noqa: E402,F401 - paddle.cuda (torch-style), a face over pycoll.device
from pycoll import special  # noqa: E402,F401 - paddle.special (expm1, logsumexp, softmax)
from pycoll import hub, onnx, sysconfig  # noqa: E402,F401 - paddle.hub (local hubconf), paddle.onnx, paddle.sysconfig
from pycoll.device.other_places import (CUDAPinnedPlace, CustomPlace, IPUPlace, XPUPinnedPlace,  # noqa: E402
                                        XPUPlace)  # paddle's place classes pycoll puts no tensors on
from pycoll import tensor_legacy as _tensor_legacy  # noqa: E402 - paddle.tensor's arrays and fill_constant
from pycoll import tensor_namespace as _tensor_namespace  # noqa: E402 - paddle.tensor's submodules (math, ...)

_tensor_namespace.install(tensor, _tensor_legacy)
from pycoll.framework import base  # noqa: E402 - paddle.base (set_flags...); after pycoll.framework
from pycoll.framework.mmap_storage import MmapStorage  # noqa: E402 - paddle.MmapStorage
import sys as _sys  # noqa: E402

_sys.modules.setdefault("pycoll.base", base)  # `import pycoll.base`, as paddle's
from pycoll.framework import dygraph as _dygraph  # noqa: E402

_sys.modules.setdefault("pycoll.base.dygraph", _dygraph)  # `import pycoll.base.dygraph` too
from pycoll.framework import base_framework as _base_framework  # noqa: E402

_sys.modules.setdefault("pycoll.base.framework", _base_framework)  # and `import pycoll.base.framework`

from pycoll._module_paths import picklable_by_name as _picklable_by_name  # noqa: E402

for _module in (_sys.modules[__name__], nn.functional):  # pycoll.matmul & co. (wrappers) travel by RPC
    _picklable_by_name(_module)
del _module
from pycoll import _blas_threads  # noqa: E402 - last: NumPy and SciPy have loaded their BLAS

_blas_threads.paddles_default()  # their BLAS on paddle's one math thread, unless the user chose
