"""What paddle's ``PipelineParallel`` and ``NoPipelineParallel`` share, kept once here: running
the micro-batches of a batch through one stage of a pipeline (a ``NoPipelineParallel`` is a
pipeline of one stage, whose 1F1B order is one forward and one backward per micro-batch in
turn), the losses, the start from the data-parallel group's first rank and the optimizer step.
Paddle's two classes are siblings under ``MetaParallelBase``, so a script's
``isinstance(model, PipelineParallel)`` is false for a one-stage model; this private base keeps
that so. It is no paddle class: scripts name the two in ``meta_parallel``.

The 1F1B order: each stage runs as many forwards ahead as there are stages after it, then
alternates one forward and one backward. The loss of each micro-batch is divided by
``accumulate_steps`` (with ``pp_configs.delay_scale_loss``, as in paddle, the gradients are
divided instead, before the step), so the gradients and the returned loss are means over the
batch; every stage gets that loss (the last stage's, broadcast). Gradients are averaged over the
data-parallel group before the step. Before a batch sends anything its stages agree on it
(``batch_agreement``), so a stage that refuses its data or its optimizer, or calls ``eval_batch``
while another calls ``train_batch``, makes every stage raise instead of some of them waiting.
"""
from __future__ import annotations

from typing import Any, List, Optional

import numpy as np

import pycoll.distributed as dist
from pycoll._graph import no_grad
from pycoll.autograd import backward
from pycoll.device import array_module
from pycoll.distributed.fleet.meta_parallel.batch_agreement import CALLS, agree
from pycoll.distributed.fleet.meta_parallel.meta_parallel_base import MetaParallelBase
from pycoll.distributed.fleet.meta_parallel.micro_batches import MicroBatches
from pycoll.distributed.fleet.meta_parallel.pipeline_hooks import PipelineParallelMicroStepLocations as Where
from pycoll.distributed.fleet.meta_parallel.pp_layers import PipelineLayer
from pycoll.distributed.fleet.meta_parallel.stage_p2p import DTYPES, StageLink, flatten, grads_of
from pycoll.dtypes import convert_dtype
from pycoll.parallel.fused import fused_allreduce_gradients
from pycoll.tensor import Tensor, wrap

_FAILED = -1  # the final loss's dtype code when the last stage could not compute it


