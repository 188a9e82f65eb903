"""paddle's ``PipelineParallel`` and ``NoPipelineParallel``, siblings under ``MetaParallelBase``
as in paddle (a ``NoPipelineParallel`` is no ``PipelineParallel``), both running the micro-batch
machinery of ``pipeline_base``. ``fleet.distributed_model`` gives a ``PipelineParallel`` for a
``PipelineLayer`` when ``pp_degree > 1`` (its ``train_batch`` runs the 1F1B schedule over the
stages) and a ``NoPipelineParallel`` when ``pp_degree`` is 1 (the micro-batches in turn). As
paddle's, ``PipelineParallel.train_batch`` takes only an optimizer that went through
``fleet.distributed_optimizer`` (its clip must see every stage's gradients), where
``NoPipelineParallel.train_batch`` takes any. A ``PipelineParallel`` runs paddle's hooks
(``pipeline_hooks``) at each micro-step; bubble hooks are not built.
"""
from __future__ import annotations

from typing import Any, Callable

from pycoll._logging import logger
from pycoll.distributed.fleet import topology as fleet_topology
from pycoll.distributed.fleet.meta_parallel.micro_batches import PipelineDatasetPreprocessor
from pycoll.distributed.fleet.meta_parallel.pipeline_base import _PipelineBase
from pycoll.distributed.fleet.meta_parallel.pipeline_hooks import (PipelineHook, PipelineParallelMicroStepLocations,
                                                                   pipeline_parallel_callbacks_,
                                                                   register_global_pipeline_parallel_hook)
from pycoll.distributed.fleet.meta_parallel.pp_layers import PipelineLayer

__all__ = ["NoPipelineParallel", "PipelineDatasetPreprocessor", "PipelineParallel",
           "PipelineParallelMicroStepLocations", "register_global_pipeline_parallel_hook"]

FLEET_OPTIMIZER = "_fleet_distributed_optimizer"  # set by fleet.distributed_optimizer on what it returns


def mark_fleet_optimizer(optimizer: Any) -> Any:
    """``optimizer`` marked as fleet's (``fleet.distributed_optimizer`` marks what it returns,
    the outermost wrapper, so a gradient-merge wrapper carries the mark)."""
    setattr(optimizer, FLEET_OPTIMIZER, True)
    return optimizer


def is_fleet_optimizer(optimizer: Any) -> bool:
    return bool(getattr(optimizer, FLEET_OPTIMIZER, False))


