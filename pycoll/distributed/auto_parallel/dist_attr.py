"""paddle's ``DistAttr``: the legacy description of how a tensor lies on a mesh, by naming for
each tensor dimension the mesh dimension that splits it (``sharding_specs``, ``None`` for whole)
— the ``dims_mapping`` form (mesh dimension index, -1) of what placements say per mesh dimension
(``sharding_specs=['x', None]`` is ``[Shard(0)]`` on a 1-d mesh named x). Like paddle 3.3.1's it
is a description only: ``shard_tensor`` and ``reshard`` take placements."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Set

from pycoll.distributed.auto_parallel.mesh import ProcessMesh


class DistAttr:
    """``mesh`` (a ProcessMesh) and ``sharding_specs`` (a list: per tensor dimension a mesh
    dimension name or None). Every check raises ValueError, as paddle's do; a mesh dimension
    named for two tensor dimensions, which paddle lets through, is refused (no placements say it)."""

    def __init__(self, mesh: ProcessMesh, sharding_specs: List[Optional[str]]) -> None:
        if not isinstance(mesh, ProcessMesh):
            raise ValueError(f"DistAttr: the mesh must be an instance of pycoll.distributed.ProcessMesh, got "
                             f"{type(mesh).__name__}")
        if not isinstance(sharding_specs, list):
            raise ValueError(f"DistAttr: the sharding_specs must be an instance of list, got "
                             f"{type(sharding_specs).__name__}")
        mapping = []
        for name in sharding_specs:
            if name is not None and not isinstance(name, str):
                raise ValueError(f"DistAttr: the dimension name in sharding_specs must be an instance of str "
                                 f"or None, got {name!r}")
            if name is not None and name not in mesh.dim_names:
                raise ValueError(f"Invalid sharding dimension '{name}'. Available dimensions in mesh are: "
                                 f"{mesh.dim_names}.")
            if name is not None and sharding_specs.count(name) > 1:
                raise ValueError(f"DistAttr: sharding_specs {sharding_specs} names mesh dimension {name!r} for two "
                                 f"tensor dimensions; a mesh dimension splits one")
            mapping.append(-1 if name is None else mesh.dim_names.index(name))
        self._sharding_specs = list(sharding_specs)
        self.process_mesh = mesh
        self.dims_mapping = mapping
        self.batch_dim = 0
        self.chunk_id = 0
        self.dynamic_dims = [False] * len(mapping)
        self.annotated: Dict[str, bool] = {"dims_mapping": True, "process_mesh": True}

    @property
    def sharding_specs(self) -> List[Optional[str]]:
        return self._sharding_specs

    @property
    def multi_dims_mapping(self) -> List[List[int]]:
        """``dims_mapping`` with each entry as the list of the mesh dimensions splitting it."""
        return [[] if d < 0 else [d] for d in self.dims_mapping]

    def is_annotated(self, name: str) -> bool:
        return self.annotated.get(name, False)

    def _is_partial(self) -> bool:
        return False

    def _partial_dims(self) -> Set[int]:
        return set()

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, DistAttr) and self.process_mesh == other.process_mesh
                and self.dims_mapping == other.dims_mapping)

    def __hash__(self) -> int:
        return hash(tuple(self.dims_mapping))

    def __str__(self) -> str:
        """paddle's text of a dist attr, field for field."""
        mesh = self.process_mesh

        def show(values: Any) -> str:
            return ",".join(str(v) for v in values)
        mappings = "".join(f"[{show(m)}] " for m in self.multi_dims_mapping)
        return (f"{{process_mesh: {{shape: [{show(mesh.shape)}], process_ids: [{show(mesh.process_ids)}], "
                f"dim_names: [{show(mesh.dim_names)}]}}, dim_mappings: [{mappings}], batch_dim: {self.batch_dim}, "
                f"chunk_id: {self.chunk_id}, skip_check_mesh: 0, dynamic_dims: "
                f"[{show(int(d) for d in self.dynamic_dims)}], annotated: [dims_mapping: 1,process_mesh: 1], "
                f"partial: [], split_factor: .}}")

    __repr__ = __str__
