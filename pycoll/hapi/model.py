"""``pycoll.Model`` (paddle.Model): a network with its training loop, evaluation, prediction,
checkpoints and summary, paddle's names, arguments and logs.

Under ``python -m pycoll.launch --nproc_per_node N`` the model joins the job (``init_parallel_env``
when the script has not), trains through ``pycoll.DataParallel`` and reads each rank's share of a
dataset; see ``steps.py`` for how evaluation's metrics cover the whole set.
"""
from __future__ import annotations

import inspect
import os
import warnings
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

import numpy as np

from pycoll._tensor_ops import as_tensor
from pycoll.hapi.callback_base import Callback, local_rank
from pycoll.hapi.callbacks import config_callbacks
from pycoll.hapi.loops import all_ranks_here, any_rank, length, make_loader, run_epoch
from pycoll.hapi.steps import Steps, amp_settings, to_list
from pycoll.hapi.model_summary import summary as summarize
from pycoll.hapi.train_callbacks import EarlyStopping
from pycoll.jit import save as jit_save
from pycoll.metric import Metric
from pycoll.nn import Layer
from pycoll.optimizer.optimizer import StateMismatch
from pycoll.serialization import load as load_file, save as save_file
from pycoll.static import InputSpec
from pycoll.tensor import Tensor

Callbacks = Union[Sequence[Callback], Callback, None]
SUFFIXES = ("", ".pdparams", ".pdopt", ".pdmodel")


def _positive_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{what}={value!r}; it must be a positive int")
    return value


def _iterations(num_iters: Any) -> Optional[int]:
    return None if num_iters is None else _positive_int(num_iters, "num_iters")


