from __future__ import annotations
import pycoll
import pycoll.distributed as dist
from pycoll import Tensor
from pycoll.distributed import ProcessMesh
class CustomLayer(dist.LocalLayer):
    def __init__(self, out_dist_attrs, grad_dist_attrs):
        super().__init__(out_dist_attrs, grad_dist_attrs)
        self.local_result = pycoll.to_tensor(0.0)
    def forward(self, x):
        mask = pycoll.zeros_like(x)
        if dist.get_rank() == 0:
            mask[1:3] = 1
        else:
            mask[4:7] = 1
        x = x * mask
        mask_sum = pycoll.sum(x)
        mask_sum = mask_sum / mask.sum()
        self.local_result = mask_sum
        return mask_sum
# doctest: +REQUIRES(env:DISTRIBUTED)
dist.init_parallel_env()
mesh = ProcessMesh([0, 1], dim_names=["x"])
dist_attrs = [
    (mesh, [dist.Partial(dist.ReduceType.kRedSum)]),
]
local_input = pycoll.arange(0, 10, dtype="float32")
local_input = local_input + dist.get_rank()
input_dist = dist.auto_parallel.api.dtensor_from_local(
    local_input, mesh, [dist.Shard(0)]
)
custom_layer = CustomLayer(dist_attrs, dist_attrs)
output_dist = custom_layer(input_dist)
local_value = custom_layer.local_result
gathered_values: list[Tensor] = []
dist.all_gather(gathered_values, local_value)
print(f"[Rank 0] local_loss={gathered_values[0]}")
print(f"[Rank 1] local_loss={gathered_values[1]}")
print(f"global_loss (distributed)={output_dist}")
# This case needs to be executed in a multi-card environment
# export CUDA_VISIBLE_DEVICES=0,1
# python -m pycoll.distributed.launch {test_case}.py
