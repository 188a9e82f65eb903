"""fleet's collective mode: ``init`` (the groups of a dp × pp × sharding × mp job) and
``distributed_model`` / ``distributed_optimizer`` built from the parallel layer's pieces, the
pipeline (``meta_parallel.PipelineParallel``) and the sharding package."""
from __future__ import annotations

import os
from typing import Any, List, Optional, Tuple

import numpy as np

import pycoll
import pycoll.distributed as dist
from pycoll._logging import logger
from pycoll.amp import GradScaler, decorate
from pycoll.distributed.fleet.declared_role import declare
from pycoll.distributed.fleet.gradient_merge import GradientMergeOptimizer
from pycoll.distributed.fleet.meta_optimizers import HybridParallelOptimizer
from pycoll.distributed.fleet.meta_parallel.pipeline_interleave import (PipelineParallelWithInterleave,
                                                                        PipelineParallelWithInterleaveFthenB,
                                                                        VPPFhenBInBalancedMemory)
from pycoll.distributed.fleet.meta_parallel.pipeline_parallel import (NoPipelineParallel, PipelineParallel,
                                                                   mark_fleet_optimizer)
from pycoll.distributed.fleet.meta_parallel.pp_layers import PipelineLayer
from pycoll.distributed.fleet.meta_parallel.segment_parallel import SegmentParallel
from pycoll.distributed.fleet.meta_parallel.sharding_parallel import ShardingParallel
from pycoll.distributed.fleet.meta_parallel.tensor_parallel import TensorParallel
from pycoll.distributed.fleet.role import Role
from pycoll.distributed.fleet.strategy import UNBUILT_DEGREES, DistributedStrategy
from pycoll.distributed.fleet.topology import AXIS_NAMES, CommunicateTopology, HybridCommunicateGroup
from pycoll.distributed.fleet.utils.log_util import set_log_level
from pycoll.distributed.sharding.group_sharded import STAGES, scaler_over, shard_model
from pycoll.parallel import DataParallel, get_rng_state_tracker
from pycoll.parallel.mp_ops import set_model_parallel_group
from pycoll.parallel.mp_random import MODEL_PARALLEL_RNG

# "strategy", "hcg" once init ran; "model" once distributed_model ran; "unbound": optimizers
# waiting for the sharded model
_state: dict = {}
_said_merging: list = []  # the gradient-merge warning, once per process


class UserDefinedRoleMaker:
    """paddle's role maker for collective mode: ``is_collective=True``; the ranks come from the
    launcher. ``current_id`` with ``worker_endpoints`` (or ``worker_num``) declares which worker
    this process is: fleet's worker queries answer with them (see ``declared_role``)."""

    def __init__(self, is_collective: bool = True, init_gloo: bool = False, **kwargs: Any):
        self.is_collective = is_collective
        self._current_id = kwargs.get("current_id")
        self._worker_endpoints = list(kwargs.get("worker_endpoints") or [])
        self._worker_num = kwargs.get("worker_num") or len(self._worker_endpoints)
        if self._current_id is not None and not 0 <= self._current_id < max(self._worker_num, 1) \
                and kwargs.get("role", Role.WORKER) == Role.WORKER:
            raise ValueError(f"UserDefinedRoleMaker: current_id={self._current_id} is not a worker of the "
                             f"{self._worker_num} declared (worker_endpoints / worker_num)")

    def declared(self) -> Optional[Tuple[int, int, List[str]]]:
        """(worker index, worker count, endpoints) as given, None where they were not given."""
        if self._current_id is None or not self._worker_num:
            return None
        return int(self._current_id), int(self._worker_num), self._worker_endpoints


class PaddleCloudRoleMaker(UserDefinedRoleMaker):
    """paddle's role maker that reads the launcher's environment (pycoll's always does)."""


