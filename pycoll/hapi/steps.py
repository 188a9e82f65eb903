"""One step of ``Model``'s training, evaluation or prediction, on one rank or across the ranks of a
launched job (paddle's ``DynamicGraphAdapter``).

With several ranks the network trains through ``pycoll.DataParallel`` (gradients averaged in
backward). An evaluation step gathers every rank's outputs and labels before the metrics see
them, and cuts off the samples that ``DistributedBatchSampler`` repeated to give each rank an equal
share, so the metrics are over the evaluation set itself, as paddle's are; the loss stays each
rank's own. A prediction step gathers the ranks' outputs on GPUs only, as paddle does.
"""
from __future__ import annotations

import contextlib
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np

from pycoll._tensor_ops import as_tensor
from pycoll.autograd import no_grad
from pycoll.product_ops import add_n
from pycoll.shape_ops import concat
from pycoll.tensor import Tensor

AMP_LEVELS = ("O0", "O1", "O2")
AMP_SCALER_KEYS = ("init_loss_scaling", "incr_ratio", "decr_ratio", "incr_every_n_steps",
                   "decr_every_n_nan_or_inf", "use_dynamic_loss_scaling")
AMP_LIST_KEYS = ("custom_white_list", "custom_black_list", "custom_black_varnames")


def to_list(value: Any) -> Optional[List[Any]]:
    if value is None:
        return None
    return list(value) if isinstance(value, (list, tuple)) else [value]


def host(value: Any) -> Any:
    """A Tensor's values as a NumPy array (a GPU tensor's copied to the host); anything else as is."""
    return value.numpy() if isinstance(value, Tensor) else value


def amp_settings(amp_configs: Union[str, Dict[str, Any], None]) -> Tuple[str, Dict[str, Any], Dict[str, Any]]:
    """paddle's ``amp_configs`` of ``Model.prepare`` read into (level, the lists ``auto_cast``
    takes, the settings ``GradScaler`` takes)."""
    if not amp_configs:
        return "O0", {}, {}
    if isinstance(amp_configs, str):
        if amp_configs not in AMP_LEVELS:
            raise ValueError(f"amp_configs={amp_configs!r}; the level of amp_configs should be 'O0', 'O1' or 'O2'")
        return amp_configs, {}, {}
    if not isinstance(amp_configs, dict):
        raise TypeError(f"amp_configs must be None, a level ('O0', 'O1', 'O2') or a dict, "
                        f"got {type(amp_configs).__name__}")
    level = amp_configs.get("level", "O1")
    if level not in AMP_LEVELS:
        raise ValueError(f"amp_configs['level']={level!r}; it should be 'O0', 'O1' or 'O2'")
    if "use_pure_fp16" in amp_configs:
        raise ValueError("'use_pure_fp16' is an invalid parameter, the level of mixed precision training only "
                         "depends on 'O1' or 'O2'.")
    if "use_fp16_guard" in amp_configs:
        raise ValueError("'use_fp16_guard' is supported in static graph mode only.")
    unknown = sorted(set(amp_configs) - {"level"} - set(AMP_SCALER_KEYS) - set(AMP_LIST_KEYS))
    if unknown:
        raise ValueError(f"Except for 'level', the keys of 'amp_configs' must be accepted by mixed precision APIs, "
                         f"but {tuple(unknown)} could not be recognized.")
    if level == "O0":
        return level, {}, {}
    lists = {k: amp_configs[k] for k in AMP_LIST_KEYS if k in amp_configs}
    return level, lists, {k: amp_configs[k] for k in AMP_SCALER_KEYS if k in amp_configs}