class _PipelineBase(MetaParallelBase):
    """``layers`` (a ``PipelineLayer``) run as one stage of ``hcg``'s pipe group (the only stage
    where ``hcg`` is None), with ``strategy.pipeline_configs``' ``micro_batch_size`` and
    ``accumulate_steps`` and ``hybrid_configs["pp_configs"].delay_scale_loss``."""

    _runs_chunks = False  # the interleaved pipelines run a PipelineLayer's chunks

    def __init__(self, layers: PipelineLayer, hcg: Any, strategy: Any):
        name = type(self).__name__
        if not isinstance(layers, PipelineLayer):
            raise TypeError(f"{name}: layers must be a PipelineLayer, got {type(layers).__name__}")
        if (layers.get_num_virtual_stages() > 1) != self._runs_chunks:
            raise ValueError(f"{name}: layers has num_virtual_pipeline_stages={layers.get_num_virtual_stages()}; "
                             f"PipelineParallel and NoPipelineParallel run a PipelineLayer without virtual stages, "
                             f"PipelineParallelWithInterleave(FthenB) one with them (fleet.distributed_model picks)")
        super().__init__(layers, hcg, strategy)
        configs = strategy.pipeline_configs
        for key in ("micro_batch_size", "accumulate_steps"):
            value = configs[key]
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}: pipeline_configs {key}={value!r}; it must be an int >= 1")
        self.micro_batch_size = configs["micro_batch_size"]
        self.accumulate_steps = configs["accumulate_steps"]
        self._delay_scale_loss = strategy.hybrid_configs["pp_configs"].delay_scale_loss
        alone = hcg is None
        self.num_stages = 1 if alone else hcg.get_pipe_parallel_world_size()
        self.stage_id = 0 if alone else hcg.get_stage_id()
        self.global_rank = dist.get_rank() if alone else hcg.get_global_rank()
        self.pp_group = None if alone else hcg.get_pipe_parallel_group()
        self.dp_group = None if alone else hcg.get_data_parallel_group()
        self.use_data_parallel = not alone and hcg.get_data_parallel_world_size() > 1
        self.use_model_parallel = not alone and hcg.get_model_parallel_world_size() > 1
        self.use_sep_parallel = not alone and hcg.get_sep_parallel_world_size() > 1
        self.use_sharding_parallel = not alone and hcg.get_sharding_parallel_world_size() > 1
        self.use_moe_sharding_parallel = not alone and hcg.get_moe_sharding_parallel_world_size() > 1
        self._link = None if alone else StageLink(hcg)
        self.total_loss: Optional[List[List[Tensor]]] = None
        self.optimizer: Any = None
        self.lr_scheduler: Any = None
        self.scaler: Any = None
        self.loss_fn_idx = 0
        self._compute_loss = True
        self._batches = 0  # train_batch and eval_batch calls, which every stage must make alike
        self._virtual_pp_world_size = layers.get_num_virtual_stages()  # chunks on this stage
        self._virtual_pp_rank = 0  # the chunk running now
        self._start_alike()

    def _start_alike(self) -> None:
        """paddle's start: the replicated weights of a model-parallel stage from its group's
        first rank, then every weight from the data-parallel group's first rank."""
        with no_grad():
            if self.use_model_parallel:
                mp = self._hcg.get_model_parallel_group()
                for p in self._layers.parameters():
                    if not getattr(p, "is_distributed", False):
                        dist.broadcast(p, src=mp.ranks[0], group=mp)
            if self.use_data_parallel:
                for p in self._layers.parameters():
                    dist.broadcast(p, src=self.dp_group.ranks[0], group=self.dp_group)

    def is_pipeline_first_stage(self, ignore_virtual: bool = False) -> bool:
        """The first stage (and, unless ``ignore_virtual``, running its first chunk)."""
        return self.stage_id == 0 and (ignore_virtual or self._virtual_pp_rank == 0)

    def is_pipeline_last_stage(self, ignore_virtual: bool = False) -> bool:
        """The last stage (and, unless ``ignore_virtual``, running its last chunk)."""
        return self.stage_id == self.num_stages - 1 and (
            ignore_virtual or self._virtual_pp_rank == self._virtual_pp_world_size - 1)

    # ---- training ---------------------------------------------------------------------------
    def _train(self, data: Any, optimizer: Any, lr_scheduler: Any, scaler: Any, loss_fn_idx: int,
               return_micro_batch_loss: bool, optimizer_ok: bool) -> Any:
        """One optimizer step over ``data``; the mean loss (``optimizer_ok``: whether this stage's
        optimizer is one the pipeline takes, agreed on with the other stages)."""
        self.optimizer, self.lr_scheduler, self.loss_fn_idx = optimizer, lr_scheduler, loss_fn_idx
        self._layers.train()
        loss = self._forward_backward(data, scaler, return_micro_batch_loss, optimizer_ok)
        self._optimizer_step()
        return loss

    def _forward_backward(self, data: Any, scaler: Any, return_micro_batch_loss: bool, optimizer_ok: bool) -> Any:
        self.scaler = scaler
        self.total_loss = None
        micro = self._start_batch("train_batch", data, True, return_micro_batch_loss, scaler, optimizer_ok)
        self._run_schedule(micro)
        self._layers.allreduce_shared_weight_gradients()
        return self._broadcast_final_loss(return_micro_batch_loss)

    def _run_schedule(self, micro: Optional[MicroBatches]) -> None:
        """Every micro-batch forward and backward through this stage, in 1F1B order."""
        first, last, link = self.is_pipeline_first_stage(), self.is_pipeline_last_stage(), self._link
        startup = min(self.num_stages - self.stage_id - 1, self.accumulate_steps)
        steady = self.accumulate_steps - startup
        inputs: List[Any] = []
        outputs: List[Any] = []
        for step in range(startup):
            received = None if first else link.recv_forward()
            output = self._forward_step(received, micro, step, step)
            link.send_forward(output)  # a stage in the startup part is never the last
            inputs.append(received)
            outputs.append(output)
        received = None if first or steady == 0 else link.recv_forward()
        for i in range(steady):
            output = self._forward_step(received, micro, startup + i, startup + i)
            if not last:
                link.send_forward(output)
            inputs.append(received)
            outputs.append(output)
            oldest_in, oldest_out = inputs.pop(0), outputs.pop(0)
            grads_in = self._backward_step(oldest_in, oldest_out, None if last else link.recv_backward(oldest_out), i)
            if i < steady - 1 and not first:
                received = link.recv_forward()
            if not first:
                link.send_backward(grads_in)
        for i in range(startup):
            oldest_in, oldest_out = inputs.pop(0), outputs.pop(0)
            grads_in = self._backward_step(oldest_in, oldest_out, link.recv_backward(oldest_out), steady + i)
            if not first:
                link.send_backward(grads_in)

    def _forward_step(self, received: Any, micro: Optional[MicroBatches], step: int,
                      step_id: Optional[int] = None) -> Any:
        """This stage's forward of micro-batch ``step``; on the last stage (when computing losses)
        the loss to differentiate, divided by ``accumulate_steps`` (unless the scaling is delayed).
        ``step_id``: what the micro-step hooks are told (paddle's: None in eval_batch)."""
        x = micro.inputs(step) if self.is_pipeline_first_stage() else received
        self._at(Where.FORWARD_BEGIN, input_tensor=x, step_id=step_id)
        output = self._run_layers(x)
        self._at(Where.FORWARD_END, input_tensor=x, output_tensor=output, step_id=step_id)
        if not (self.is_pipeline_last_stage() and self._compute_loss):
            return output
        labels = micro.labels(step)
        chosen = None
        for idx, loss_fn in enumerate(self._layers._loss_fn):
            if loss_fn is None:
                continue
            loss = loss_fn(output, labels)
            if not isinstance(loss, Tensor):
                raise TypeError(f"{type(self).__name__}: loss_fn[{idx}] returned {type(loss).__name__}; it must "
                                f"return a Tensor")
            if self.accumulate_steps > 1 and not self._delay_scale_loss:
                loss = loss / self.accumulate_steps
            self.total_loss = self.total_loss or [[] for _ in self._layers._loss_fn]
            self.total_loss[idx].append(loss.detach())
            if idx == self.loss_fn_idx:
                chosen = loss
        return chosen

    def _run_layers(self, x: Any) -> Any:
        return self._layers.forward(x)

    def _backward_step(self, received: Any, output: Any, output_grads: Optional[List[Any]],
                       step_id: Optional[int] = None) -> List[Any]:
        """Backward through this stage for one micro-batch; the gradients of what it received."""
        grad_tensors = _as_received(output, output_grads)
        self._at(Where.BACKWARD_BEGIN, input_tensor=received, output_tensor=output, output_tensor_grad=grad_tensors,
                 step_id=step_id)
        if self.is_pipeline_last_stage():
            backward(self.scaler.scale(output) if self.scaler is not None else output)
        else:
            tensors = [t for t in flatten(output, "the stage's output") if not t.stop_gradient]
            if tensors:
                backward(tensors, [wrap(g) for g in output_grads])
        grads = grads_of(received)
        self._at(Where.BACKWARD_END, input_tensor=received, output_tensor=output,
                 input_tensor_grad=_as_received(received, grads), output_tensor_grad=grad_tensors, step_id=step_id)
        return grads

    def _at(self, location: Where, **tensors: Any) -> None:
        """A micro-step hook point; PipelineParallel runs paddle's hooks there (NoPipelineParallel,
        as paddle's, none)."""

    def _broadcast_final_loss(self, return_micro_batch_loss: bool = False) -> Any:
        """The last stage's loss on every stage: the sum of the divided micro-batch losses (their
        mean), or with ``return_micro_batch_loss`` the divided losses themselves (undivided when
        the scaling is delayed). On the last stage it has the loss's shape, elsewhere one value
        more ([1]), as paddle's."""
        losses = []
        for idx in range(len(self._layers._loss_fn)):
            if self.is_pipeline_last_stage(ignore_virtual=True):
                value = self._final_loss(idx, return_micro_batch_loss)
                if self.num_stages > 1:
                    self._send_final_loss(value)
            else:
                value = self._receive_final_loss(return_micro_batch_loss)
            losses.append(wrap(value))
        return losses[0] if len(losses) == 1 else losses

    def _final_loss(self, idx: int, return_micro_batch_loss: bool) -> Any:
        """Loss function ``idx``'s loss over the batch, as an array (on the last stage)."""
        if self.total_loss is None or not self.total_loss[idx]:
            raise RuntimeError(f"{type(self).__name__}: the last stage computed no loss")
        parts = [t.array for t in self.total_loss[idx]]
        if return_micro_batch_loss:
            return array_module(parts[0]).stack(parts)
        total = sum(parts[1:], parts[0])
        return total / self.accumulate_steps if self._delay_scale_loss else total

    def _send_final_loss(self, value: Any) -> None:
        """``value`` to the other stages; None tells them the last stage failed to compute it."""
        xp, src = self.pp_group.array_module, self._hcg.get_rank_from_stage(self.num_stages - 1)
        code = _FAILED if value is None else DTYPES.index(str(value.dtype))
        dist.broadcast(xp.asarray([code], np.int64), src=src, group=self.pp_group)
        if value is not None:
            dist.broadcast(xp.ascontiguousarray(value), src=src, group=self.pp_group)

    def _receive_final_loss(self, return_micro_batch_loss: bool) -> Any:
        xp, src = self.pp_group.array_module, self._hcg.get_rank_from_stage(self.num_stages - 1)
        sent = xp.zeros(1, np.int64)
        dist.broadcast(sent, src=src, group=self.pp_group)
        code = int(sent[0])  # one read back to the host
        if code == _FAILED:
            raise RuntimeError(f"{type(self).__name__}: the last stage (rank {src}) failed computing the loss of "
                               f"this batch; its own error says why")
        shape = [self.accumulate_steps] if return_micro_batch_loss else [1]
        value = xp.zeros(shape, convert_dtype(DTYPES[code]))
        dist.broadcast(value, src=src, group=self.pp_group)
        return value

    def _optimizer_step(self) -> None:
        if self._delay_scale_loss:
            self._scale_gradients(1.0 / self.accumulate_steps)
        if self.use_data_parallel:
            fused_allreduce_gradients(self._layers.parameters(), self._hcg)
        if self.scaler is not None:
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            self.optimizer.step()
        self.optimizer.clear_grad()
        if self.lr_scheduler is not None:
            self.lr_scheduler.step()

    def _scale_gradients(self, factor: float) -> None:
        """Every gradient (a parameter's ``main_grad`` where it has one) times ``factor``."""
        with no_grad():
            for p in self._layers.parameters():
                if getattr(p, "main_grad", None) is not None:
                    p.main_grad = p.main_grad.scale(factor)
                elif p.grad is not None:
                    p.grad = p.grad.scale(factor)

    # ---- evaluation -------------------------------------------------------------------------
    def _evaluate(self, data: Any, compute_loss: bool) -> Any:
        """Forward only, over the micro-batches of ``data``: the mean loss on every stage with
        ``compute_loss``, else the list of this stage's outputs, one per micro-batch."""
        self.total_loss = None
        saved, self._compute_loss = self._compute_loss, compute_loss
        try:
            micro = self._start_batch("eval_batch", data, compute_loss, False, None, True)
            with no_grad():
                try:
                    outputs = self._forward_only(micro)
                except Exception:
                    if compute_loss and self.num_stages > 1 and self.is_pipeline_last_stage(ignore_virtual=True):
                        self._send_final_loss(None)  # the other stages wait for the loss: they raise too
                    raise
            return self._broadcast_final_loss() if compute_loss else outputs
        finally:
            self._compute_loss = saved

    def _forward_only(self, micro: Optional[MicroBatches]) -> List[Any]:
        """Every micro-batch forward through this stage; its outputs, one per micro-batch. Where
        the last stage's forward or loss fails (labels of another shape, say), it still receives
        the rest of the micro-batches the stage before it sends, so that none is left queued for
        the next batch, and then raises."""
        outputs, failed = [], None
        for step in range(self.accumulate_steps):
            received = None if self.is_pipeline_first_stage() else self._link.recv_forward()
            if failed is not None:
                continue
            try:
                output = self._forward_step(received, micro, step, None)
            except Exception as exc:
                if self.is_pipeline_first_stage() or not self.is_pipeline_last_stage():
                    raise
                failed = exc
                continue
            if not self.is_pipeline_last_stage():
                self._link.send_forward(output)
            outputs.append(output)
        if failed is not None:
            raise failed
        return outputs

    # ---- checks -----------------------------------------------------------------------------
    def _start_batch(self, fn: str, data: Any, compute_loss: bool, return_micro_batch_loss: bool, scaler: Any,
                     optimizer_ok: bool) -> Optional[MicroBatches]:
        """This stage's micro-batches of ``data``, once every stage of the pipeline has agreed on
        the batch (``batch_agreement.agree``: each raises alike where they differ or one refused);
        a stage without a pipe group (no ``hcg``) is the whole pipeline and raises on its own."""
        self._batches += 1
        micro, refusal = None, None
        try:
            self._check_loss_fn(fn)
            if fn == "train_batch" and self.lr_scheduler is not None and not callable(
                    getattr(self.lr_scheduler, "step", None)):
                raise TypeError(f"{type(self).__name__}.train_batch: lr_scheduler must be an LRScheduler (with a "
                                f"step()) or None, got {type(self.lr_scheduler).__name__} {self.lr_scheduler!r}")
            micro = self._micro_batches(data, fn)
        except (ValueError, TypeError) as e:
            refusal = e
        if self.pp_group is None:
            if refusal is not None:
                raise refusal
            return micro
        call = {"call": CALLS.index(fn), "batch": self._batches, "accumulate_steps": self.accumulate_steps,
                "micro_batch_size": self.micro_batch_size, "compute_loss": int(bool(compute_loss)),
                "return_micro_batch_loss": int(bool(return_micro_batch_loss)), "scaler": int(scaler is not None)}
        agree(self.pp_group, self.stage_id, self.num_stages, call, refusal, optimizer_ok)
        return micro

    def _check_loss_fn(self, fn: str) -> None:
        loss_fn_idx, loss_fns = self.loss_fn_idx, self._layers._loss_fn
        if not isinstance(loss_fn_idx, int) or not 0 <= loss_fn_idx < len(loss_fns) or loss_fns[loss_fn_idx] is None:
            raise ValueError(f"{type(self).__name__}.{fn}: loss_fn_idx={loss_fn_idx!r}, but the PipelineLayer has no "
                             f"such loss_fn (give PipelineLayer(loss_fn=...))")

    def _micro_batches(self, data: Any, fn: str) -> Optional[MicroBatches]:
        """The stage's view of ``data``: the middle stages read none of it."""
        if not (self.is_pipeline_first_stage(ignore_virtual=True) or self.is_pipeline_last_stage(ignore_virtual=True)):
            return None
        return MicroBatches(data, self.micro_batch_size, self.accumulate_steps, fn)


def _as_received(activation: Any, grads: Optional[List[Any]]) -> Any:
    """Gradient arrays of an activation's tensors as paddle hands them to hooks: None (none
    sent: the last stage's output, the first stage's input), a Tensor for a Tensor, else a tuple."""
    if grads is None or activation is None:
        return None
    tensors = tuple(wrap(g) for g in grads)
    return tensors[0] if isinstance(activation, Tensor) and len(tensors) == 1 else tensors
