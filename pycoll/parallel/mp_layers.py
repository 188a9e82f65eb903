"""Tensor-parallel layers with paddle's ``fleet.meta_parallel`` names and weight layouts.

    ColumnParallelLinear   weight [in, out/n] per rank, bias [out/n]     (output columns split)
    RowParallelLinear      weight [in/n, out] per rank, bias [out] whole  (input rows split)
    VocabParallelEmbedding weight [vocab/n, dim] per rank                 (vocabulary rows split)
    ParallelCrossEntropy   the loss of logits whose classes are split     (no weight)

n is the size of the layer's ``group`` (when None: fleet's model-parallel group after
``fleet.init``, else the world) and rank r holds block r. After ``fleet.init`` with
``mp_degree`` 1 that group is this rank alone: the layers are whole, as plain ones, whatever the
data-parallel or pipeline degrees.

Initialisation: a ``weight_attr`` whose initializer is an ``Assign`` of this rank's block (its
shape, as paddle's tensor-parallel tests give each rank its slice) makes that block; an ``Assign``
of the whole weight is cut like any other. Otherwise every rank draws the *full* weight from
pycoll's seeded generator, exactly as
``nn.Linear`` / ``nn.Embedding`` of the full size would, and keeps its block. So after the same
``pycoll.seed(s)`` on every rank, the blocks concatenated in group-rank order equal the weight of
the plain layer made after ``pycoll.seed(s)`` in one process, and the split layer computes what
that plain layer computes. (The full weight exists briefly on every rank while it is built.)

Split parameters carry ``is_distributed = True`` and the axis they are cut along as ``split_axis``
(paddle's attributes); parameters that every rank of the group holds whole (RowParallelLinear's
bias) carry ``is_distributed = False``.

Model x data parallel: wrap the model with ``DataParallel(model, group=dp_group)``, where
``dp_group`` joins the ranks that hold the *same* blocks (same rank in their model-parallel
groups); wrapping it over the world would broadcast one rank's blocks over the others'.
"""
from __future__ import annotations

from typing import Any, List, Optional

import pycoll.distributed as dist
from pycoll.nn import Layer, ParamAttr, Parameter
from pycoll.nn import functional as F
from pycoll.nn.initializer import Assign, XavierUniform
from pycoll.parallel.mp_ops import (_c_concat, _c_identity, _c_softmax_with_cross_entropy, _c_split,
                                     _mp_allreduce, group_position, model_parallel_group)
from pycoll.tensor import Tensor, wrap


def _block(size: Any, arg: str, nranks: int, layer: str) -> int:
    """``size // nranks``; TypeError unless ``size`` is an int, ValueError unless it is positive
    and divisible by ``nranks``."""
    if isinstance(size, bool) or not isinstance(size, int):
        raise TypeError(f"{layer}: {arg} must be a positive int, got {type(size).__name__} {size!r}")
    if size <= 0:
        raise ValueError(f"{layer}: {arg} must be a positive int, got {size!r}")
    if size % nranks:
        raise ValueError(f"{layer}: {arg}={size} does not divide by the model-parallel group size "
                         f"{nranks}; it must be a multiple of {nranks}")
    return size // nranks


def _as_tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


class _ParallelLayer(Layer):
    """Holds the group and makes parameters as blocks of full, seeded parameters."""

    def __init__(self, mp_group: Optional[dist.Group], group: Optional[dist.Group], name: Optional[str]):
        super().__init__()  # paddle's name scope: the split layer's (``linear``), whatever ``name``
        self._name = name
        if mp_group is not None and group is not None and mp_group is not group:
            raise ValueError(f"{type(self).__name__}: give the group as mp_group (paddle's name) or group, not both")
        group = mp_group if mp_group is not None else group
        self.group = model_parallel_group() if group is None else group
        if self.group is None and dist.get_world_size() > 1 and not dist.is_initialized():
            raise RuntimeError(f"{type(self).__name__}: this job has {dist.get_world_size()} ranks but no parallel "
                               f"environment yet; call fleet.init(is_collective=True, strategy=...) (its "
                               f"hybrid_configs' mp_degree splits the layers) or dist.init_parallel_env() before "
                               f"making model-parallel layers")
        self.rank, self.nranks = group_position(self.group, type(self).__name__)
        # paddle's attribute names for them
        self.model_parallel_group, self.world_size, self.is_mp = self.group, self.nranks, self.nranks > 1

    def _param(self, shape: List[int], attr: Any, axis: Optional[int], is_bias: bool = False,
               default_initializer: Any = None) -> Optional[Parameter]:
        """A parameter of the full ``shape``, initialised as a plain layer would, cut to this
        rank's block along ``axis`` (``axis=None``: kept whole). None when ``attr`` is False."""
        if axis is not None and attr is not False:
            block_shape = list(shape)
            block_shape[axis] //= self.nranks
            init = ParamAttr.from_arg(attr, "weight_attr").initializer
            if block_shape != shape and isinstance(init, Assign) and list(init.value.shape) == block_shape:
                # this rank's own block, as paddle's tensor-parallel tests give it
                block = self.create_parameter(block_shape, attr=attr, is_bias=is_bias)
                block.is_distributed, block.split_axis = True, axis
                return block
        full = self.create_parameter(shape, attr=attr, is_bias=is_bias,
                                     default_initializer=default_initializer)
        if full is None:
            return None
        if axis is None:
            full.is_distributed = False
            return full
        width = shape[axis] // self.nranks
        index = [slice(None)] * len(shape)
        index[axis] = slice(self.rank * width, (self.rank + 1) * width)
        block = Parameter(full.array[tuple(index)].copy(), name=full.name, trainable=full.trainable)
        ParamAttr.from_arg(attr, "weight_attr").apply_to(block)  # need_clip, rate factor, regularizer
        block.is_distributed, block.split_axis = True, axis  # (paddle's names: checkpoint tools read them)
        return block