class Steps:
    """The steps of one ``Model``: it reads the model's network, loss, metrics, optimizer and
    scaler, which ``Model.prepare`` sets."""

    def __init__(self, model: Any) -> None:
        import pycoll.distributed as dist

        self.model = model
        self.nranks = dist.ParallelEnv().nranks
        self.ddp = None
        if self.nranks > 1:  # paddle's Model joins the job and wraps the network itself
            from pycoll.parallel import DataParallel

            if not dist.is_initialized():
                dist.init_parallel_env()
            self.ddp = DataParallel(model.network)
        self.amp_level, self.amp_lists, self.amp_scaler = "O0", {}, {}
        self.eval_seen = 0  # samples of the evaluation set the metrics have seen so far (several ranks)
        self.eval_batch_size = 0  # how many of them the last evaluation step added

    def reset_eval(self) -> None:
        self.eval_seen = self.eval_batch_size = 0

    def _autocast(self) -> Any:
        if self.amp_level == "O0":
            return contextlib.nullcontext()
        from pycoll.amp import auto_cast

        return auto_cast(level=self.amp_level, **self.amp_lists)

    def _update_metrics(self, outputs: List[Tensor], labels: List[Tensor]) -> List[Any]:
        results = []
        for metric in self.model._metrics:
            computed = metric.compute(*(outputs + labels))
            results.append(metric.update(*[host(m) for m in to_list(computed)]))
        return results

    def train(self, inputs: Any, labels: Any = None, update: bool = True) -> Any:
        model = self.model
        if model._optimizer is None or model._loss is None:
            raise RuntimeError("model not ready, please call `model.prepare(optimizer, loss)` first: training "
                               "needs an optimizer and a loss")
        model.network.train()
        model.mode = "train"
        inputs = model._seen(inputs)
        labels = [as_tensor(y) for y in to_list(labels if labels is not None else [])]
        if self.amp_level != "O0" and model._scaler is None:
            from pycoll.amp import GradScaler

            model._scaler = GradScaler(**self.amp_scaler)
        with self._autocast():
            outputs = to_list((self.ddp or model.network)(*inputs))
        losses = to_list(model._loss(*(outputs + labels)))
        final = add_n(losses)
        if model._scaler is not None:
            scaled = model._scaler.scale(final)
            scaled.backward()
            if update:
                model._scaler.minimize(model._optimizer, scaled)
                model.network.clear_gradients()
        else:
            final.backward()
            if update:
                model._optimizer.minimize(final)
                model.network.clear_gradients()
        metrics = self._update_metrics(outputs, labels)
        numbers = [host(loss) for loss in losses]
        return (numbers, metrics) if metrics else numbers

    def _gathered(self, tensors: List[Tensor]) -> List[Tensor]:
        import pycoll.distributed as dist

        out = []
        for t in tensors:
            parts: List[Any] = []
            dist.all_gather(parts, t)
            out.append(concat(parts, axis=0))
        return out

    def _trimmed(self, outputs: List[Tensor], labels: List[Tensor]) -> Tuple[List[Tensor], List[Tensor]]:
        """The gathered batch without the repeated samples that end the padded evaluation set (a
        Dataset's, which DistributedBatchSampler shares out; an IterableDataset gives each rank
        what it yields, unpadded)."""
        from pycoll.io import DataLoader, IterableDataset

        loader = self.model._test_dataloader
        if not isinstance(loader, DataLoader) or isinstance(loader.dataset, IterableDataset):
            return outputs, labels
        total = len(loader.dataset)
        samples = outputs[0].shape[0]
        if self.eval_seen + samples >= total:
            keep = total - self.eval_seen
            outputs, labels = [o[:keep] for o in outputs], [y[:keep] for y in labels]
            self.eval_seen, self.eval_batch_size = 0, keep
        else:
            self.eval_seen += samples
            self.eval_batch_size = samples
        return outputs, labels

    @no_grad()
    def eval(self, inputs: Any, labels: Any = None) -> Any:
        model = self.model
        model.network.eval()
        model.mode = "eval"
        inputs = model._seen(inputs)
        labels = [as_tensor(y) for y in to_list(labels if labels is not None else [])]
        outputs = to_list(model.network(*inputs))
        losses = to_list(model._loss(*(outputs + labels))) if model._loss else None
        if self.nranks > 1:
            outputs, labels = self._trimmed(self._gathered(outputs), self._gathered(labels))
        metrics = self._update_metrics(outputs, labels)
        if losses is None:
            return metrics
        numbers = [host(loss) for loss in losses]
        return (numbers, metrics) if metrics else numbers

    @no_grad()
    def predict(self, inputs: Any) -> List[np.ndarray]:
        from pycoll.device import get_device

        model = self.model
        model.network.eval()
        model.mode = "test"
        outputs = to_list(model.network(*model._seen(inputs)))
        if self.nranks > 1 and get_device().startswith("gpu"):
            outputs = self._gathered(outputs)
        return [host(o) for o in outputs]
