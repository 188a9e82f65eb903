"""Distributed tensors: ``shard_tensor``, ``reshard`` (``unshard_dtensor`` is in ``local``).

A distributed tensor is a ``pycoll.Tensor`` whose array is this rank's *local piece*; it also
knows its ``process_mesh``, its ``placements`` (one per mesh dimension) and the whole tensor's
``shape`` (``_local_value()`` is the piece as a plain Tensor, ``_local_shape`` its shape). Made
from a Parameter it is a ``DistParameter``: layers register it and optimizers update its piece
in place like any parameter.

pycoll runs eagerly and does not propagate placements through ops: an op on distributed tensors
computes on their local pieces and returns a plain Tensor. Placements take effect where pycoll
reads them: ``reshard`` (autograd flows through it), the sharded ``nn.Linear`` of ``shard_layer``
/ ``to_static`` (``layers.py``) and the data-parallel batch (``loader.py``, ``dist_model.py``).
Gradients have the placements of their tensor, a Partial one's gradient being whole
(``transitions.gradient_placements``); ``reshard``'s backward moves them back.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, List, Optional, Sequence, Union

import numpy as np

from pycoll import _graph
from pycoll._printing import format_body
from pycoll.device import place_of, place_str
from pycoll.distributed.auto_parallel.mesh import ProcessMesh
from pycoll.distributed.auto_parallel.placements import Placement, ReduceOp, Replicate, check_placements
from pycoll.distributed.auto_parallel.cross_mesh import between_meshes
from pycoll.distributed.auto_parallel.transitions import (describe, gradient_placements, local_block,
                                                          plan, transition)
from pycoll.nn import Parameter
from pycoll.dtypes import DTypeLike
from pycoll.size import Size, size_of
from pycoll.tensor import Tensor, to_tensor, wrap


class _Distributed:
    """What a distributed tensor adds to Tensor (kept in the instance's ``__dict__``)."""

    __slots__ = ()

    @property
    def shape(self) -> Size:
        """The whole tensor's shape (paddle's), a `pycoll.Size` as every tensor's; the local
        piece's is ``_local_shape``."""
        return size_of(self._global_shape)

    @property
    def size(self) -> int:
        """The whole tensor's number of elements."""
        return int(np.prod(self._global_shape, dtype=np.int64))

    def __len__(self) -> int:
        """The whole tensor's length (iterating gives its whole rows, as paddle's)."""
        if not self._global_shape:
            raise TypeError("len() of a 0-d tensor")
        return self._global_shape[0]

    @property
    def _local_shape(self) -> List[int]:
        return list(self._array.shape)

    def _local_value(self) -> Tensor:
        """This rank's piece as a plain Tensor sharing its memory (outside the graph)."""
        return wrap(self._array)

    def is_dist(self) -> bool:
        return True

    def detach(self) -> Tensor:
        """A distributed tensor over this one's piece (shared memory), outside the graph, with its
        placements (paddle's: ``float(loss.detach())`` of a Partial loss reads the whole value)."""
        return make_dist(self._array, self.process_mesh, self.placements, self._global_shape)

    @property
    def grad(self) -> Optional[Tensor]:
        """The gradient as a distributed tensor (paddle's), over the local gradient's memory."""
        local = self._grad
        if local is None:
            return None
        placements, _ = gradient_placements(self.placements, self.process_mesh)
        return make_dist(local._array, self.process_mesh, placements, self._global_shape)

    @grad.setter
    def grad(self, value: Any) -> None:
        Tensor.grad.fset(self, value._local_value() if is_dist_tensor(value) else value)

    def seed_grad(self, grad_tensor: Any) -> Any:
        """A backward from this tensor starts from the whole value's derivative with respect to
        this rank's piece: divided by the ranks a Partial(AVG) value averages."""
        g = Tensor.seed_grad(self, grad_tensor)
        ranks = np.prod([n for p, n in zip(self.placements, self.process_mesh.shape)
                         if p.is_partial() and p.reduce_type() == ReduceOp.AVG], dtype=np.int64)
        return g / ranks if ranks > 1 else g

    def set_value(self, value: Any) -> None:
        """paddle's: ``value`` is the whole tensor's (this rank keeps its block), or this rank's
        piece (a distributed tensor: resharded to these placements first, then its piece)."""
        if is_dist_tensor(value):
            if value.process_mesh != self.process_mesh or list(value.placements) != list(self.placements):
                with _graph.no_grad():
                    value = reshard(value, self.process_mesh, self.placements)
            value = value._local_value()
        arr = value._array if isinstance(value, Tensor) else value
        if not hasattr(arr, "shape"):
            arr = np.asarray(arr, dtype=self._array.dtype)
        if list(arr.shape) == self._global_shape != list(self._array.shape):
            coord = self.process_mesh.coordinate()
            arr = local_block(arr, self.process_mesh, self.placements, coord)
        Tensor.set_value(self, arr)

    def _whole(self) -> Any:
        """The whole value's array on this rank (collective over the mesh unless Replicate)."""
        if all(p.is_replicated() for p in self.placements):
            return self._array
        with _graph.no_grad():  # on every rank: one off the mesh still joins in making its groups
            whole = reshard(self, self.process_mesh, [Replicate()] * self.process_mesh.ndim)._array
        if self.process_mesh.coordinate() is None:
            return whole  # off the mesh: no piece, an empty array (paddle's answer there too)
        return whole.reshape(self._global_shape)  # a 0-d tensor stays 0-d

    # paddle reads a distributed tensor's whole value; ``_local_value()`` is the piece
    def numpy(self) -> np.ndarray:
        whole = self._whole()
        return whole if isinstance(whole, np.ndarray) else whole.get()

    def item(self, *args: Any) -> Any:
        return self._whole().item(*args)

    def __float__(self) -> float:
        return float(self._whole().item())

    def __int__(self) -> int:
        return int(self._whole().item())

    def __bool__(self) -> bool:
        return bool(wrap(self._whole()))

    def _set_dist(self, mesh: ProcessMesh, placements: Sequence[Placement], global_shape: Sequence[int]) -> None:
        self.process_mesh = mesh
        self.placements = list(placements)
        self._global_shape = [int(s) for s in global_shape]

    def __repr__(self) -> str:
        """paddle's form, with the whole value (``GlobalDenseTensor``): gathering it is collective,
        so every rank of the mesh prints, as with paddle."""
        mesh = self.process_mesh
        described = (f"{{shape: [{','.join(map(str, mesh.shape))}], process_ids: "
                     f"[{','.join(map(str, mesh.process_ids))}], dim_names: [{','.join(mesh.dim_names)}]}}")
        with _graph.no_grad():
            body = format_body(self.numpy())
        head = "Parameter containing:\n" if isinstance(self, Parameter) else ""
        return (f"{head}Tensor(shape={self.shape}, dtype={self.dtype}, place=Place({place_str(place_of(self._array))}), "
                f"stop_gradient={self.stop_gradient}, process_mesh={described}, "
                f"placements={self.placements}, GlobalDenseTensor=\n       {body})")


class DistTensor(_Distributed, Tensor):
    """A Tensor holding this rank's piece of a distributed tensor (see the module's text)."""


class DistParameter(_Distributed, Parameter):
    """A Parameter holding this rank's piece of a distributed parameter."""


def is_dist_tensor(tensor: Any) -> bool:
    return isinstance(tensor, _Distributed)


def make_dist(array: Any, mesh: ProcessMesh, placements: Sequence[Placement],
              global_shape: Sequence[int], like: Optional[Tensor] = None) -> Tensor:
    """A distributed tensor over ``array`` itself (no copy). ``like`` a Parameter: a
    DistParameter with its name, trainability and attributes; else a DistTensor."""
    if isinstance(like, Parameter):
        out: Tensor = DistParameter(array, name=like.name, trainable=not like.stop_gradient)
        out.__dict__.update({k: v for k, v in like.__dict__.items()
                             if k not in ("process_mesh", "placements", "_global_shape")})
        out.is_distributed = any(p.is_shard() for p in placements)
    else:
        out = DistTensor(array, place=place_of(array), zero_copy=True)
    out._set_dist(mesh, placements, global_shape)
    return out


def _check_mesh(mesh: Any, arg: str = "mesh") -> ProcessMesh:
    if not isinstance(mesh, ProcessMesh):
        raise TypeError(f"{arg} must be a dist.ProcessMesh, got {type(mesh).__name__}")
    mesh.check_in_job(arg)
    return mesh


def shard_tensor(data: Any, mesh: ProcessMesh, placements: Union[Placement, Sequence[Placement]], dtype: DTypeLike = None,
                 place: Any = None, stop_gradient: Optional[bool] = None) -> Tensor:
    """A distributed tensor of ``data`` (the whole value, the same on every rank: a number, a
    list, an array, a Tensor or a Parameter) laid on ``mesh`` by ``placements``: each rank keeps
    its block (a copy). A Parameter gives a DistParameter (a new leaf with its name); a tensor in
    the autograd graph stays in it (its gradient is gathered back). ``stop_gradient`` defaults
    to ``data``'s (True for data that is not a Tensor). One placement, not in a list, is that of
    the mesh's first dimension (paddle takes it so here, and only here)."""
    if isinstance(placements, Placement):
        placements = [placements]
    if is_dist_tensor(data):
        raise TypeError("shard_tensor: data is already a distributed tensor; use dist.reshard to change "
                        "its placements")
    mesh = _check_mesh(mesh)
    if stop_gradient is None:
        stop_gradient = getattr(data, "stop_gradient", True)
    tensor = data if isinstance(data, Tensor) and dtype is None and place is None else to_tensor(
        data, dtype=dtype, place=place)
    shape = list(tensor._array.shape)
    placements = check_placements(placements, mesh, len(shape), shape)
    if tensor.grad_node is not None and not tensor.stop_gradient and not stop_gradient:
        return _reshard(tensor, mesh, [Replicate()] * mesh.ndim, placements, shape)
    out = make_dist(local_block(tensor._array, mesh, placements, mesh.coordinate()), mesh, placements,
                    shape, like=data if isinstance(data, Parameter) else None)
    out.stop_gradient = bool(stop_gradient)
    return out


def dtensor_from_fn(fn: Callable[..., Any], mesh: ProcessMesh, placements: Sequence[Placement], *args: Any,
                    **kwargs: Any) -> Tensor:
    """paddle's ``dtensor_from_fn``: the whole tensor ``fn(*args, **kwargs)`` makes (e.g.
    ``pycoll.ones``, with ``shape=...``), laid on ``mesh`` by ``placements``."""
    if not callable(fn):
        raise TypeError(f"dtensor_from_fn: fn must be callable (e.g. pycoll.ones), got {type(fn).__name__}")
    return shard_tensor(fn(*args, **kwargs), mesh, placements)


def dtensor_from_local(local: Any, mesh: ProcessMesh, placements: Sequence[Placement]) -> Tensor:
    """A distributed tensor whose piece on this rank is ``local`` (no copy), its blocks assumed
    equal: along each Shard the whole size is the local size times the ranks cutting it."""
    mesh = _check_mesh(mesh)
    tensor = local if isinstance(local, Tensor) else to_tensor(local)
    shape = list(tensor._array.shape)
    placements = check_placements(placements, mesh, len(shape), shape)
    for axis, p in enumerate(placements):
        if p.is_shard():
            shape[p.dim] *= mesh.shape[axis]
    out = make_dist(tensor._array, mesh, placements, shape)
    out.stop_gradient = tensor.stop_gradient
    _graph.record((out,), lambda g: (g,), (tensor,))  # (a leaf's gradient too, as paddle's: a probe's was lost)
    return out


_local_depth = 0  # how many `local_only` blocks are open


@contextlib.contextmanager
def local_only() -> Iterator[None]:
    """Ops on distributed tensors compute on the local pieces and give plain tensors (no
    placements, no gradient collectives; `propagation` stands aside): for code that
    synchronises by itself (a DistModel's forward)."""
    global _local_depth
    _local_depth += 1
    try:
        yield
    finally:
        _local_depth -= 1


def computing_locally() -> bool:
    """Whether a `local_only` block is open."""
    return _local_depth > 0


def reshard(dist_tensor: Tensor, mesh: ProcessMesh, placements: Sequence[Placement]) -> Tensor:
    """``dist_tensor`` moved to ``placements`` on ``mesh``: on its own mesh with the collectives of
    ``transitions.py``, to another mesh (a pipeline stage's) through ``cross_mesh.py``; a new
    distributed tensor, differentiable (its backward moves the gradient back). Inside a
    DistModel's forward, whose ops compute on the local pieces (its plan fixed where values lie: each rank's rows, the model-parallel Linears' cuts), the tensor is
    returned as it is: a reshard there (paddle's sequence-parallel annotation) is a hint the plan
    has taken, and moving a piece would hand the next op a shape the plan does not expect."""
    if isinstance(dist_tensor, Tensor) and computing_locally():
        return dist_tensor
    if not is_dist_tensor(dist_tensor):
        raise TypeError(f"reshard: dist_tensor must be a distributed tensor (made by dist.shard_tensor), "
                        f"got {type(dist_tensor).__name__}")
    mesh = _check_mesh(mesh)
    shape = dist_tensor.shape
    placements = check_placements(placements, mesh, len(shape), shape)
    return _reshard(dist_tensor, dist_tensor.process_mesh, dist_tensor.placements, placements, shape, mesh)


def _moved(arr: Any, shape: List[int], src_mesh: ProcessMesh, src: List[Placement], dst_mesh: ProcessMesh,
           dst: List[Placement]) -> Any:
    if src_mesh == dst_mesh:
        return transition(arr, shape, src_mesh, src, dst)
    return between_meshes(arr, shape, src_mesh, src, dst_mesh, dst)


def _communication(mesh: ProcessMesh, src: List[Placement], to_mesh: ProcessMesh, dst: List[Placement],
                   ndim: int) -> dict:
    """What a program listing says a reshard communicates: forward ("comm") and backward
    ("grad_comm", a callable: it is described only when listed)."""
    if to_mesh != mesh:
        return {"comm": f"send/recv from mesh {mesh.process_ids} to mesh {to_mesh.process_ids}",
                "grad_comm": lambda: f"send/recv from mesh {to_mesh.process_ids} to mesh {mesh.process_ids}"}
    return {"comm": describe(plan(src, dst, ndim), mesh),
            "grad_comm": lambda: describe(plan(gradient_placements(dst, mesh)[0], gradient_placements(src, mesh)[0],
                                               ndim), mesh)}


def _reshard(x: Tensor, mesh: ProcessMesh, src: List[Placement], dst: List[Placement],
             shape: List[int], to_mesh: Optional[ProcessMesh] = None) -> Tensor:
    """x (on ``mesh`` under ``src``) under ``dst`` on ``to_mesh`` (default ``mesh``)."""
    to_mesh = mesh if to_mesh is None else to_mesh
    if not x.stop_gradient and _graph.is_grad_enabled():
        gradient_placements(src, mesh)  # a Partial without a gradient fails now, not in backward
        gradient_placements(dst, to_mesh)
    moved = _moved(x._array, shape, mesh, src, to_mesh, dst)
    # a 0-d tensor stays 0-d (on its mesh's ranks: the others hold an empty array)
    out = make_dist(moved.reshape(()) if not shape and moved.size == 1 else moved, to_mesh, dst, shape)
    local_in = x._array.shape

    def reshard_backward(g: Any) -> tuple:
        grad_dst, scale_out = gradient_placements(dst, to_mesh)
        grad_src, scale_in = gradient_placements(src, mesh)
        g = _moved(g / scale_out if scale_out != 1.0 else g, shape, to_mesh, grad_dst, mesh, grad_src)
        g = g.reshape(local_in) if not shape else g
        return (g * scale_in if scale_in != 1.0 else g,)

    reshard_backward.__pycoll_op__ = {"name": "reshard", "note": f"{src} -> {dst}",  # for program.py's listing
                                      **_communication(mesh, src, to_mesh, dst, len(shape))}
    _graph.record((out,), reshard_backward, (x,))  # if x needs a gradient
    return out
