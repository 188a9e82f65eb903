"""Turning the collectives' tensor arguments into arrays an engine can move.

This is the one place that knows what a user may pass: an array of the engine's array module
(``numpy.ndarray`` for the cpu backend, ``cupy.ndarray`` for nccl; the engine's ``xp``), a
``pycoll.Tensor``, or an array of another framework (a torch tensor, a JAX or numba array) that
exposes ``__dlpack__``, ``__array_interface__`` or ``__cuda_array_interface__``. All of them are
moved in place: what is received lands in the caller's own memory. A Tensor is reached through
its ``__pycoll_array__``/``__pycoll_wrap__`` protocol, so this layer never imports the tensor
side; results made for a Tensor argument (an empty ``tensor_list`` filled by ``all_gather``) come
back as Tensors, those made for a foreign array come back as ``xp`` arrays. Non-contiguous arrays
are staged through a contiguous copy and, for outputs, copied back once the collective completes.

A read-only output is a refusal only its own rank can see. Raised before the call, it would
leave the peers' parts queued for the group's next call, which would then hand out wrong values;
so the rank takes part with a scratch buffer instead and raises :class:`ReadOnlyReceive` once
its part is made (:class:`Refusal`, the output's ``finish``: ``collective._launch`` says when).
"""
from __future__ import annotations

import math
from typing import Any, Callable, List, Optional, Tuple

import numpy as np

_DLPACK_HOST = 1  # DLDeviceType kDLCPU; every other device type is an accelerator's memory


def _lives_on_host(x: Any) -> Optional[bool]:
    """Whether the array behind ``x`` is in host memory, by the protocols it exposes; None when
    it exposes none."""
    if hasattr(x, "__dlpack_device__"):
        try:
            return x.__dlpack_device__()[0] == _DLPACK_HOST
        except Exception:  # an exporter that cannot say: judged by its other protocols
            pass
    if hasattr(x, "__cuda_array_interface__"):
        return False
    if hasattr(x, "__array_interface__") or hasattr(x, "__dlpack__"):
        return True
    return None


def _named(x: Any) -> str:
    return f"{type(x).__module__}.{type(x).__name__}"


def _view(x: Any, xp: Any, fn: str, arg: str) -> Any:
    """An ``xp`` array sharing the memory of a foreign array ``x`` (no copy)."""
    on_host = _lives_on_host(x)
    if on_host is None:
        raise TypeError(f"pycoll.distributed.{fn}: {arg} must be a pycoll.Tensor, a {xp.__name__}."
                        f"ndarray or an array exposing __dlpack__ or __array_interface__ / "
                        f"__cuda_array_interface__, got {_named(x)}")
    if on_host != (xp is np):
        where, needed = ("a host", "the GPU") if on_host else ("a GPU", "the host")
        raise TypeError(f"pycoll.distributed.{fn}: {arg} is {where} array ({_named(x)}) but this "
                        f"group's backend moves {xp.__name__} arrays; move it to {needed} first")
    interface = "__array_interface__" if xp is np else "__cuda_array_interface__"
    try:
        if hasattr(x, "__dlpack__"):
            return xp.from_dlpack(x)
        if hasattr(x, interface):
            return xp.asarray(x)
    except Exception as exc:  # the exporter's own refusal: requires grad, an unknown dtype, ...
        raise TypeError(f"pycoll.distributed.{fn}: {arg} ({_named(x)}) cannot be shared with "
                        f"{xp.__name__} without a copy: {exc}") from None
    raise TypeError(f"pycoll.distributed.{fn}: {arg} ({_named(x)}) exposes no protocol "
                    f"{xp.__name__} reads in place (__dlpack__ or {interface})")


def array_of(x: Any, xp: Any, fn: str, arg: str) -> Any:
    """The ``xp`` array behind ``x`` (sharing its memory); TypeError naming ``arg`` otherwise."""
    if type(x) is xp.ndarray:
        arr = x
    else:
        own = getattr(type(x), "__pycoll_array__", None)
        arr = own(x) if own is not None else x
        if not isinstance(arr, xp.ndarray):
            arr = _view(arr, xp, fn, arg)
    if arr.dtype.hasobject:
        raise TypeError(f"pycoll.distributed.{fn}: {arg} has dtype object; only fixed-size "
                        f"numeric dtypes can be communicated")
    return arr