def _linear_settings(layer: Layer, fuse_matmul_bias: bool) -> None:
    """paddle's attributes of its parallel linears: the matmul they call and its kernel
    choices (fusions and an asynchronous all-reduce that change no value; pycoll makes none)."""
    layer.linear, layer.fuse_matmul_bias = F.linear, fuse_matmul_bias
    layer.mp_async_allreduce = layer.mp_skip_c_identity = layer.mp_fused_linear_param_grad_add = False


def _weight_attr(weight_attr: Any, layer: str) -> Any:
    if weight_attr is False:
        raise ValueError(f"{layer}: weight_attr=False; the layer needs its weight (give None, a "
                         f"ParamAttr, an Initializer or a name)")
    return weight_attr


class ColumnParallelLinear(_ParallelLayer):
    """y = x @ W + b with W's output columns split over the group: rank r holds
    ``weight[:, r*out/n:(r+1)*out/n]`` (shape [in_features, out_features/n]) and that block of
    the bias.

    The input is the whole ``x`` on every rank. With ``gather_output=True`` the ranks' output
    blocks are all-gathered into the whole output [..., out_features]; with False each rank
    returns its block [..., out_features/n] (feed it to ``RowParallelLinear(input_is_parallel=True)``).
    paddle's signature: no bias unless ``has_bias`` (paddle's default None means none);
    ``fuse_matmul_bias`` is a kernel choice of paddle's that changes no value (accepted);
    ``mp_group`` (or pycoll's ``group``) is the group. ``bias_attr`` (a pycoll addition, used by
    ``split``) says how the bias is made when ``has_bias`` (None: zeros; False: no bias).
    """

    def __init__(self, in_features: int, out_features: int, weight_attr: Any = None,
                 has_bias: Optional[bool] = None, gather_output: bool = True, fuse_matmul_bias: bool = False,
                 mp_group: Optional[dist.Group] = None, name: Optional[str] = None, *,
                 group: Optional[dist.Group] = None, bias_attr: Any = None):
        super().__init__(mp_group, group, name)
        layer = type(self).__name__
        _block(in_features, "in_features", 1, layer)
        self.out_per_rank = _block(out_features, "out_features", self.nranks, layer)
        self.output_size_per_partition = self.out_per_rank  # paddle's name
        self.in_features, self.out_features = in_features, out_features
        self.gather_output = gather_output
        _linear_settings(self, fuse_matmul_bias)
        self.weight = self._param([in_features, out_features], _weight_attr(weight_attr, layer), axis=1)
        self.bias = self._param([out_features], bias_attr if has_bias else False, axis=0, is_bias=True)

    def forward(self, x: Any) -> Tensor:
        out = self.linear(_c_identity(_as_tensor(x), self.group), self.weight, self.bias)
        return _c_concat(out, self.group) if self.gather_output else out

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features} "
                f"({self.out_per_rank} on rank {self.rank} of {self.nranks}), "
                f"gather_output={self.gather_output}")


