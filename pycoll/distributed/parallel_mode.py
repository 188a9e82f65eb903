"""paddle's ``ParallelMode``: what fleet's ``HybridCommunicateGroup.get_parallel_mode()`` returns."""


class ParallelMode:
    DATA_PARALLEL = 0
    TENSOR_PARALLEL = 1
    PIPELINE_PARALLEL = 2
    SHARDING_PARALLEL = 3
    SEGMENT_PARALLEL = 4
