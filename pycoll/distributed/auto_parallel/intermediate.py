"""paddle's intermediate API: ``dist.parallelize(model, optimizer, mesh, config)`` and the plans
of its ``mp_config`` (``ColWiseParallel``, ``RowWiseParallel``, ``ConvParallel``,
``PrepareLayerInput``, ``PrepareLayerOutput``).

It is a composition of the basic API: each plan shards the parameters of the layers whose name
matches its key (a regular expression over ``named_sublayers`` names; a key ending in
``.weight`` / ``.bias`` names one parameter) with ``shard_tensor`` along the mesh's ``"mp"``
dimension; ``shard_layer`` then replicates every other parameter and gives the sharded Linears
their column- / row-parallel forward (``layers.py``); ``dp_config``'s ``sharding_level`` 0-3
becomes ``shard_optimizer`` with ``ShardingStage1-3`` over ``"dp"``. The batch is split over
``"dp"`` by the user (``shard_dataloader``), as in paddle.

pycoll has no sequence, context or pipeline parallelism: the sequence- and context-parallel plans
are left out with a warning (the values are the same without them), ``pp_config`` / ``cp_config``
are refused by name.
"""
from __future__ import annotations

import enum
import re
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from pycoll.distributed.auto_parallel.dtensor import is_dist_tensor, reshard, shard_tensor
from pycoll.distributed.auto_parallel.layers import shard_layer
from pycoll.distributed.auto_parallel.mesh import ProcessMesh, get_mesh
from pycoll.distributed.auto_parallel.optimizer import (ShardingStage1, ShardingStage2, ShardingStage3,
                                                        ShardOptimizer, shard_optimizer)
from pycoll.distributed.auto_parallel.placements import Replicate, Shard
from pycoll._logging import logger
from pycoll.nn import Conv2D, Embedding, Layer, Linear
from pycoll.nn._sliding import parse_padding


class PlanBase:
    """A plan of ``mp_config["parallelize_plan"]``: ``apply`` acts on one matched layer."""

    def apply(self, layer: Layer, mesh: ProcessMesh, names: List[str]) -> None:
        """The sequence- and context-parallel plans: left out, said once per plan class (they split
        activations along the sequence to save memory; the model computes the same without them)."""
        if type(self) not in _LEFT_OUT:
            _LEFT_OUT.add(type(self))
            logger.warning("parallelize: %s left out: pycoll has no sequence or context parallelism (the model "
                           "computes the same values; its activations are not split along the sequence)",
                           type(self).__name__)


_LEFT_OUT: set = set()  # the plan classes parallelize has said it leaves out


class _SplitWeight(PlanBase):
    """Shard a layer's ``weight`` (2-d) and ``bias`` (1-d) along ``"mp"``, or the parameters named."""

    weight_dim = 0
    bias_dim: Optional[int] = None

    def apply(self, layer: Layer, mesh: ProcessMesh, names: List[str]) -> None:
        axis = _mp_axis(mesh)
        if not isinstance(layer, (Linear, Embedding)) and not names:
            logger.warning("%s is made for Linear and Embedding layers; on a %s it splits its weight and bias, "
                           "if it has them (paddle's rule)", type(self).__name__, type(layer).__name__)
        for name in names or ["weight", "bias"]:
            param = getattr(layer, name, None)
            if param is None or is_dist_tensor(param):
                continue
            dim = self.weight_dim if len(param.shape) == 2 else self.bias_dim
            if len(param.shape) not in (1, 2):
                raise ValueError(f"{type(self).__name__}: {name} has shape {param.shape}; it needs 1 or 2 dims")
            placements = [Replicate()] * mesh.ndim
            if dim is not None:
                placements[axis] = Shard(dim)
            setattr(layer, name, shard_tensor(param, mesh, placements))


class ColWiseParallel(_SplitWeight):
    """Split a Linear's output columns over ``"mp"`` (weight Shard(1), bias Shard(0)), or an
    Embedding's embedding dimension (weight Shard(1)). pycoll's column-parallel Linear returns
    its whole output: ``gather_output`` changes no value."""

    weight_dim, bias_dim = 1, 0

    def __init__(self, gather_output: bool = False):
        self.gather_output = bool(gather_output)


class RowWiseParallel(_SplitWeight):
    """Split a Linear's input rows over ``"mp"`` (weight Shard(0), bias Replicate); its partial
    products are all-reduced. On an Embedding, its vocabulary (weight Shard(0)): the lookup
    follows the placement rules. ``is_input_parallel`` changes no value (pycoll splits a whole
    input)."""

    weight_dim, bias_dim = 0, None

    def __init__(self, is_input_parallel: bool = True):
        self.is_input_parallel = bool(is_input_parallel)


