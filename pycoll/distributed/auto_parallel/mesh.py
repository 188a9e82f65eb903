"""``ProcessMesh``: paddle's n-d grid of ranks, with names for its dimensions.

A mesh's groups are made on first use (``get_group``): ``new_group`` is collective over the world,
so every rank of the job, members or not, makes the same groups in the same order. They are made
once per mesh value (shape and ranks) and dimension, and shared by every mesh of that value.
"""
from __future__ import annotations

import numbers
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

import pycoll.distributed as dist

_GROUPS: Dict[Tuple[Tuple[int, ...], Tuple[int, ...], int], Optional[dist.Group]] = {}


def _int_list(values: Any) -> bool:
    return all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values)


class ProcessMesh:
    """An n-d grid of global ranks: ``ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])``.

    ``shape``, ``process_ids`` (row-major), ``dim_names`` (default ``d0, d1, ...``), ``ndim``,
    ``size``, ``contains(rank)``, ``get_dim_size(dim)``; ``mesh[name]`` is the 1-d sub-mesh
    along ``name`` through this rank, ``mesh[i]`` / slices index the grid as NumPy does.
    ``get_group(name)`` is the communication group along a dimension. A mesh may name ranks the job lacks until it is used (paddle's rule).
    """

    def __init__(self, mesh: Any = None, dim_names: Optional[List[str]] = None,
                 shape: Optional[Sequence[int]] = None, process_ids: Optional[Sequence[int]] = None):
        if mesh is None:
            if shape is None or process_ids is None:
                raise ValueError("ProcessMesh: give mesh (a nested list of ranks), or shape and process_ids")
            mesh = np.asarray(list(process_ids)).reshape(list(shape))
        if not isinstance(mesh, (list, tuple, np.ndarray)):
            raise TypeError(f"ProcessMesh: mesh must be a (nested) list or numpy array of ranks, got "
                            f"{type(mesh).__name__}")
        try:
            grid = np.array(mesh)
        except ValueError:  # ragged
            grid = np.array([], dtype=object)
        ids = grid.reshape(-1).tolist()
        if grid.ndim == 0 or grid.size == 0 or not _int_list(ids) or grid.dtype == object:
            raise ValueError(f"ProcessMesh: mesh must be a non-empty, rectangular grid of ints, got {mesh!r}")
        if min(ids) < 0 or len(set(ids)) != len(ids):
            raise ValueError(f"ProcessMesh: mesh must hold distinct ranks >= 0, got {ids}")
        if dim_names is None:
            dim_names = [f"d{i}" for i in range(grid.ndim)]
        if not isinstance(dim_names, (list, tuple)) or not all(isinstance(n, str) for n in dim_names):
            raise TypeError(f"ProcessMesh: dim_names must be a list of str, got {dim_names!r}")
        if len(dim_names) != grid.ndim or len(set(dim_names)) != len(dim_names):
            raise ValueError(f"ProcessMesh: dim_names must be {grid.ndim} distinct names, one per "
                             f"dimension of the mesh (shape {list(grid.shape)}), got {list(dim_names)}")
        self._mesh = grid.astype(np.int64)
        self._dim_names = list(dim_names)
        key = (tuple(self._mesh.shape), tuple(ids))
        self._unique_id = ProcessMesh._ids.setdefault(key, len(ProcessMesh._ids) + 1)

    _ids: Dict[Tuple[Tuple[int, ...], Tuple[int, ...]], int] = {}  # (shape, process_ids) -> unique_id

    @property
    def unique_id(self) -> int:
        """This mesh's number (paddle's): meshes of one shape and process_ids share it, numbered
        from 1 in the order such meshes are first made in this process."""
        return self._unique_id

    # ---- what it is ------------------------------------------------------------------------
    @property
    def mesh(self) -> np.ndarray:
        return self._mesh

    @property
    def shape(self) -> List[int]:
        return list(self._mesh.shape)

    @property
    def ndim(self) -> int:
        return self._mesh.ndim

    @property
    def process_ids(self) -> List[int]:
        return self._mesh.reshape(-1).tolist()

    @property
    def dim_names(self) -> List[str]:
        return list(self._dim_names)

    def dim_index(self, dim: Union[str, int], arg: str = "dim") -> int:
        """The index of mesh dimension ``dim`` (a name or an index); ValueError naming ``arg``."""
        if isinstance(dim, str):
            if dim not in self._dim_names:
                raise ValueError(f"{arg}={dim!r} is not a dimension of the mesh; its dimensions are "
                                 f"{self._dim_names}")
            return self._dim_names.index(dim)
        if isinstance(dim, (int, np.integer)) and not isinstance(dim, bool) and -self.ndim <= dim < self.ndim:
            return int(dim) % self.ndim
        raise ValueError(f"{arg}={dim!r}: give a dimension name of the mesh {self._dim_names} or an "
                         f"index in [0, {self.ndim})")

    def get_dim_size(self, dim: Union[str, int]) -> int:
        return self.shape[self.dim_index(dim)]

    def coordinate(self, rank: Optional[int] = None) -> Optional[Tuple[int, ...]]:
        """Where ``rank`` (default: this process) sits on the grid; None when it is not on it."""
        rank = dist.get_rank() if rank is None else rank
        found = np.argwhere(self._mesh == rank)
        return tuple(int(c) for c in found[0]) if len(found) else None

    def line(self, axis: int) -> List[int]:
        """The global ranks along ``axis`` that share this rank's other coordinates, in mesh
        order (the group ``get_group(axis)`` holds them sorted: a mesh need not number its ranks
        in order)."""
        index = list(self.coordinate())
        index[axis] = slice(None)
        return [int(r) for r in self._mesh[tuple(index)]]

    def get_rank_by_dim_and_process_id(self, dim: Union[str, int, None], process_id: int) -> int:
        """``process_id``'s index along ``dim`` (paddle's name); -1 when it is not on the mesh."""
        coord = self.coordinate(process_id)
        if coord is None:
            return -1
        return 0 if dim is None else coord[self.dim_index(dim)]

    def __contains__(self, rank: object) -> bool:
        return rank in self.process_ids

    def contains(self, process_id: int) -> bool:
        """Whether global rank ``process_id`` is on the mesh (paddle's method)."""
        return process_id in self

    @property
    def size(self) -> int:
        """How many processes the mesh holds."""
        return len(self.process_ids)

    # ---- sub-meshes ------------------------------------------------------------------------
    def get_mesh_with_dim(self, dim_name: str, index: Any = None) -> "ProcessMesh":
        """The mesh with ``dim_name`` moved first (paddle's); ``index`` then picks along it."""
        axis = self.dim_index(dim_name, "dim_name")
        order = [axis] + [i for i in range(self.ndim) if i != axis]
        names = [self._dim_names[i] for i in order]
        moved = self._mesh.transpose(order)
        if index is None:
            return ProcessMesh(moved, names)
        picked = moved[index]
        return ProcessMesh(picked, names[1:]) if picked.ndim and len(names) > 1 else ProcessMesh(
            np.atleast_1d(picked), names[:1])

    def get_submesh_with_dim(self, dim_name: str) -> Optional["ProcessMesh"]:
        """The 1-d mesh along ``dim_name`` through this rank; None when this rank is not on the mesh."""
        axis = self.dim_index(dim_name, "dim_name")
        coord = self.coordinate()
        if coord is None:
            return None
        line = list(coord)
        line[axis] = slice(None)
        return ProcessMesh(self._mesh[tuple(line)], [self._dim_names[axis]])

    def __getitem__(self, index: Any) -> Optional["ProcessMesh"]:
        if isinstance(index, str):
            return self.get_submesh_with_dim(index)
        items = index if isinstance(index, tuple) else (index,)
        kept = [n for i, n in enumerate(self._dim_names)
                if i >= len(items) or isinstance(items[i], slice)]
        picked = self._mesh[index]
        if picked.ndim == 0:
            return ProcessMesh([int(picked)])
        return ProcessMesh(picked, kept)

    # ---- groups ----------------------------------------------------------------------------
    def get_group(self, dim_name: Union[str, int, None] = None) -> Optional[dist.Group]:
        """The group of the ranks along ``dim_name`` that share this rank's other coordinates
        (optional for a 1-d mesh). Collective the first time (see the module's text; it starts the
        parallel environment if need be); None on a rank outside the mesh."""
        if dim_name is None:
            if self.ndim > 1:
                raise ValueError(f"get_group: dim_name is needed for a mesh of {self.ndim} dimensions "
                                 f"{self._dim_names}")
            dim_name = 0
        axis = self.dim_index(dim_name, "dim_name")
        self.check_in_job("mesh")
        key = (tuple(self.shape), tuple(self.process_ids), axis)
        if key not in _GROUPS:
            dist.init_parallel_env()  # paddle starts the environment when a mesh first needs it (idempotent)
            mine = None
            moved = np.moveaxis(self._mesh, axis, -1).reshape(-1, self.shape[axis])
            for line in moved.tolist():
                group = dist.new_group(line)
                if group.rank >= 0:
                    mine = group
            _GROUPS[key] = mine
        return _GROUPS[key]

    def check_in_job(self, arg: str) -> None:
        """ValueError naming ``arg`` when the mesh names ranks this job does not have."""
        world = dist.get_world_size()
        outside = [r for r in self.process_ids if r >= world]
        if outside:
            raise ValueError(f"{arg}: {self!r} names ranks {outside} outside this job of {world} "
                             f"rank(s) (0..{world - 1})")

    # ---- value semantics -------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ProcessMesh) and self.shape == other.shape
                and self.process_ids == other.process_ids)

    def __hash__(self) -> int:
        return hash((tuple(self.shape), tuple(self.process_ids)))

    def __deepcopy__(self, memo: dict) -> "ProcessMesh":
        return self  # a mesh is a value: copies of a model share it

    def __repr__(self) -> str:
        return f"ProcessMesh(shape={self.shape}, process_ids={self.process_ids}, dim_names={self._dim_names})"

    def __str__(self) -> str:
        """paddle's ``print(mesh)``."""
        return f"shape {self.shape}, process_ids {self.process_ids}, dim_names {self._dim_names}"




