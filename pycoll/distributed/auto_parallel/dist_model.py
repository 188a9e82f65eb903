"""``to_static`` and ``DistModel``: a layer, a loader, a loss and an optimizer as one object whose
call runs one step of its mode — ``train`` (update, return the loss), ``eval`` (return the loss)
or ``predict`` (return the outputs as a dict).

pycoll runs eagerly: "static" here means that the parallel plan is fixed when the model is made,
from the placements — the data-parallel dimension is the one ``shard_dataloader`` splits the
batch along (gradients averaged over it by DataParallel's reducer, or sharded per
``strategy.sharding``), the model-parallel Linears are those with sharded weights
(``layers.py``). A mode's first step is recorded (``program.py``) and decides which
column-parallel outputs may stay split; the programs are those records.

The loss is the whole batch's, as paddle's DistModel computes it on distributed tensors: the
model runs on each rank's rows under DataParallel, and the loss function takes its outputs as
the rows of the whole batch (``Shard(0)`` along the data-parallel dimension), under paddle's
placement rules, so that a loss summed over the batch is the whole sum (a mean the whole mean).
The gradient reaching the outputs is scaled by the data-parallel size, which the reducer's
average over the ranks undoes (a term of the loss that uses no rows, a penalty on the weights or
a parameter of the loss itself, keeps its own gradient). Where the
rules cannot place the loss function's ops (or an output holds no rows of the batch), each
rank's loss over its rows is taken to be a mean over the batch and averaged over the ranks,
with a warning.

A model whose sharded parameters are not all ``nn.Linear`` weights (the auto-parallel guide's
``create_parameter`` weights cut by ``shard_tensor`` and used in ``matmul``) runs as the eager
loop runs it instead: each op on distributed tensors follows paddle's placement rules
(``propagation.py``), backward sums each gradient where the split batch meets it, and the
optimizer steps the pieces (no DataParallel, no column/row plan); ``strategy.sharding`` is
refused there by name.
"""
from __future__ import annotations

import contextlib
import random
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

import pycoll.distributed as dist
from pycoll import _graph
from pycoll import random as pycoll_random
from pycoll._logging import logger
from pycoll.autograd import no_grad
from pycoll.distributed.auto_parallel import setup, state
from pycoll.distributed.auto_parallel.dtensor import dtensor_from_local, is_dist_tensor, local_only, reshard, shard_tensor
from pycoll.distributed.auto_parallel.layers import keepable_pairs, parallelize, sharded_beyond_linears
from pycoll.distributed.auto_parallel.mesh import ProcessMesh
from pycoll.distributed.auto_parallel.placements import Placement, Replicate, Shard
from pycoll.distributed.auto_parallel.program import Op, Program, Tracer, serial_ops
from pycoll.distributed.auto_parallel.spmd_rules import Refused
from pycoll.distributed.auto_parallel.strategy import Strategy
from pycoll.distributed.auto_parallel.transitions import check_divides
from pycoll.nn import Layer
from pycoll.optimizer.optimizer import Optimizer
from pycoll.optimizer.state_slots import FirstStepSlots
from pycoll.tensor import Tensor, to_tensor

MODES = ("train", "eval", "predict")