class PipelineParallel(_PipelineBase):
    """``layers`` (a ``PipelineLayer``) run as one stage of a pipeline of ``hcg``'s pipe group,
    with ``strategy.pipeline_configs``' ``micro_batch_size`` and ``accumulate_steps``, on the 1F1B
    order. ``hybrid_configs["pp_configs"]``' ``dp_comm_overlap`` / ``sharding_comm_overlap`` are
    checked as paddle checks them; pycoll averages the gradients after the schedule either way
    (the same values; the overlap is not built)."""

    def __init__(self, layers: PipelineLayer, hcg: Any, strategy: Any):
        if hcg is None:
            raise ValueError(f"{type(self).__name__}: hcg is None; give fleet.get_hybrid_communicate_group() "
                             f"(fleet.distributed_model does)")
        super().__init__(layers, hcg, strategy)
        pp_configs = strategy.hybrid_configs["pp_configs"]
        self._dp_comm_overlap = pp_configs.dp_comm_overlap
        self._sharding_comm_overlap = pp_configs.sharding_comm_overlap
        self._check_overlap()
        self.sharding_group = hcg.get_sharding_parallel_group()
        if strategy.pipeline_configs.get("schedule_mode", "1F1B") != "1F1B":
            logger.warning("PipelineParallel: pipeline_configs schedule_mode=%r runs as 1F1B, as paddle's dygraph "
                           "pipeline runs it (the losses and gradients are the same; 1F1B holds fewer "
                           "activations)", strategy.pipeline_configs["schedule_mode"])
        self.callbacks = pipeline_parallel_callbacks_
        steps = self._virtual_pp_world_size * self.accumulate_steps  # one forward and one backward each
        self.forward_hooks, self.backward_hooks, self.bubble_hooks = PipelineHook(), PipelineHook(), None
        self.forward_hooks.set_hooks_capacity(steps)
        self.backward_hooks.set_hooks_capacity(steps)
        self.user_hooks_enabled = True  # paddle's: the numbered hooks run in training only

    # ---- hooks (paddle's names) -------------------------------------------------------------
    def register_hook(self, location: PipelineParallelMicroStepLocations, hook: Callable[..., Any]) -> None:
        """``hook(**tensors)`` at ``location`` of every micro-step (paddle's global list)."""
        self.callbacks.register_hook(location, hook)

    def register_forward_pipeline_parallel_hook(self, location: int, hook: Callable[[int], Any]) -> None:
        """``hook(location)`` before the ``location``-th forward micro-step of each train batch."""
        self.forward_hooks.register_hook(location, hook)

    def register_backward_pipeline_parallel_hook(self, location: int, hook: Callable[[int], Any]) -> None:
        """``hook(location)`` before the ``location``-th backward micro-step of each train batch."""
        self.backward_hooks.register_hook(location, hook)

    def register_bubble_pipeline_parallel_hook(self, location: int, hook: Callable[[int], Any]) -> None:
        raise ValueError("Bubble hooks are not supported yet.")  # paddle's answer for its 1F1B pipeline

    @property
    def forward_pipeline_parallel_hook_capacity(self) -> int:
        return self.forward_hooks.hooks_capacity

    @property
    def backward_pipeline_parallel_hook_capacity(self) -> int:
        return self.backward_hooks.hooks_capacity

    @property
    def bubble_pipeline_parallel_hook_capacity(self) -> int:
        return 0

    def _at(self, location: PipelineParallelMicroStepLocations, **tensors: Any) -> None:
        if self.user_hooks_enabled and location is PipelineParallelMicroStepLocations.FORWARD_BEGIN:
            self.forward_hooks.run_hook()
        elif self.user_hooks_enabled and location is PipelineParallelMicroStepLocations.BACKWARD_BEGIN:
            self.backward_hooks.run_hook()
        self.callbacks.on_location(location, **tensors)

    def _forward_backward(self, data: Any, scaler: Any, return_micro_batch_loss: bool, optimizer_ok: bool) -> Any:
        self.user_hooks_enabled = True
        self.forward_hooks.reset_current_id()
        self.backward_hooks.reset_current_id()
        loss = super()._forward_backward(data, scaler, return_micro_batch_loss, optimizer_ok)
        for kind, hooks in (("forward", self.forward_hooks), ("backward", self.backward_hooks)):
            if hooks.current_id != hooks.hooks_capacity:
                raise RuntimeError(f"{type(self).__name__}: {kind} hooks status is not correct, current id is "
                                   f"{hooks.current_id}, expected id is {hooks.hooks_capacity}")
        return loss

    def _evaluate(self, data: Any, compute_loss: bool) -> Any:
        self.user_hooks_enabled = False
        return super()._evaluate(data, compute_loss)

    def _check_overlap(self) -> None:
        """paddle's checks of the pp_configs overlaps: each needs its group and several stages,
        and not both at once."""
        name, several = type(self).__name__, self.num_stages > 1
        if self._dp_comm_overlap and not (self.use_data_parallel and several):
            raise ValueError(f"{name}: pp_configs dp_comm_overlap=True needs data parallelism and pp_degree > 1; "
                             f"this job has dp {self.dp_group.nranks}, pp {self.num_stages}")
        if self._sharding_comm_overlap and not (self.use_sharding_parallel and several):
            raise ValueError(f"{name}: pp_configs sharding_comm_overlap=True needs sharding_degree > 1 and "
                             f"pp_degree > 1; this job has sharding {self._hcg.get_sharding_parallel_world_size()},"
                             f" pp {self.num_stages}")
        if self._dp_comm_overlap and self._sharding_comm_overlap:
            raise ValueError(f"{name}: pp_configs dp_comm_overlap and sharding_comm_overlap are both True; "
                             f"set at most one of them")

    def set_virtual_pipeline_rank(self, rank: int) -> None:
        self._virtual_pp_rank = rank

    def train_batch(self, data: Any, optimizer: Any, lr_scheduler: Any = None, scaler: Any = None,
                    loss_fn_idx: int = 0, return_micro_batch_loss: bool = False) -> Any:
        """One optimizer step over ``data`` (``[inputs, labels]`` of ``micro_batch_size x
        accumulate_steps`` rows, or an iterator giving ``accumulate_steps`` pairs ``[inputs,
        labels]``, one per micro-batch, as paddle's ``_wrap_data`` takes; the middle stages may
        pass None); returns the mean loss. ``optimizer`` must come from
        ``fleet.distributed_optimizer``. The stages agree before sending anything: where any of
        them refuses its data or its optimizer, or calls something else, every stage raises."""
        return self._train(data, optimizer, lr_scheduler, scaler, loss_fn_idx, return_micro_batch_loss,
                           is_fleet_optimizer(optimizer))

    def forward_backward_pipeline(self, data: Any, scaler: Any = None, static_scheduler: bool = False,
                                  return_micro_batch_loss: bool = False) -> Any:
        if static_scheduler:
            raise ValueError("PipelineParallel.forward_backward_pipeline: static_scheduler=True is not "
                             "built in pycoll; leave it False")
        return self._forward_backward(data, scaler, return_micro_batch_loss, True)

    def eval_batch(self, data: Any, compute_loss: bool = False, loss_fn_idx: int = 0,
                   return_host_tensor: bool = False) -> Any:
        """Forward only, in eval mode, over the micro-batches of ``data``: the mean loss on every
        stage with ``compute_loss``, else the list of this stage's outputs, one per micro-batch
        (the model's outputs on the last stage)."""
        self.loss_fn_idx = loss_fn_idx
        self._layers.eval()
        return self._evaluate(data, compute_loss)