class RowParallelLinear(_ParallelLayer):
    """y = x @ W + b with W's input rows split over the group: rank r holds
    ``weight[r*in/n:(r+1)*in/n, :]`` (shape [in_features/n, out_features]).

    With ``input_is_parallel=False`` every rank gets the whole ``x`` [..., in_features] and takes
    its block of the last axis; with True each rank gets its block [..., in_features/n] already
    (the output of ``ColumnParallelLinear(gather_output=False)``). The partial products are
    all-reduced, then the bias (whole on every rank) is added once. The other arguments as for
    ColumnParallelLinear (here ``has_bias`` defaults to True, as in paddle).
    """

    def __init__(self, in_features: int, out_features: int, weight_attr: Any = None,
                 has_bias: bool = True, input_is_parallel: bool = False, fuse_matmul_bias: bool = False,
                 mp_group: Optional[dist.Group] = None, name: Optional[str] = None, *,
                 group: Optional[dist.Group] = None, bias_attr: Any = None):
        super().__init__(mp_group, group, name)
        layer = type(self).__name__
        self.in_per_rank = _block(in_features, "in_features", self.nranks, layer)
        self.input_size_per_partition = self.in_per_rank  # paddle's name
        _block(out_features, "out_features", 1, layer)
        self.in_features, self.out_features = in_features, out_features
        self.input_is_parallel = input_is_parallel
        _linear_settings(self, fuse_matmul_bias)
        self.weight = self._param([in_features, out_features], _weight_attr(weight_attr, layer), axis=0)
        self.bias = self._param([out_features], bias_attr if has_bias else False, axis=None,
                                is_bias=True)

    def forward(self, x: Any) -> Tensor:
        x = _as_tensor(x)
        expected = self.in_per_rank if self.input_is_parallel else self.in_features
        if x.ndim == 0 or x.shape[-1] != expected:
            raise ValueError(
                f"RowParallelLinear: x has shape {x.shape}; with input_is_parallel="
                f"{self.input_is_parallel} its last axis must be {expected} "
                f"(in_features={self.in_features} over {self.nranks} ranks)")
        if not self.input_is_parallel:
            x = _c_split(x, self.group)
        out = _mp_allreduce(self.linear(x, self.weight), group=self.group)
        return out + self.bias if self.bias is not None else out

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features} ({self.in_per_rank} on rank {self.rank} of "
                f"{self.nranks}), out_features={self.out_features}, "
                f"input_is_parallel={self.input_is_parallel}")


def rows_held(table: Tensor, ids: Any, start: int) -> Tensor:
    """The rows of ``ids`` (an integer array) that ``table`` holds, ``table`` being the rows
    ``start`` .. ``start + len(table) - 1`` of a vocabulary; other ids get rows of zeros (the
    model-parallel all-reduce then sums the ranks' lookups). The gradient reaches only the rows
    looked up."""
    local = ids.astype("int64") - start
    mine = (local >= 0) & (local < table.shape[0])
    rows = F.embedding(wrap(local * mine), table)  # ids not held look up row 0 ...
    return rows * wrap(mine[..., None].astype(rows.dtype))  # ... and are zeroed here


class VocabParallelEmbedding(_ParallelLayer):
    """An embedding whose rows are split over the group: rank r holds rows
    ``[r*num_embeddings/n, (r+1)*num_embeddings/n)`` (shape [num_embeddings/n, embedding_dim]).

    Each rank looks up the ids that fall in its rows and gives zeros for the others; the
    all-reduce then completes every lookup, so all ranks return the whole [..., embedding_dim]
    result. Ids outside [0, num_embeddings) raise ValueError.
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, weight_attr: Any = None,
                 mp_group: Optional[dist.Group] = None, name: Optional[str] = None, *,
                 group: Optional[dist.Group] = None):
        super().__init__(mp_group, group, name)
        layer = type(self).__name__
        self.rows_per_rank = _block(num_embeddings, "num_embeddings", self.nranks, layer)
        _block(embedding_dim, "embedding_dim", 1, layer)
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.start = self.rank * self.rows_per_rank
        self.vocab_start_index, self.origin_num_embeddings = self.start, num_embeddings  # paddle's names
        self.weight = self._param([num_embeddings, embedding_dim], _weight_attr(weight_attr, layer),
                                  axis=0, default_initializer=XavierUniform())

    def forward(self, x: Any) -> Tensor:
        ids = _as_tensor(x).array
        if ids.dtype.kind not in "iu":
            raise TypeError(f"VocabParallelEmbedding: x must hold integer ids, got dtype {ids.dtype}")
        if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= self.num_embeddings):
            raise ValueError(f"VocabParallelEmbedding: x holds ids in [{int(ids.min())}, "
                             f"{int(ids.max())}]; they must lie in [0, {self.num_embeddings})")
        return _mp_allreduce(rows_held(self.weight, ids, self.start), group=self.group)

    def extra_repr(self) -> str:
        return (f"{self.num_embeddings}, {self.embedding_dim} (rows {self.start}.."
                f"{self.start + self.rows_per_rank - 1} on rank {self.rank} of {self.nranks})")


class ParallelCrossEntropy(_ParallelLayer):
    """Softmax cross-entropy of logits split by class over the group (a ColumnParallelLinear's
    output with ``gather_output=False``): ``forward(input [..., V/n], label [...] or [..., 1])``
    gives each sample's loss [..., 1] (no reduction, as paddle's), 0 where the label is
    ``ignore_index``; the gradient reaches each rank's block of the logits."""

    def __init__(self, mp_group: Optional[dist.Group] = None, name: Optional[str] = None,
                 ignore_index: int = -100):
        super().__init__(mp_group, None, name)
        self.ignore_index = ignore_index

    def forward(self, input: Any, label: Any) -> Tensor:  # noqa: A002 - paddle's argument name
        return _c_softmax_with_cross_entropy(_as_tensor(input), _as_tensor(label), self.model_parallel_group,
                                             ignore_index=self.ignore_index)