def wrap_like(template: Any, arr: Any) -> Any:
    """``arr`` as a Tensor when ``template`` is one (any class with ``__pycoll_wrap__``), else as is."""
    wrap = getattr(type(template), "__pycoll_wrap__", None)
    return wrap(arr) if wrap is not None else arr


def send_buffer(x: Any, xp: Any, fn: str, arg: str) -> Any:
    """A C-contiguous array with ``x``'s values (``x`` itself when it already is one)."""
    arr = array_of(x, xp, fn, arg)
    return arr if arr.flags.c_contiguous else xp.ascontiguousarray(arr)


class ReadOnlyReceive(ValueError):
    """This rank's output of a call was read-only: the rank took part in the call with a scratch
    buffer (so that its peers' results are right and the group stays in step) and the output is
    unchanged."""


class Refusal:
    """The ``finish`` of a call whose output was read-only (received into scratch, delivered
    nowhere): calling it, once the call is complete, runs ``then`` (the call's own checks at
    completion, or None) and raises ``error``, a :class:`ReadOnlyReceive`."""

    __slots__ = ("error", "then")

    def __init__(self, error: ReadOnlyReceive, then: Optional[Callable[[], None]] = None):
        self.error, self.then = error, then

    def __call__(self) -> None:
        if self.then is not None:
            self.then()
        raise self.error

    def after(self, then: Callable[[], None]) -> "Refusal":
        """This refusal, made once ``then`` has run."""
        return Refusal(self.error, then)


def read_only(fn: str, arg: str) -> Refusal:
    """The refusal of ``arg``, a read-only output of call ``fn``."""
    return Refusal(ReadOnlyReceive(
        f"pycoll.distributed.{fn}: {arg} is read-only but receives a result; this rank takes part "
        f"in the call with a scratch buffer, so that the group stays in step, and {arg} is left "
        f"unchanged; pass a writeable array"))


def recv_buffer(x: Any, xp: Any, fn: str, arg: str) -> Tuple[Any, Optional[Callable[[], None]]]:
    """A C-contiguous array to receive into, and what to run once it is filled.

    That is None when ``x``'s own memory is received into, a copy-back when ``x`` is staged, and
    a :class:`Refusal` when ``x`` is read-only (received into scratch). The returned buffer starts
    with ``x``'s values, so it serves in-place collectives.
    """
    if type(x) is xp.ndarray:  # the common case, checked first: a contiguous, writeable array
        flags = x.flags
        if flags.c_contiguous and getattr(flags, "writeable", True) and not x.dtype.hasobject:
            return x, None
    arr = array_of(x, xp, fn, arg)
    flags = arr.flags
    if not getattr(flags, "writeable", True):  # CuPy arrays are always writeable
        return arr.copy(), read_only(fn, arg)  # (a copy is C-contiguous and writeable)
    if flags.c_contiguous:
        return arr, None
    staged = xp.ascontiguousarray(arr)
    return staged, lambda: xp.copyto(arr, staged)


def check_like(items: List[Any], like: Any, xp: Any, fn: str, arg: str,
               like_name: str = "tensor") -> List[Any]:
    """The arrays of ``items``, each required to have ``like``'s shape and dtype."""
    arrays = []
    for i, item in enumerate(items):
        arr = array_of(item, xp, fn, f"{arg}[{i}]")
        if arr.shape != like.shape or arr.dtype != like.dtype:
            raise ValueError(f"pycoll.distributed.{fn}: {arg}[{i}] has shape {arr.shape} and dtype "
                             f"{arr.dtype}; it must match {like_name}: shape {like.shape}, dtype {like.dtype}")
        arrays.append(arr)
    return arrays


