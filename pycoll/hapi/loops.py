"""The loops of ``Model``: the loader a dataset is read through, and one pass over a loader in
'train', 'eval' or 'predict' mode, calling the callbacks around each step (paddle's
``_run_one_epoch``)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from pycoll.hapi.callback_base import CallbackList
from pycoll.hapi.steps import to_list
from pycoll.io import DataLoader, Dataset, DistributedBatchSampler, IterableDataset


def make_loader(data: Any, batch_size: int, shuffle: bool = False, drop_last: bool = False,
                num_workers: int = 0) -> Any:
    """A ``Dataset`` read through a ``DataLoader`` whose ``DistributedBatchSampler`` gives this rank
    its share (all of it on one rank), in order unless ``shuffle``; an ``IterableDataset`` in
    batches of ``batch_size``; anything else (a ``DataLoader``, any iterable of batches) as it is."""
    if isinstance(data, IterableDataset):
        return DataLoader(data, batch_size=batch_size, drop_last=drop_last, num_workers=num_workers)
    if isinstance(data, Dataset):
        sampler = DistributedBatchSampler(data, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last)
        return DataLoader(data, batch_sampler=sampler, num_workers=num_workers, return_list=True)
    return data


def length(loader: Any) -> Optional[int]:
    """The number of batches, None where the loader cannot tell."""
    try:
        return len(loader)
    except Exception:
        return None


def flatten(data: Any) -> List[Any]:
    """A batch as one list of fields: nested lists and tuples in order, dicts by sorted key (a
    loader may give ``[x, y]``, ``(x, y)`` or ``([x1, x2], [y])``)."""
    if isinstance(data, (list, tuple)):
        return [leaf for item in data for leaf in flatten(item)]
    if isinstance(data, dict):
        return [leaf for key in sorted(data) for leaf in flatten(data[key])]
    return [data]


def any_rank(flag: bool, nranks: int) -> bool:
    """Whether ``flag`` is set on any rank (every rank must call this)."""
    if nranks == 1:
        return flag
    import pycoll.distributed as dist

    flags: List[Any] = []
    dist.all_gather_object(flags, bool(flag))
    return any(flags)


def all_ranks_here(nranks: int) -> None:
    """Return once every rank has called this (a barrier; nothing on one rank)."""
    if nranks > 1:
        import pycoll.distributed as dist

        dist.barrier()


def run_epoch(model: Any, loader: Any, callbacks: CallbackList, mode: str) -> Tuple[Dict[str, Any], List[Any]]:
    """One pass of ``model`` over ``loader``: (the logs of its last step, and in 'predict' mode
    every batch's outputs). The first ``len(model._inputs)`` fields of a batch are the network's
    inputs, the rest its labels. In 'train' mode the optimizer steps every
    ``model._accumulate`` batches and at the last one; each batch's logs hold the loss of the
    batch and the metrics accumulated since the pass began."""
    logs: Dict[str, Any] = {}
    outputs: List[Any] = []
    steps = length(loader)
    count = len(model._inputs)
    names = model._metrics_name()
    if mode == "eval":
        model._steps.reset_eval()
    for step, batch in enumerate(loader):
        data = flatten(batch)
        batch_size = data[0].shape[0]
        callbacks.on_batch_begin(mode, step, logs)
        if mode == "predict":
            outputs.append(model.predict_batch(data[:count]))
        else:
            if mode == "train":
                update = (step + 1) % model._accumulate == 0 or step + 1 == steps
                outs = model.train_batch(data[:count], data[count:], update)
            else:
                outs = model.eval_batch(data[:count], data[count:])
            values = []
            if model._loss is not None:
                values.append([float(loss) for loss in (outs[0] if model._metrics else outs)])
            for metric in model._metrics:
                values.extend(to_list(metric.accumulate()))
            logs.update(zip(names, values))
        logs["step"] = step
        merged = model._steps.eval_batch_size if mode == "eval" else 0
        logs["batch_size"] = merged if merged > 0 else batch_size * model._steps.nranks
        callbacks.on_batch_end(mode, step, logs)
        if model._iters_left is not None:
            model._iters_left -= 1
            if model._iters_left <= 0:
                model.stop_training = True
                model._iters_left = None
                break
    model._reset_metrics()
    return logs, outputs