def init(role_maker: Any = None, is_collective: bool = False,
         strategy: Optional[DistributedStrategy] = None, log_level: Any = None) -> None:
    """Start collective mode: the parallel environment, then the dp × pp × sharding × mp groups
    the strategy's ``hybrid_configs`` ask for, the ranks laid out in its ``hybrid_parallel_order``
    (their product must be the world size; dp fills what the others leave when it is not given
    or negative — an explicit ``dp_degree=1`` stays 1, so on more ranks than mp × pp × sharding
    it fails the product check, as paddle's topology assertion does; paddle's leaves ``sharding_degree`` out there, so ``{"sharding_degree": 2}`` alone on 2
    ranks fails its topology check where pycoll makes dp 1; the degrees pycoll has not built,
    ``strategy.UNBUILT_DEGREES``, must stay 1). The model-parallel layers made without a group
    use the model-parallel group from then on (one rank when ``mp_degree`` is 1: whole layers).
    With ``mp_degree`` > 1 the ranks are seeded as paddle's are
    (``model_parallel_random_seed(tensor_parallel_configs["tensor_init_seed"])``; -1, the
    default, draws a global seed per rank at random, so replicated weights differ until
    ``distributed_model`` broadcasts them). As
    paddle's dygraph ``fleet.init`` does, this is collective mode whatever ``is_collective``
    says, unless the environment describes a parameter-server job
    (``TRAINING_ROLE``/``PADDLE_PSERVERS_IP_PORT_LIST``), which pycoll refuses. ``log_level``
    (a name or a number) sets pycoll's logger's level; left None (paddle's default is its fleet
    logger's "INFO"), the level stays as ``PYCOLL_LOG_LEVEL`` set it. Called again, as paddle's
    does it keeps the groups of the first call (with a warning) and takes the new ``strategy``
    for every other setting."""
    collective = is_collective or bool(getattr(role_maker, "is_collective", False))
    if not collective and _parameter_server_job():
        raise ValueError("fleet.init: this environment describes a parameter-server job (TRAINING_ROLE="
                         f"{os.environ.get('TRAINING_ROLE')!r}); pycoll runs fleet's collective mode "
                         "only: launch with pycoll.launch and call fleet.init(is_collective=True)")
    if log_level is not None:
        set_log_level(log_level)
    strategy = strategy if strategy is not None else DistributedStrategy()
    if not isinstance(strategy, DistributedStrategy):
        raise TypeError(f"fleet.init: strategy must be a DistributedStrategy, got {type(strategy).__name__}")
    declare(role_maker)
    if "hcg" in _state:  # paddle's: the first topology stays, the new strategy's settings replace the first's
        logger.warning("fleet.init: The dygraph hybrid parallel environment has been initialized: keeping "
                       "its groups (%s); this strategy's hybrid_configs are not applied, its other settings "
                       "replace the first strategy's", _degrees_text(_state["hcg"]))
        _state["strategy"] = strategy
        return
    dist.init_parallel_env()
    world = dist.get_world_size()
    degrees = strategy.degrees()
    strategy.check_axis_order()
    for key, what in UNBUILT_DEGREES.items():
        if degrees[key] > 1:
            raise ValueError(f"fleet.init: hybrid_configs {key}={degrees[key]}: pycoll has no {what} (not "
                             f"built); leave {key} at 1 and use dp_degree, pp_degree, sharding_degree, sep_degree "
                             f"and mp_degree")
    mp, pp, sharding, sep = (max(degrees[key], 1) for key in ("mp_degree", "pp_degree", "sharding_degree",
                                                              "sep_degree"))
    if pp > 1 and sharding > 1:
        raise ValueError(f"fleet.init: hybrid_configs pp_degree={pp} with sharding_degree={sharding}: pycoll's "
                         f"pipeline does not shard; use dp_degree beside pp_degree, or sharding without it")
    if sep > 1 and (pp > 1 or sharding > 1):
        raise ValueError(f"fleet.init: hybrid_configs sep_degree={sep} with "
                         f"{'pp_degree=' + str(pp) if pp > 1 else 'sharding_degree=' + str(sharding)}: pycoll's sep "
                         f"parallelism runs beside dp_degree and mp_degree only (its gradients are summed over the "
                         f"dp x sep group, which the pipeline and sharding do not do)")
    stage = strategy.sharding_configs["stage"]
    if stage not in STAGES:
        raise ValueError(f"fleet.init: sharding_configs stage={stage!r}; it must be 1, 2 or 3")
    dp, rest = degrees["dp_degree"], mp * pp * sharding * sep
    if dp < 0:  # -1 (paddle's default): what the others leave
        if world % rest:
            raise ValueError(f"fleet.init: hybrid_configs pp_degree={pp} x sharding_degree={sharding} x "
                             f"sep_degree={sep} x mp_degree={mp} = {rest} does not divide the job's {world} ranks "
                             f"(dp_degree={dp} takes what they leave)")
        dp = world // rest
    dp = max(dp, 1)  # paddle's: 0 is 1; a given degree is kept, so the product check below may refuse it
    if dp * rest != world:
        raise ValueError(f"fleet.init: hybrid_configs dp_degree={dp} x pp_degree={pp} x sharding_degree={sharding} "
                         f"x sep_degree={sep} x mp_degree={mp} = {dp * rest}, but the job has {world} ranks; "
                         f"their product must be the world size")
    sizes = {"dp": dp, "pp": pp, "sharding": sharding, "sep": sep, "cp": 1, "mp": mp}
    order = strategy.hybrid_parallel_order
    topology = CommunicateTopology([AXIS_NAMES[a] for a in order], [sizes[a] for a in order])
    hcg = HybridCommunicateGroup(topology, strategy.hybrid_configs)
    set_model_parallel_group(hcg.get_model_parallel_group())  # one rank when mp is 1: the layers stay whole
    _state.clear()
    _state.update(strategy=strategy, hcg=hcg)
    if mp > 1:  # paddle's: the model-parallel RNG tracker, from tensor_init_seed (-1: a random seed)
        seed = strategy.tensor_parallel_configs["tensor_init_seed"]
        model_parallel_random_seed(None if seed == -1 else seed)


