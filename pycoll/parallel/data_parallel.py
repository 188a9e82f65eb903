"""``pycoll.DataParallel``: paddle's data-parallel wrapper, with torch DDP's semantics."""
from __future__ import annotations

import contextlib
import json
from typing import Any, Callable, Dict, Iterator, List, Optional

import numpy as np

import pycoll.distributed as dist
from pycoll._logging import logger
from pycoll.autograd import is_grad_enabled
from pycoll.distributed.env import group_of
from pycoll.nn import Embedding, Layer
from pycoll.nn.parameter import Parameter
from pycoll.parallel.reducer import MB, Reducer


class DataParallel(Layer):
    """Run ``layers`` on every rank of ``group``; gradients are averaged across ranks in backward.

    At wrap time every rank must hold the same parameter names and shapes; parameters and
    persistable buffers are then broadcast from the group's first rank. A parameter marked
    ``no_sync = True`` (paddle's mark for a rank's own, such as an MoE expert) is neither broadcast
    nor averaged. Gradients are all-reduced in buckets of at most
    ``comm_buffer_size`` MB (the last one, holding the earliest parameters, at most
    ``last_comm_buffer_size`` MB) while backward runs. ``find_unused_parameters=True`` lets a
    step leave some parameters without gradient (they contribute zeros; see the reducer for those
    forward's outputs do not reach but backward does); without it such a step
    still trains (as in paddle): their buckets are reduced after backward, without overlap, and
    a warning names them once. ``no_sync()`` accumulates gradients locally. ``comm_dtype``
    ('float16' or 'bfloat16') compresses gradients on the wire: buckets are cast by the flatten
    kernel and cast back after the all-reduce (off by default; NCCL only: the CPU engine reduces
    16-bit floats as float32, where it would save nothing, and refuses it). The weights of
    ``Embedding(sparse=True)`` sublayers are averaged as rows, as paddle's are (their ``.grad``
    stays rows: pycoll.parallel.row_grads). ``strategy`` is accepted for paddle compatibility; the
    group defines the ranks. With one rank nothing is communicated (as in paddle).
    """

    _api = "DataParallel"  # the name wrap errors start with (sharding's model says its own)

    def __init__(self, layers: Layer, strategy: Any = None, comm_buffer_size: float = 25,
                 last_comm_buffer_size: float = 1, find_unused_parameters: bool = False,
                 group: Optional[dist.Group] = None, comm_dtype: Optional[str] = None):
        super().__init__()
        if not isinstance(layers, Layer):
            raise TypeError(f"DataParallel: layers must be a pycoll.nn.Layer, got {type(layers).__name__}")
        for name, value in (("comm_buffer_size", comm_buffer_size),
                            ("last_comm_buffer_size", last_comm_buffer_size)):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"DataParallel: {name} must be a number of MB, got {value!r}")
            if value < 0:  # 0, as in paddle: a bucket per parameter
                raise ValueError(f"DataParallel: {name}={value!r}; it must be a number of MB >= 0")
        if not isinstance(find_unused_parameters, bool):
            raise TypeError(f"DataParallel: find_unused_parameters must be a bool, got "
                            f"{find_unused_parameters!r}")
        group = group_of(group, "DataParallel")
        self._layers = layers
        self._group = group
        self._strategy = strategy
        self.find_unused_parameters = find_unused_parameters
        self._reducer: Optional[Reducer] = None
        self._sync = True
        if not dist.is_initialized():
            if dist.ParallelEnv().world_size > 1:
                raise RuntimeError("DataParallel: this job has several ranks; call "
                                   "pycoll.distributed.init_parallel_env() before wrapping the model")
        elif dist.get_world_size(group) > 1:
            named = [(n, p) for n, p in layers.named_parameters()
                     if not p.stop_gradient and not getattr(p, "no_sync", False)]
            if not named:
                raise ValueError("DataParallel: layers has no parameter to train (every parameter is "
                                 "stop_gradient or no_sync), so there is nothing to average across ranks")
            wire = _comm_dtype(comm_dtype, group)
            check_same_model(layers, group, self._api, averaging={
                "comm_buffer_size": comm_buffer_size, "last_comm_buffer_size": last_comm_buffer_size,
                "find_unused_parameters": find_unused_parameters, "comm_dtype": comm_dtype})
            sync_params_buffers(layers, group, _root(group))
            options = self._reducer_options()
            if not options.get("shard") and options.get("outer_group") is None:
                options["row_params"] = _row_gradient_weights(layers)
            self._reducer = Reducer([p for _, p in named], [n for n, _ in named], group,
                                    int(comm_buffer_size * MB), int(last_comm_buffer_size * MB),
                                    find_unused_parameters, wire, api=self._api, **options)
            for name, param in layers.named_parameters():
                if param.stop_gradient and not getattr(param, "no_sync", False):
                    param.register_grad_ready_hook(_left_out_of_averaging(name, self._api))

    def _reducer_options(self) -> Dict[str, Any]:
        """Further arguments of the Reducer: sharding's model asks for ``shard`` (each rank
        keeps only its piece of each averaged gradient) and an ``outer_group``."""
        return {}

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        outputs = self._layers(*inputs, **kwargs)
        if self._reducer is not None and is_grad_enabled():
            if self._sync:
                self._reducer.prepare_for_backward(outputs)
            else:
                self._reducer.skip_sync()
        return outputs

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Within this context, backward accumulates gradients locally without communicating."""
        previous, self._sync = self._sync, False
        try:
            yield
        finally:
            self._sync = previous

    @property
    def group(self) -> Any:
        """The group the gradients are averaged over (paddle's attribute): the world when none
        was given."""
        return self._group if self._group is not None else dist.get_group(0)

    def scale_loss(self, loss: Any) -> Any:
        """Deprecated in paddle 2.0 and kept by it as a no-op: returns ``loss`` (gradients are
        averaged in backward)."""
        return loss

    def apply_collective_grads(self) -> None:
        """Deprecated in paddle 2.0 and kept by it as a no-op: backward already all-reduced the
        gradients."""

    def state_dict(self, *args: Any, **kwargs: Any) -> Dict[str, Any]:
        return self._layers.state_dict(*args, **kwargs)

    def _inference_layer(self) -> Layer:
        return self._layers._inference_layer()

    def set_state_dict(self, state_dict: Dict[str, Any], *args: Any, **kwargs: Any) -> None:
        """The wrapped layer's ``set_state_dict`` (its keys); returns None, as paddle's."""
        self._layers.set_state_dict(state_dict, *args, **kwargs)

    set_dict = set_state_dict
    load_dict = set_state_dict


def _comm_dtype(name: Optional[str], group: Optional[dist.Group]) -> Optional[Any]:
    """The dtype gradients travel in, checked against what the group's backend can reduce."""
    if name is None:
        return None
    if name not in ("float16", "bfloat16"):
        raise ValueError(f"DataParallel: comm_dtype={name!r}; use None, 'float16' or 'bfloat16'")
    try:
        dtype = np.dtype(name)  # bfloat16 is known to NumPy through ml_dtypes, which CuPy brings
    except TypeError:
        dtype = None
    backend = (group or dist.get_group(0)).backend_name
    if dtype is None or backend == "cpu" or not dist.can_reduce(dtype, dist.ReduceOp.SUM, group):
        # the cpu (MPI) engine reduces 16-bit floats as float32: compressing would save nothing
        raise ValueError(f"DataParallel: comm_dtype={name!r} cannot be all-reduced by the {backend} "
                         f"backend in 16 bits; leave comm_dtype=None there")
    return dtype


def _left_out_of_averaging(name: str, api: str) -> Callable[[Any], None]:
    """A grad-ready hook for a parameter frozen (``stop_gradient``) when the model was wrapped:
    the reducer's buckets were built without it, so once unfrozen its gradient stays this rank's
    own and the replicas drift apart (torch's DDP is silent there too). Says so once."""
    said = []

    def hook(param: Any) -> None:
        # quiet once a later wrap (the advice below) took it into its reducer's buckets
        averaged = any(isinstance(getattr(h, "__self__", None), Reducer) for h in param._ready_hooks.values())
        if not said and not averaged:
            said.append(True)
            logger.warning("%s: parameter %r was frozen (stop_gradient=True) when the model was wrapped and "
                           "now gets a gradient, which is not averaged across ranks: each rank trains its own "
                           "copy and the replicas drift apart. Unfreeze it before wrapping (wrap again after "
                           "unfreezing), or mark it no_sync=True if each rank is meant to keep its own",
                           api, name)
    return hook


def _row_gradient_weights(layers: Layer) -> List[Parameter]:
    """The weights of ``layers``' ``Embedding(sparse=True)`` sublayers (paddle's reducer looks for
    the same): their gradients come as rows, and are averaged as rows."""
    return [sub.weight for sub in layers.sublayers(include_self=True)
            if isinstance(sub, Embedding) and sub.sparse and not sub.weight.stop_gradient]


def _root(group: Optional[dist.Group]) -> int:
    return group.ranks[0] if group is not None else 0


def check_same_model(layers: Layer, group: Optional[dist.Group], api: str, skip_distributed: bool = False,
                     averaging: Optional[Dict[str, Any]] = None) -> None:
    """Every rank of ``group`` must wrap the same parameter and buffer names, shapes and dtypes
    (with ``skip_distributed``, the split weights of model parallelism, ``is_distributed``, are
    left out: each rank holds its own block). With ``averaging`` (the wrapper's reducer
    arguments), also the same arguments and the same parameters to average (neither
    ``stop_gradient`` nor ``no_sync``): the buckets each rank all-reduces are built from them, and
    buckets that differ between ranks would be paired by MPI without a word, into wrong gradients.
    Collective: every rank compares every rank's description, and where they differ every rank
    raises the same ValueError, which starts with ``api`` and lists the differences, before
    anything of the model is sent."""
    xp = (group or dist.get_group(0)).array_module  # NumPy, or CuPy on nccl
    entries = {n if isinstance(t, Parameter) else "buffer " + n: [list(t.shape), str(t.dtype)]
               for n, t in synced_state(layers, skip_distributed).items()}
    if averaging is not None:
        for n, p in layers.named_parameters():
            if n in entries:
                entries[n].append("frozen" if p.stop_gradient else "averaged")
        entries[f"{api} arguments"] = averaging
    text = json.dumps(entries).encode()
    lengths = []
    dist.all_gather(lengths, xp.asarray([len(text)], dtype=np.int64), group=group)
    lengths = [int(l[0]) for l in lengths]
    padded = np.zeros(max(lengths), np.uint8)
    padded[:len(text)] = np.frombuffer(text, np.uint8)
    everyone = []
    dist.all_gather(everyone, xp.asarray(padded), group=group)
    models = [json.loads(bytes(np.asarray(a.tolist(), np.uint8)[:n]).decode())
              for a, n in zip(everyone, lengths)]
    ranks = group.ranks if group is not None else list(range(len(models)))
    for rank, model in zip(ranks[1:], models[1:]):
        first = models[0]
        if list(model.items()) != list(first.items()):  # the order too: buckets follow it
            diffs = [f"{n}: rank {ranks[0]} has {first.get(n)}, rank {rank} has {model.get(n)}"
                     for n in dict.fromkeys(list(first) + list(model)) if first.get(n) != model.get(n)]
            diffs = diffs or [f"the order of the names: rank {ranks[0]} has {list(first)}, rank {rank} has "
                              f"{list(model)}"]
            described = "[shape, dtype, averaged or frozen]" if averaging is not None else "[shape, dtype]"
            raise ValueError(f"{api}: the ranks wrap different models ({described} per parameter and "
                             f"persistable buffer):\n  " + "\n  ".join(diffs[:10]))


def synced_state(model: Layer, skip_distributed: bool = False, experts: bool = False) -> Dict[str, Any]:
    """The tensors a wrap or ``sync_params_buffers`` gives every rank from the source rank, by
    name, as paddle chooses them: the parameters and the persistable buffers, less those marked
    ``no_sync`` (each rank keeps its own, as MoE experts do; with ``experts``, those also marked
    ``expert`` are given) and, with ``skip_distributed``, model parallelism's split weights
    (``is_distributed``). A tensor shared under two names is listed once."""
    chosen: Dict[str, Any] = {}
    seen = set()
    for name, tensor in Layer.state_dict(model).items():
        local = getattr(tensor, "no_sync", False) and not (experts and getattr(tensor, "expert", False))
        if id(tensor) in seen or local or (skip_distributed and getattr(tensor, "is_distributed", False)):
            continue
        seen.add(id(tensor))
        chosen[name] = tensor
    return chosen


def sync_params_buffers(model: Layer, comm_group: Optional[dist.Group] = None, src_rank: int = 0,
                        is_model_parallel: bool = False, fuse_params: bool = True,
                        is_moe_sharding_parallel: bool = False) -> None:
    """paddle's ``distributed.parallel.sync_params_buffers``: every rank of ``comm_group`` (default:
    all) takes rank ``src_rank``'s (a global rank) parameters and persistable buffers, in place, as
    DataParallel does when it wraps a model. Also the way to bring BatchNorm's running statistics
    back in step, which each rank updates from its own batches. Parameters marked ``no_sync`` keep
    their own values (with ``is_moe_sharding_parallel``, those also marked ``expert`` are sent);
    with ``is_model_parallel``, so do the split weights of model parallelism (``is_distributed``).
    ``fuse_params`` is accepted for paddle's signature (pycoll broadcasts tensor by tensor)."""
    if not isinstance(model, Layer):
        raise TypeError(f"sync_params_buffers: model must be a Layer, got {type(model).__name__}")
    members = comm_group.ranks if comm_group is not None else list(range(dist.get_world_size()))
    if src_rank not in members:
        raise ValueError(f"sync_params_buffers: src_rank={src_rank!r} is not a rank of the group {members}")
    for tensor in synced_state(model, is_model_parallel, is_moe_sharding_parallel).values():
        dist.broadcast(tensor, src=src_rank, group=comm_group)
