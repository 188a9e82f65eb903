"""The model side of sharding: DataParallel whose gradients are reduce-scattered (levels
``os_g`` and ``p_g_os``) and, at ``p_g_os``, parameters of which each rank holds only its piece
between uses (ZeRO's layout, ``pycoll.parallel.segments``).

At ``p_g_os`` a layer's sharded parameters are all-gathered just before its forward (every rank
runs the same layers in the same order) and let go again as soon as they are no longer needed:
right after the forward when no graph is recorded, else the moment the parameter's gradient is
final in backward (the graph's backward functions hold the values they need until then; this
is torch FSDP's SHARD_GRAD_OP timing rather than paddle's re-gather in backward). The rank's
piece lives on in ``piece()``, which the optimizer updates.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Set, Tuple

import numpy as np

import pycoll.distributed as dist
from pycoll._errors import CollectiveError
from pycoll.autograd import is_grad_enabled
from pycoll.device import array_module, to_module
from pycoll.distributed import check
from pycoll.nn import Layer
from pycoll.parallel import DataParallel
from pycoll.parallel.data_parallel import check_same_model
from pycoll.parallel.buckets import assign_buckets
from pycoll.parallel.segments import Segments, piece_bounds

GATHER_BUCKET_BYTES = 32 << 20  # all-gathers after a step move at most this much at once
_TAG_BYTES = 8  # an int64 at the start of each rank's gathered part: which parameters it holds


class GroupShardedModel(DataParallel):
    """``layers`` under DataParallel over ``group`` at sharding ``level``: each rank owns the
    piece ``piece_bounds(size, nranks, group rank)`` of every trainable parameter. Gradients are
    all-reduced at ``os``, reduce-scattered to the pieces' owners at ``os_g``/``p_g_os``; at
    ``p_g_os`` the parameters in ``lazy`` (ids) are held whole only while in use. With
    ``dp_group`` (paddle's: sharding inside data parallelism, the ranks of the other replicas
    that hold this rank's pieces) gradients are averaged over both groups."""

    _api = "group_sharded_parallel"

    def __init__(self, layers: Layer, group: Optional[dist.Group], level: str, lazy: Set[int],
                 dp_group: Optional[dist.Group] = None, sync_buffers: bool = False, **data_parallel: Any):
        self._level = level
        self._sync_buffers = bool(sync_buffers)
        self._dp_group = dp_group if dp_group is not None and dp_group.nranks > 1 else None
        super().__init__(layers, group=group, **data_parallel)
        if self._dp_group is not None:  # every replica starts from the first one's values
            check_same_model(layers, self._dp_group, self._api)
            for tensor in list(layers.parameters()) + list(layers.buffers()):
                dist.broadcast(tensor, src=self._dp_group.ranks[0], group=self._dp_group)
        self.shard_group = group
        several = dist.is_initialized() and dist.get_world_size(group) > 1
        self._nranks = dist.get_world_size(group) if several else 1
        self._me = dist.get_rank(group) if several else 0
        self.trainable = [p for p in layers.parameters() if not p.stop_gradient]
        self._order = {id(p): i for i, p in enumerate(self.trainable)}  # what a gather's tag names
        self._xp = array_module(self.trainable[0].array) if self.trainable else np
        self._shapes = {id(p): tuple(p.array.shape) for p in self.trainable}  # this rank's arrays
        self._bounds: Dict[int, Tuple[int, int]] = {id(p): piece_bounds(p.array.size, self._nranks, self._me)
                                                    for p in self.trainable}
        self._lazy = [p for p in self.trainable if id(p) in lazy]  # frozen parameters stay whole
        self._pieces = {id(p): p.array.reshape(-1)[slice(*self._bounds[id(p)])].copy() for p in self._lazy}
        lazy = {id(p) for p in self._lazy}
        for layer in layers.sublayers(include_self=True):
            mine = [p for p in layer.parameters(include_sublayers=False) if id(p) in lazy]
            if mine:
                layer.register_forward_pre_hook(lambda _layer, _inputs, mine=mine: self.gather(mine))
                layer.register_forward_post_hook(lambda _layer, _inputs, _outputs, mine=mine:
                                                 None if is_grad_enabled() else self._release(mine))
        for p in self._lazy:
            p.register_grad_ready_hook(lambda param: param._clear_data())
        self._release(self._lazy)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """With ``sync_buffers``, every buffer comes from the group's first rank (and from the
        first of ``dp_group``) before each forward, as paddle's sharded models do. A BatchNorm's
        running statistics are not buffers there (nor in paddle): non-trainable parameters."""
        if self._sync_buffers:
            groups = ([self.shard_group] if self._nranks > 1 else []) + (  # shard_group None: the world
                [self._dp_group] if self._dp_group is not None else [])
            for buffer in self._layers.buffers():
                for group in groups:
                    dist.broadcast(buffer, src=group.ranks[0] if group is not None else 0, group=group)
        return super().forward(*inputs, **kwargs)

    def _reducer_options(self) -> Dict[str, Any]:
        return {"shard": self._shards_gradients(), "outer_group": self._dp_group}

    def _shards_gradients(self) -> bool:
        return self._level != "os"

    # -- pieces ---------------------------------------------------------------------------
    def piece(self, param: Any) -> Any:
        """This rank's piece of ``param`` (1-D; a view into the whole parameter unless it is
        held only in use): what the optimizer updates."""
        if id(param) in self._pieces:
            return self._pieces[id(param)]
        return param.array.reshape(-1)[slice(*self._bounds[id(param)])]

    def grad_piece(self, param: Any) -> Optional[Any]:
        """This rank's piece of ``param``'s averaged gradient, or None when it has none."""
        if self._reducer is not None and self._shards_gradients():
            return self._reducer.sharded_grad(param)
        if param.grad is None:
            return None
        return param.grad.array.reshape(-1)[slice(*self._bounds[id(param)])]

    def parameter_bytes(self) -> int:
        """Bytes of parameter memory this rank holds now: whole parameters and its own pieces."""
        return int(sum(p.array.nbytes for p in self.parameters()) + sum(a.nbytes for a in self._pieces.values()))

    def gradient_bytes(self) -> int:
        """Bytes of gradient memory this rank holds now: whole gradients and its own pieces."""
        whole = sum(p.grad.array.nbytes for p in self.parameters() if p.grad is not None)
        sharded = self._reducer is not None and self._shards_gradients()
        pieces = [self.grad_piece(p) for p in self.trainable] if sharded else []
        return int(whole + sum(a.nbytes for a in pieces if a is not None))

    def clear_grad_pieces(self, set_to_zero: bool = True) -> None:
        if self._reducer is not None:
            self._reducer.clear_sharded_grads(set_to_zero)

    # -- moving whole parameters ----------------------------------------------------------
    def _all_gather(self, params: List[Any], targets: List[Any]) -> None:
        """Every rank's pieces of ``params`` (of one dtype) into the whole arrays ``targets``.

        Each rank's part starts with 8 bytes naming ``params[0]`` (its place among the trainable
        parameters), which the ranks compare before anything is unpacked: ranks gathering
        different layers (a forward whose layers depend on the rank) would otherwise swap
        halves of each other's parameters silently. Layers of different sizes are refused by the
        all-gather itself on its compared calls (`agreement.due`): the ranks then gather the tags
        alone, to name the layers. On its other calls a tag at the start lands where it is read
        (MPI fails the gather on the ranks whose buffer was too short, and the others read the
        tags). The comparison reads the tags on the host: always for host arrays, under
        ``PYCOLL_CHECK`` for device ones (a sync per gather)."""
        layout = Segments([self._shapes[id(p)] for p in params], self._nranks)
        dtype = np.dtype(params[0].dtype)
        nbytes = layout.width * dtype.itemsize
        stride = _TAG_BYTES + -(-nbytes // _TAG_BYTES) * _TAG_BYTES  # every rank's tag aligned for int64
        raw = self._xp.empty(stride, dtype=np.uint8)
        raw[:_TAG_BYTES].view(np.int64)[...] = self._order[id(params[0])]
        body = slice(_TAG_BYTES, _TAG_BYTES + nbytes)
        layout.pack_part([self.piece(p) for p in params], raw[body].view(dtype), self._xp)
        parts: List[Any] = []
        try:
            dist.all_gather(parts, raw, group=self.shard_group)  # views of the received buffer: no copy
        except ValueError:  # refused on every rank: parts of different sizes
            tags: List[Any] = []
            dist.all_gather(tags, raw[:_TAG_BYTES], group=self.shard_group)
            self._same_params(tags)
            raise
        if self._xp is np or check.enabled:
            self._same_params(parts)
        layout.unpack([p[body].view(dtype) for p in parts], targets, self._xp)

    def _same_params(self, parts: List[Any]) -> None:
        """CollectiveError unless every rank's part was of the same parameters (its tag)."""
        tags = [int(to_module(p[:_TAG_BYTES], np).view(np.int64)[0]) for p in parts]
        if len(set(tags)) > 1:
            named = ", ".join(f"rank {r}: {self.trainable[t].name}" for r, t in enumerate(tags))
            raise CollectiveError(
                f"{self._api}: at level p_g_os the ranks gathered the parameters of different layers ({named}): "
                f"every rank must run the same layers in the same order, as paddle's stage 3 requires")

    def gathered(self, params: List[Any]) -> Dict[int, Any]:
        """New whole arrays of ``params``, by id, assembled from every rank's pieces (collective;
        the parameters themselves are left as they are)."""
        wholes: Dict[int, Any] = {}
        for dtype_params in _by_dtype(params):
            whole = [self._xp.empty(self._shapes[id(p)], dtype=p.dtype) for p in dtype_params]
            self._all_gather(dtype_params, whole)
            wholes.update(zip(map(id, dtype_params), whole))
        return wholes

    def gather(self, params: List[Any]) -> None:
        """Bring the whole of ``params`` (held only in use) to every rank."""
        wholes = self.gathered(params)
        for p in params:
            p._set_data(wholes[id(p)])

    def keep_pieces(self, params: List[Any]) -> None:
        """``params`` (held only in use) were gathered and then written whole (a state dict was
        loaded into them): take this rank's pieces from them, then let them go."""
        for p in params:
            if p.array.size:
                self._pieces[id(p)][...] = p.array.reshape(-1)[slice(*self._bounds[id(p)])]
        self._release(params)

    def _release(self, params: List[Any]) -> None:
        for p in params:
            p._clear_data()

    def after_step(self) -> None:
        """The optimizer updated this rank's pieces: make the parameters held whole on every
        rank whole again (all-gathers in buckets), and let go of those held only in use."""
        if self._nranks == 1:
            return
        held = [p for p in self.trainable if id(p) not in self._pieces]
        order = list(range(len(held)))
        for bucket in assign_buckets(order, [p.array.nbytes for p in held], [p.dtype for p in held],
                                     GATHER_BUCKET_BYTES, GATHER_BUCKET_BYTES):
            params = [held[i] for i in bucket]
            self._all_gather(params, [p.array for p in params])
        self._release(self._lazy)

    def state_dict(self, *args: Any, **kwargs: Any) -> Dict[str, Any]:
        """The layer's state dict. At level p_g_os the parameters held only in use must be made
        whole first (``get_all_parameters()``, collective), else this raises rather than give
        their empty arrays."""
        released = [p.name for p in self._lazy if not p.array.size]
        if released:
            raise RuntimeError(f"{self._api}: at level p_g_os the parameters {released[:5]} are held as "
                               f"this rank's pieces between uses; call model.get_all_parameters() (every "
                               f"rank) before state_dict(), or save with save_group_sharded_model")
        return super().state_dict(*args, **kwargs)

    def set_state_dict(self, state_dict: Dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        """Load whole values. At level p_g_os every rank must call it (collective): the
        parameters held only in use are made whole, loaded, and cut to this rank's pieces again,
        so the next forward uses what was loaded."""
        if not self._lazy:
            return super().set_state_dict(state_dict, *args, **kwargs)
        self.gather([p for p in self._lazy if not p.array.size])
        result = super().set_state_dict(state_dict, *args, **kwargs)
        self.keep_pieces(self._lazy)
        return result

    set_dict = set_state_dict
    load_dict = set_state_dict

    def get_all_parameters(self, convert2cpu: bool = False) -> None:
        """Bring every parameter to every rank (paddle's name): before saving or inspecting the
        whole model at level p_g_os. Collective. The next optimizer step lets them go again.
        ``convert2cpu`` is accepted for paddle's signature; gathered parameters stay where the
        model is."""
        self.gather(self._lazy)

    def held_in_use(self) -> List[Any]:
        """The parameters held whole only in use (level p_g_os with several ranks)."""
        return list(self._lazy)

    def release_parameters(self) -> None:
        """Let go of the parameters held only in use (level p_g_os; nothing otherwise)."""
        self._release(self._lazy)


def _by_dtype(params: List[Any]) -> List[List[Any]]:
    groups: Dict[Any, List[Any]] = {}
    for p in params:
        groups.setdefault(p.dtype, []).append(p)
    return list(groups.values())