def _degrees_text(hcg: HybridCommunicateGroup) -> str:
    return (f"dp_degree={hcg.get_data_parallel_world_size()}, pp_degree={hcg.get_pipe_parallel_world_size()}, "
            f"sharding_degree={hcg.get_sharding_parallel_world_size()}, "
            f"sep_degree={hcg.get_sep_parallel_world_size()}, "
            f"mp_degree={hcg.get_model_parallel_world_size()}")


def _parameter_server_job() -> bool:
    return (os.environ.get("TRAINING_ROLE", "TRAINER") in ("PSERVER", "HETER_TRAINER")
            or bool(os.environ.get("PADDLE_PSERVERS_IP_PORT_LIST")))


def _started(fn: str) -> dict:
    if not _state:
        raise RuntimeError(f"fleet.{fn}: call fleet.init(is_collective=True) first")
    return _state


def get_hybrid_communicate_group() -> HybridCommunicateGroup:
    return hybrid_communicate_group_for("get_hybrid_communicate_group")


def hybrid_communicate_group_for(fn: str) -> HybridCommunicateGroup:
    """The job's groups, for ``fleet.<fn>``: RuntimeError naming it before ``fleet.init``."""
    return _started(fn)["hcg"]


def get_hybrid_parallel_topology() -> CommunicateTopology:
    return _started("get_hybrid_parallel_topology")["hcg"].topology()


