"""``shard_dataloader``: a DataLoader whose batches come out as distributed tensors, split along
the mesh's data-parallel dimension.

As paddle's ShardDataloader, a loader over a dataset with a plain ``BatchSampler`` is read on
each rank through a ``DistributedBatchSampler`` of ``int(batch_size / dp)`` rows over the ``dp``
ranks of the ``shard_dims`` mesh dimension: the rows of a global batch are the loader's (in
another order within it), shuffled identically on every rank (by epoch), the last batch padded
as that sampler pads it; each rank's rows are its block (``Shard(0)`` along that dimension,
Replicate along the others). A batch that does not split evenly makes the global batch ``dp *
int(batch_size / dp)``, said in a warning. With ``is_dataset_splitted=True``, or a loader that
already has a ``DistributedBatchSampler``, the loader gives each rank its own rows, taken as its
block as they are. Any other loader (an iterable dataset, a batch sampler of the user's) is read
whole on every rank, each keeping its block of each batch (which must then split evenly).
Without ``shard_dims`` every rank holds the whole batch (Replicate).
"""
from __future__ import annotations

from typing import Any, Iterator, List, Optional, Sequence, Union

from pycoll._logging import logger
from pycoll.distributed.auto_parallel.dtensor import dtensor_from_local, shard_tensor
from pycoll.distributed.auto_parallel.mesh import ProcessMesh
from pycoll.distributed.auto_parallel.placements import Placement, Replicate, Shard
from pycoll.distributed.auto_parallel.transitions import check_divides
from pycoll.io import BatchSampler, DataLoader, DistributedBatchSampler
from pycoll.tensor import Tensor


