"""``local_map`` and ``LocalLayer``: code that computes on each rank's local pieces, its results
declared distributed (paddle's way out where placements cannot say what a computation does,
e.g. a loss over a mask that differs per rank).

Distributed inputs enter as their local pieces (plain tensors: the ops inside neither
propagate placements nor communicate), and each tensor result becomes a distributed tensor
with the placements given, its local value being this rank's piece (``dtensor_from_local``).
Gradients flow through both ways unchanged: a result's gradient reaches the local code as it
is, and the local gradient reaches the distributed input.
"""
from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence, Tuple

from pycoll import _graph
from pycoll.distributed.auto_parallel.dtensor import dtensor_from_local, is_dist_tensor, local_only, reshard
from pycoll.distributed.auto_parallel.mesh import ProcessMesh
from pycoll.distributed.auto_parallel.placements import Placement, Replicate, check_placements
from pycoll.nn import Layer, Parameter
from pycoll.tensor import Tensor, wrap


def to_local(tensor: Tensor) -> Tensor:
    """``tensor``'s local piece as a plain tensor in the autograd graph (its gradient goes back
    to ``tensor``'s piece as it is)."""
    local = wrap(tensor._array)
    with local_only():
        _graph.record((local,), lambda g: (g,), (tensor,))
    return local


def dtensor_to_local(dist_tensor: Tensor, mesh: ProcessMesh, placements: Sequence[Placement]) -> Tensor:
    """paddle's ``dtensor_to_local`` (``dist.auto_parallel.api``): this rank's piece of
    ``dist_tensor`` as a plain tensor in the autograd graph (``to_local``); the inverse of
    ``dtensor_from_local``. ``mesh`` and ``placements`` are the tensor's own, as paddle passes
    them (they say what the gradient coming back is)."""
    if not is_dist_tensor(dist_tensor):
        raise ValueError(f"dtensor_to_local: dist_tensor must be a distributed tensor, got "
                         f"{type(dist_tensor).__name__}")
    if not isinstance(mesh, ProcessMesh):
        raise TypeError(f"dtensor_to_local: mesh must be a dist.ProcessMesh, got {type(mesh).__name__}")
    placements = check_placements(placements, mesh, len(dist_tensor.shape), dist_tensor.shape)
    if mesh != dist_tensor.process_mesh or placements != list(dist_tensor.placements):
        raise ValueError(f"dtensor_to_local: mesh and placements must be dist_tensor's own "
                         f"({dist_tensor.process_mesh}, {dist_tensor.placements}), got {mesh}, {placements}; "
                         f"reshard it first")
    return to_local(dist_tensor)


def _as_list(outputs: Any) -> Tuple[List[Any], bool]:
    return (list(outputs), True) if isinstance(outputs, (list, tuple)) else ([outputs], False)


def _distribute(outputs: Any, attrs: Sequence[Optional[Tuple[ProcessMesh, Sequence[Placement]]]],
                what: str) -> Any:
    """Each tensor in ``outputs`` (one, or a list/tuple) as a distributed tensor per ``attrs``
    (one ``(mesh, placements)`` or None per output)."""
    items, several = _as_list(outputs)
    if len(attrs) != len(items):
        raise ValueError(f"{what} has {len(attrs)} entries but the function returned {len(items)} output(s)")
    done = [dtensor_from_local(item, *attr) if attr is not None and isinstance(item, Tensor) else item
            for item, attr in zip(items, attrs)]
    return type(outputs)(done) if several else done[0]


