"""paddle's ``fleet.utils.sequence_parallel_utils``: Megatron's sequence parallelism over fleet's
model-parallel group. Between the tensor-parallel linears an activation ``[s, b, h]`` is split
along dim 0 (the sequence), so the layers there (LayerNorm, dropout) see ``[s/n, b, h]``.

The autograd collectives, along dim 0 (``group`` None: fleet's model-parallel group):

    ScatterOp        forward: this rank's 1/n of dim 0       backward: all-gather along dim 0
    GatherOp         forward: all-gather along dim 0         backward: this rank's 1/n of dim 0
    AllGatherOp      forward: all-gather along dim 0         backward: reduce-scatter (sum)
    ReduceScatterOp  forward: reduce-scatter (sum)           backward: all-gather along dim 0

The linears (pycoll's model-parallel layers, with these collectives in place of theirs):

    ColumnSequenceParallelLinear  [s/n, b, in] -> all-gather -> @ weight [in, out/n] -> [s, b, out/n]
    RowSequenceParallelLinear     [s, b, in/n] -> @ weight [in/n, out] -> reduce-scatter -> + bias
                                  -> [s/n, b, out]

A parameter every rank holds whole but that sees only its rank's 1/n of the sequence (a
LayerNorm's, the row linear's bias) gets 1/n of its gradient: ``mark_as_sequence_parallel_parameter``
says so, and ``register_sequence_parallel_allreduce_hooks`` sums those gradients over the
model-parallel group once a step (every ``accumulation_steps``-th backward), when they are final
(``Tensor.register_grad_ready_hook``), or a parameter's fp32 ``main_grad`` where
``mix_precision_utils.MixPrecisionLayer`` keeps one.

``SPInnerOverlapLinear`` is paddle's PyLayer for the column linear that overlaps its backward's
reduce-scatter with the weight gradient (``mp_configs``' ``sp_async_reduce_scatter``): here it
computes the same values and gradients without the overlap (the collectives are synchronous), and
``recompute_allgather`` (gather x again in backward instead of keeping it) saves memory only.
``MPScale`` divides by the model-parallel degree in forward and passes the gradient through.

paddle's fused kernels compute the same values; pycoll has none, so
``is_fused_*_supported()`` are False and ``fuse_matmul_bias=True`` computes unfused, as pycoll's
other model-parallel layers do.
"""
from __future__ import annotations

from typing import Any, Callable, List, Optional

import pycoll.distributed as dist
from pycoll.autograd import PyLayer, PyLayerContext
from pycoll.device import array_module
from pycoll.distributed.fleet.collective_mode import get_hybrid_communicate_group
from pycoll.distributed.fleet.utils.mix_precision_utils import move_grad_to_main_grad
from pycoll.nn import Layer
from pycoll.nn import functional as F
from pycoll.nn.initializer import Constant
from pycoll.parallel.fused import fused_allreduce_gradients_with_group
from pycoll.parallel.mp_layers import _as_tensor, _block, _ParallelLayer, _weight_attr
from pycoll.tensor import Tensor, wrap

__all__ = ["AllGatherOp", "ColumnSequenceParallelLinear", "GatherOp", "MPScale", "ReduceScatterOp",
           "RowSequenceParallelLinear", "SPInnerOverlapLinear", "ScatterOp", "all_gather", "create_fused_allreduce_gradient_hook",
           "create_non_fused_allreduce_gradient_hook", "is_fused_linear_param_grad_add_supported",
           "is_fused_matmul_bias_supported", "is_sequence_parallel_parameter", "mark_as_sequence_parallel_parameter",
           "reduce_scatter", "register_sequence_parallel_allreduce_hooks", "scatter"]


def _mp_group() -> dist.Group:
    return get_hybrid_communicate_group().get_model_parallel_group()


def _rows(arr: Any, nranks: int, fn: str) -> int:
    if arr.ndim == 0 or arr.shape[0] % nranks:
        raise ValueError(f"{fn}: the input has shape {list(arr.shape)}; its sequence length (dim 0) must divide "
                         f"by the model-parallel degree {nranks}")
    return arr.shape[0] // nranks