_global_mesh: Optional[ProcessMesh] = None


def set_mesh(mesh: Optional[ProcessMesh]) -> None:
    """paddle's ``dist.auto_parallel.set_mesh``: the job's mesh, for code that asks ``get_mesh()``."""
    global _global_mesh
    if mesh is not None and not isinstance(mesh, ProcessMesh):
        raise TypeError(f"set_mesh: mesh must be a dist.ProcessMesh or None, got {type(mesh).__name__}")
    _global_mesh = mesh


def get_mesh() -> Optional[ProcessMesh]:
    """The mesh ``set_mesh`` (or ``create_mesh``) last set (None before)."""
    return _global_mesh


def create_mesh(mesh_dims: List[Tuple[str, int]]) -> ProcessMesh:
    """paddle's ``dist.auto_parallel.create_mesh``: the job's mesh of ranks 0.. laid out row-major
    over ``mesh_dims``, ``[(name, size), ...]``, set as ``get_mesh()``'s and returned."""
    if not isinstance(mesh_dims, (list, tuple)) or not mesh_dims or not all(
            isinstance(d, (list, tuple)) and len(d) == 2 and isinstance(d[0], str)
            and isinstance(d[1], numbers.Integral) and not isinstance(d[1], (bool, np.bool_)) and d[1] >= 1
            for d in mesh_dims):
        raise ValueError(f"create_mesh: mesh_dims must be a non-empty list of (dim_name, degree >= 1) "
                         f"pairs, got {mesh_dims!r}")
    shape = [int(size) for _, size in mesh_dims]
    mesh = ProcessMesh(np.arange(int(np.prod(shape))).reshape(shape).tolist(), dim_names=[n for n, _ in mesh_dims])
    set_mesh(mesh)
    return mesh
