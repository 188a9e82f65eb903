"""The placements ``Shard``, ``Replicate`` and ``Partial`` (paddle's), which say mesh dimension by
mesh dimension how a tensor lies on a ``ProcessMesh``, and the blocks they cut: paddle's rule for
a size that does not divide is blocks of ceil(size / parts), the last ones shorter or empty."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Tuple

import numpy as np

from pycoll.backends.reduce_op import ReduceOp

if TYPE_CHECKING:
    from pycoll.distributed.auto_parallel.mesh import ProcessMesh


class Placement:
    """How a tensor lies along one mesh dimension (paddle's ``dist.Placement``)."""

    def is_shard(self, dim: Optional[int] = None) -> bool:
        return False

    def is_replicated(self) -> bool:
        return False

    def is_partial(self) -> bool:
        return False

    def _key(self) -> tuple:
        return (type(self).__name__,)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Placement) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


class Shard(Placement):
    """The tensor's dimension ``dim`` is cut into one block per rank along the mesh dimension
    (paddle's rule for a size that does not divide: blocks of ceil(size / n), the last ones
    shorter or empty)."""

    def __init__(self, dim: int):
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
            raise TypeError(f"Shard: dim must be an int (a dimension of the tensor), got {dim!r}")
        self.dim = int(dim)

    def get_dim(self) -> int:
        return self.dim

    def is_shard(self, dim: Optional[int] = None) -> bool:
        return dim is None or dim == self.dim

    def _key(self) -> tuple:
        return ("Shard", self.dim)

    def __repr__(self) -> str:
        return f"Shard(dim={self.dim})"


class Replicate(Placement):
    """Every rank along the mesh dimension holds the whole tensor."""

    def is_replicated(self) -> bool:
        return True

    def __repr__(self) -> str:
        return "Replicate()"


class ReduceType:
    """paddle's names for a Partial's reduction (``dist.ReduceType.kRedSum`` ...): pycoll's ReduceOp
    values, and paddle's two logical ones (a Partial of flags: any rank's true / every rank's; on
    other dtypes paddle reduces them as MAX / MIN, and so does pycoll)."""

    kRedSum = ReduceOp.SUM
    kRedMax = ReduceOp.MAX
    kRedMin = ReduceOp.MIN
    kRedProd = ReduceOp.PROD
    kRedAvg = ReduceOp.AVG
    kRedAny = 5
    kRedAll = 6


LOGICAL_OPS = {ReduceType.kRedAny: ReduceOp.MAX, ReduceType.kRedAll: ReduceOp.MIN}  # paddle's, on any dtype
_PADDLE_NAMES = {ReduceOp.SUM: "SUM", ReduceOp.MAX: "MAX", ReduceOp.MIN: "MIN", ReduceOp.PROD: "PRODUCT",
                 ReduceOp.AVG: "AVG", ReduceType.kRedAny: "ANY", ReduceType.kRedAll: "ALL"}


class Partial(Placement):
    """Every rank holds a tensor of the whole shape; the value is their reduction
    (``reduce_type``: ``ReduceOp.SUM`` by default, or AVG, MAX, MIN, PROD, or ``ReduceType.kRedAny``
    / ``kRedAll``): a reduction pending."""

    def __init__(self, reduce_type: int = ReduceOp.SUM):
        if type(reduce_type) is not int or reduce_type not in _PADDLE_NAMES:
            raise ValueError(f"Partial: reduce_type must be a pycoll.distributed.ReduceOp (SUM, AVG, MAX, MIN, PROD) "
                             f"or dist.ReduceType.kRedAny / kRedAll, got {reduce_type!r}")
        self._reduce_type = reduce_type

    def reduce_type(self) -> int:
        return self._reduce_type

    def is_partial(self) -> bool:
        return True

    def _key(self) -> tuple:
        return ("Partial", self._reduce_type)

    def __repr__(self) -> str:
        return f"Partial(reduce_type={_PADDLE_NAMES[self._reduce_type]})"


def check_placements(placements: Any, mesh: "ProcessMesh", ndim: int, shape: Sequence[int],
                     arg: str = "placements") -> List[Placement]:
    """``placements`` checked against the mesh and a tensor of ``shape``, padded with Replicate to
    one per mesh dimension; negative Shard dims counted from the end."""
    if not isinstance(placements, (list, tuple)):
        raise TypeError(f"{arg} must be a list of dist.Shard / dist.Replicate / dist.Partial, got "
                        f"{type(placements).__name__}")
    extra = list(placements[mesh.ndim:])
    if extra and not all(isinstance(p, Replicate) for p in extra):
        raise ValueError(f"{arg} has {len(placements)} entries {list(placements)} but the mesh has "
                         f"{mesh.ndim} dimension(s) {mesh.dim_names}: give at most one placement per "
                         f"mesh dimension")
    placements = placements[:mesh.ndim]  # paddle drops trailing Replicate()s the mesh has no dimension for
    out: List[Placement] = []
    for i, p in enumerate(placements):
        if not isinstance(p, Placement):
            raise TypeError(f"{arg}[{i}] must be dist.Shard(dim), dist.Replicate() or dist.Partial(), "
                            f"got {p!r}")
        if isinstance(p, Shard):
            if not -ndim <= p.dim < ndim:
                allowed = f"must be in [-{ndim}, {ndim})" if ndim else "cannot split a 0-d tensor: use Replicate()"
                raise ValueError(f"{arg}[{i}] is {p!r} but the tensor has {ndim} dimension(s) (shape "
                                 f"{list(shape)}); Shard's dim {allowed}")
            p = Shard(p.dim % ndim)
        out.append(p)
    return out + [Replicate() for _ in range(mesh.ndim - len(out))]


def shard_axes(placements: Sequence[Placement], dim: int) -> List[int]:
    """The mesh dimensions that cut tensor dimension ``dim``, outermost first (mesh order)."""
    return [i for i, p in enumerate(placements) if isinstance(p, Shard) and p.dim == dim]


def block(size: int, parts: int, index: int) -> Tuple[int, int]:
    """[start, stop) of block ``index`` when ``size`` is cut in ``parts`` (paddle's ceil rule)."""
    width = -(-size // parts)
    return min(index * width, size), min((index + 1) * width, size)


def local_bounds(global_shape: Sequence[int], mesh: "ProcessMesh", placements: Sequence[Placement],
                 coord: Sequence[int]) -> List[Tuple[int, int]]:
    """[start, stop) along every tensor dimension of the block the rank at ``coord`` holds."""
    bounds = []
    for d, size in enumerate(global_shape):
        start, stop = 0, size
        for axis in shard_axes(placements, d):
            lo, hi = block(stop - start, mesh.shape[axis], coord[axis])
            start, stop = start + lo, start + hi
        bounds.append((start, stop))
    return bounds