def distributed_model(model: Any) -> Any:
    """``model`` under DataParallel over the data-parallel group (buckets of the strategy's
    ``fuse_grad_size_in_MB``) or, with a sharding degree, paddle's ``meta_parallel.ShardingParallel``
    (``model`` its ``_layers``) sharded over the sharding group at the strategy's stage (1/2/3:
    group_sharded_parallel's os, os_g, p_g_os); as it is when there is no data parallelism. With ``mp_degree`` > 1 it becomes paddle's
    ``meta_parallel.TensorParallel`` (``model`` its ``_layers``): the replicated parameters
    broadcast from the model-parallel group's first rank, the inputs too at each forward, and
    forward runs through that DataParallel or sharded model. Its model-parallel layers already
    use the model-parallel group (fleet.init made it their default; of one rank, so the layers
    are whole, when ``mp_degree`` is 1). With both data and sharding
    degrees, gradients are averaged over both (the sharding model's ``dp_group``). With pipeline
    stages, ``model`` must be a ``PipelineLayer``: it becomes a ``PipelineParallel`` (whose
    ``train_batch`` averages the gradients over the data-parallel group itself), or, built with
    ``num_virtual_pipeline_stages`` > 1, a ``PipelineParallelWithInterleave`` (``accumulate_steps``
    >= 2 x ``pp_degree``) or ``PipelineParallelWithInterleaveFthenB`` (fewer), as paddle picks. A
    ``PipelineLayer`` with ``pp_degree`` 1 (and no sharding) becomes paddle's
    ``NoPipelineParallel`` (as in paddle a ``MetaParallelBase`` beside ``PipelineParallel``, not
    one of its kind), on any number of ranks: ``train_batch`` / ``eval_batch`` run its micro-batches
    as paddle's do
    (paddle's averages the data-parallel gradients through the optimizer only beside model
    parallelism; with data parallelism alone its ranks' gradients stay apart, pycoll's are
    averaged). As in paddle,
    with ``strategy.amp`` on more than one rank and ``amp_configs`` asking for pure float16 or
    bfloat16 (``use_pure_fp16`` / ``use_pure_bf16``), the model is first
    ``pycoll.amp.decorate``-d at level O2 in that dtype (float16 when both are asked)."""
    state = _started("distributed_model")
    hcg, strategy = state["hcg"], state["strategy"]
    amp = strategy.amp_configs
    if strategy.amp and dist.get_world_size() > 1 and (amp["use_pure_fp16"] or amp["use_pure_bf16"]):
        model = decorate(models=model, optimizers=None, level="O2", master_weight=None, save_dtype=None,
                         dtype="float16" if amp["use_pure_fp16"] else "bfloat16")
    one_stage = isinstance(model, PipelineLayer) and hcg.get_sharding_parallel_world_size() == 1
    if hcg.get_pipe_parallel_world_size() > 1 or one_stage:
        if not isinstance(model, PipelineLayer):
            raise TypeError(f"fleet.distributed_model: with pp_degree={hcg.get_pipe_parallel_world_size()} the "
                            f"model must be a meta_parallel.PipelineLayer, got {type(model).__name__}")
        wrapped = bound = _pipeline(model, hcg, strategy)
    elif hcg.get_model_parallel_world_size() > 1:
        wrapped = TensorParallel(model, hcg, strategy, grad_sync=lambda layers: _averaging(layers, hcg, strategy))
        bound = wrapped._grad_sync if wrapped._grad_sync is not None else wrapped
    elif hcg.get_sep_parallel_world_size() > 1:  # paddle's SEGMENT_PARALLEL mode: the optimizer's step syncs
        wrapped = bound = SegmentParallel(model, hcg, strategy)
    elif hcg.get_sharding_parallel_world_size() > 1:  # paddle's SHARDING_PARALLEL mode
        wrapped = ShardingParallel(model, hcg, strategy)
        bound = wrapped._sharded
    else:
        wrapped = bound = _averaging(model, hcg, strategy)
        if wrapped is None:
            return model
    state["model"] = bound  # what a sharding optimizer steps the pieces of
    for optimizer in state.pop("unbound", []):  # distributed_optimizer came first
        optimizer.bind(bound)
    return wrapped


def _pipeline(model: PipelineLayer, hcg: HybridCommunicateGroup, strategy: DistributedStrategy) -> PipelineParallel:
    """paddle's choice of pipeline: 1F1B without virtual stages; with them the interleaved 1F1B
    when ``accumulate_steps`` >= 2 x ``pp_degree``, FthenB when it is at least ``pp_degree``
    (its balanced-memory order with ``pp_configs.best_unbalanced_scheduler``)."""
    if model.get_num_virtual_stages() == 1:
        if hcg.get_pipe_parallel_world_size() == 1:
            return NoPipelineParallel(model, strategy, hcg)
        return PipelineParallel(model, hcg, strategy)
    steps, stages = strategy.pipeline_configs["accumulate_steps"], hcg.get_pipe_parallel_world_size()
    if isinstance(steps, int) and not isinstance(steps, bool) and steps < 2 * stages:
        if stages <= steps and strategy.hybrid_configs["pp_configs"].best_unbalanced_scheduler:
            return VPPFhenBInBalancedMemory(model, hcg, strategy)
        return PipelineParallelWithInterleaveFthenB(model, hcg, strategy)  # which refuses fewer than pp_degree
    return PipelineParallelWithInterleave(model, hcg, strategy)