def _scatter(arr: Any, group: dist.Group, fn: str) -> Any:
    part = _rows(arr, group.nranks, fn)
    return arr[group.rank * part:(group.rank + 1) * part].copy()


def _all_gather(arr: Any, group: dist.Group) -> Any:
    parts: list = []
    xp = array_module(arr)
    dist.all_gather(parts, xp.ascontiguousarray(arr), group=group)
    return xp.concatenate(parts, axis=0)


def _reduce_scatter(arr: Any, group: dist.Group, fn: str) -> Any:
    part = _rows(arr, group.nranks, fn)
    xp = array_module(arr)
    out = xp.empty((part,) + tuple(arr.shape[1:]), dtype=arr.dtype)
    dist.reduce_scatter(out, [xp.ascontiguousarray(arr[i * part:(i + 1) * part]) for i in range(group.nranks)],
                        group=group)
    return out


def scatter(input: Tensor) -> Tensor:  # noqa: A002 - paddle's argument name
    """This rank's 1/n of ``input`` along dim 0 (fleet's model-parallel group of n ranks)."""
    return wrap(_scatter(_as_tensor(input).array, _mp_group(), "scatter"))


def all_gather(input: Tensor) -> Tensor:  # noqa: A002
    """The ranks' ``input`` concatenated along dim 0, in group-rank order."""
    return wrap(_all_gather(_as_tensor(input).array, _mp_group()))


def reduce_scatter(input: Tensor) -> Tensor:  # noqa: A002
    """The ranks' ``input`` summed, this rank's 1/n of it along dim 0."""
    return wrap(_reduce_scatter(_as_tensor(input).array, _mp_group(), "reduce_scatter"))


class ScatterOp(PyLayer):
    """``[s, b, h]`` -> this rank's ``[s/n, b, h]``; backward all-gathers the gradient."""

    @staticmethod
    def forward(ctx: PyLayerContext, input: Tensor, group: Optional[dist.Group] = None) -> Tensor:
        ctx.group = group if group is not None else _mp_group()
        return wrap(_scatter(input.array, ctx.group, "ScatterOp"))

    @staticmethod
    def backward(ctx: PyLayerContext, grad: Tensor) -> Any:
        return _all_gather(grad.array, ctx.group)


class GatherOp(PyLayer):
    """``[s/n, b, h]`` -> ``[s, b, h]``; backward keeps this rank's part of the gradient."""

    @staticmethod
    def forward(ctx: PyLayerContext, input: Tensor, group: Optional[dist.Group] = None) -> Tensor:
        ctx.group = group if group is not None else _mp_group()
        return wrap(_all_gather(input.array, ctx.group))

    @staticmethod
    def backward(ctx: PyLayerContext, grad: Tensor) -> Any:
        return _scatter(grad.array, ctx.group, "GatherOp backward")


class AllGatherOp(PyLayer):
    """``[s/n, b, h]`` -> ``[s, b, h]``; backward sums the ranks' gradients and scatters them."""

    @staticmethod
    def forward(ctx: PyLayerContext, input: Tensor, group: Optional[dist.Group] = None) -> Tensor:
        ctx.group = group if group is not None else _mp_group()
        return wrap(_all_gather(input.array, ctx.group))

    @staticmethod
    def backward(ctx: PyLayerContext, grad: Tensor) -> Any:
        return _reduce_scatter(grad.array, ctx.group, "AllGatherOp backward")


class ReduceScatterOp(PyLayer):
    """``[s, b, h]`` summed over the ranks -> this rank's ``[s/n, b, h]``; backward all-gathers."""

    @staticmethod
    def forward(ctx: PyLayerContext, input: Tensor, group: Optional[dist.Group] = None) -> Tensor:
        ctx.group = group if group is not None else _mp_group()
        return wrap(_reduce_scatter(input.array, ctx.group, "ReduceScatterOp"))

    @staticmethod
    def backward(ctx: PyLayerContext, grad: Tensor) -> Any:
        return _all_gather(grad.array, ctx.group)