class ConvParallel(PlanBase):
    """Split a ``Conv2D``'s input along its width over ``"mp"`` (paddle's spatial parallelism),
    where paddle's ring convolution can compute on width pieces: dilation 1 and an input width
    divisible by the "mp" size, and either no width padding with stride equal to the kernel
    width (the width divisible by the stride) or width padding with stride 1 and a kernel at
    most twice the width wide; other inputs pass as they are, as paddle's. pycoll's convolution
    has no halo exchange: it makes the width whole again before computing (an all-gather), so
    the values are paddle's but the activation memory is not divided."""

    @staticmethod
    def _is_supported(input_size: Sequence[int], kernel_size: Sequence[int], stride: Sequence[int],
                      width_padded: bool, dilation: Sequence[int], data_format: str, mp_group_size: int) -> bool:
        """Whether paddle's rules let an input of ``input_size`` be split along its width."""
        if data_format not in ("NCHW", "NHWC"):
            return False
        width = input_size[3 if data_format == "NCHW" else 2]
        kernel_w, stride_w = kernel_size[3], stride[1]
        if width % mp_group_size or dilation[1] != 1:
            return False
        if not width_padded:
            return width % stride_w == 0 and stride_w == kernel_w
        return stride_w == 1 and kernel_w // 2 <= width

    def apply(self, layer: Layer, mesh: ProcessMesh, names: List[str]) -> None:
        if not isinstance(layer, Conv2D):
            raise ValueError(f"ConvParallel on a {type(layer).__name__}: it splits a Conv2D's input")
        axis = _mp_axis(mesh)
        pads = parse_padding(layer._padding, 2, layer._data_format == "NHWC", "ConvParallel")
        width_padded = pads is None or pads[1] != (0, 0)  # 'SAME' pads by the input's size
        width_dim = 3 if layer._data_format == "NCHW" else 2

        def split_width(sublayer: Layer, inputs: Tuple[Any, ...]) -> Optional[Tuple[Any, ...]]:
            x = inputs[0]
            if not ConvParallel._is_supported(list(x.shape), list(layer.weight.shape), layer._stride, width_padded,
                                              layer._dilation, layer._data_format, mesh.get_dim_size("mp")):
                return None
            placements = list(x.placements) if is_dist_tensor(x) else [Replicate()] * mesh.ndim
            if placements[axis] == Shard(width_dim):
                return None
            placements[axis] = Shard(width_dim)
            x = reshard(x, mesh, placements) if is_dist_tensor(x) else shard_tensor(x, mesh, placements)
            return (x, *inputs[1:])

        layer.register_forward_pre_hook(split_width)


class _Hook(PlanBase):
    def __init__(self, fn: Optional[Callable[..., Callable[..., Any]]] = None):
        if not callable(fn):
            raise TypeError(f"{type(self).__name__}: fn must be a callable taking process_mesh and returning "
                            f"a hook, got {fn!r}")
        self.fn = fn


class PrepareLayerInput(_Hook):
    """``fn(process_mesh=mesh)`` returns a forward pre-hook for the matched layer."""

    def apply(self, layer: Layer, mesh: ProcessMesh, names: List[str]) -> None:
        layer.register_forward_pre_hook(self.fn(process_mesh=mesh))


class PrepareLayerOutput(_Hook):
    """``fn(process_mesh=mesh)`` returns a forward post-hook for the matched layer."""

    def apply(self, layer: Layer, mesh: ProcessMesh, names: List[str]) -> None:
        layer.register_forward_post_hook(self.fn(process_mesh=mesh))


class SequenceParallelBegin(PlanBase):
    def __init__(self, need_transpose: bool = True):
        self.need_transpose = need_transpose


class SequenceParallelEnd(SequenceParallelBegin):
    pass


class SequenceParallelEnable(PlanBase):
    pass


class SequenceParallelDisable(SequenceParallelBegin):
    pass


class ContextParallel(PlanBase):
    def __init__(self, backend: str = "p2p"):
        self.backend = backend


class PrepareContextParallel(ContextParallel):
    pass


class SplitPoint(enum.Enum):
    """Where ``pp_config``'s ``split_spec`` cuts the model (pycoll has no pipeline parallelism)."""
    BEGINNING = 0
    END = 1


def _mp_axis(mesh: ProcessMesh) -> int:
    if "mp" not in mesh.dim_names:
        raise ValueError(f"parallelize: mp_config needs a mesh dimension named 'mp'; the mesh has {mesh.dim_names}")
    return mesh.dim_names.index("mp")