def _averaging(model: Any, hcg: HybridCommunicateGroup, strategy: DistributedStrategy) -> Any:
    """``model`` sharded over the sharding group at the strategy's stage (gradients averaged over
    the data-parallel group too), else under DataParallel over the data-parallel group; None when
    neither degree is above 1."""
    if hcg.get_sharding_parallel_world_size() > 1:
        level = STAGES[strategy.sharding_configs["stage"]]
        return shard_model(model, level, hcg.get_sharding_parallel_group(), strategy.fuse_grad_size_in_MB,
                           dp_group=hcg.get_data_parallel_group())
    if hcg.get_data_parallel_world_size() > 1:
        return DataParallel(model, comm_buffer_size=strategy.fuse_grad_size_in_MB,
                            last_comm_buffer_size=strategy.last_comm_group_size_MB,
                            find_unused_parameters=strategy.find_unused_parameters,
                            group=hcg.get_data_parallel_group())
    return None


def distributed_optimizer(optimizer: Any, strategy: Optional[DistributedStrategy] = None) -> Any:
    """``optimizer`` with the strategy applied. On more than one rank it becomes paddle's
    ``HybridParallelOptimizer`` (``_inner_opt``: the optimizer, or with a sharding degree the
    sharding optimizer over it, each rank of the sharding group updating its share of the
    parameters as group_sharded_parallel's does — before or after ``distributed_model``, as in
    paddle); on one, it stays itself. DataParallel has averaged the gradients it steps with.
    With model parallelism its ``grad_clip`` norms span the model-parallel group, and with
    pipeline stages a global norm spans every stage, shared weights counted once (paddle's
    hybrid-parallel clip). With ``gradient_merge`` it updates every ``k_steps`` steps (where
    paddle's dygraph fleet ignores the setting: said once). What it returns is marked as
    fleet's: a pipeline's ``train_batch`` takes no other optimizer."""
    state = _started("distributed_optimizer")
    if not (hasattr(optimizer, "step") and hasattr(optimizer, "_parameter_list")):
        raise TypeError(f"fleet.distributed_optimizer: optimizer must be a pycoll optimizer, got "
                        f"{type(optimizer).__name__}")
    strategy = strategy if strategy is not None else state["strategy"]
    if dist.get_world_size() > 1:
        optimizer = HybridParallelOptimizer(optimizer, state["hcg"], strategy)
        if "model" in state:
            optimizer.bind(state["model"])
        if optimizer.needs_model:
            state.setdefault("unbound", []).append(optimizer)
    if strategy.gradient_merge:
        configs = strategy.gradient_merge_configs
        optimizer = GradientMergeOptimizer(optimizer, configs["k_steps"], configs["avg"])
        if not _said_merging:
            _said_merging.append(True)
            logger.warning("fleet.distributed_optimizer: strategy.gradient_merge is on: pycoll merges the gradients "
                           "of k_steps=%s steps into one update, where paddle's dygraph fleet ignores the setting "
                           "and updates every step", configs["k_steps"])
    return mark_fleet_optimizer(optimizer)  # what PipelineParallel.train_batch asks for


def distributed_scaler(scaler: Any) -> Any:
    """``scaler`` (a ``pycoll.amp.GradScaler``) made to skip a step on every rank when any rank
    finds inf or NaN in its gradients (paddle's: needed where ranks hold different gradients,
    with model parallelism or sharding)."""
    _started("distributed_scaler")
    if not isinstance(scaler, GradScaler):
        raise TypeError(f"fleet.distributed_scaler: scaler must be a pycoll.amp.GradScaler, got "
                        f"{type(scaler).__name__}")
    return scaler_over(scaler, None)


def model_parallel_random_seed(seed: Optional[int] = None) -> None:
    """Seed the ranks as paddle does after ``fleet.init``: the global generator with ``seed``
    (alike on every rank, so replicated draws agree) and the tracker's ``model_parallel_rng``
    state with ``seed + 1 + mp_rank * pp_size + pp_rank`` (different across the model-parallel
    group). Without ``seed``, a random one (which ranks then do not share)."""
    hcg = get_hybrid_communicate_group()
    global_seed = seed if seed else int(np.random.randint(0, 10000))
    pp_size, pp_rank = hcg.get_pipe_parallel_world_size(), hcg.get_stage_id()
    local_seed = global_seed + 1 + hcg.get_model_parallel_rank() * pp_size + pp_rank
    tracker = get_rng_state_tracker()
    tracker.reset()
    tracker.add(MODEL_PARALLEL_RNG, local_seed)
    pycoll.seed(global_seed)