class MPScale(PyLayer):
    """``x / mp_degree`` in forward; backward passes the gradient on unscaled (paddle's)."""

    @staticmethod
    def forward(ctx: PyLayerContext, x: Tensor, mp_degree: int) -> Tensor:
        if isinstance(mp_degree, bool) or not isinstance(mp_degree, (int, float)) or mp_degree == 0:
            raise ValueError(f"MPScale: mp_degree must be a non-zero number, got {mp_degree!r}")
        return wrap((x.array * (1.0 / mp_degree)).astype(x.array.dtype, copy=False))

    @staticmethod
    def backward(ctx: PyLayerContext, dout: Tensor) -> Any:
        return dout


class SPInnerOverlapLinear(PyLayer):
    """``all_gather(x) @ weight + bias`` (ColumnSequenceParallelLinear's forward) with its own
    backward: dx = reduce_scatter(dy @ weight^T) over ``model_parallel_group``, dweight =
    all_gather(x)^T dy, dbias = the sum of dy. As in paddle, the forward gathers over fleet's
    model-parallel group. ``fuse_matmul_bias`` computes unfused; ``mp_fused_linear_param_grad_add``
    needs a kernel pycoll lacks and is refused (paddle raises NotImplementedError without it)."""

    @staticmethod
    def forward(ctx: PyLayerContext, x: Tensor, weight: Tensor, bias: Optional[Tensor], fuse_matmul_bias: bool,
                recompute_allgather: bool, mp_fused_linear_param_grad_add: bool,
                model_parallel_group: dist.Group) -> Tensor:
        if mp_fused_linear_param_grad_add:
            raise NotImplementedError("SPInnerOverlapLinear: mp_fused_linear_param_grad_add=True needs paddle's "
                                      "fused_linear_param_grad_add kernel, which pycoll does not have; pass False")
        gathered = _all_gather(x.array, _mp_group())
        ctx.group, ctx.has_bias = model_parallel_group, bias is not None
        ctx.x, ctx.weight = x.array, weight.array
        ctx.gathered = None if recompute_allgather else gathered
        out = gathered @ weight.array
        return wrap(out + bias.array if bias is not None else out)

    @staticmethod
    def backward(ctx: PyLayerContext, dy: Tensor) -> Any:
        gathered = ctx.gathered if ctx.gathered is not None else _all_gather(ctx.x, _mp_group())
        dy_arr, weight = dy.array, ctx.weight
        dx = _reduce_scatter(dy_arr @ weight.astype(dy_arr.dtype, copy=False).T, ctx.group,
                             "SPInnerOverlapLinear backward")
        rows = dy_arr.reshape(-1, dy_arr.shape[-1])
        dw = (gathered.reshape(-1, gathered.shape[-1]).T @ rows).astype(weight.dtype, copy=False)
        return (dx, dw, rows.sum(axis=0)) if ctx.has_bias else (dx, dw)


# ---- the parameter mark and its gradients' all-reduce --------------------------------------

def mark_as_sequence_parallel_parameter(parameter: Any) -> None:
    """Mark ``parameter`` as replicated across a sequence-parallel group (paddle's attribute)."""
    parameter.sequence_parallel = True


def is_sequence_parallel_parameter(parameter: Any) -> bool:
    return getattr(parameter, "sequence_parallel", False)


def _final_grad(param: Any) -> Optional[Tensor]:
    """The gradient the step will use: ``main_grad`` where MixPrecisionLayer keeps one (this
    backward's gradient moved in first, whichever hook runs first), else ``.grad``."""
    if hasattr(param, "main_grad"):
        move_grad_to_main_grad(param)
        return param.main_grad
    return param.grad


