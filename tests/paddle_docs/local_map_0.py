from __future__ import annotations
import pycoll
import pycoll.distributed as dist
from pycoll import Tensor
from pycoll.distributed import ProcessMesh
def custom_function(x):
    mask = pycoll.zeros_like(x)
    if dist.get_rank() == 0:
        mask[1:3] = 1
    else:
        mask[4:7] = 1
    x = x * mask
    mask_sum = pycoll.sum(x)
    mask_sum = mask_sum / mask.sum()
    return mask_sum
# doctest: +REQUIRES(env:DISTRIBUTED)
dist.init_parallel_env()
mesh = ProcessMesh([0, 1], dim_names=["x"])
local_input = pycoll.arange(0, 10, dtype="float32")
local_input = local_input + dist.get_rank()
input_dist = dist.auto_parallel.api.dtensor_from_local(
    local_input, mesh, [dist.Shard(0)]
)
wrapped_func = dist.local_map(
    custom_function,
    out_placements=[[dist.Partial(dist.ReduceType.kRedSum)]],
    in_placements=[[dist.Shard(0)]],
    process_mesh=mesh
)
output_dist = wrapped_func(input_dist)
local_value = output_dist._local_value()
gathered_values: list[Tensor] = []
dist.all_gather(gathered_values, local_value)
print(f"[Rank 0] local_value={gathered_values[0].item()}")
print(f"[Rank 1] local_value={gathered_values[1].item()}")
print(f"global_value (distributed)={output_dist.item()}")
# This case needs to be executed in a multi-card environment
# export CUDA_VISIBLE_DEVICES=0,1
# python -m pycoll.distributed.launch {test_case}.py