def check_list(items: Any, nranks: int, fn: str, arg: str, allow_empty: bool) -> list:
    """``items`` as a list of ``nranks`` entries (or empty when ``allow_empty``)."""
    if not isinstance(items, (list, tuple)):
        raise TypeError(f"pycoll.distributed.{fn}: {arg} must be a list, got {type(items).__name__}")
    if allow_empty and not items and not isinstance(items, list):
        raise TypeError(f"pycoll.distributed.{fn}: {arg} is an empty {type(items).__name__}; give a list, to which "
                        f"the received tensors are appended")
    if len(items) == nranks or (allow_empty and not items):
        return items
    need = f"empty or {nranks}" if allow_empty else str(nranks)
    raise ValueError(f"pycoll.distributed.{fn}: {arg} has {len(items)} entries; it needs {need} "
                     f"(one per rank of the group)")


def one_per_rank(items: Any, nranks: int, like: Any, xp: Any, fn: str, arg: str,
                 like_name: str = "tensor", own: Optional[int] = None) -> Any:
    """``items`` (a list of ``nranks`` tensors, each with ``like``'s shape and dtype) in one
    contiguous buffer, block i from ``items[i]``: the buffer they already are when they tile
    one (a tensor split into its parts: :func:`tiled`, ``own`` as there), else a copy."""
    items = check_list(items, nranks, fn, arg, allow_empty=False)
    arrays = check_like(items, like, xp, fn, arg, like_name=like_name)
    together = tiled(arrays, like, xp, own)
    return together if together is not None else stacked(arrays, like, xp)


def send_blocks(items: Any, nranks: int, like: Any, xp: Any, fn: str, arg: str) -> List[Any]:
    """``items`` (a list of ``nranks`` tensors, each with ``like``'s shape and dtype) as arrays
    an engine with ``separate_blocks`` sends one by one: each entry's own memory, or a
    C-contiguous copy of an entry that is strided or overlaps ``like`` (the output: NCCL must
    not send from memory it receives into)."""
    arrays = check_like(check_list(items, nranks, fn, arg, allow_empty=False), like, xp, fn, arg)
    return [arr if arr.flags.c_contiguous and not overlap(arr, like) else arr.copy() for arr in arrays]


def separate_blocks(engine: Any) -> bool:
    """Whether ``engine`` sends the blocks of a scatter or alltoallv from a list of arrays
    (NCCL: ``separate_blocks``), which then need not be copied into one buffer."""
    return getattr(engine, "separate_blocks", False)


# NumPy reads an array's address through __array_interface__ (about 1 us, a dict each time): the
# proof costs ~6 us for two blocks, as much as copying two 64 KiB blocks here, so NumPy blocks
# under this size are copied (CuPy's addresses are attributes, and its copies kernel launches)
_HOST_TILE_BYTES = 256 << 10


def _address(arr: Any) -> int:
    return arr.__array_interface__["data"][0] if isinstance(arr, np.ndarray) else arr.data.ptr


