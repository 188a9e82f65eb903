"""The gradient reducer behind DataParallel (torch's reducer.cpp design, in a few hundred lines).

Parameters are grouped into buckets. During backward each parameter's grad-ready hook counts
down its bucket; a bucket whose gradients are all final is flattened (one fused kernel call,
the 1/world scale folded in) and all-reduced asynchronously, so communication overlaps the
rest of backward. Buckets are launched strictly in bucket order (every rank must start its
collectives in the same order, whatever order its own gradients arrive in). At the end of
backward the reducer waits for every bucket and unflattens the averaged gradients into
``.grad``. After the first synchronised step the buckets are rebuilt once from the observed
ready order, rank 0's order being broadcast so that every rank agrees (not under an
``outer_group``, below: the buckets keep the parameters' order there).

With ``shard=True`` (sharding levels ``os_g``/``p_g_os``) a bucket is reduce-scattered instead
of all-reduced, in ZeRO's layout (``segments.py``): each rank receives the average of its own
piece of every parameter, which it adds into its sharded gradient (``sharded_grad``), and no rank
keeps a whole gradient (``.grad`` is None after backward) or a whole buffer. Shapes are recorded
at construction, so the reducer also works on parameters whose memory is released between uses.
With ``outer_group`` (sharding inside data parallelism: the ranks holding the same pieces in the
other replicas) what a bucket brings is then all-reduced over that group too, the average being
over both groups' ranks.
"""
from __future__ import annotations

import time
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

import pycoll.distributed as dist
from pycoll import _graph, autograd, kernels
from pycoll._logging import logger
from pycoll.parallel import row_grads
from pycoll.parallel.buckets import assign_buckets
from pycoll.parallel.segments import Segments

MB = 1 << 20


class Bucket:
    """Parameters whose gradients travel together in one flat buffer of ``dtype`` (``comm_dtype``
    when gradients are compressed for the wire, else the parameters'), reduce-scattered in
    ``layout`` when it is given, else all-reduced. ``buffer`` is None while not allocated. Each
    parameter has a flag: 1 where this rank computed its gradient, 0 where it did not, so that
    after the collective every rank knows whether ANY rank did (see ``Reducer._finish``). An
    all-reduced buffer has them after its ``size`` gradient elements; a reduce-scattered one
    after each rank's part (``layout.width + flags`` elements a rank)."""

    def __init__(self, params: List[Any], size: int, dtype: Any, layout: Optional[Segments] = None):
        self.params = params
        self.size = size
        self.flags = len(params)
        self.dtype = dtype
        self.layout = layout
        self.buffer: Optional[Any] = None
        self.part: Optional[Any] = None  # this rank's part of a reduce-scatter
        self.pending = len(params)
        self.task: Optional[Any] = None