def create_fused_allreduce_gradient_hook(parameter_list: List[Any], accumulation_steps: int) -> Callable[..., None]:
    """One hook for all of ``parameter_list``: after every ``accumulation_steps`` backwards of
    them all, their gradients are summed over the model-parallel group in fused buffers."""
    group = _mp_group()
    due = accumulation_steps * len(parameter_list)
    count = [0]

    def hook(*_: Any) -> None:
        count[0] += 1
        if count[0] == due:
            count[0] = 0
            for param in parameter_list:
                _final_grad(param)  # this backward's gradient into main_grad, where there is one
            fused_allreduce_gradients_with_group(parameter_list, group=group, scale=1.0)
    return hook


def create_non_fused_allreduce_gradient_hook(param: Any, accumulation_steps: int) -> Callable[..., None]:
    """A hook for ``param`` alone: every ``accumulation_steps``-th backward its gradient is summed
    over the model-parallel group."""
    group = _mp_group()
    count = [0]

    def hook(*_: Any) -> None:
        count[0] += 1
        if count[0] % accumulation_steps == 0:
            grad = _final_grad(param)
            if grad is not None:
                dist.all_reduce(grad, group=group)
    return hook


def register_sequence_parallel_allreduce_hooks(model: Layer, accumulation_steps: int,
                                               fuse_sequence_parallel_allreduce: bool) -> None:
    """Sum the gradients of ``model``'s marked trainable parameters over fleet's model-parallel
    group after every ``accumulation_steps`` backwards (one fused all-reduce for them all with
    ``fuse_sequence_parallel_allreduce``, else one each). Nothing to do (paddle's) when
    ``accumulation_steps`` <= 0, without a parallel environment, or with one model-parallel rank."""
    if not isinstance(model, Layer):
        raise TypeError(f"register_sequence_parallel_allreduce_hooks: model must be a pycoll.nn.Layer, got "
                        f"{type(model).__name__}")
    if isinstance(accumulation_steps, bool) or not isinstance(accumulation_steps, int):
        raise TypeError(f"register_sequence_parallel_allreduce_hooks: accumulation_steps must be an int, got "
                        f"{accumulation_steps!r}")
    if accumulation_steps <= 0 or not dist.is_initialized() or _mp_group().nranks <= 1:
        return
    params = [p for p in model.parameters() if is_sequence_parallel_parameter(p) and not p.stop_gradient]
    if fuse_sequence_parallel_allreduce:
        hook = create_fused_allreduce_gradient_hook(params, accumulation_steps)
        for p in params:
            p.register_grad_ready_hook(hook)
    else:
        for p in params:
            p.register_grad_ready_hook(create_non_fused_allreduce_gradient_hook(p, accumulation_steps))


# ---- the linears -----------------------------------------------------------------------------

def is_fused_matmul_bias_supported() -> bool:
    """Whether a fused matmul+bias kernel is there: not in pycoll (``fuse_matmul_bias=True``
    computes the same values unfused)."""
    return False


def is_fused_linear_param_grad_add_supported() -> bool:
    """Whether paddle's fused weight-gradient accumulation kernel is there: not in pycoll."""
    return False


class _SequenceParallelLinear(_ParallelLayer):
    """The group (fleet's model-parallel one unless ``mp_group``) under paddle's attribute names."""

    def __init__(self, mp_group: Optional[dist.Group], name: Optional[str]):
        super().__init__(mp_group if mp_group is not None else _mp_group(), None, name)
        self._name = name
        self.model_parallel_group, self.world_size = self.group, self.nranks
        self.is_mp = self.nranks > 1

    def _check_input(self, x: Tensor, width: int, what: str) -> None:
        if x.ndim == 0 or x.shape[-1] != width:
            raise ValueError(f"{type(self).__name__}: x has shape {x.shape}; its last axis must be {what} ({width})")