def local_map(func: Callable[..., Any], out_placements: Sequence[Optional[Sequence[Placement]]],
              in_placements: Optional[Sequence[Optional[Sequence[Placement]]]] = None,
              process_mesh: Optional[ProcessMesh] = None, reshard_inputs: bool = False) -> Callable[..., Any]:
    """paddle's ``dist.local_map``: ``func`` run on the local pieces of its distributed
    arguments; its outputs become distributed tensors with ``out_placements`` (one list per
    output, None for an output to leave alone) on ``process_mesh`` (default: the mesh of the
    first distributed argument). ``in_placements`` (one per positional argument, None to skip)
    are checked, or the arguments resharded to them with ``reshard_inputs=True``."""
    if not callable(func):
        raise TypeError(f"local_map: func must be callable, got {type(func).__name__}")
    if not isinstance(out_placements, (list, tuple)):
        raise TypeError(f"local_map: out_placements must be a list with one list of placements (or None) "
                        f"per output, got {out_placements!r}")
    if process_mesh is not None and not isinstance(process_mesh, ProcessMesh):
        raise TypeError(f"local_map: process_mesh must be a dist.ProcessMesh or None, got {type(process_mesh).__name__}")

    def local_mapped(*args: Any, **kwargs: Any) -> Any:
        if in_placements is not None and len(in_placements) != len(args):
            raise ValueError(f"local_map: in_placements has {len(in_placements)} entries for "
                             f"{len(args)} positional argument(s)")
        mesh = process_mesh
        local_args = []
        for i, arg in enumerate(args):
            want = None if in_placements is None else in_placements[i]
            if is_dist_tensor(arg):
                if want is not None and list(arg.placements) != list(want):
                    if not reshard_inputs:
                        raise ValueError(f"local_map: argument {i} has placements {arg.placements}, "
                                         f"in_placements[{i}] is {list(want)} (reshard_inputs=True moves it)")
                    arg = reshard(arg, arg.process_mesh, want)
                mesh = mesh or arg.process_mesh
                arg = to_local(arg)
            local_args.append(arg)
        if mesh is None:
            raise ValueError("local_map: no argument is a distributed tensor; give process_mesh")
        outputs = func(*local_args, **kwargs)
        attrs = [None if p is None else (mesh, p) for p in out_placements]
        return _distribute(outputs, attrs, "local_map: out_placements")

    return local_mapped


class LocalLayer(Layer):
    """paddle's ``dist.LocalLayer``: a layer whose ``forward`` sees the local pieces of its
    distributed inputs; its outputs become distributed tensors per ``out_dist_attrs`` (one
    ``(mesh, placements)`` per output). ``grad_dist_attrs`` names the inputs' gradient
    placements (an entry None: the input's own, as paddle documents); pycoll's gradient of a
    distributed input always has that input's layout, so they are checked for length only."""

    def __init__(self, out_dist_attrs: Sequence[Tuple[ProcessMesh, Sequence[Placement]]],
                 grad_dist_attrs: Optional[Sequence[Optional[Tuple[ProcessMesh, Sequence[Placement]]]]] = None):
        super().__init__()
        for arg, attrs, optional in (("out_dist_attrs", out_dist_attrs, False),
                                     ("grad_dist_attrs", grad_dist_attrs or [], True)):
            if not isinstance(attrs, (list, tuple)) or not all(
                    (optional and a is None) or (isinstance(a, (list, tuple)) and len(a) == 2
                                                 and isinstance(a[0], ProcessMesh)) for a in attrs):
                raise TypeError(f"LocalLayer: {arg} must be a list of (ProcessMesh, placements) pairs"
                                f"{' (or None)' if optional else ''}, got {attrs!r}")
        self.out_dist_attrs = list(out_dist_attrs)
        self.grad_dist_attrs = list(grad_dist_attrs or [])

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        if self.grad_dist_attrs and len(self.grad_dist_attrs) != len(inputs):
            raise ValueError(f"LocalLayer: grad_dist_attrs has {len(self.grad_dist_attrs)} entries for "
                             f"{len(inputs)} input(s)")
        local_inputs = [to_local(x) if is_dist_tensor(x) else x for x in inputs]
        return _distribute(super().__call__(*local_inputs, **kwargs), self.out_dist_attrs,
                           "LocalLayer: out_dist_attrs")


def unshard_dtensor(dist_tensor: Tensor) -> Tensor:
    """The whole value of ``dist_tensor`` as a plain Tensor on every rank (Replicate, then its
    piece): a Parameter comes back as a Parameter of the same name; otherwise the result stays
    in the autograd graph."""
    if not is_dist_tensor(dist_tensor):
        raise TypeError(f"unshard_dtensor: dist_tensor must be a distributed tensor, got "
                        f"{type(dist_tensor).__name__}")
    mesh = dist_tensor.process_mesh
    whole = reshard(dist_tensor, mesh, [Replicate()] * mesh.ndim)
    if isinstance(dist_tensor, Parameter):
        out = Parameter(whole._array, name=dist_tensor.name, trainable=not dist_tensor.stop_gradient)
        out.__dict__.update({k: v for k, v in dist_tensor.__dict__.items()
                             if k not in ("process_mesh", "placements", "_global_shape", "is_distributed")})
        return out
    return to_local(whole)  # plain, whatever placements are being followed