class DistModel:
    """See the module's text; made by ``dist.to_static``. Call ``train()``, ``eval()`` or
    ``predict()`` to choose the mode (the default: train with a loss and an optimizer, eval with
    a loss only, predict with neither), then ``dist_model(inputs..., labels...)`` per step.
    How many of a step's tensors are inputs comes from the loader's first sample (the last field
    is the label, paddle's rule) or else the layer's forward; ``metrics`` and ``input_spec`` are
    accepted for paddle's signature and not used."""

    def __init__(self, layer: Layer, loader: Any = None, loss: Optional[Callable] = None,
                 optimizer: Any = None, strategy: Optional[Strategy] = None, metrics: Any = None,
                 input_spec: Any = None):
        if not isinstance(layer, Layer):
            raise TypeError(f"to_static: layer must be a pycoll.nn.Layer, got {type(layer).__name__}")
        if loss is not None and not callable(loss):
            raise TypeError(f"to_static: loss must be a Layer, a callable or None, got {type(loss).__name__}")
        if optimizer is not None and not (hasattr(optimizer, "step") and hasattr(optimizer, "clear_grad")):
            raise TypeError(f"to_static: optimizer must be a pycoll optimizer or None, got {type(optimizer).__name__}")
        if strategy is not None and not isinstance(strategy, Strategy):
            raise TypeError(f"to_static: strategy must be a dist.Strategy or None, got {type(strategy).__name__}")
        self._strategy = strategy or Strategy()
        self._layer, self._loss, self._loader = layer, loss, loader
        self._mesh, self._dp_axis = setup.mesh_and_data_axis(layer, loader)
        optimizer = setup.unwrap_shard_optimizer(optimizer, self._strategy, self._mesh, self._dp_axis)
        self._strategy.refuse_unsupported()
        if self._strategy.seed:  # paddle's rule (a seed of 0 seeds nothing there either)
            self._seed(self._strategy.seed)
        self._spmd = sharded_beyond_linears(layer)  # see the module's text
        self._linears = [] if self._spmd else parallelize(layer)
        self._inputs, self._labels = setup.feed_counts(loader, layer)
        if optimizer is not None:
            setup.check_optimizer(layer, optimizer)
        if self._spmd and self._strategy.sharding.enable:
            raise ValueError("strategy.sharding.enable: pycoll shards the optimizer state of models whose sharded "
                             "weights are nn.Linear weights; this model has other sharded parameters")
        dp = None if self._spmd else self._group(self._dp_axis)  # the SPMD rules sum the gradients
        self._model, self._optimizer = setup.build(layer, optimizer, self._strategy, dp)
        self._slots = FirstStepSlots()  # a state_dict() before the first step
        self._loss_taken_as_mean = False  # see _whole_batch_loss
        self._records: Dict[str, List[Op]] = {}   # mode -> its step's ops
        self._keep: Dict[str, set] = {}            # mode -> ids of the Linears keeping their blocks
        self._final: set = set()                   # modes whose record is final
        self._mode: Optional[str] = None
        if optimizer is not None and loss is not None:
            self.train()
        elif loss is not None:
            self.eval()
        else:
            self.predict()

    def _seed(self, seed: int) -> None:
        """Seed pycoll, NumPy and ``random`` with ``seed`` plus this rank's data-parallel index
        (paddle's rule: the model-parallel ranks of one replica draw alike)."""
        index = 0 if self._mesh is None or self._dp_axis is None else self._mesh.coordinate()[self._dp_axis]
        pycoll_random.seed(seed + index)
        np.random.seed(seed + index)
        random.seed(seed + index)

    # ---- the parallel plan -------------------------------------------------------------------
    def _group(self, axis: Optional[int]) -> Optional[dist.Group]:
        if axis is None or self._mesh.shape[axis] == 1:
            return None
        return self._mesh.get_group(axis)

    # ---- modes -------------------------------------------------------------------------------
    def train(self) -> None:
        """Mode "train": a call updates the parameters and returns the loss."""
        self._mode = "train"
        self._model.train()

    def eval(self) -> None:
        """Mode "eval": a call returns the loss and changes nothing."""
        self._mode = "eval"
        self._model.eval()

    def predict(self) -> None:
        """Mode "predict": a call returns the outputs, ``{"out0": ..., "out1": ...}``."""
        self._mode = "predict"
        self._model.eval()

    def _check_mode(self, mode: Optional[str]) -> str:
        mode = self._mode if mode is None else mode
        if mode not in MODES:
            raise ValueError(f"mode must be one of {list(MODES)} or None (the current mode), got {mode!r}")
        return mode

    # ---- one step ----------------------------------------------------------------------------
    def __call__(self, *args: Any) -> Any:
        mode = self._mode
        if mode == "train" and (self._loss is None or self._optimizer is None):
            raise ValueError(f"DistModel in 'train' mode needs a loss and an optimizer; to_static was "
                             f"given loss={self._loss!r} and optimizer={self._optimizer!r}")
        if mode == "eval" and self._loss is None:
            raise ValueError("DistModel in 'eval' mode needs a loss; to_static was given loss=None")
        feed = setup.flatten(args)
        inputs, labels = self._split(feed, mode)
        for linear in self._linears:
            linear.keep_block = id(linear) in self._keep.get(mode, ())
        tracer = None if mode in self._final else Tracer(state.names(self._layer))
        with tracer if tracer is not None else contextlib.nullcontext():
            inputs = [self._to_data_placements(x, f"input{i}") for i, x in enumerate(inputs)]
            labels = [self._to_data_placements(y, f"label{i}") for i, y in enumerate(labels)]
            if tracer is not None:
                for i, t in enumerate(inputs):
                    tracer.var(t).name = f"input{i}"
                for i, t in enumerate(labels):
                    tracer.var(t).name = f"label{i}"
            outputs, result = self._run(mode, inputs, labels, tracer)
        if tracer is not None:
            self._learn(mode, tracer, outputs)
        if not self._strategy.return_numpy:
            return result
        if isinstance(result, dict):
            return {name: _fetched(value) for name, value in result.items()}
        return _fetched(result)

    def _split(self, feed: List[Any], mode: str) -> Tuple[List[Any], List[Any]]:
        n_in, n_label = self._inputs, self._labels
        if mode == "predict":
            if n_in is not None and len(feed) > n_in:
                raise ValueError(f"DistModel in 'predict' mode takes the model's {n_in} input(s) only, got "
                                 f"{len(feed)} arguments: labels are not fed in predict mode (call "
                                 f"dist_model.eval() to compute the loss)")
            return feed, []
        n_in = len(feed) - (n_label or 1) if n_in is None else n_in
        expected = n_in + (n_label if n_label is not None else max(len(feed) - n_in, 1))
        if len(feed) != expected or n_in < 1:
            raise ValueError(f"DistModel in {mode!r} mode takes the model's inputs and then the labels "
                             f"({n_in} + {expected - n_in} tensors), got {len(feed)} arguments")
        return feed[:n_in], feed[n_in:]

    def _data_placements(self) -> List[Placement]:
        return [Shard(0) if i == self._dp_axis else Replicate() for i in range(self._mesh.ndim)]

    def _to_data_placements(self, x: Any, what: str) -> Any:
        """A fed tensor as the step takes it: on the mesh, split along the data-parallel dimension
        (a plain tensor is the whole batch)."""
        if self._mesh is None:
            return x if isinstance(x, Tensor) else to_tensor(x)
        target = self._data_placements()
        if is_dist_tensor(x):
            if x.process_mesh != self._mesh:
                raise ValueError(f"{what} lies on {x.process_mesh}, the model on {self._mesh}")
            return x if x.placements == target else reshard(x, self._mesh, target)
        x = x if isinstance(x, Tensor) else to_tensor(x)
        if self._dp_axis is not None:
            check_divides(x.shape, self._mesh, target, f"{what} (the batch, split over the data-parallel dimension)")
        return shard_tensor(x, self._mesh, target)

    def _run(self, mode: str, inputs: List[Any], labels: List[Any], tracer: Optional[Tracer]) -> Tuple[Any, Any]:
        # the model's DataParallel averages the gradients: ops here compute on the local pieces
        # (under the SPMD rules, the ops themselves keep the placements: see the module's text;
        # with no mesh, neither the model nor the loader split anything, and distributed tensors
        # fed in follow the rules too)
        local = contextlib.nullcontext if self._spmd or self._mesh is None else local_only
        grads = no_grad if mode != "train" else contextlib.nullcontext
        with local(), grads():
            outputs = self._model(*inputs)
            if mode == "predict":
                outs = setup.flat_outputs(outputs)
                if tracer is not None:
                    for i, out in enumerate(outs):
                        tracer.var(out).name = f"out{i}"
                return outputs, {f"out{i}": self._as_result(out) for i, out in enumerate(outs)}
        dp = None if self._spmd else self._group(self._dp_axis)
        with grads():
            loss = self._whole_batch_loss(setup.as_list(outputs), labels) if dp is not None else None
            if loss is None:
                with local():
                    loss = self._loss(*setup.as_list(outputs), *labels)
        if tracer is not None:
            tracer.var(loss).name = "loss"
        if mode == "train":
            loss.backward()
            if tracer is not None:
                state.note_gradient_traffic(tracer, self._model, self._layer, self._where(self._dp_axis))
                state.note_update(tracer, self._optimizer, self._layer, self._where(self._dp_axis))
            if isinstance(self._optimizer, Optimizer):
                self._slots.load(self._optimizer)
            self._optimizer.step()
            self._optimizer.clear_grad()
        return outputs, self._average_loss(loss, tracer)

    def _whole_batch_loss(self, outputs: List[Any], labels: List[Any]) -> Optional[Tensor]:
        """The loss function on the model's ``outputs`` (each rank's rows) taken as the rows of
        the whole batch, under the placement rules (a distributed tensor); None, said once, where
        the rules cannot place its ops or an output holds no rows of the batch."""
        if self._loss_taken_as_mean:
            return None
        placements, ranks = self._data_placements(), self._mesh.shape[self._dp_axis]

        def rows(output: Any) -> Any:  # each tensor of a (nested) output as the batch's rows
            if isinstance(output, dict):
                return {key: rows(value) for key, value in output.items()}
            if isinstance(output, (list, tuple)):
                return type(output)(rows(value) for value in output)
            if not (isinstance(output, Tensor) and output.ndim >= 1):
                raise Refused("an output of the model holds no rows of the batch")
            return _rows_of_batch(output, self._mesh, placements, ranks)

        try:
            return self._loss(*(rows(o) for o in outputs), *labels)
        except Refused as exc:
            logger.warning("DistModel: the loss is taken to be a mean over the batch, averaged over the "
                           "data-parallel ranks (a loss summed over the batch would be %d times too small): %s",
                           self._mesh.shape[self._dp_axis], exc)
            self._loss_taken_as_mean = True
            return None

    def _average_loss(self, loss: Tensor, tracer: Optional[Tracer]) -> Tensor:
        if is_dist_tensor(loss):  # the placement rules' loss: its whole value, where it lies (no host copy)
            return Tensor(loss.detach()._whole(), place=loss.place)
        value = loss.detach().array.copy()
        group = self._group(self._dp_axis)
        if group is not None:
            dist.all_reduce(value, op=dist.ReduceOp.AVG, group=group)
            if tracer is not None:
                v = tracer.var(loss)
                tracer.add("comm", "all_reduce", [v], [v], f"all_reduce(avg) over {self._where(self._dp_axis)}",
                           "the whole batch's loss")
        return Tensor(value, place=loss.place)

    def _as_result(self, out: Any) -> Any:
        if self._mesh is None or not isinstance(out, Tensor):
            return out
        if is_dist_tensor(out):  # the SPMD rules' output keeps its placements
            return out.detach()
        return dtensor_from_local(out.detach(), self._mesh, self._data_placements())

    def _where(self, axis: Optional[int]) -> str:
        group = self._group(axis)
        return f"{self._mesh.dim_names[axis]!r} {group.ranks}" if group is not None else ""

    def _learn(self, mode: str, tracer: Tracer, outputs: Any) -> None:
        """Keep the record; after a mode's first step, let the column-parallel outputs that only
        feed a row-parallel Linear stay split from then on (re-recording the next step)."""
        self._records[mode] = tracer.ops
        if mode not in self._keep:
            self._keep[mode] = {id(linear) for linear in keepable_pairs(tracer, self._linears, outputs)}
            if self._keep[mode]:
                return
        self._final.add(mode)
        for linear in self._linears:
            linear.seen_input = linear.seen_output = None

    # ---- programs ----------------------------------------------------------------------------
    def _record(self, mode: Optional[str], what: str) -> Tuple[str, List[Op]]:
        mode = self._check_mode(mode)
        if mode not in self._records:
            raise RuntimeError(f"{what}({mode!r}): no {mode} step has run yet; pycoll runs eagerly and "
                               f"records a mode's program from its steps: call dist_model.{mode}() and "
                               f"run a step first")
        return mode, self._records[mode]

    def dist_main_program(self, mode: Optional[str] = None) -> Program:
        """This rank's program of ``mode`` (default: the current one): the ops its last recorded
        step ran — forward, backward, the collectives inserted (with the mesh dimension and ranks
        they run over) and the optimizer's updates — with this rank's local shapes and dtypes.
        pycoll runs eagerly: the program is a record of a step, not a graph that runs."""
        mode, ops = self._record(mode, "dist_main_program")
        return Program(f"dist main program, mode {mode!r}, rank {dist.get_rank()}{self._on()}", ops, False)

    def serial_main_program(self, mode: Optional[str] = None) -> Program:
        """The program of ``mode`` for the whole model in one process: the same recorded step
        without its collectives, with the whole tensors' shapes. pycoll runs eagerly: this too
        is a record of a step, not a graph that runs."""
        mode, ops = self._record(mode, "serial_main_program")
        return Program(f"serial main program, mode {mode!r}", serial_ops(ops), True)

    def dist_startup_program(self, mode: Optional[str] = None) -> Program:
        """How this rank's parameters were set up: each one's local piece and placements, and the
        broadcast that makes the data-parallel replicas start alike. pycoll runs eagerly: this
        lists what happened when the model was made; nothing runs it."""
        mode = self._check_mode(mode)
        ops = state.startup_ops(self._layer, self._model, self._where(self._dp_axis))
        return Program(f"dist startup program, mode {mode!r}, rank {dist.get_rank()}{self._on()}", ops, False)

    def serial_startup_program(self, mode: Optional[str] = None) -> Program:
        """The parameters of the whole model with their whole shapes. pycoll runs eagerly: this
        lists what the model holds; nothing runs it."""
        mode = self._check_mode(mode)
        ops = serial_ops(state.startup_ops(self._layer, self._model, ""))
        return Program(f"serial startup program, mode {mode!r}", ops, True)

    def _on(self) -> str:
        if self._mesh is None:
            return ""
        return f" at {dict(zip(self._mesh.dim_names, self._mesh.coordinate()))} of {self._mesh}"

    # ---- state -------------------------------------------------------------------------------
    def state_dict(self, mode: str = "all", split_fusion: bool = True) -> Dict[str, Tensor]:
        """The parameters and buffers by structured name (``mode`` "param"), the optimizer's
        state by its keys ("opt"), or both ("all"): the tensors themselves, distributed tensors
        for sharded parameters and their optimizer state. ``split_fusion`` is paddle's; pycoll
        fuses no parameters."""
        return state.state_dict(self._layer, self._optimizer, mode, self._slots)

    def set_state_dict(self, state_dict: Dict[str, Any]) -> None:
        """Load values into this rank's pieces: distributed tensors of the same placements, or
        whole values (each rank takes its block). Unknown keys raise, naming them."""
        self._slots.drop()
        state.set_state_dict(self._layer, self._optimizer, state_dict)