class ColumnSequenceParallelLinear(_SequenceParallelLinear):
    """y = all_gather(x) @ W + b: ``x`` is this rank's ``[s/n, b, in_features]`` of the sequence,
    W's output columns are split (rank r holds ``weight[:, r*out/n:(r+1)*out/n]``, as
    ColumnParallelLinear), and the output is this rank's columns of the whole sequence,
    ``[s, b, out_features/n]``. The bias (``has_bias``) starts at zero, as Megatron's. Needs more
    than one model-parallel rank and ``gather_output=False`` (paddle asserts both)."""

    def __init__(self, in_features: int, out_features: int, weight_attr: Any = None, has_bias: Optional[bool] = None,
                 gather_output: bool = True, fuse_matmul_bias: bool = False, mp_group: Optional[dist.Group] = None,
                 name: Optional[str] = None):
        super().__init__(mp_group, name)
        layer = type(self).__name__
        if not self.is_mp:
            raise ValueError(f"{layer}: the model-parallel degree is 1; sequence parallelism needs more than one "
                             f"model-parallel rank")
        if gather_output:
            raise ValueError(f"{layer}: gather_output={gather_output!r}; with sequence parallelism it must be False")
        _block(in_features, "in_features", 1, layer)
        self.output_size_per_partition = _block(out_features, "out_features", self.nranks, layer)
        self.in_features, self.out_features = in_features, out_features
        self.gather_output, self.fuse_matmul_bias = gather_output, fuse_matmul_bias
        self.weight = self._param([in_features, out_features], _weight_attr(weight_attr, layer), axis=1)
        self.weight.split_axis = 1
        self.bias = self._param([out_features], Constant(0.0), axis=0, is_bias=True) if has_bias else None
        if self.bias is not None:
            self.bias.split_axis = 0

    def forward(self, x: Any) -> Tensor:
        x = _as_tensor(x)
        self._check_input(x, self.in_features, "in_features")
        return F.linear(AllGatherOp.apply(x, self.group), self.weight, self.bias)


class RowSequenceParallelLinear(_SequenceParallelLinear):
    """y = reduce_scatter(x @ W) + b: ``x`` is this rank's ``[s, b, in_features/n]`` (a
    ColumnSequenceParallelLinear's output), W's input rows are split (rank r holds
    ``weight[r*in/n:(r+1)*in/n, :]``, as RowParallelLinear), and the output is this rank's 1/n of
    the sequence, ``[s/n, b, out_features]``. The bias, whole on every rank and zero at first, is
    marked a sequence-parallel parameter (its gradient sees 1/n of the sequence: register the
    all-reduce hooks). ``input_is_parallel`` must be True (paddle asserts it); with one
    model-parallel rank the layer is a plain linear."""

    def __init__(self, in_features: int, out_features: int, weight_attr: Any = None, has_bias: bool = True,
                 input_is_parallel: bool = False, fuse_matmul_bias: bool = False,
                 mp_group: Optional[dist.Group] = None, name: Optional[str] = None):
        super().__init__(mp_group, name)
        layer = type(self).__name__
        if input_is_parallel is not True:
            raise ValueError(f"{layer}: input_is_parallel={input_is_parallel!r}; with sequence parallelism it must "
                             f"be True")
        self.input_size_per_partition = _block(in_features, "in_features", self.nranks, layer)
        _block(out_features, "out_features", 1, layer)
        self.in_features, self.out_features = in_features, out_features
        self.input_is_parallel, self.fuse_matmul_bias = input_is_parallel, fuse_matmul_bias
        self.weight = self._param([in_features, out_features], _weight_attr(weight_attr, layer), axis=0)
        self.weight.is_distributed = self.is_mp
        if self.is_mp:
            self.weight.split_axis = 0
        self.bias = self._param([out_features], Constant(0.0), axis=None, is_bias=True) if has_bias else None
        if self.bias is not None and self.is_mp:
            mark_as_sequence_parallel_parameter(self.bias)

    def forward(self, x: Any) -> Tensor:
        x = _as_tensor(x)
        self._check_input(x, self.input_size_per_partition, f"in_features / {self.nranks}")
        if not self.is_mp:
            return F.linear(x, self.weight, self.bias)
        out = ReduceScatterOp.apply(F.linear(x, self.weight), self.group)
        return out + self.bias if self.bias is not None else out
