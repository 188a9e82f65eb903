"""paddle's ``dist.to_distributed(model, optimizer, dataloader, device_num, node_num, config)``,
for the device counts where paddle 3.3.1 picks data parallelism alone.

paddle traces the model into a static program, recognises its decoder layers (attention, MLP,
norms) and picks a mesh from ``device_num`` by fixed rules (``cost_model``): 2 devices, or an odd
number, give a ``"dp"`` mesh over them all; 4 and 6 give ``"dp" x "mp"`` and 8 ``"pp" x "dp" x
"mp"``, whose tensor and pipeline splits it applies to the decoder layers it recognised. With
data parallelism alone the model and the optimizer come back as they are and the dataloader is
sharded over ``"dp"`` (``shard_dataloader``): that is what pycoll does. pycoll has no program
tracer to find decoder layers, so the counts that bring tensor or pipeline parallelism are
refused by name (``dist.parallelize`` with a plan does that part by hand).
"""
from __future__ import annotations

from typing import Any, Optional, Tuple

from pycoll.distributed import env
from pycoll.distributed.auto_parallel.loader import shard_dataloader
from pycoll.distributed.auto_parallel.mesh import ProcessMesh
from pycoll.nn import Layer


class ToDistributedConfig:
    """paddle's options of ``to_distributed``: ``input_spec`` (the inputs paddle traces the model
    with) and ``sequence_parallel`` (with tensor parallelism); neither changes data parallelism."""

    def __init__(self) -> None:
        self.input_spec = None
        self.sequence_parallel = False


def to_distributed(model: Layer, optimizer: Any, dataloader: Any, device_num: int, node_num: Optional[int] = 1,
                   config: Optional[ToDistributedConfig] = None) -> Tuple[Layer, Any, Any]:
    """``(model, optimizer, dataloader)`` made ready for ``device_num`` ranks (see the module's
    text): the model and optimizer as they are, the dataloader sharded over a ``"dp"`` mesh of
    every rank. Called by every rank; ``device_num`` is the job's number of ranks."""
    if not isinstance(model, Layer):
        raise TypeError(f"to_distributed: model must be a pycoll.nn.Layer, got {type(model).__name__}")
    if isinstance(device_num, bool) or not isinstance(device_num, int) or device_num < 1:
        raise ValueError(f"to_distributed: device_num must be a positive int, got {device_num!r}")
    if node_num != 1:
        raise ValueError(f"to_distributed: node_num={node_num!r}; paddle 3.3.1 supports a single node only "
                         f"(node_num=1)")
    if config is not None and not isinstance(config, ToDistributedConfig):
        raise TypeError(f"to_distributed: config must be a ToDistributedConfig or None, got {type(config).__name__}")
    if device_num % 2 == 0 and device_num != 2:
        if device_num not in (4, 6, 8):
            raise ValueError(f"to_distributed: device_num must be an even number to be able to use at least 2 "
                             f"parallel strategies (paddle's 2, 4, 6 or 8), or an odd one, got {device_num}")
        raise NotImplementedError(
            f"to_distributed: on {device_num} devices paddle adds tensor{' and pipeline' if device_num == 8 else ''} "
            f"parallelism to the decoder layers it finds by tracing the model, which pycoll cannot trace; use "
            f"dist.parallelize with an mp_config plan, or an odd number of ranks / 2 for data parallelism")
    env.init_parallel_env()  # paddle's example never starts it: a mesh's first use does (idempotent)
    world = env.world_group("to_distributed").nranks
    if device_num != world:
        raise ValueError(f"to_distributed: device_num={device_num}, but the job has {world} ranks; give the "
                         f"number of ranks")
    mesh = ProcessMesh(list(range(device_num)), dim_names=["dp"])
    return model, optimizer, shard_dataloader(dataloader, meshes=[mesh], shard_dims="dp")