class Model:
    """A ``network`` (an ``nn.Layer``) with paddle's high-level training API: ``prepare`` it with an
    optimizer, a loss and metrics, then ``fit``, ``evaluate``, ``predict``, ``save``, ``load``.

    ``inputs`` and ``labels`` describe the network's inputs and the labels (``InputSpec``s, each
    with a name; ``inputs`` may also be a dict by ``forward``'s argument names). They fix how a
    batch splits: its first ``len(inputs)`` fields go to the network, the rest to the loss and
    metrics. Without ``inputs`` there is one input per argument of ``network.forward`` (so with
    ``forward(self, x)`` and batches ``(x, y)``, ``y`` is the label), as in paddle.
    """

    def __init__(self, network: Layer, inputs: Any = None, labels: Any = None) -> None:
        if not isinstance(network, Layer):
            raise TypeError(f"network must be a pycoll.nn.Layer, got {type(network).__name__}")
        self.mode = "train"
        self.network = network
        self._loss: Optional[Callable[..., Any]] = None
        self._optimizer: Any = None
        self._metrics: List[Metric] = []
        self._scaler: Any = None
        self._accumulate = 1
        self._test_dataloader: Any = None
        self._iters_left: Optional[int] = None
        self.stop_training = False
        self._inputs = self._specs(inputs, "inputs")
        self._inputs_known = inputs is not None  # else taken from the first batch, as paddle does
        self._labels = self._specs(labels, "labels")
        self._steps = Steps(self)

    def _specs(self, specs: Any, what: str) -> List[InputSpec]:
        if specs is None:
            if what == "labels":
                return []
            args = inspect.getfullargspec(self.network.forward).args[1:]
            return [InputSpec([None], name=name) for name in args]
        if isinstance(specs, dict) and what == "inputs":
            args = inspect.getfullargspec(self.network.forward).args[1:]
            missing = [a for a in args if a not in specs]
            if missing:
                raise ValueError(f"inputs is a dict without the forward() arguments {missing}; it needs one "
                                 f"InputSpec per argument of {type(self.network).__name__}.forward")
            specs = [specs[a] for a in args]
        specs = to_list(specs)
        for i, spec in enumerate(specs):
            if not isinstance(spec, InputSpec):
                raise TypeError(f"{what}[{i}] is a {type(spec).__name__}; it must be a pycoll.static.InputSpec")
            if spec.name is None:
                raise ValueError(f"Requires {what}[{i}].name != None, but receive `None` with {spec}.")
        return specs

    def _seen(self, inputs: Any) -> List[Tensor]:
        """A batch's inputs as Tensors. Without ``inputs`` given to the Model, the first batch's
        shapes and dtypes become its input specs, as paddle's do (``summary()`` then runs on them)."""
        tensors = [as_tensor(x) for x in to_list(inputs)]
        if not self._inputs_known:
            self._inputs_known = True
            names = [spec.name for spec in self._inputs]
            self._inputs = [InputSpec(list(t.shape), t.dtype, name=names[i] if i < len(names) else f"input_{i}")
                            for i, t in enumerate(tensors)]
        return tensors

    # -- configuration ------------------------------------------------------------------------
    def prepare(self, optimizer: Any = None, loss: Optional[Callable[..., Any]] = None,
                metrics: Union[Metric, List[Metric], None] = None,
                amp_configs: Union[str, Dict[str, Any], None] = None) -> None:
        """Set the optimizer (None for evaluation and prediction alone), the loss (a Layer or any
        callable taking the outputs then the labels) and the metrics (``pycoll.metric.Metric``s).
        ``amp_configs``: 'O0'/'O1'/'O2' or a dict with 'level' and ``GradScaler``'s settings
        (see ``pycoll.amp``: on the CPU it has no effect, as in paddle)."""
        if loss is not None and not callable(loss):
            raise TypeError(f"'loss' must be sub classes of `pycoll.nn.Layer` or any callable function, "
                            f"got {type(loss).__name__}")
        metrics = to_list(metrics) or []
        for metric in metrics:
            if not isinstance(metric, Metric):
                raise TypeError(f"metrics: {type(metric).__name__} is not sub class of pycoll.metric.Metric")
        level, lists, scaler = amp_settings(amp_configs)
        self._optimizer, self._loss, self._metrics = optimizer, loss, metrics
        steps = self._steps
        steps.amp_level, steps.amp_lists, steps.amp_scaler = level, lists, scaler
        self._scaler = None
        if level == "O2" and optimizer is not None:
            from pycoll.amp import decorate

            self.network, self._optimizer = decorate(self.network, optimizer, level="O2")

    # -- one batch ------------------------------------------------------------------------------
    def train_batch(self, inputs: Any, labels: Any = None, update: bool = True) -> Any:
        """One training step on a batch (arrays or Tensors, or lists of them); with
        ``update=False`` the gradients are kept for the next step. Returns the losses (NumPy
        arrays), with the metrics' values of the batch as ``(losses, metrics)`` when there are
        metrics."""
        return self._steps.train(inputs, labels, update)

    def eval_batch(self, inputs: Any, labels: Any = None) -> Any:
        """One evaluation step: the losses, ``(losses, metrics)``, or the metrics without a loss."""
        return self._steps.eval(inputs, labels)

    def predict_batch(self, inputs: Any) -> List[np.ndarray]:
        """The network's outputs on a batch, as NumPy arrays."""
        return self._steps.predict(inputs)

    # -- loops ------------------------------------------------------------------------------------
    def fit(self, train_data: Any = None, eval_data: Any = None, batch_size: Union[int, Sequence[int]] = 1,
            epochs: int = 1, eval_freq: int = 1, log_freq: int = 10, save_dir: Optional[str] = None,
            save_freq: int = 1, verbose: int = 2, drop_last: bool = False, shuffle: bool = True,
            num_workers: int = 0, callbacks: Callbacks = None, accumulate_grad_batches: int = 1,
            num_iters: Optional[int] = None) -> None:
        """Train for ``epochs`` epochs over ``train_data`` (a Dataset, read in batches of
        ``batch_size``, each rank its share; or a DataLoader, used as it is), evaluating on
        ``eval_data`` every ``eval_freq`` epochs and saving to ``save_dir`` every ``save_freq``.
        ``batch_size`` may be ``[train, eval]``. The optimizer steps every
        ``accumulate_grad_batches`` batches; ``num_iters`` ends training after that many steps.
        A callback may end it by setting ``model.stop_training`` (on several ranks, one rank's
        stop ends every rank's training after that epoch); each ``fit`` starts with it False."""
        if train_data is None:
            raise ValueError("train_data must be given!")
        if isinstance(batch_size, (list, tuple)):
            if len(batch_size) != 2:
                raise ValueError(f"batch_size={batch_size!r}: a list must hold two sizes, train_batch_size "
                                 f"and eval_batch_size")
            train_size, eval_size = batch_size
        else:
            train_size = eval_size = batch_size
        _positive_int(train_size, "batch_size"), _positive_int(eval_size, "batch_size")
        for name, value in (("epochs", epochs), ("eval_freq", eval_freq), ("log_freq", log_freq),
                            ("save_freq", save_freq), ("accumulate_grad_batches", accumulate_grad_batches)):
            _positive_int(value, name)
        self._iters_left = _iterations(num_iters)
        train_loader = make_loader(train_data, train_size, shuffle, drop_last, num_workers)
        eval_loader = None if eval_data is None else make_loader(eval_data, eval_size, num_workers=num_workers)
        self._test_dataloader = eval_loader
        self._accumulate = accumulate_grad_batches
        steps = length(train_loader)
        if num_iters is not None and steps is not None:
            epochs = num_iters // steps + 1
            steps = min(num_iters, steps)
        cbks = config_callbacks(callbacks, model=self, epochs=epochs, steps=steps, log_freq=log_freq,
                                save_freq=save_freq, save_dir=save_dir, verbose=verbose,
                                metrics=self._metrics_name())
        if eval_loader is None and any(isinstance(c, EarlyStopping) for c in cbks):
            warnings.warn("EarlyStopping needs validation data.")
        self.stop_training = False
        cbks.on_begin("train")
        logs: Dict[str, Any] = {}
        for epoch in range(epochs):
            cbks.on_epoch_begin(epoch)
            logs, _ = run_epoch(self, train_loader, cbks, "train")
            cbks.on_epoch_end(epoch, logs)
            if eval_loader is not None and epoch % eval_freq == 0:
                cbks.on_begin("eval", {"steps": length(eval_loader), "metrics": self._metrics_name()})
                eval_logs, _ = run_epoch(self, eval_loader, cbks, "eval")
                cbks.on_end("eval", eval_logs)
            if any_rank(self.stop_training, self._steps.nranks):
                break
        cbks.on_end("train", logs)
        all_ranks_here(self._steps.nranks)  # rank 0's final checkpoint is written when fit returns
        self._test_dataloader = None

    def evaluate(self, eval_data: Any, batch_size: int = 1, log_freq: int = 10, verbose: int = 2,
                 num_workers: int = 0, callbacks: Callbacks = None,
                 num_iters: Optional[int] = None) -> Dict[str, Any]:
        """Evaluate on ``eval_data`` (a Dataset or a DataLoader): ``{'loss': [last batch's loss],
        <metric name>: value over every sample seen, ...}``. On several ranks the metrics cover
        the whole set; the loss is this rank's last batch's."""
        if eval_data is None:
            raise ValueError("eval_data must be given: a Dataset or a DataLoader")
        _positive_int(log_freq, "log_freq")
        eval_loader = make_loader(eval_data, _positive_int(batch_size, "batch_size"), num_workers=num_workers)
        self._test_dataloader = eval_loader
        cbks = config_callbacks(callbacks, model=self, log_freq=log_freq, verbose=verbose,
                                metrics=self._metrics_name())
        steps = length(eval_loader)
        self._iters_left = _iterations(num_iters)
        if num_iters is not None and steps is not None:
            steps = self._iters_left = min(num_iters, steps)
        cbks.on_begin("eval", {"steps": steps, "metrics": self._metrics_name()})
        logs, _ = run_epoch(self, eval_loader, cbks, "eval")
        cbks.on_end("eval", logs)
        self._test_dataloader = None
        return {k: logs[k] for k in self._metrics_name() if k in logs}

    def predict(self, test_data: Any, batch_size: int = 1, num_workers: int = 0, stack_outputs: bool = False,
                verbose: int = 1, callbacks: Callbacks = None) -> List[Any]:
        """The network's outputs on ``test_data``: one entry per output, each a tuple of every
        batch's NumPy array, or with ``stack_outputs`` those arrays joined into one (an output of
        shape [batch, X] gives [samples, X]; of shape [batch], [samples]; a 0-d one [batches, 1]). On several
        ranks each rank predicts its share (on GPUs every rank gets every rank's, as in paddle)."""
        if test_data is None:
            raise ValueError("test_data must be given: a Dataset or a DataLoader")
        test_loader = make_loader(test_data, _positive_int(batch_size, "batch_size"), num_workers=num_workers)
        self._test_dataloader = test_loader
        self._iters_left = None
        cbks = config_callbacks(callbacks, model=self, verbose=verbose)
        logs = {"steps": length(test_loader)}
        cbks.on_begin("predict", logs)
        logs, outputs = run_epoch(self, test_loader, cbks, "predict")
        outputs = list(zip(*outputs))
        if stack_outputs:  # along the batch axis (paddle's np.vstack, which fails for 1-D outputs;
            # one 0-d output per batch stacks to [batches, 1] as vstack's)
            outputs = [np.vstack(outs) if np.ndim(outs[0]) == 0 else np.concatenate(outs, axis=0) for outs in outputs]
        self._test_dataloader = None
        cbks.on_end("predict", logs)
        return outputs

    # -- checkpoints --------------------------------------------------------------------------------
    def save(self, path: str, training: bool = True) -> None:
        """Save the parameters to ``path + '.pdparams'``, the optimizer's state (when it has one)
        to ``path + '.pdopt'`` and the AMP scaler's to ``path + '.pdscaler'`` (pycoll.save's
        format), on local rank 0 only. ``training=False`` keeps the network for inference instead,
        as ``pycoll.jit.save`` does (``jit.load`` reads it)."""
        if not isinstance(path, str) or not os.path.basename(path):
            raise ValueError(f"path={path!r}; it must be 'dirname/file_prefix' or 'file_prefix'")
        if local_rank() != 0:
            return
        if not training:
            jit_save(self.network, path, input_spec=self._inputs)
            return
        save_file(self.network.state_dict(), path + ".pdparams")
        if self._optimizer is not None and self._optimizer.state_dict():
            save_file(self._optimizer.state_dict(), path + ".pdopt")
        if self._scaler is not None and self._scaler.state_dict():
            save_file(self._scaler.state_dict(), path + ".pdscaler")

    def load(self, path: str, skip_mismatch: bool = False, reset_optimizer: bool = False) -> None:
        """Load what ``save`` wrote at ``path`` (with or without a suffix): every parameter of the
        network by its structured name, and the optimizer's state unless ``reset_optimizer`` or
        there is no ``.pdopt``. A parameter missing from the file or of another shape is an
        error, or with ``skip_mismatch`` a warning (and the optimizer starts afresh). An
        optimizer state saved for parameters of other names (the network built again in this
        process, whose parameters got other unique names) is left out with a warning: the
        optimizer starts afresh (paddle's load passes, and its next step fails)."""
        prefix, suffix = os.path.splitext(path)
        if suffix not in SUFFIXES:
            prefix = path  # a dot inside the name, not one of paddle's suffixes
        if not os.path.exists(prefix + ".pdparams"):
            raise ValueError(f"Failed to load parameters, please check path: {prefix + '.pdparams'} does not exist")
        state = load_file(prefix + ".pdparams")
        matched = []
        for key, param in self.network.state_dict().items():
            saved = state.get(key)
            problem = None
            if saved is None:
                problem = f"{key} is not found in the providing file."
            elif list(saved.shape) != list(param.shape):
                problem = f"{key} receives a shape {list(saved.shape)}, but the expected shape is {list(param.shape)}."
            if problem is None:
                matched.append((param, saved))
            elif skip_mismatch:
                warnings.warn(f"Skip loading for {key}. {problem}")
                reset_optimizer = True
            else:
                raise ValueError(problem)
        for param, saved in matched:
            param.set_value(saved)
        if self._scaler is not None and os.path.exists(prefix + ".pdscaler"):
            self._scaler.load_state_dict(load_file(prefix + ".pdscaler"))
        if self._optimizer is not None and not reset_optimizer and os.path.exists(prefix + ".pdopt"):
            try:
                self._optimizer.set_state_dict(load_file(prefix + ".pdopt"))
            except StateMismatch as exc:
                warnings.warn(f"Model.load: the optimizer state in {prefix}.pdopt is left out, and the optimizer "
                              f"starts afresh: {exc}", stacklevel=2)

    # -- the rest -----------------------------------------------------------------------------------
    def parameters(self, *args: Any, **kwargs: Any) -> List[Any]:
        """The network's parameters."""
        return self.network.parameters(*args, **kwargs)

    def summary(self, input_size: Any = None, dtype: Optional[str] = None) -> Dict[str, np.int64]:
        """``pycoll.summary`` of the network, its input size ``input_size`` or else the ``inputs``
        given to the Model."""
        if input_size is None and not self._inputs:
            raise ValueError("'input_size' or 'self._input' must be set")
        return summarize(self.network, input_size if input_size is not None else self._inputs, dtypes=dtype)

    def _reset_metrics(self) -> None:
        for metric in self._metrics:
            metric.reset()

    def _metrics_name(self) -> List[str]:
        names = ["loss"] if self._loss is not None else []
        for metric in self._metrics:
            names.extend(to_list(metric.name()))
        return names
