"""paddle's ``fleet.meta_parallel``: the pipeline (``LayerDesc``, ``SharedLayerDesc``,
``LocalSharedLayerDesc``, ``LayerSpec`` and its builders, ``PipelineLayer``, ``PipelineParallel``,
``NoPipelineParallel`` (pp_degree 1) and the interleaved ``PipelineParallelWithInterleave`` /
``PipelineParallelWithInterleaveFthenB`` / ``VPPFhenBInBalancedMemory``, their hooks and ``PipelineDatasetPreprocessor``),
``TensorParallel``, ``ShardingParallel`` and ``SegmentParallel`` (fleet's model-parallel,
sharding and sep wrappers), all ``MetaParallelBase``s,
and under the same path (as ``fleet.layers.mpu``) the model-parallel layers, the parallel
cross-entropy and the RNG tracker (the same objects as ``pycoll.parallel``'s), plus fleet's
``model_parallel_random_seed``."""
import importlib
from typing import Any, List

from pycoll.distributed.fleet.meta_parallel.layer_descs import LocalSharedLayerDesc
from pycoll.distributed.fleet.meta_parallel.micro_batches import PipelineDatasetPreprocessor
from pycoll.distributed.fleet.meta_parallel.pipeline_hooks import (PipelineParallelMicroStepLocations,
                                                                   register_global_pipeline_parallel_hook)
from pycoll.distributed.fleet.meta_parallel.pipeline_interleave import (PipelineParallelWithInterleave,
                                                                        PipelineParallelWithInterleaveFthenB,
                                                                        VPPFhenBInBalancedMemory)
from pycoll.distributed.fleet.meta_parallel.meta_parallel_base import MetaParallelBase
from pycoll.distributed.fleet.meta_parallel.pipeline_parallel import NoPipelineParallel, PipelineParallel
from pycoll.distributed.fleet.meta_parallel.pp_layers import LayerDesc, PipelineLayer, SharedLayerDesc
from pycoll.distributed.fleet.meta_parallel.pp_utils.utils import dict_to_tuple_helper
from pycoll.distributed.fleet.meta_parallel.segment_parallel import SegmentParallel
from pycoll.distributed.fleet.meta_parallel.sharding_parallel import ShardingParallel
from pycoll.distributed.fleet.meta_parallel.spec_utils import (LayerSpec, build_spec_layer, get_spec_layer,
                                                               import_spec_layer)
from pycoll.distributed.fleet.meta_parallel.tensor_parallel import TensorParallel
from pycoll.distributed.fleet.collective_mode import model_parallel_random_seed  # after the pipeline: it uses it
from pycoll.parallel import (ColumnParallelLinear, ParallelCrossEntropy, RNGStatesTracker, RowParallelLinear,
                             VocabParallelEmbedding, get_rng_state_tracker)

__all__ = ["ColumnParallelLinear", "LayerDesc", "LayerSpec", "LocalSharedLayerDesc", "MetaParallelBase",
           "NoPipelineParallel", "ParallelCrossEntropy", "PipelineDatasetPreprocessor", "PipelineLayer",
           "PipelineParallel", "PipelineParallelMicroStepLocations", "PipelineParallelWithInterleave",
           "PipelineParallelWithInterleaveFthenB", "RNGStatesTracker", "RowParallelLinear", "SegmentParallel",
           "ShardingParallel", "SharedLayerDesc", "TensorParallel", "VPPFhenBInBalancedMemory", "VocabParallelEmbedding",
           "build_spec_layer",
           "dict_to_tuple_helper", "get_rng_state_tracker", "get_spec_layer", "import_spec_layer",
           "model_parallel_random_seed", "parallel_layers", "register_global_pipeline_parallel_hook"]


def __getattr__(name: str) -> Any:
    """``parallel_layers``, paddle's subpackage, is an attribute from ``import paddle`` on, as in
    paddle (imported on first use: its modules import from this package)."""
    if name == "parallel_layers":
        return importlib.import_module(f"{__name__}.parallel_layers")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> List[str]:  # the names __getattr__ serves too
    return sorted(set(globals()) | set(__all__) | {"parallel_layers"})