def overlap(a: Any, b: Any) -> bool:
    """Whether the memory of arrays ``a`` and ``b`` may overlap (their extents meet)."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return np.may_share_memory(a, b)
    start_a, start_b = _address(a), _address(b)
    return start_a < start_b + b.nbytes and start_b < start_a + a.nbytes


def _span(arrays: List[Any], xp: Any, away_from: Optional[Any],
          own: Optional[int] = None) -> Optional[Tuple[Any, int, int]]:
    """``(base, offset, nbytes)``: where the memory of ``arrays`` lies in their base (``offset``
    bytes from its start), when it is proven that they tile one buffer: C-contiguous views of
    one C-contiguous ``xp`` array (the very same ``base`` object, so one allocation that
    outlives them all), none empty, each starting at the byte where the one before it ends; and
    the whole does not overlap ``away_from`` (send and receive memory must not), unless ``own``
    is given and ``away_from`` (a C-contiguous array the size of one block) is exactly block
    ``own``: NCCL's in-place form (:func:`own_block`). None otherwise, and for small NumPy
    blocks (``_HOST_TILE_BYTES``): the caller then copies."""
    first = arrays[0]
    base = first.base
    if not isinstance(base, xp.ndarray) or not base.flags.c_contiguous:
        return None
    if xp is np and sum(a.nbytes for a in arrays) < len(arrays) * _HOST_TILE_BYTES:
        return None
    if own is None and any(arr is away_from for arr in arrays):  # in place (outs[rank] sent): overlaps
        return None
    start = end = _address(first)
    for arr in arrays:
        if arr.base is not base or not arr.nbytes or not arr.flags.c_contiguous or (
                arr is not first and _address(arr) != end):
            return None
        end += arr.nbytes
    origin = _address(base)
    if start < origin or end > origin + base.nbytes:  # outside base: never so for a view of it
        return None
    if away_from is not None and overlap(base, away_from):  # (NumPy: no address to read when apart)
        other = _address(away_from)
        if other < end and start < other + away_from.nbytes and (
                own is None or other != start + own * away_from.nbytes):
            return None
    return base, start - origin, end - start


def _flat(base: Any) -> Any:
    return base if base.ndim == 1 else base.reshape(-1)


def region(arrays: List[Any], xp: Any, away_from: Optional[Any] = None) -> Optional[Any]:
    """The memory of ``arrays`` as one 1-D uint8 view, when they tile one buffer away from
    ``away_from`` (see :func:`_span`); None otherwise."""
    span = _span(arrays, xp, away_from)
    if span is None:
        return None
    base, offset, nbytes = span
    return _flat(base).view(np.uint8)[offset:offset + nbytes]


def own_block(engine: Any, rank: int) -> Optional[int]:
    """``rank``, when ``engine`` runs all_gather and reduce_scatter in place on the rank's own
    block of the whole buffer (NCCL: ``in_place_blocks``); None otherwise (MPI wants its
    ``MPI_IN_PLACE`` layout instead, so overlapping buffers are copied there)."""
    return rank if getattr(engine, "in_place_blocks", False) else None


def tiled(arrays: List[Any], like: Any, xp: Any, own: Optional[int] = None) -> Optional[Any]:
    """``arrays`` (each with ``like``'s shape and dtype) as one ``(len(arrays), *like.shape)``
    view of their memory when they tile one buffer away from ``like`` (or with ``like`` block
    ``own``: see :func:`_span`), else None."""
    span = _span(arrays, xp, like, own)
    if span is None:
        return None
    base, offset, nbytes = span
    start, misaligned = divmod(offset, like.itemsize)
    if base.dtype == like.dtype and not misaligned:  # the common case, in the fewest views
        flat = _flat(base)[start:start + nbytes // like.itemsize]
    else:
        flat = _flat(base).view(np.uint8)[offset:offset + nbytes].view(like.dtype)
    return flat.reshape((len(arrays),) + like.shape)


def listed(items: Any, nranks: int, xp: Any, fn: str, arg: str, like: Any) -> Any:
    """paddle's tensor-or-list argument: a list (or None) stays; one tensor becomes its per-rank
    :func:`parts`, each shaped as the one tensor ``like`` (the rank's own input or output) where
    the element counts allow."""
    if items is None or isinstance(items, (list, tuple)):
        return items
    return parts(items, nranks, xp, fn, arg, tuple(array_of(like, xp, fn, "tensor").shape))


def parts(x: Any, nranks: int, xp: Any, fn: str, arg: str, shape: Optional[Tuple[int, ...]] = None) -> List[Any]:
    """The array behind ``x`` as ``nranks`` equal parts (views, written in place): of ``shape``
    when given and ``x`` is ``[nranks, *shape]``, or contiguous with that many elements per rank
    (paddle asks only for the element count: ``[nranks * n, ...]`` layouts too), else along dim 0."""
    arr = array_of(x, xp, fn, arg)
    if shape is not None:
        whole = None
        if arr.shape == (nranks,) + tuple(shape):
            whole = arr
        elif arr.flags.c_contiguous and arr.size == nranks * math.prod(shape):
            whole = arr.reshape((nranks,) + tuple(shape))
        if whole is not None:  # whole[i, ...]: a view even of 0-d parts (iterating gives NumPy scalars)
            return [whole[i, ...] for i in range(nranks)]
    if arr.ndim == 0 or arr.shape[0] % nranks:
        raise ValueError(f"pycoll.distributed.{fn}: {arg} has shape {list(arr.shape)}; as one tensor "
                         f"it needs a dim 0 that splits evenly over the group's {nranks} ranks")
    rows = arr.shape[0] // nranks
    return [arr[i * rows:(i + 1) * rows] for i in range(nranks)]


def stacked(arrays: List[Any], like: Any, xp: Any) -> Any:
    """One contiguous buffer holding ``arrays`` one after another."""
    out = xp.empty((len(arrays),) + like.shape, like.dtype)
    for i, arr in enumerate(arrays):
        xp.copyto(out[i, ...], arr)  # out[i, ...]: a view even of 0-d blocks
    return out


def received_into(out: Any, like: Any, own: Optional[int] = None) -> Optional[Any]:
    """``out``, one tensor of ``nranks * like.size`` elements (paddle's stacked ``all_gather``
    output), when it can be received into as it is (the engines read its memory, whatever its
    shape): of ``like``'s dtype, C-contiguous, writeable and away from ``like`` (the sent
    array) or, given ``own`` (:func:`own_block`), when ``like`` is exactly its block ``own``;
    None otherwise (its :func:`parts` are then filled from a buffer of pycoll's)."""
    flags = out.flags
    if out.dtype != like.dtype or not flags.c_contiguous or not getattr(flags, "writeable", True):
        return None  # (another dtype is refused, naming it, on the way through parts)
    if overlap(out, like) and (own is None or _address(like) != _address(out) + own * like.nbytes):
        return None
    return out


def gather_blocks(out_list: list, like: Any, nranks: int, template: Any, xp: Any, fn: str,
                  arg: str, own: Optional[int] = None) -> Tuple[Any, Optional[Callable[[], None]]]:
    """The ``(nranks, *like.shape)`` array that receives a gather of ``like`` (the sent array)
    for ``out_list`` (empty, or one tensor per rank: each checked here to have ``like``'s shape
    and dtype), and what to run once it is filled.

    An empty list gets one entry per block at once (views of a new array, valid when the
    collective completes). Entries that tile one buffer (:func:`tiled`, ``own`` as there) are
    received into directly; other entries get a new array, copied into them at completion. With
    a read-only entry the new array is scratch, delivered nowhere (a :class:`Refusal`)."""
    shape = (nranks,) + like.shape
    if not out_list:
        blocks = xp.empty(shape, like.dtype)
        # blocks[i, ...]: a view even of 0-d blocks (iterating would give NumPy scalars, copies
        # taken before anything arrived)
        out_list.extend(wrap_like(template, blocks[i, ...]) for i in range(nranks))
        return blocks, None
    targets = check_like(out_list, like, xp, fn, arg, like_name="the sent tensors")
    refused = first_read_only(targets, fn, arg)
    if refused is not None:
        return xp.empty(shape, like.dtype), refused
    blocks = tiled(targets, like, xp, own)
    if blocks is not None:
        return blocks, None
    blocks = xp.empty(shape, like.dtype)

    def deliver() -> None:
        for arr, block in zip(targets, blocks):
            xp.copyto(arr, block)

    return blocks, deliver


def output_targets(out_list: list, xp: Any, fn: str, arg: str) -> Tuple[Optional[List[Any]], Optional[Refusal]]:
    """The arrays of a pre-allocated ``out_list`` (None when it is empty), and the refusal of its
    first read-only entry (None when there is none)."""
    if not out_list:
        return None, None
    targets = [array_of(item, xp, fn, f"{arg}[{i}]") for i, item in enumerate(out_list)]
    return targets, first_read_only(targets, fn, arg)


def first_read_only(targets: List[Any], fn: str, arg: str) -> Optional[Refusal]:
    """The refusal of the first read-only array of ``targets`` (the entries of list ``arg``),
    None when every one is writeable (CuPy arrays always are)."""
    for i, arr in enumerate(targets):
        if not getattr(arr.flags, "writeable", True):
            return read_only(fn, f"{arg}[{i}]")
    return None


def deliver_blocks(out_list: list, views: List[Any], targets: Optional[List[Any]], template: Any,
                   xp: Any) -> Optional[Callable[[], None]]:
    """Blocks of their own shapes into ``out_list``: an empty list gets the ``views`` at once
    (valid when the collective completes); otherwise each of ``targets`` (sizes already agreed)
    is filled at completion."""
    if targets is None:
        out_list.extend(wrap_like(template, view) for view in views)
        return None

    def deliver() -> None:
        for arr, view in zip(targets, views):
            xp.copyto(arr, view.reshape(arr.shape))

    return deliver