def _rows_of_batch(local: Tensor, mesh: ProcessMesh, placements: List[Placement], ranks: int) -> Tensor:
    """``local`` (this rank's rows of a model output) as the rows of the whole batch; the
    gradient coming back is scaled by ``ranks``: the data-parallel reducer then averages over
    the ranks what is, for the whole batch's loss, their sum."""
    rows = dtensor_from_local(local.detach(), mesh, placements)
    rows.stop_gradient = local.stop_gradient
    if local.grad_node is not None:
        _graph.record((rows,), lambda g: (g * ranks,), (local,))
    return rows


def _fetched(value: Any) -> Any:
    """``value`` as paddle's executor fetches it under ``return_numpy``: this rank's piece as a
    NumPy array (the loss is whole on every rank; a partial sum is summed first)."""
    if is_dist_tensor(value):
        summed = [Replicate() if p.is_partial() else p for p in value.placements]
        if summed != list(value.placements):
            value = reshard(value, value.process_mesh, summed)
        value = value._local_value()
    return value.numpy() if isinstance(value, Tensor) else value


def to_static(layer: Layer, loader: Any = None, loss: Optional[Callable] = None, optimizer: Any = None,
              strategy: Optional[Strategy] = None, input_spec: Any = None) -> DistModel:
    """paddle's ``to_static``: the ``DistModel`` of ``layer`` (see the module's text)."""
    return DistModel(layer, loader, loss, optimizer, strategy, input_spec=input_spec)