class Reducer:
    def __init__(self, params: Sequence[Any], names: Sequence[str], group: Any, bucket_bytes: int,
                 last_bucket_bytes: int, find_unused_parameters: bool, comm_dtype: Optional[Any] = None,
                 shard: bool = False, outer_group: Optional[Any] = None, api: str = "DataParallel",
                 row_params: Sequence[Any] = ()):
        if row_params and (shard or outer_group is not None):  # a piece of a row gradient is dense
            raise ValueError(f"{api}: row gradients are averaged over one group, unsharded")
        self.params = list(params)
        self.shapes = [tuple(p.array.shape) for p in self.params]
        self.dtypes = [p.array.dtype for p in self.params]
        self.shard = shard
        self.names = list(names)
        self.api = api  # what the warnings name: DataParallel, or the sharding that wraps the model
        self.group = group
        self.world = dist.get_world_size(group)
        self.outer_group = outer_group
        self._scale = 1.0 / (self.world * (dist.get_world_size(outer_group) if outer_group is not None else 1))
        self._xp = (group or dist.get_group(0)).array_module  # NumPy, or CuPy on nccl
        self.cap = bucket_bytes
        self.last_cap = last_bucket_bytes
        self.find_unused = find_unused_parameters
        self.comm_dtype = comm_dtype
        self._index = {id(p): i for i, p in enumerate(self.params)}
        # parameters whose gradients come as rows (Embedding(sparse=True)): averaged as rows
        # (row_grads) at the end of backward, in no bucket
        rows = {id(r) for r in row_params}
        self._rows_at = [i for i, p in enumerate(self.params) if id(p) in rows]  # their indices
        self._build(reversed(range(len(self.params))))
        for p in self.params:
            p.register_grad_ready_hook(self._on_ready)
        self._active = False        # a synchronised backward is expected / in progress
        self._started = False       # a hook fired in this step's backward
        self._next_bucket = 0       # the next bucket to launch (launch order = bucket order)
        self._ready: List[bool] = []  # per parameter: its gradient is final in this step
        # recorded during the first synced step, to rebuild the buckets from. Not with an
        # outer_group: each replica's group would agree on its own order, and the outer all-reduce
        # would then add up buckets holding other parameters (a branch taken in one replica only)
        self._ready_order: Optional[List[int]] = [] if outer_group is None else None
        self._rebuilt = False
        self._unused: List[Any] = []  # parameters this step's forward did not reach (find_unused)
        self._sharded: Dict[int, Any] = {}  # shard mode: this rank's piece of each averaged gradient
        self._warned_late = False  # said once that some parameters got no gradient (see _finish)
        self._reduced = False  # this forward's backward averaged the gradients and kept its graph (_on_ready)
        self._warned_again = False  # said once that a backward came after that
        self._index_in_group = group.rank if group is not None else dist.get_rank()
        self.stats = {"flatten_s": 0.0, "unflatten_s": 0.0}

    # -- buckets -------------------------------------------------------------------------
    def _build(self, order) -> None:
        sizes = [int(np.prod(shape)) for shape in self.shapes]
        nbytes = [n * d.itemsize for n, d in zip(sizes, self.dtypes)]
        groups = assign_buckets([i for i in order if i not in self._rows_at], nbytes, self.dtypes, self.cap,
                                self.last_cap)
        self.buckets = []
        for g in groups:
            layout = Segments([self.shapes[i] for i in g], self.world) if self.shard else None
            size = layout.width * self.world if layout else sum(sizes[i] for i in g)
            self.buckets.append(Bucket([self.params[i] for i in g], size, self.comm_dtype or self.dtypes[g[0]],
                                       layout))
        if not self.shard:  # all-reduce buckets keep their buffers from step to step
            for b in self.buckets:
                b.buffer = self._xp.empty(b.size + b.flags, dtype=b.dtype)
        self._bucket_of = {id(p): b for b in self.buckets for p in b.params}

    def bucket_indices(self) -> List[List[int]]:
        """The buckets as parameter indices, in launch order."""
        return [[self._index[id(p)] for p in b.params] for b in self.buckets]

    def _rebuild_from_ready_order(self) -> None:
        """Rebuild the buckets once from the ready order of the first step, rank 0's order winning."""
        seen = list(dict.fromkeys(self._ready_order))
        order = self._xp.asarray(seen + [i for i in reversed(range(len(self.params))) if i not in set(seen)],
                                 dtype=np.int64)
        dist.broadcast(order, src=self.group.ranks[0] if self.group else 0, group=self.group)
        self._build(order.tolist())
        self._ready_order = None
        self._rebuilt = True

    # -- one step ------------------------------------------------------------------------
    def prepare_for_backward(self, outputs: Any) -> None:
        """Called by DataParallel's forward: arm the reducer for the coming backward. Nothing is
        communicated here: a forward that no backward follows (evaluation on one rank, say) must
        leave the ranks' collectives in step; the step's collectives start in backward
        (``_start_backward``)."""
        if self._started:
            raise RuntimeError("DataParallel: the previous backward did not finish reducing gradients")
        self._active = True
        self._reduced = False
        self._unused = []
        if self.find_unused:
            reached = {id(t) for t in autograd.graph_leaves(outputs)}
            self._unused = [p for p in self.params if id(p) not in reached]

    def _start_backward(self, first: Any) -> None:
        """The first gradient of a synchronised backward is final: from here every rank makes
        the step's collectives in the same order (the buckets' rebuild after the first step, then
        the buckets)."""
        self._started = True
        autograd.queue_callback(self._finish)
        if not self._rebuilt and self._ready_order:
            self._rebuild_from_ready_order()
        for b in self.buckets:
            b.pending = len(b.params)
            b.task = None
        self._ready = [False] * len(self.params)
        self._next_bucket = 0
        # find_unused: the parameters forward's outputs do not reach count as ready now, so that
        # their buckets need not wait for the end of backward (one that gets a gradient after all
        # is taken if its bucket has not gone yet: _mark_ready). ``first``, whose gradient starts
        # this backward, is ready with it.
        self._mark_ready(first)
        for p in self._unused:
            if p is not first:
                self._mark_ready(p)

    def skip_sync(self) -> None:
        """A forward under no_sync(): the coming backward only accumulates locally."""
        self._active = False
        self._reduced = False

    def sharded_grad(self, param: Any) -> Optional[Any]:
        """Shard mode: this rank's piece of ``param``'s averaged gradient, summed over the
        synchronised backwards since the last ``clear_sharded_grads`` (None: none yet)."""
        return self._sharded.get(self._index[id(param)])

    def clear_sharded_grads(self, set_to_zero: bool = True) -> None:
        """Zero this rank's pieces in place (``clear_grad``'s default: a parameter no later
        backward reaches then steps with a zero gradient, as its zeroed ``.grad`` does unsharded),
        or drop them."""
        if not set_to_zero:
            self._sharded = {}
        for piece in self._sharded.values():
            piece.fill(0)

    def _on_ready(self, param: Any) -> None:
        if not self._active:
            if self._reduced and not self._warned_again:  # torch raises here; paddle says nothing
                self._warned_again = True
                logger.warning("%s: a second backward of one forward (retain_graph=True) adds this rank's own "
                               "gradients to the averaged ones, so the replicas drift apart; run forward again "
                               "before each backward, or sum the losses into one backward", self.api)
            return
        if not self._started:
            self._start_backward(param)
        else:
            self._mark_ready(param)
        for b in self.buckets[:self._next_bucket]:
            b.task.is_completed()  # drive MPI's progress while backward goes on

    def _mark_ready(self, param: Any) -> None:
        index = self._index[id(param)]
        if id(param) not in self._bucket_of:  # averaged as rows, after backward
            self._ready[index] = True
            return
        if self._ready[index]:  # counted unused at backward's start (find_unused), reached after all
            if self._bucket_of[id(param)].task is not None:
                raise RuntimeError(
                    f"DataParallel: parameter {self.names[index]!r} got its gradient after its bucket was "
                    f"reduced: forward's outputs do not reach it, so find_unused_parameters=True took it as "
                    f"unused, yet backward reached it (it is used outside forward, in the loss, or through "
                    f"an earlier forward's graph). Use it inside forward, or pass "
                    f"find_unused_parameters=False: every bucket then waits for its gradients")
            return  # its bucket has not gone: the gradient goes with it
        self._ready[index] = True
        if self._ready_order is not None:
            self._ready_order.append(index)
        self._bucket_of[id(param)].pending -= 1
        while self._next_bucket < len(self.buckets) and self.buckets[self._next_bucket].pending == 0:
            self._launch(self.buckets[self._next_bucket])
            self._next_bucket += 1

    def _launch(self, bucket: Bucket) -> None:
        """Flatten ``bucket``'s gradients and start its collective; a parameter without gradient
        on this rank sends zeros, flagged so (see ``_finish``)."""
        start = time.perf_counter()
        grads = [p.grad.array if p.grad is not None else self._zeros(p) for p in bucket.params]
        flags = self._xp.asarray([p.grad is not None for p in bucket.params], dtype=bucket.dtype)
        if bucket.buffer is None:  # a reduce-scatter's, made each step: every rank's part, then flags
            bucket.buffer = self._xp.empty(bucket.size + self.world * bucket.flags, dtype=bucket.dtype)
        try:
            if bucket.layout is None:
                kernels.flatten(grads, out=bucket.buffer[:bucket.size], scale=self._scale)
                bucket.buffer[bucket.size:] = flags
            else:  # the flags scaled as the gradients are: still > 0 where a rank had one
                bucket.layout.pack(grads, bucket.buffer, self._scale, self._xp, tail=flags)
        except TypeError as exc:  # the kernel's dtype check, in the user's terms (paddle's ValueError)
            changed = sorted({str(g.dtype) for g in grads} - {str(bucket.dtype)})
            if not changed:
                raise
            raise ValueError(f"DataParallel: gradients of dtype {changed} in a bucket built for {bucket.dtype}: "
                             f"the model's parameters changed dtype after it was wrapped (model.to(dtype), "
                             f".float(), .astype()); convert the model before wrapping it") from exc
        self.stats["flatten_s"] += time.perf_counter() - start
        if bucket.layout is None:
            bucket.task = dist.all_reduce(bucket.buffer, group=self.group, sync_op=False)
        else:
            width = bucket.layout.width + bucket.flags
            bucket.part = self._xp.empty(width, dtype=bucket.dtype)
            bucket.task = dist.reduce_scatter(bucket.part, [bucket.buffer[r * width:(r + 1) * width]
                                                            for r in range(self.world)],
                                              group=self.group, sync_op=False)

    def _finish(self) -> None:
        """End of a synchronised backward: wait for every bucket and write the averaged grads."""
        self._started = False
        self._active = False
        # only a backward that kept its graph can be followed by another backward of its forward;
        # one through the wrapped layers alone, after it, is another graph and says nothing
        self._reduced = _graph.retains_graph()
        if self._next_bucket < len(self.buckets):
            # parameters this backward did not reach (not counted unused from forward's outputs):
            # their buckets go now, still in bucket order on every rank, so the ranks' collectives
            # pair up whatever each one used
            if not self._warned_late and not self.find_unused:
                self._warned_late = True
                missing = [name for name, ready in zip(self.names, self._ready) if not ready]
                hint = " If that is expected, pass find_unused_parameters=True" if self.api == "DataParallel" else ""
                logger.warning("%s: parameters %s received no gradient in this backward; their buckets were "
                               "reduced after it, without overlap.%s", self.api, missing[:8], hint)
            while self._next_bucket < len(self.buckets):
                self._launch(self.buckets[self._next_bucket])
                self._next_bucket += 1
        if self._rows_at:  # while the buckets travel
            row_grads.average([self.params[i] for i in self._rows_at], [self.shapes[i] for i in self._rows_at],
                              self.group, self.world, self._xp)
        for b in self.buckets:
            b.task.wait()
            if self.outer_group is not None:
                dist.all_reduce(b.buffer if b.layout is None else b.part, group=self.outer_group)
            start = time.perf_counter()
            if b.layout is not None:
                self._keep_pieces(b)
            else:
                # a parameter without gradient here takes the average where another rank computed
                # one (the bucket's flags say: a zero average does not, a rank may compute zeros),
                # and keeps None where no rank did (paddle's)
                if any(p.grad is None for p in b.params):
                    flags = b.buffer[b.size:].tolist()  # on the host (on a GPU, one sync a bucket)
                    for p, flag in zip(b.params, flags):
                        if p.grad is None and flag > 0:
                            p.grad = self._zeros(p)
                kernels.unflatten(b.buffer[:b.size], [p.grad.array if p.grad is not None else self._zeros(p)
                                                      for p in b.params])
            self.stats["unflatten_s"] += time.perf_counter() - start

    def _keep_pieces(self, bucket: Bucket) -> None:
        """Shard mode: add this rank's averaged pieces into its sharded gradients (a parameter no
        rank computed a gradient for gets none, as in DataParallel); let go of the whole
        gradients and the buffers."""
        width = bucket.layout.width
        pieces = bucket.layout.part_pieces(bucket.part[:width], self._index_in_group)
        computed = bucket.part[width:].tolist()  # on the host (on a GPU, one sync a bucket)
        for p, piece, flag in zip(bucket.params, pieces, computed):
            i = self._index[id(p)]
            if flag > 0 and i in self._sharded:
                self._sharded[i] += piece
            elif flag > 0:
                self._sharded[i] = piece.astype(self.dtypes[i], copy=True)
            p.grad = None
        bucket.buffer = bucket.part = None

    def _zeros(self, param: Any) -> Any:
        """Zeros of ``param``'s recorded shape and dtype, in the group's array module."""
        i = self._index[id(param)]
        return self._xp.zeros(self.shapes[i], dtype=self.dtypes[i])
