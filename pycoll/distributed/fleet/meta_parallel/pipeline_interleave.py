"""paddle's interleaved pipelines: what ``fleet.distributed_model`` gives for a ``PipelineLayer``
built with ``num_virtual_pipeline_stages`` v > 1. Each stage holds v chunks (chunk ``c`` of stage
``s`` is virtual stage ``c * pp_degree + s``), so a micro-batch goes round the ring of stages v
times forward and v times backward. ``PipelineParallelWithInterleave`` (``accumulate_steps`` at
least twice ``pp_degree``) runs paddle's interleaved 1F1B order, ``PipelineParallelWithInterleaveFthenB``
(``pp_degree <= accumulate_steps < 2 pp_degree``) every forward and then every backward
(``VPPFhenBInBalancedMemory``: with a 1F1B middle, fewer activations held); each
stage follows a program of work and messages (``interleave_schedule.programs``) that no pair of
blocking sends and receives can deadlock on. Everything else is ``PipelineParallel``'s: the
stages agree on each batch first, the loss of each micro-batch is divided by ``accumulate_steps``,
shared weights' gradients are summed over their stages, gradients averaged over the
data-parallel group, and every stage gets the last stage's loss.

Paddle's own classes also refuse ``pp_degree`` 2 (``num_stages > 2``); pycoll's run on 2 stages
too. Paddle's FthenB asks ``accumulate_steps`` to be a multiple of ``pp_degree``; pycoll's order
needs no such thing.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

from pycoll.distributed.fleet.meta_parallel.interleave_schedule import (Action, Work, balanced_memory_order,
                                                                        fthenb_order, interleaved_order, programs)
from pycoll.distributed.fleet.meta_parallel.micro_batches import MicroBatches
from pycoll.distributed.fleet.meta_parallel.pipeline_parallel import PipelineParallel
from pycoll.distributed.fleet.meta_parallel.pp_layers import PipelineLayer


class PipelineParallelWithInterleave(PipelineParallel):
    """``layers`` (a ``PipelineLayer`` with virtual stages) run as one stage of ``hcg``'s pipeline
    on paddle's interleaved 1F1B order. ``eval_batch`` without ``compute_loss`` gives, per
    micro-batch, the output of this stage's last chunk (the model's outputs on the last stage)."""

    _runs_chunks = True
    _order: Callable[..., List[Work]] = staticmethod(interleaved_order)
    _min_steps, _min_steps_text = 2, "2 x pp_degree"

    def __init__(self, layers: PipelineLayer, hcg: Any, strategy: Any):
        super().__init__(layers, hcg, strategy)
        name = type(self).__name__
        if self.num_stages < 2:
            raise ValueError(f"{name}: pp_degree={self.num_stages}; virtual pipeline stages need pp_degree >= 2")
        if self.accumulate_steps < self._min_steps * self.num_stages:
            raise ValueError(f"{name}: pipeline_configs accumulate_steps={self.accumulate_steps}; it must be at "
                             f"least {self._min_steps_text} = {self._min_steps * self.num_stages} (paddle's rule; "
                             f"fleet.distributed_model picks the class that fits)")
        self.num_model_chunks = self._virtual_pp_world_size
        self.model_chunks = layers.get_model_chunks()
        self._programs: Dict[bool, List[Action]] = {}

    def _program(self, forward_only: bool) -> List[Action]:
        """This stage's program (built from every stage's order, so all stages agree on it)."""
        if forward_only not in self._programs:
            orders = [self._order(self.num_stages, stage, self.num_model_chunks, self.accumulate_steps, forward_only)
                      for stage in range(self.num_stages)]
            self._programs[forward_only] = programs(orders, self.num_model_chunks)[self.stage_id]
        return self._programs[forward_only]

    def _run_layers(self, x: Any) -> Any:
        return self._layers.forward(x, chunk_id=self._virtual_pp_rank)

    def _run_schedule(self, micro: Optional[MicroBatches]) -> None:
        self._run_program(micro, forward_only=False)

    def _forward_only(self, micro: Optional[MicroBatches]) -> List[Any]:
        return self._run_program(micro, forward_only=True)

    def _run_program(self, micro: Optional[MicroBatches], forward_only: bool) -> List[Any]:
        """Run this stage's program; the outputs of its last chunk, one per micro-batch. In an
        evaluation, a forward (or loss) that fails in the last stage's last chunk is raised once
        the program has run to its end without it, so that nothing sent to this stage is left
        queued and the other stages' chunks still get what they wait for."""
        link, last_chunk = self._link, self.num_model_chunks - 1
        tolerant = forward_only and self.stage_id == self.num_stages - 1  # see above
        failed: Optional[Exception] = None
        received: Dict[Tuple[int, int], Any] = {}
        outputs: Dict[Tuple[int, int], Any] = {}
        output_grads: Dict[Tuple[int, int], List[Any]] = {}
        input_grads: Dict[Tuple[int, int], List[Any]] = {}
        results: List[Any] = []
        done = {"F": 0, "B": 0}  # paddle's step_id: the stage's forward (backward) micro-steps so far
        try:
            for op, chunk, step in self._program(forward_only):
                key = (chunk, step)
                self.set_virtual_pipeline_rank(chunk)
                if op == "recv_forward":
                    received[key] = link.recv_forward()
                elif op == "F":
                    if failed is not None and chunk == last_chunk:
                        continue
                    try:
                        outputs[key] = self._forward_step(received.get(key), micro, step, done["F"])
                    except Exception as exc:
                        if not (tolerant and chunk == last_chunk):
                            raise
                        failed = exc
                        continue
                    done["F"] += 1
                    if forward_only and chunk == last_chunk:
                        results.append(outputs[key])
                elif op == "send_forward":
                    link.send_forward(outputs[key])
                    if forward_only:
                        del outputs[key]
                        received.pop(key, None)
                elif op == "recv_backward":
                    output_grads[key] = link.recv_backward(outputs[key])
                elif op == "B":
                    input_grads[key] = self._backward_step(received.pop(key, None), outputs.pop(key),
                                                           output_grads.pop(key, None), done["B"])
                    done["B"] += 1
                else:  # send_backward
                    link.send_backward(input_grads.pop(key))
        finally:
            self.set_virtual_pipeline_rank(0)
        if failed is not None:
            raise failed
        return results


class PipelineParallelWithInterleaveFthenB(PipelineParallelWithInterleave):
    """The same stages on paddle's FthenB order: every micro-batch forward through every chunk,
    then every backward (more activations held, for fewer micro-batches)."""

    _order = staticmethod(fthenb_order)
    _min_steps, _min_steps_text = 1, "pp_degree"


class VPPFhenBInBalancedMemory(PipelineParallelWithInterleaveFthenB):
    """paddle's FthenB variant that holds fewer activations: each stage runs FthenB's forwards
    only until its first backward can start, then alternates one forward and one backward, then
    the remaining backwards (``interleave_schedule.balanced_memory_order``). Paddle's
    ``fleet.distributed_model`` picks it for ``pp_configs.best_unbalanced_scheduler`` with
    ``pp_degree <= accumulate_steps < 2 pp_degree``; pycoll's fleet does not pick it, build it
    directly."""

    _order = staticmethod(balanced_memory_order)