class ShardDataloader:
    """The batches of ``dataloader`` as distributed tensors (see the module's text); iterate it
    or call it (``for x, y in dist_loader():``, paddle's form)."""

    def __init__(self, dataloader: Any, meshes: Union[ProcessMesh, Sequence[ProcessMesh]],
                 input_keys: Optional[Sequence[str]] = None,
                 shard_dims: Union[str, int, Sequence[Union[str, int, None]], None] = None,
                 is_dataset_splitted: bool = False, dense_tensor_idx: Optional[List[List[int]]] = None):
        if not hasattr(dataloader, "__iter__"):
            raise TypeError(f"shard_dataloader: dataloader must be an iterable DataLoader, got "
                            f"{type(dataloader).__name__}")
        given = meshes
        meshes = [meshes] if isinstance(meshes, ProcessMesh) else list(meshes) if isinstance(meshes, (list, tuple)) else []
        if not meshes or not all(isinstance(m, ProcessMesh) for m in meshes):
            raise TypeError(f"shard_dataloader: meshes must be a dist.ProcessMesh or a non-empty list of "
                            f"them, got {given!r}")
        for mesh in meshes:
            mesh.check_in_job("meshes")
        if is_dataset_splitted and shard_dims is None:
            raise ValueError("shard_dataloader: is_dataset_splitted=True needs shard_dims (the mesh "
                             "dimension the dataset was split along)")
        dims = list(shard_dims) if isinstance(shard_dims, (list, tuple)) else [shard_dims] * len(meshes)
        if len(dims) != len(meshes):
            raise ValueError(f"shard_dataloader: shard_dims has {len(dims)} entries, meshes {len(meshes)}; "
                             f"give one per mesh or a single one")
        self._meshes = meshes
        self._axes = [None if d is None else m.dim_index(d, "shard_dims") for m, d in zip(meshes, dims)]
        self._input_keys = list(input_keys) if input_keys is not None else None
        self._splitted = bool(is_dataset_splitted)
        self._dense = dense_tensor_idx
        self._dataloader = dataloader if self._splitted else self._per_rank(dataloader)

    def _per_rank(self, dataloader: Any) -> Any:
        """``dataloader`` read as paddle's ShardDataloader reads it (the module's text): for a
        plain ``BatchSampler``, a loader of ``int(batch_size / dp)`` rows per rank through a
        ``DistributedBatchSampler`` (each rank's rows then are its block)."""
        sampler = getattr(dataloader, "batch_sampler", None)
        axis, mesh = self._axes[0], self._meshes[0]
        if len(self._meshes) > 1 or axis is None or not isinstance(dataloader, DataLoader):
            return dataloader
        if isinstance(sampler, DistributedBatchSampler):
            self._splitted = True  # it reads each rank's rows already: paddle takes them as its block
            return dataloader
        if type(sampler) is not BatchSampler:
            return dataloader
        dp, size = mesh.shape[axis], sampler.batch_size
        if size < dp:
            raise ValueError(f"shard_dataloader: the loader's batch_size={size} is smaller than the {dp} ranks "
                             f"of shard_dims={mesh.dim_names[axis]!r}; give each rank at least one row")
        coordinate = mesh.coordinate()
        rank = 0 if coordinate is None else coordinate[axis]
        if size % dp:
            logger.warning("shard_dataloader: batch_size=%d does not split over the %d ranks of shard_dims=%r: "
                           "each rank reads %d rows through a DistributedBatchSampler (paddle's), so the global "
                           "batch is %d", size, dp, mesh.dim_names[axis], size // dp, size // dp * dp)
        per_rank = DistributedBatchSampler(dataloader.dataset, size // dp, num_replicas=dp, rank=rank,
                                           shuffle=sampler.shuffle, drop_last=sampler.drop_last)
        self._splitted = True
        return DataLoader(dataloader.dataset, return_list=dataloader.return_list, batch_sampler=per_rank,
                          collate_fn=dataloader.collate_fn, num_workers=dataloader.num_workers,
                          prefetch_factor=dataloader.prefetch_factor, timeout=dataloader.timeout,
                          worker_init_fn=dataloader.worker_init_fn)

    @property
    def dataset(self) -> Any:
        return getattr(self._dataloader, "dataset", None)

    @property
    def batch_sampler(self) -> Any:
        """The sampler this rank's batches come from (paddle's attribute: ``set_epoch`` on it
        reshuffles), None for an iterable without one."""
        return getattr(self._dataloader, "batch_sampler", None)

    @property
    def batch_size(self) -> Optional[int]:
        """The rows of a batch on this rank."""
        sampler = getattr(self._dataloader, "batch_sampler", None)
        size = getattr(sampler, "batch_size", None) or getattr(self._dataloader, "batch_size", None)
        axis, mesh = self._axes[0], self._meshes[0]
        if size is None or axis is None or self._splitted:
            return size
        return size // mesh.shape[axis]

    def mesh_and_axis(self, index: int = 0) -> tuple:
        """(mesh, data-parallel mesh dimension or None) of field ``index``."""
        i = 0 if len(self._meshes) == 1 else index
        return self._meshes[i], self._axes[i]

    def placements(self, index: int = 0) -> List[Placement]:
        mesh, axis = self.mesh_and_axis(index)
        return [Shard(0) if i == axis else Replicate() for i in range(mesh.ndim)]

    def __len__(self) -> int:
        return len(self._dataloader)

    def __call__(self) -> Iterator[Any]:
        return iter(self)

    def __iter__(self) -> Iterator[Any]:
        for batch in self._dataloader:
            yield self._distribute(batch)

    def _distribute(self, batch: Any) -> Any:
        if isinstance(batch, dict):
            keys = self._input_keys or list(batch)
            out = dict(batch)
            for i, key in enumerate(keys):
                out[key] = self._field(batch[key], i)
            return out
        if isinstance(batch, (list, tuple)):
            return type(batch)(self._field(value, i) for i, value in enumerate(batch))
        return self._field(batch, 0)

    def _field(self, value: Any, index: int) -> Any:
        if isinstance(value, (list, tuple)):
            dense = set(self._dense[index]) if self._dense else set()
            return type(value)(v if j in dense else self._tensor(v, index) for j, v in enumerate(value))
        if self._dense and self._dense[index] != []:
            return value
        return self._tensor(value, index)

    def _tensor(self, value: Any, index: int) -> Any:
        if not isinstance(value, Tensor):
            return value
        mesh, axis = self.mesh_and_axis(index)
        placements = self.placements(index)
        if self._splitted:
            return dtensor_from_local(value, mesh, placements)
        if axis is not None:
            check_divides(value.shape, mesh, placements, f"shard_dataloader: batch field {index} "
                          f"split by shard_dims={mesh.dim_names[axis]!r}")
        return shard_tensor(value, mesh, placements)


def shard_dataloader(dataloader: Any, meshes: Union[ProcessMesh, Sequence[ProcessMesh]],
                     input_keys: Optional[Sequence[str]] = None,
                     shard_dims: Union[str, int, Sequence[Union[str, int, None]], None] = None,
                     is_dataset_splitted: bool = False,
                     dense_tensor_idx: Optional[List[List[int]]] = None) -> ShardDataloader:
    """paddle's ``shard_dataloader`` (see ``ShardDataloader``)."""
    return ShardDataloader(dataloader, meshes, input_keys, shard_dims, is_dataset_splitted, dense_tensor_idx)