class NoPipelineParallel(_PipelineBase):
    """paddle's wrapper of a ``PipelineLayer`` at ``pp_degree`` 1 (what ``fleet.distributed_model``
    returns for one): ``train_batch`` / ``eval_batch`` run the micro-batches in turn. paddle's
    argument order, ``strategy`` before ``hcg``; without ``hcg``, fleet's hybrid communicate group
    (the one ``fleet.init`` made), or none before ``fleet.init``: then this process is the whole
    job. Data-parallel gradients are averaged over the group's data-parallel ranks before the step
    (paddle's leaves that to the optimizer, which averages them beside model parallelism only)."""

    def __init__(self, layers: PipelineLayer, strategy: Any, hcg: Any = None):
        super().__init__(layers, fleet_topology._HYBRID_PARALLEL_GROUP if hcg is None else hcg, strategy)
        self._dp_comm_overlap = False  # paddle's: no overlap without stages
        self._sharding_comm_overlap = False

    def train_batch(self, data: Any, optimizer: Any, lr_scheduler: Any = None, scaler: Any = None,
                    loss_fn_idx: int = 0, return_micro_batch_loss: bool = False) -> Any:
        """One optimizer step over ``data`` (as ``PipelineParallel.train_batch`` reads it); returns
        the mean loss. Any optimizer, as paddle's (``fleet.distributed_optimizer``'s or a plain one)."""
        return self._train(data, optimizer, lr_scheduler, scaler, loss_fn_idx, return_micro_batch_loss, True)

    def forward_backward_pipeline(self, data: Any, scaler: Any = None, return_micro_batch_loss: bool = False) -> Any:
        return self._forward_backward(data, scaler, return_micro_batch_loss, True)

    def eval_batch(self, data: Any, compute_loss: bool = False, loss_fn_idx: int = 0) -> Any:
        """The mean loss over the micro-batches of ``data``, forward only: as paddle's, whatever
        ``compute_loss`` says, and in the mode the layers are in (paddle's leaves it)."""
        self.loss_fn_idx = loss_fn_idx
        return self._evaluate(data, compute_loss=True)