def _matches(plan_map: Dict[str, Any], layer: Layer, name: str) -> List[Tuple[List[PlanBase], List[str]]]:
    """The plans whose key matches sublayer ``name`` (paddle's rule), each with the parameter it
    names (empty: the layer's weight and bias)."""
    found = []
    for key, plans in plan_map.items():
        names: List[str] = []
        last = key.rsplit(".", 1)[-1]
        if "." in key and getattr(layer, last, None) is not None and last in dict(
                layer.named_parameters(include_sublayers=False)):
            key, names = key[:-len(last) - 1], [last]
        if key == name or re.fullmatch(key, name):
            found.append((list(plans) if isinstance(plans, (list, tuple)) else [plans], names))
    return found


_SECTION_KEYS = {"dp_config": ("sharding_level", "sharding_mesh_dim", "offload", "exclude_layer"),
                 "mp_config": ("parallelize_plan",), "pp_config": ("split_spec", "global_spec"),
                 "cp_config": ("parallelize_plan",)}
"""The keys paddle 3.3.1's parallelize reads in each section of its config."""


def parallelize(model: Layer, optimizer: Any = None, mesh: Optional[ProcessMesh] = None,
                config: Optional[Dict[str, Any]] = None) -> Tuple[Layer, Any]:
    """paddle's ``dist.parallelize`` (see the module's text): ``(model, optimizer)`` parallelized
    on ``mesh`` (default: ``set_mesh``'s). Without a mesh or a config both come back as they are."""
    if not isinstance(model, Layer):
        raise TypeError(f"parallelize: model must be a pycoll.nn.Layer, got {type(model).__name__}")
    if mesh is not None and not isinstance(mesh, ProcessMesh):
        raise TypeError(f"parallelize: mesh must be a dist.ProcessMesh or None, got {type(mesh).__name__}")
    if config is not None and not isinstance(config, dict):
        raise TypeError(f"parallelize: config must be a dict or None, got {type(config).__name__}")
    mesh = mesh or get_mesh()
    config = dict(config or {})
    unknown = sorted(set(config) - set(_SECTION_KEYS))
    if unknown:
        raise ValueError(f"parallelize: config has unknown keys {unknown}; it takes dp_config, mp_config, "
                         f"pp_config, cp_config")
    for section, value in config.items():
        if value is None:
            continue
        if not isinstance(value, dict):
            raise TypeError(f"parallelize: config[{section!r}] must be a dict or None, got {type(value).__name__}")
        strange = sorted(set(value) - set(_SECTION_KEYS[section]))
        if strange:
            raise ValueError(f"parallelize: config[{section!r}] has unknown keys {strange}; it takes "
                             f"{', '.join(_SECTION_KEYS[section])}")
    if mesh is None or not config:
        return model, optimizer
    for refused, what in (("pp_config", "pipeline"), ("cp_config", "context")):
        if config.get(refused):
            raise NotImplementedError(f"parallelize: {refused}: pycoll has no {what} parallelism; parallelize "
                                      f"over 'dp' and 'mp' without it")
    plan_map = (config.get("mp_config") or {}).get("parallelize_plan") or {}
    for key, plans in plan_map.items():
        for plan in plans if isinstance(plans, (list, tuple)) else [plans]:
            if not isinstance(plan, PlanBase):
                raise TypeError(f"parallelize: parallelize_plan[{key!r}] must be a plan (dist.ColWiseParallel(), "
                                f"...) or a list of plans, got {plan!r}")
    for name, layer in model.named_sublayers():
        for plans, names in _matches(plan_map, layer, name):
            for plan in plans:
                plan.apply(layer, mesh, names)
    shard_layer(model, mesh)  # every other parameter replicated; sharded Linears made parallel
    if optimizer is None:
        return model, None
    inner = optimizer._inner_opt if isinstance(optimizer, ShardOptimizer) else optimizer
    by_name = {p.name: p for p in model.parameters()}
    inner = inner.over([by_name.get(p.name, p) for p in inner._parameter_list])  # the new parameter objects
    return model, shard_optimizer(inner, _stage((config.get("dp_config") or {}).get("sharding_level", 0), mesh))


def _stage(level: Union[int, str], mesh: ProcessMesh) -> Optional[Any]:
    stages: Sequence[Any] = (None, ShardingStage1, ShardingStage2, ShardingStage3)
    if str(level) not in ("0", "1", "2", "3"):
        raise ValueError(f"parallelize: dp_config['sharding_level'] must be 0, 1, 2 or 3, got {level!r}")
    stage = stages[int(level)]
    if stage is None:
        return None
    if "dp" not in mesh.dim_names:
        raise ValueError(f"parallelize: sharding_level {level} needs a mesh dimension named 'dp'; the mesh has "
                         f"{mesh.dim_names}")
    return stage("dp", mesh)
